# Sourced by scripts/reproduce.sh: starting and stopping the servers under
# test, running the load client, and cleaning up after both. Written in the
# bash 3.2 subset (macOS's bash: no associative arrays, no EPOCHREALTIME
# there, no "${a[@]}" of an empty array under set -u) with POSIX tools; on
# Linux it reads /proc, elsewhere (and with LADDER_FORCE_PORTABLE=1) ps(1).
#
# Every process started here is tracked by pid and only those pids are ever
# signalled. Every wait is bounded: a server that does not announce itself,
# a load client that does not finish, or a server that does not exit after
# SIGTERM is stopped and reported, never waited on forever.
#
# Expects: BIN (the build's bin/ folder), LOADGEN (the load client to run),
# RAW (where JSON lines go), LOGS (where stderr worth keeping goes), TMP
# (scratch, removed on exit; servers built by the script itself, the
# yardstick and busy-poll, are in TMP/bin), USE_PROC (1: read /proc),
# PIN ("taskset", "cpuset" or "": how to pin a process to a CPU).

# Seconds to wait for a server's "listening on 127.0.0.1:PORT" line.
SERVER_START_TIMEOUT=5
# Seconds a server gets to exit after SIGTERM. 02-fork with 10 000 children
# has to signal and reap every one of them.
SERVER_STOP_TIMEOUT=20
# Exiting later than this after SIGTERM is noted in the report.
SERVER_SLOW_STOP=3
# The watchdog around loadgen gives it this many seconds beyond its own
# deadline (--timeout), so that loadgen, not the watchdog, ends a run that
# overruns: it then prints its partial result and the reason.
LG_MARGIN=15

SERVER_PID=""   # the server now running, if any
SERVER_START="" # its start time (proc_start)
SERVER_PORT=""
SERVER_NAME=""
SERVER_TAG=""   # what it is being used for: names its stderr log
SERVER_STOP=""  # how it stopped: "ok", or what went wrong (for the JSON line)
LOADGEN_PID=""  # the load client now running, if any
LOADGEN_START=""

N_PROBLEMS=0    # server misbehaviour outside any claim's run
N_FAILURES=0    # measurements that could not be made
# Each of them is also a line of RAW/problems.txt, for the report.

# The clock, in seconds with a fraction where the shell has one (bash 5's
# EPOCHREALTIME), whole seconds otherwise (macOS's bash 3.2 has no
# EPOCHREALTIME, and date +%N is GNU's). LC_ALL=C keeps the decimal point.
now() {
    if [ -n "${EPOCHREALTIME:-}" ]; then printf '%s' "$EPOCHREALTIME"; else date +%s; fi
}
START_TIME=$(now)

# One progress line on stderr, prefixed with the elapsed time.
log() {
    awk -v a="$START_TIME" -v b="$(now)" -v msg="$*" \
        'BEGIN { printf "[%6.1fs] %s\n", b - a, msg > "/dev/stderr" }'
}

problem() {
    N_PROBLEMS=$((N_PROBLEMS + 1))
    log "PROBLEM: $*"
    echo "server: $*" >>"$RAW/problems.txt"
}

failure() {
    N_FAILURES=$((N_FAILURES + 1))
    log "FAILED: $*"
    echo "measurement not made: $*" >>"$RAW/problems.txt"
}

note() {
    echo "note: $*" >>"$RAW/problems.txt"
}

# The number of CPUs online: getconf on Linux and macOS, sysctl on the BSDs.
cpu_count() {
    getconf _NPROCESSORS_ONLN 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 1
}

