# Sourced by scripts/reproduce.sh: starting and stopping the servers under
# test, running the load client, and cleaning up after both.
#
# Every process started here is tracked by pid and only those pids are ever
# signalled. Every wait is bounded: a server that does not announce itself,
# a load client that does not finish, or a server that does not exit after
# SIGTERM is stopped and reported, never waited on forever.
#
# Expects: BIN (the build's bin/ folder), RAW (where JSON lines go), LOGS
# (where stderr worth keeping goes), TMP (scratch, removed on exit; servers
# built by the script itself, the yardstick and busy-poll, are in TMP/bin).

# Seconds to wait for a server's "listening on 127.0.0.1:PORT" line.
SERVER_START_TIMEOUT=5
# Seconds a server gets to exit after SIGTERM. 02-fork with 10 000 children
# has to signal and reap every one of them.
SERVER_STOP_TIMEOUT=20
# Exiting later than this after SIGTERM is noted in the report.
SERVER_SLOW_STOP=3
# The timeout wrapper gives loadgen this many seconds beyond its own
# deadline (--timeout), so that loadgen, not the wrapper, ends a run that
# overruns: it then prints its partial result and the reason.
LG_MARGIN=15

SERVER_PID=""  # the server now running, if any
SERVER_START="" # its start time (proc_start)
SERVER_PORT=""
SERVER_NAME=""
SERVER_TAG=""  # what it is being used for: names its stderr log
LOADGEN_PID="" # the load client (under timeout) now running, if any
LOADGEN_START=""

PROBLEMS=()    # server misbehaviour: reported, and a non-zero exit
FAILURES=()    # measurements that could not be made: a non-zero exit
NOTES=()       # loadgen gave a result but exited non-zero: worth a look
# Each of them is also a line of RAW/problems.txt, for the report.

START_TIME=$EPOCHREALTIME

# One progress line on stderr, prefixed with the elapsed time.
log() {
    local now=$EPOCHREALTIME
    awk -v a="$START_TIME" -v b="$now" -v msg="$*" \
        'BEGIN { printf "[%6.1fs] %s\n", b - a, msg > "/dev/stderr" }'
}

problem() {
    PROBLEMS+=("$*")
    log "PROBLEM: $*"
    echo "server: $*" >>"$RAW/problems.txt"
}

failure() {
    FAILURES+=("$*")
    log "FAILED: $*"
    echo "measurement not made: $*" >>"$RAW/problems.txt"
}

note() {
    NOTES+=("$*")
    echo "note: $*" >>"$RAW/problems.txt"
}

# The CPUs this process may run on (its affinity: a container's cpuset or a
# taskset around the script), as "0 1 ...". CPU 0 is not always among them.
allowed_cpus() {
    local list
    list=$(taskset -cp $$ 2>/dev/null | sed -n 's/.*: *//p')
    [ -n "$list" ] || list=$(cat /sys/fs/cgroup/cpuset.cpus.effective 2>/dev/null)
    [ -n "$list" ] || list="0-$(($(nproc 2>/dev/null || echo 1) - 1))"
    awk -v l="$list" 'BEGIN {
        n = split(l, part, ",")
        for (i = 1; i <= n; i++) {
            m = split(part[i], r, "-")
            for (c = r[1] + 0; c <= r[m] + 0; c++) printf "%s%d", (out++ ? " " : ""), c
        }
    }'
}

