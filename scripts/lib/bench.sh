# Sourced by scripts/reproduce.sh: the servers under test and the load
# client as the reproduction runs them (logged, each run saved as a JSON
# line), and cleaning up after both. The plumbing under it (starting a
# server and waiting for its announcement, stopping it, pinning, the ports
# in TIME_WAIT, the processes' state) is scripts/lib/ladder.sh's, shared
# with the walls and the doctor. Written in the bash 3.2 subset (macOS's
# bash: no associative arrays, no "${a[@]}" of an empty array under set -u)
# with POSIX tools; on Linux it reads /proc, elsewhere (and with
# LADDER_FORCE_PORTABLE=1) ps(1).
#
# Every process started here is tracked by pid and only those pids are ever
# signalled. Every wait is bounded: a server that does not announce itself,
# a load client that does not finish, or a server that does not exit after
# SIGTERM is stopped and reported, never waited on forever.
#
# Expects: BIN (the build's bin/ folder), LOADGEN (the load client to run),
# RAW (where JSON lines go), LOGS (where stderr worth keeping goes), TMP
# (scratch, removed on exit; servers built by the script itself, the
# yardstick and busy-poll, are in TMP/bin), and ladder_platform's USE_PROC
# and PIN, ports_init's PORT_BUDGET (scripts/lib/ladder.sh, sourced first).

# Seconds a server gets to exit after SIGTERM. 02-fork with 10 000 children
# has to signal and reap every one of them.
SERVER_STOP_TIMEOUT=20
# Exiting later than this after SIGTERM is noted in the report.
SERVER_SLOW_STOP=3
# The watchdog around loadgen gives it this many seconds beyond its own
# deadline (--timeout), so that loadgen, not the watchdog, ends a run that
# overruns: it then prints its partial result and the reason.
LG_MARGIN=15

SERVER_NAME=""
SERVER_TAG=""   # what it is being used for: names its stderr log
SERVER_STOP=""  # how it stopped: "ok", or what went wrong (for the JSON line)
LOADGEN_PID=""  # the load client now running, if any
LOADGEN_START=""

N_PROBLEMS=0    # server misbehaviour outside any claim's run
N_FAILURES=0    # measurements that could not be made
# Each of them is also a line of RAW/problems.txt, for the report.

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

note_problem() {
    echo "note: $*" >>"$RAW/problems.txt"
}

# measured_start RUNG TAG [CPU]: start RUNG (bin/RUNG, or TMP/bin/RUNG for
# the servers the script builds itself) on a kernel-chosen loopback port,
# pinned to CPU if given, and wait for its announcement (server_start, in
# ladder.sh). Sets SERVER_PID and SERVER_PORT. Returns 1, SERVER_ERR saying
# why, if it does not come up; 2, SERVER_ERR naming the cgroup file, if its
# CPU quota (SERVER_QUOTA_PCT) could not be set: the host's doing, not the
# server's, so the server is not started.
measured_start() {
    local rung=$1 exe=$BIN/$1
    [ -x "$TMP/bin/$rung" ] && exe=$TMP/bin/$rung
    quota_set "${SERVER_QUOTA_PCT:-}" || { SERVER_ERR=$QUOTA_ERR; return 2; }
    SERVER_NAME=$rung
    SERVER_TAG=$2
    # SERVER_ARGS: options for the server itself (e.g. 09-reuseport's -t).
    # shellcheck disable=SC2086 # a list of options
    if server_start "$TMP" "$exe" "${3:-}" ${SERVER_ARGS:-}; then
        # Into the run's cgroup before any client connects: every child and
        # thread it makes for them is born there, and read with it.
        [ -n "$SERVER_CGROUP" ] && echo "$SERVER_PID" >"$SERVER_CGROUP/cgroup.procs" 2>/dev/null
        [ -n "$QUOTA_CGROUP" ] && [ "$QUOTA_CGROUP" != "$SERVER_CGROUP" ] &&
            echo "$SERVER_PID" >"$QUOTA_CGROUP/cgroup.procs" 2>/dev/null
        return 0
    fi
    log "PROBLEM: $SERVER_TAG: $SERVER_ERR"
    keep_server_log
    return 1
}

# Keep a server's stderr if it said anything (04-select's refusals, warnings).
keep_server_log() {
    local kept=$LOGS/$SERVER_TAG.$SERVER_NAME.stderr.log
    [ ! -s "$TMP/server.err" ] || cat "$TMP/server.err" >>"$kept"
}