# The CPUs this process may run on, as "0 1 ...": on Linux its affinity (a
# container's cpuset or a taskset around the script: CPU 0 is not always
# among them), on FreeBSD its cpuset(1) mask, elsewhere all of them.
allowed_cpus() {
    local list=""
    case $PIN in
    taskset)
        list=$(taskset -cp $$ 2>/dev/null | sed -n 's/.*: *//p')
        [ -n "$list" ] || list=$(cat /sys/fs/cgroup/cpuset.cpus.effective 2>/dev/null)
        ;;
    cpuset)
        # FreeBSD prints two lines, "pid N mask: 0, 1" and "pid N domain
        # policy: first-touch mask: 0" (the memory domains): only the first
        # is the CPUs.
        list=$(cpuset -g -p $$ 2>/dev/null |
            awk '$1 == "pid" && $3 == "mask:" { sub(/^[^:]*: */, ""); gsub(/ /, ""); print; exit }')
        ;;
    esac
    [ -n "$list" ] || list="0-$(($(cpu_count) - 1))"
    awk -v l="$list" 'BEGIN {
        n = split(l, part, ",")
        for (i = 1; i <= n; i++) {
            m = split(part[i], r, "-")
            for (c = r[1] + 0; c <= r[m] + 0; c++) printf "%s%d", (out++ ? " " : ""), c
        }
    }'
}

# The start time of a process, or "" if there is no such process. With the
# pid, it names one process for good: a pid alone may be reused once its
# owner is gone. Linux: clock ticks after boot (field 22 of /proc/PID/stat);
# elsewhere ps's lstart (to the second, which is enough here: the scripts
# check it only while the process is their own, unreaped child).
proc_start() {
    if [ "$USE_PROC" = 1 ]; then
        local stat
        read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
        stat=${stat##*) }
        set -- $stat
        printf '%s' "${20}"
    else
        ps -o lstart= -p "$1" 2>/dev/null | tr -s ' ' | sed 's/ $//'
    fi
}

# The one-letter state of process PID started at START, or "" if it is gone.
# A child that has exited but not been waited for is a zombie, "Z": kill -0
# would still succeed on it. bash may also reap it early and keep its status
# for `wait`, in which case it is simply gone.
proc_state() {
    local stat start=${2:-}
    if [ "$USE_PROC" = 1 ]; then
        read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
        stat=${stat##*) }
        set -- $stat # from field 3 (state) on: starttime, field 22, is ${20}
        [ -z "$start" ] || [ "${20}" = "$start" ] || return 0
        printf '%s' "$1"
    else
        stat=$(ps -o state= -p "$1" 2>/dev/null | tr -d ' ')
        [ -n "$stat" ] || return 0
        [ -z "$start" ] || [ "$(proc_start "$1")" = "$start" ] || return 0
        printf '%s' "$stat" | cut -c1
    fi
}

# is_running PID START
is_running() {
    local s
    s=$(proc_state "$1" "${2:-}")
    [ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ]
}

# wait_finished PID START SECONDS: wait until that process has finished (or
# is gone), at most SECONDS (whole). 0 if it has.
wait_finished() {
    local pid=$1 start=$2 deadline
    # SECONDS: the shell's own whole-second clock, no process per check.
    deadline=$((SECONDS + $3))
    while is_running "$pid" "$start"; do
        [ "$SECONDS" -ge "$deadline" ] && return 1
        sleep 0.05
    done
    return 0
}

# pinned CPU CMD...: run CMD (in the foreground of the caller's background
# job) on CPU only, where the platform can pin: taskset on Linux, cpuset -l
# on FreeBSD; macOS has no way to pin a process to a CPU, so CMD runs as is.
pinned() {
    local cpu=$1
    shift
    case $PIN in
    taskset) [ -n "$cpu" ] && exec taskset -c "$cpu" "$@" ;;
    cpuset) [ -n "$cpu" ] && exec cpuset -l "$cpu" "$@" ;;
    esac
    exec "$@"
}