# The start time of a process (clock ticks after boot, field 22 of
# /proc/PID/stat), or "" if there is no such process. With the pid, it names
# one process for good: a pid alone may be reused once its owner is gone.
proc_start() {
    local stat
    read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
    stat=${stat##*) }
    set -- $stat
    printf '%s' "${20}"
}

# The one-letter state of process PID started at START, or "" if it is gone.
# A child that has exited but not been waited for is a zombie, "Z": kill -0
# would still succeed on it. bash may also reap it early and keep its status
# for `wait`, in which case it is simply gone.
proc_state() {
    local stat start=${2:-}
    read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
    stat=${stat##*) }
    set -- $stat # from field 3 (state) on: starttime, field 22, is ${20}
    [ -z "$start" ] || [ "${20}" = "$start" ] || return 0
    printf '%s' "$1"
}

# is_running PID START
is_running() {
    local s
    s=$(proc_state "$1" "${2:-}")
    [ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ]
}

# Microseconds since the epoch, as an integer bash can compare.
now_us() {
    local t=$EPOCHREALTIME
    printf '%s' "${t/[.,]/}"
}

# wait_finished PID START SECONDS: wait until that process has finished (or
# is gone), at most SECONDS (whole). 0 if it has.
wait_finished() {
    local pid=$1 start=$2 deadline
    deadline=$(($(now_us) + $3 * 1000000))
    while is_running "$pid" "$start"; do
        [ "$(now_us)" -ge "$deadline" ] && return 1
        sleep 0.05
    done
    return 0
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
    if [ -n "$cpu" ]; then
        taskset -c "$cpu" "$exe" -p 0 -b 127.0.0.1 >"$out" 2>"$err" &
    else
        "$exe" -p 0 -b 127.0.0.1 >"$out" 2>"$err" &
    fi
    SERVER_PID=$!
    SERVER_START=$(proc_start "$SERVER_PID")
    local tries=$((SERVER_START_TIMEOUT * 20)) line=""
    while [ "$tries" -gt 0 ]; do
        line=$(grep -m1 '^listening on 127\.0\.0\.1:[0-9][0-9]*$' "$out" || true)
        [ -n "$line" ] && break
        is_running "$SERVER_PID" "$SERVER_START" || break
        sleep 0.05
        tries=$((tries - 1))
    done
    if [ -z "$line" ]; then
        failure "$tag: $rung did not print 'listening on 127.0.0.1:PORT' within ${SERVER_START_TIMEOUT}s ($(tail -n 2 "$err" | tr '\n' ' '))"
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
# within a second or two; anything else is a problem worth reporting.
stop_server() {
    [ -n "$SERVER_PID" ] || return 0
    local rc t0=$EPOCHREALTIME
    STOP_SECONDS=""
    if ! is_running "$SERVER_PID" "$SERVER_START"; then
        wait "$SERVER_PID"
        rc=$?
        problem "$SERVER_TAG: $SERVER_NAME had already exited (status $rc) before SIGTERM"
        keep_server_log
        SERVER_PID=""
        return 0
    fi
    kill -TERM "$SERVER_PID"
    if ! wait_finished "$SERVER_PID" "$SERVER_START" "$SERVER_STOP_TIMEOUT"; then
        problem "$SERVER_TAG: $SERVER_NAME still running ${SERVER_STOP_TIMEOUT}s after SIGTERM; killed"
        kill_server
        return 0
    fi
    wait "$SERVER_PID"
    rc=$?
    [ "$rc" -eq 0 ] || problem "$SERVER_TAG: $SERVER_NAME exited with status $rc after SIGTERM (expected 0)"
    STOP_SECONDS=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
    if [ "${STOP_SECONDS%.*}" -ge "$SERVER_SLOW_STOP" ]; then
        note "$SERVER_TAG: $SERVER_NAME took ${STOP_SECONDS}s to exit after SIGTERM (the contract says a second or two)"
    fi
    keep_server_log
    SERVER_PID=""
}

# run_loadgen TAGS DEADLINE ARGS...: run bin/loadgen ARGS --json
# --timeout DEADLINE, inside a `timeout` wrapper LG_MARGIN seconds longer.
# Each JSON line it prints is tagged with TAGS (a fragment such as
# '"rung":"05-poll","run":1') and left in LG_OUT; LG_RC is its exit status
# (124: the wrapper ended it), LG_ERR the end of its stderr.
run_loadgen() {
    local tags=$1 deadline=$2
    shift 2
    # timeout puts itself and loadgen in a process group of their own; the
    # cleanup trap signals timeout's pid, which passes the signal on.
    timeout -k 5 "$((deadline + LG_MARGIN))" "$BIN/loadgen" "$@" --json --timeout "$deadline" \
        >"$TMP/lg.out" 2>"$TMP/lg.err" &
    LOADGEN_PID=$!
    LOADGEN_START=$(proc_start "$LOADGEN_PID")
    wait "$LOADGEN_PID"
    LG_RC=$?
    LOADGEN_PID=""
    LG_OUT=$(sed -n "s/^{/{$tags,/p" "$TMP/lg.out")
    LG_ERR=$(tail -n 3 "$TMP/lg.err" | tr '\n"\\' ' ' | sed 's/ *$//')
    case $LG_RC in
    124 | 137) LG_ERR="killed by the timeout wrapper after $((deadline + LG_MARGIN))s${LG_ERR:+; $LG_ERR}" ;;
    esac
    [ "$LG_RC" -ne 0 ] && [ -n "$LG_OUT" ] && note "loadgen ${tags//\"/} exited $LG_RC with a result: $LG_ERR"
    if [ -s "$TMP/lg.err" ]; then
        {
            printf '== loadgen %s (exit %s)\n' "$*" "$LG_RC"
            cat "$TMP/lg.err"
        } >>"$LOGS/loadgen.stderr.log"
    fi
    return 0
}

# save FILE TAGS [EXTRA]: append LG_OUT to FILE, each line with the JSON
# fragment EXTRA added; without a result, a line of TAGS and the reason in
# "error", so that the report says "run failed" rather than nothing.
save() {
    local file=$1 tags=$2 extra=${3:+,$3}
    if [ -n "$LG_OUT" ]; then
        printf '%s\n' "$LG_OUT" | sed "s/}\$/$extra}/" >>"$file"
    else
        printf '{%s,"error":"%s"}\n' "$tags" "$4" >>"$file"
        failure "${file##*/} ${tags//\"/}: $4"
    fi
}

# one_run FILE TAGS DEADLINE RUNG CPU LOADGEN-ARGS...: a fresh RUNG (pinned
# to CPU unless it is ""), one loadgen run against it (-p PORT is added),
# the result saved with the server's peak RSS, then SIGTERM. An argument
# @PID stands for the server's pid (for --server-pid). With
# COUNT_LINES=WORD set, the server's stderr lines naming WORD are counted
# into "server_refusal_lines".
one_run() {
    local file=$1 tags=$2 deadline=$3 rung=$4 cpu=$5 extra hwm tag=${1##*/}
    shift 5
    if ! start_server "$rung" "${tag%.jsonl}" "$cpu"; then
        LG_OUT=""
        save "$file" "$tags" "" "server did not start"
        return 1
    fi
    local args=() a
    for a in "$@"; do args+=("${a/#@PID/$SERVER_PID}"); done
    run_loadgen "$tags" "$deadline" "${args[@]}" -p "$SERVER_PORT"
    # VmHWM: the most resident memory the server's main process ever had.
    hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$SERVER_PID/status" 2>/dev/null)
    extra="\"server_hwm_kb\":${hwm:-null}"
    [ -n "${COUNT_LINES:-}" ] && extra="$extra,\"server_refusal_lines\":$(grep -c "$COUNT_LINES" "$TMP/server.err")"
    save "$file" "$tags" "$extra" "no result (loadgen exit $LG_RC: ${LG_ERR:-no output})"
    stop_server
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