# measured_stop: SIGTERM, then wait (bounded: SERVER_STOP_TIMEOUT). The
# contract is exit status 0 within a second or two; anything else is the
# server misbehaving, recorded in SERVER_STOP for the run's JSON line (so
# that it counts against the claim the run belongs to).
measured_stop() {
    SERVER_STOP=ok
    [ -n "$SERVER_PID" ] || return 0
    local t0 secs
    t0=$(now)
    server_end "$SERVER_STOP_TIMEOUT"
    case $SERVER_END in
    early) SERVER_STOP="exited with status $SERVER_RC before SIGTERM" ;;
    killed) SERVER_STOP="still running ${SERVER_STOP_TIMEOUT}s after SIGTERM (killed)" ;;
    *) [ "$SERVER_RC" -eq 0 ] || SERVER_STOP="exited with status $SERVER_RC after SIGTERM" ;;
    esac
    [ "$SERVER_STOP" = ok ] || log "PROBLEM: $SERVER_TAG: $SERVER_NAME $SERVER_STOP"
    secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
    if [ "$SERVER_END" = term ] && [ "${secs%.*}" -ge "$SERVER_SLOW_STOP" ]; then
        note_problem "$SERVER_TAG: $SERVER_NAME took ${secs}s to exit after SIGTERM" \
            "(the contract says a second or two)"
    fi
    keep_server_log
}

# ---- ephemeral ports ---------------------------------------------------------
# The budget and its ledger are ladder.sh's (ports_init, port_budget); the
# reproduction says when it waits, and adds up the waits in PORT_WAIT_S.

# shellcheck disable=SC2034 # read by port_budget (ladder.sh)
PORT_SAY=log

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

# ---- the load client -----------------------------------------------------------