# start_server RUNG TAG [CPU]: start RUNG (bin/RUNG, or TMP/bin/RUNG for
# the servers the script builds itself) on a kernel-chosen loopback port,
# pinned to CPU if given, and wait for its announcement. Sets SERVER_PID and
# SERVER_PORT. Returns non-zero (and records a failure) if it does not come up.
start_server() {
    local rung=$1 tag=$2 cpu=${3:-}
    local out="$TMP/server.out" err="$TMP/server.err" exe=$BIN/$1
    [ -x "$TMP/bin/$rung" ] && exe=$TMP/bin/$rung
    : >"$out"
    : >"$err"
    SERVER_NAME=$rung
    SERVER_TAG=$tag
    (pinned "$cpu" "$exe" -p 0 -b 127.0.0.1) >"$out" 2>"$err" &
    SERVER_PID=$!
    SERVER_START=$(proc_start "$SERVER_PID")
    local tries=$((SERVER_START_TIMEOUT * 20)) line=""
    while [ "$tries" -gt 0 ]; do
        line=$(grep '^listening on 127\.0\.0\.1:[0-9][0-9]*$' "$out" | head -n 1)
        [ -n "$line" ] && break
        is_running "$SERVER_PID" "$SERVER_START" || break
        sleep 0.05
        tries=$((tries - 1))
    done
    if [ -z "$line" ]; then
        START_ERR="$rung did not print 'listening on 127.0.0.1:PORT' within ${SERVER_START_TIMEOUT}s ($(tail -n 2 "$err" | tr '\n"\\' '   '))"
        log "PROBLEM: $tag: $START_ERR"
        kill_server
        return 1
    fi
    SERVER_PORT=${line##*:}
    return 0
}

# Keep a server's stderr if it said anything (04-select's refusals, warnings).
keep_server_log() {
    if [ -s "$TMP/server.err" ]; then
        cat "$TMP/server.err" >>"$LOGS/$SERVER_TAG.$SERVER_NAME.stderr.log"
    fi
}

# Last resort: SIGKILL the server we started and reap it.
kill_server() {
    [ -n "$SERVER_PID" ] || return 0
    is_running "$SERVER_PID" "$SERVER_START" && kill -KILL "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
    keep_server_log
    SERVER_PID=""
}

# stop_server: SIGTERM, then wait (bounded). The contract is exit status 0
# within a second or two; anything else is the server misbehaving, recorded
# in SERVER_STOP for the run's JSON line (so that it counts against the
# claim the run belongs to).
stop_server() {
    SERVER_STOP=ok
    [ -n "$SERVER_PID" ] || return 0
    local rc t0 secs
    t0=$(now)
    if ! is_running "$SERVER_PID" "$SERVER_START"; then
        wait "$SERVER_PID"
        rc=$?
        SERVER_STOP="exited with status $rc before SIGTERM"
        log "PROBLEM: $SERVER_TAG: $SERVER_NAME $SERVER_STOP"
        keep_server_log
        SERVER_PID=""
        return 0
    fi
    kill -TERM "$SERVER_PID"
    if ! wait_finished "$SERVER_PID" "$SERVER_START" "$SERVER_STOP_TIMEOUT"; then
        SERVER_STOP="still running ${SERVER_STOP_TIMEOUT}s after SIGTERM (killed)"
        log "PROBLEM: $SERVER_TAG: $SERVER_NAME $SERVER_STOP"
        kill_server
        return 0
    fi
    wait "$SERVER_PID"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        SERVER_STOP="exited with status $rc after SIGTERM"
        log "PROBLEM: $SERVER_TAG: $SERVER_NAME $SERVER_STOP (expected 0)"
    fi
    secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
    if [ "${secs%.*}" -ge "$SERVER_SLOW_STOP" ]; then
        note "$SERVER_TAG: $SERVER_NAME took ${secs}s to exit after SIGTERM (the contract says a second or two)"
    fi
    keep_server_log
    SERVER_PID=""
}

# ---- ephemeral ports ---------------------------------------------------------
# Off Linux loadgen connects from 127.0.0.1 only, and each connection it
# closes first keeps its port in TIME_WAIT for 2 x MSL (macOS: 16 384 ports,
# 49152-65535, held 30 s). Before each run the ledger of recent runs is read
# and, if the run would take the ports in use above PORT_BUDGET, the script
# waits for enough of them to come free. On Linux loadgen spreads its
# connections over 127.0.0.2-254, each with its own ports: no ledger.
PORT_LEDGER=""  # "TIME COUNT" per recent run, newest last
PORT_WAIT_S=0   # seconds waited in all

# ports_for ARGS...: how many fresh ports a loadgen command line opens.
ports_for() {
    local mode=$1 prev="" a n=0
    for a in "$@"; do
        case $prev in
        -n) n=$a ;;
        --idle) n=$((${a##*,} + 1)) ;;
        esac
        prev=$a
    done
    [ "$mode" = stall ] && n=2
    printf '%s' "$n"
}

# port_budget N: wait until N more ports fit in the budget, then book them.
port_budget() {
    [ "${PORT_BUDGET:-0}" -gt 0 ] || return 0
    local need=$1 t wait
    t=$(now)
    PORT_LEDGER=$(printf '%s\n' "$PORT_LEDGER" | awk -v t="$t" -v tw="$PORT_TIME_WAIT_S" 'NF == 2 && $1 > t - tw')
    # Oldest first: free runs until the new one fits; wait for the last one freed.
    wait=$(printf '%s\n' "$PORT_LEDGER" | awk -v t="$t" -v tw="$PORT_TIME_WAIT_S" -v need="$need" -v b="$PORT_BUDGET" '
        NF == 2 { when[++n] = $1; cnt[n] = $2; used += $2 }
        END {
            w = 0
            for (i = 1; i <= n && used + need > b; i++) { used -= cnt[i]; w = when[i] + tw - t }
            printf "%d", (w > 0 ? w + 1 : 0)
        }')
    if [ "$wait" -gt 0 ]; then
        log "ports: waiting ${wait}s for ports in TIME_WAIT to come free (at most $PORT_BUDGET fresh in ${PORT_TIME_WAIT_S}s)"
        sleep "$wait"
        PORT_WAIT_S=$((PORT_WAIT_S + wait))
    fi
    PORT_LEDGER=$(printf '%s\n%s %s' "$PORT_LEDGER" "$(now)" "$need")
}

# ---- the load client -----------------------------------------------------------

# run_loadgen TAGS DEADLINE ARGS...: run LOADGEN ARGS --json --timeout
# DEADLINE (pinned to LOADGEN_CPU when set) under a watchdog LG_MARGIN seconds longer (timeout(1) is GNU's:
# this is the same thing in the shell). Each JSON line it prints is tagged
# with TAGS (a fragment such as '"rung":"05-poll","run":1') and left in
# LG_OUT; LG_RC is its exit status (124: the watchdog ended it), LG_ERR the
# end of its stderr.
run_loadgen() {
    local tags=$1 deadline=$2 limit rc watchdog
    shift 2
    limit=$((deadline + LG_MARGIN))
    rm -f "$TMP/lg.killed"
    (pinned "${LOADGEN_CPU:-}" "$LOADGEN" "$@" --json --timeout "$deadline") >"$TMP/lg.out" 2>"$TMP/lg.err" &
    LOADGEN_PID=$!
    LOADGEN_START=$(proc_start "$LOADGEN_PID")
    # The watchdog sleeps through the whole run and wakes only if loadgen
    # outlives its own deadline by LG_MARGIN: nothing of the harness runs
    # while loadgen measures (a polling loop would, on the server's CPUs).
    (
        trap 'kill "$nap" 2>/dev/null; exit 0' TERM
        sleep "$limit" &
        nap=$!
        wait "$nap"
        kill -TERM "$LOADGEN_PID" 2>/dev/null && echo killed >"$TMP/lg.killed"
        sleep 5 &
        nap=$!
        wait "$nap"
        kill -KILL "$LOADGEN_PID" 2>/dev/null
    ) >/dev/null 2>&1 &
    watchdog=$!
    wait "$LOADGEN_PID"
    rc=$?
    kill "$watchdog" 2>/dev/null
    wait "$watchdog" 2>/dev/null
    LG_RC=$rc
    [ -f "$TMP/lg.killed" ] && LG_RC=124
    LOADGEN_PID=""
    LG_OUT=$(sed -n "s/^{/{$tags,/p" "$TMP/lg.out")
    LG_ERR=$(grep -v '^loadgen: note:' "$TMP/lg.err" | tail -n 3 | tr '\n"\\' '   ' | sed 's/ *$//')
    [ "$LG_RC" = 124 ] && LG_ERR="killed by the watchdog after ${limit}s${LG_ERR:+; $LG_ERR}"
    if [ -s "$TMP/lg.err" ]; then
        {
            printf '== loadgen %s (exit %s)\n' "$*" "$LG_RC"
            cat "$TMP/lg.err"
        } >>"$LOGS/loadgen.stderr.log"
    fi
    return 0
}

# save FILE TAGS EXTRA: append LG_OUT to FILE, each line with the JSON
# fragment EXTRA added (and loadgen's last stderr line, when it exited
# non-zero: the first problem it saw). Without a result, a line of TAGS,
# the reason in "error" and its cause ("server": the server did not start;
# "tool": loadgen gave nothing), so that the report says why.
save() {
    local file=$1 tags=$2 extra=${3:+,$3} why=${4:-} cause=${5:-tool} err
    if [ -n "$LG_OUT" ]; then
        if [ "$LG_RC" != 0 ] && [ -n "$LG_ERR" ]; then
            err=$(printf '%s' "$LG_ERR" | sed 's/[^ -~]//g; s/[\/&]/\\&/g')
            extra="$extra,\"stderr\":\"$err\""
        fi
        printf '%s\n' "$LG_OUT" | sed "s/}\$/$extra}/" >>"$file"
    else
        printf '{%s%s,"cause":"%s","error":"%s"}\n' "$tags" "$extra" "$cause" "$why" >>"$file"
        [ "$cause" = server ] || failure "${file##*/} $(printf '%s' "$tags" | tr -d '"'): $why"
    fi
}

# skip_run FILE TAGS WHY: the line of a run this platform cannot make.
skip_run() {
    printf '{%s,"cause":"platform","error":"not measured: %s"}\n' "$2" "$3" >>"$1"
}

# one_run FILE TAGS DEADLINE RUNG CPU LOADGEN-ARGS...: a fresh RUNG (pinned
# to CPU unless it is ""), one loadgen run against it (-p PORT is added),
# then SIGTERM, and the result saved with the server's peak RSS and how it
# stopped. An argument @PID stands for the server's pid (for --server-pid).
# With COUNT_LINES=WORD set, the server's stderr lines naming WORD are
# counted into "server_refusal_lines".
one_run() {
    local file=$1 tags=$2 deadline=$3 rung=$4 cpu=$5 extra hwm tag=${1##*/} a
    shift 5
    port_budget "$(ports_for "$@")"
    if ! start_server "$rung" "${tag%.jsonl}" "$cpu"; then
        LG_OUT=""
        save "$file" "$tags" "" "server did not start: $START_ERR" server
        return 1
    fi
    set -- "$@" -p "$SERVER_PORT"
    # @PID becomes the server's pid: rebuild the argument list in place.
    local n=$#
    while [ "$n" -gt 0 ]; do
        a=$1
        shift
        [ "$a" = @PID ] && a=$SERVER_PID
        set -- "$@" "$a"
        n=$((n - 1))
    done
    run_loadgen "$tags" "$deadline" "$@"
    # VmHWM: the most resident memory the server's main process ever had
    # (Linux only; elsewhere loadgen's footprint figure stands in).
    hwm=""
    [ "$USE_PROC" = 1 ] && hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$SERVER_PID/status" 2>/dev/null)
    extra="\"server_hwm_kb\":${hwm:-null}"
    [ -n "${COUNT_LINES:-}" ] && extra="$extra,\"server_refusal_lines\":$(grep -c "$COUNT_LINES" "$TMP/server.err")"
    stop_server
    extra="$extra,\"server_stop\":\"$SERVER_STOP\""
    save "$file" "$tags" "$extra" "no result (loadgen exit $LG_RC: ${LG_ERR:-no output})"
}

# On exit or interrupt: stop whatever we started, by pid, and nothing else.
cleanup() {
    if [ -n "$LOADGEN_PID" ] && is_running "$LOADGEN_PID" "$LOADGEN_START"; then
        kill -TERM "$LOADGEN_PID" 2>/dev/null
        wait_finished "$LOADGEN_PID" "$LOADGEN_START" 6 || kill -KILL "$LOADGEN_PID" 2>/dev/null
        wait "$LOADGEN_PID" 2>/dev/null
    fi
    LOADGEN_PID=""
    if [ -n "$SERVER_PID" ] && is_running "$SERVER_PID" "$SERVER_START"; then
        kill -TERM "$SERVER_PID" 2>/dev/null
        wait_finished "$SERVER_PID" "$SERVER_START" 10 || kill -KILL "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
    fi
    SERVER_PID=""
    [ -n "${TMP:-}" ] && [ -d "$TMP" ] && rm -rf "$TMP"
    return 0
}