# run_loadgen TAGS DEADLINE ARGS...: run LOADGEN ARGS --json --timeout
# DEADLINE (pinned to LOADGEN_CPU when set) under a watchdog LG_MARGIN
# seconds longer (timeout(1) is GNU's: this is the same thing in the
# shell). Each JSON line it prints is tagged with TAGS (a fragment such as
# '"rung":"05-poll","run":1') and left in
# LG_OUT; LG_RC is its exit status (124: the watchdog ended it), LG_ERR the
# end of its stderr.
run_loadgen() {
    local tags=$1 deadline=$2 limit rc watchdog
    shift 2
    limit=$((deadline + LG_MARGIN))
    rm -f "$TMP/lg.killed"
    (pinned "${LOADGEN_CPU:-}" "$LOADGEN" "$@" --json --timeout "$deadline") \
        >"$TMP/lg.out" 2>"$TMP/lg.err" &
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

# save FILE TAGS EXTRA [WHY [CAUSE]]: append LG_OUT to FILE, each line with
# the JSON fragment EXTRA added (and loadgen's last stderr line, when it
# exited non-zero: the first problem it saw). Without a result, a line of
# TAGS and EXTRA, WHY in "error" and CAUSE in "cause" ("server": the server
# did not start; "tool", the default: loadgen gave nothing, or its server's
# CPU quota could not be set), so that the report says why.
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

# unstarted FILE TAGS RC: the line of a run whose server measured_start
# did not start (RC 1: the server's fault; 2: its quota could not be set).
unstarted() {
    LG_OUT=""
    if [ "$3" = 2 ]; then
        save "$1" "$2" "" "$SERVER_ERR" tool
    else
        save "$1" "$2" "" "server did not start: $SERVER_ERR" server
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
    local file=$1 tags=$2 deadline=$3 rung=$4 cpu=$5 extra hwm tag=${1##*/} a args=()
    shift 5
    port_budget "$(ports_for "$@")"
    measured_start "$rung" "${tag%.jsonl}" "$cpu" || { unstarted "$file" "$tags" $?; return 1; }
    # @PID becomes the server's pid (and its cgroup, where the run has one).
    for a in "$@" -p "$SERVER_PORT"; do
        if [ "$a" = @PID ]; then
            args+=("$SERVER_PID")
            [ -n "$SERVER_CGROUP" ] && args+=(--server-cgroup "$SERVER_CGROUP")
        else
            args+=("$a")
        fi
    done
    # c10k times its CPUs against the fastest they ran this run (SPEED_FILE).
    [ "$1" = c10k ] && [ -n "${SPEED_FILE:-}" ] && args+=(--speed-file "$SPEED_FILE")
    run_loadgen "$tags" "$deadline" "${args[@]}"
    ports_closed
    # VmHWM: the most resident memory the server's main process ever had
    # (Linux only; elsewhere loadgen's footprint figure stands in).
    hwm=""
    [ "$USE_PROC" = 1 ] &&
        hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$SERVER_PID/status" 2>/dev/null)
    extra="\"server_hwm_kb\":${hwm:-null}"
    [ -n "${COUNT_LINES:-}" ] &&
        extra="$extra,\"server_refusal_lines\":$(grep -c "$COUNT_LINES" "$TMP/server.err")"
    measured_stop
    extra="$extra,\"server_stop\":\"$SERVER_STOP\""
    save "$file" "$tags" "$extra" "no result (loadgen exit $LG_RC: ${LG_ERR:-no output})"
}

# On exit or interrupt: stop whatever we started, by pid, and nothing else.
bench_cleanup() {
    if [ -n "$LOADGEN_PID" ] && is_running "$LOADGEN_PID" "$LOADGEN_START"; then
        kill -TERM "$LOADGEN_PID" 2>/dev/null
        wait_finished "$LOADGEN_PID" "$LOADGEN_START" 6 || kill -KILL "$LOADGEN_PID" 2>/dev/null
        wait "$LOADGEN_PID" 2>/dev/null
    fi
    LOADGEN_PID=""
    # SIGKILL, past 10 s, to the server's children too (02-fork's, when an
    # interrupt comes while it is still ending them).
    server_end 10
    [ -n "${SERVER_CGROUP:-}" ] && rmdir "$SERVER_CGROUP" 2>/dev/null
    [ -n "${QUOTA_CGROUP:-}" ] && rmdir "$QUOTA_CGROUP" 2>/dev/null
    SERVER_CGROUP="" QUOTA_CGROUP=""
    damon_resume
    [ -n "${TMP:-}" ] && [ -d "$TMP" ] && rm -rf "$TMP"
    return 0
}

# ---- the host around the runs ---------------------------------------------------

# cgroup_init: SERVER_CGROUP, a cpuacct cgroup of this run's own that every
# server is moved into once it listens, so that loadgen reads the server's
# CPU time (all its threads and children) in one reading at each window's
# edge (--server-cgroup). Linux as root, cgroup v1's cpuacct or v2; else ""
# and loadgen sums the processes it finds, CGROUP_TEXT saying so.
SERVER_CGROUP=""
cgroup_init() {
    local dir
    CGROUP_TEXT="the server's CPU time summed over its processes (no cpuacct cgroup here)"
    [ "$USE_PROC" = 1 ] || return 0
    for dir in /sys/fs/cgroup/cpuacct /sys/fs/cgroup/cpu,cpuacct /sys/fs/cgroup; do
        [ -f "$dir/cpuacct.usage" ] || [ -f "$dir/cgroup.controllers" ] || continue
        mkdir "$dir/ladder-reproduce.$$" 2>/dev/null || continue
        SERVER_CGROUP=$dir/ladder-reproduce.$$
        CGROUP_TEXT="the server's CPU time read from a cgroup of its own ($dir), all its"
        CGROUP_TEXT="$CGROUP_TEXT threads and children in one reading at each window's edge"
        break
    done
    # v2's group is also the cpu controller's when that is enabled; so is
    # v1's where cpu and cpuacct share a hierarchy (cpu and cpuacct are then
    # links to one cpu,cpuacct folder, and a second mkdir would fail).
    if [ -f "$SERVER_CGROUP/cpu.max" ] || [ -f "$SERVER_CGROUP/cpu.cfs_quota_us" ]; then
        QUOTA_CGROUP=$SERVER_CGROUP
    elif [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] &&
        mkdir "/sys/fs/cgroup/cpu/ladder-reproduce.$$" 2>/dev/null; then
        QUOTA_CGROUP=/sys/fs/cgroup/cpu/ladder-reproduce.$$
    fi
    return 0
}

# quota_set PCT: the servers started next get PCT% of one CPU (the
# headroom sweeps), "" the whole of it: QUOTA_US of CPU time in each
# period of QUOTA_US x 100 / PCT. QUOTA_US is the kernel's smallest quota
# (1 ms; a period is at least that too), so that a server out of quota
# waits as little as it can for the next period: 1 ms at 50%, 3 ms at 25%.
# Fails, QUOTA_ERR saying why, where there is no cpu cgroup (QUOTA_CGROUP,
# made by cgroup_init) or a file of it cannot be written.
QUOTA_CGROUP=""
QUOTA_US=1000
quota_set() {
    local period=$QUOTA_US quota=max f
    [ -n "$1" ] && quota=$QUOTA_US period=$((QUOTA_US * 100 / $1))
    QUOTA_ERR=""
    if [ -z "$QUOTA_CGROUP" ]; then
        [ -z "$1" ] || QUOTA_ERR="no cpu cgroup here to hold the server to $1% of a CPU"
    elif [ -f "$QUOTA_CGROUP/cpu.max" ]; then
        f=$QUOTA_CGROUP/cpu.max
        echo "$quota $period" >"$f" || QUOTA_ERR="could not write '$quota $period' to $f"
    else
        [ "$quota" = max ] && quota=-1
        f=$QUOTA_CGROUP/cpu.cfs_period_us
        if echo "$period" >"$f"; then
            f=$QUOTA_CGROUP/cpu.cfs_quota_us
            echo "$quota" >"$f" || QUOTA_ERR="could not write $quota to $f"
        else
            QUOTA_ERR="could not write $period to $f"
        fi
    fi
    [ -z "$QUOTA_ERR" ]
}

# damon_pause: DAMON's monitors (the kdamond threads a VM's proactive
# reclaim starts, or the damon_reclaim and damon_lru_sort modules) sample
# pages by visiting every mapping of each. A page that 02-fork's 10 000
# children share has 10 000: kdamond then took 18 to 45% of both CPUs'
# time during its windows, on the server's CPU and the client's (4% with
# DAMON off). As root on Linux, every monitor that is on is turned off for
# the run and back on at its end (bench_cleanup); KEEP_DAMON=1 (--keep-damon)
# leaves them, and loadgen then finds those windows contended. DAMON_TEXT
# says which.
DAMON_PAUSED=""
damon_pause() {
    local f found="" all_paused=Y on
    DAMON_TEXT="none on"
    [ "$USE_PROC" = 1 ] || { DAMON_TEXT="not looked for here (Linux only)"; return 0; }
    for f in /sys/kernel/mm/damon/admin/kdamonds/*/state \
        /sys/module/damon_reclaim/parameters/enabled \
        /sys/module/damon_lru_sort/parameters/enabled; do
        on=Y
        case $f in */state) on=on ;; esac
        [ "$(cat "$f" 2>/dev/null)" = "$on" ] || continue
        found="$found ${f#/sys/}"
        [ "${KEEP_DAMON:-0}" = 1 ] && continue
        if [ "$on" = on ]; then echo off >"$f"; else echo N >"$f"; fi 2>/dev/null &&
            DAMON_PAUSED="$DAMON_PAUSED $f" || all_paused=""
    done
    [ -n "$found" ] || return 0
    if [ "${KEEP_DAMON:-0}" = 1 ]; then
        DAMON_TEXT="on (${found# }), kept on (--keep-damon): its page walks count as contention"
    elif [ -n "$all_paused" ]; then
        DAMON_TEXT="paused for the run (${found# }), back on at its end"
    else
        DAMON_TEXT="on (${found# }) and not paused (not root?): its page walks count as contention"
    fi
    log "DAMON: $DAMON_TEXT"
}

damon_resume() {
    local f
    for f in $DAMON_PAUSED; do
        case $f in */state) echo on >"$f" ;; *) echo Y >"$f" ;; esac 2>/dev/null ||
            log "PROBLEM: could not turn DAMON back on: echo on >$f"
    done
    DAMON_PAUSED=""
}

# host_busy SECONDS: HOST_BUSY, the share of every CPU's time that went to
# work (anyone's: nothing of the run is started yet) over SECONDS, and
# HOST_STEAL, the share stolen by the hypervisor; "" off Linux's /proc.
# From /proc/stat's idle and iowait, which the kernel keeps exactly, not its
# busy fields, which it samples at ticks.
host_busy() {
    HOST_BUSY="" HOST_STEAL=""
    [ "$USE_PROC" = 1 ] || return 0
    local a b sums='/^cpu[0-9]/ { n++; idle += $5 + $6; steal += $9 } END { print n, idle, steal }'
    a=$(awk "$sums" /proc/stat)
    sleep "$1"
    b=$(awk "$sums" /proc/stat)
    a=$(echo "$a $b" | awk -v s="$1" -v hz="$(getconf CLK_TCK)" '{ cap = $1 * s * hz
        steal = 100 * ($6 - $3) / cap; busy = 100 * (1 - ($5 - $2) / cap) - steal
        printf "%.1f %.1f", busy < 0 ? 0 : busy, steal }')
    HOST_BUSY=${a% *} HOST_STEAL=${a#* }
}
