# Sourced by scripts/reproduce.sh: starting and stopping the servers under
# test, running the load client, and cleaning up after both.
#
# Every process started here is tracked by pid and only those pids are ever
# signalled. Every wait is bounded: a server that does not announce itself,
# a load client that does not finish, or a server that does not exit after
# SIGTERM is stopped and reported, never waited on forever.
#
# Expects: BIN (the build's bin/ folder), RAW (where JSON lines go), LOGS
# (where stderr worth keeping goes), TMP (scratch, removed on exit).

# Seconds to wait for a server's "listening on 127.0.0.1:PORT" line.
SERVER_START_TIMEOUT=5
# Seconds a server gets to exit after SIGTERM. 02-fork with 10 000 children
# has to signal and reap every one of them.
SERVER_STOP_TIMEOUT=20
# Exiting later than this after SIGTERM is noted in the report.
SERVER_SLOW_STOP=3

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
}

failure() {
    FAILURES+=("$*")
    log "FAILED: $*"
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

# start_server RUNG TAG [CPU]: start bin/RUNG on a kernel-chosen loopback
# port, pinned to CPU if given, and wait for its announcement. Sets
# SERVER_PID and SERVER_PORT. Returns non-zero (and records a failure) if it
# does not come up.
start_server() {
    local rung=$1 tag=$2 cpu=${3:-}
    local out="$TMP/server.out" err="$TMP/server.err"
    : >"$out"
    : >"$err"
    SERVER_NAME=$rung
    SERVER_TAG=$tag
    if [ -n "$cpu" ]; then
        taskset -c "$cpu" "$BIN/$rung" -p 0 -b 127.0.0.1 >"$out" 2>"$err" &
    else
        "$BIN/$rung" -p 0 -b 127.0.0.1 >"$out" 2>"$err" &
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
        NOTES+=("$SERVER_TAG: $SERVER_NAME took ${STOP_SECONDS}s to exit after SIGTERM (the contract says a second or two)")
    fi
    keep_server_log
    SERVER_PID=""
}

# run_loadgen RAWFILE TAGS TIMEOUT ARGS...: run bin/loadgen ARGS --json under
# a time limit. Each JSON line it prints is tagged with TAGS (a fragment such
# as '"rung":"05-poll","rep":1') and appended to RAWFILE; the tagged lines
# are also left in LG_OUT. LG_RC is its exit status (124: timed out).
run_loadgen() {
    local rawfile=$1 tags=$2 limit=$3
    shift 3
    # timeout puts itself and loadgen in a process group of their own; the
    # cleanup trap signals timeout's pid, which passes the signal on.
    timeout -k 5 "$limit" "$BIN/loadgen" "$@" --json >"$TMP/lg.out" 2>"$TMP/lg.err" &
    LOADGEN_PID=$!
    LOADGEN_START=$(proc_start "$LOADGEN_PID")
    wait "$LOADGEN_PID"
    LG_RC=$?
    LOADGEN_PID=""
    LG_OUT=$(sed -n "s/^{/{$tags,/p" "$TMP/lg.out")
    [ -n "$LG_OUT" ] && printf '%s\n' "$LG_OUT" >>"$rawfile"
    LG_ERR=$(tail -n 3 "$TMP/lg.err" | tr '\n' ' ' | sed 's/ *$//')
    case $LG_RC in
    124 | 137) LG_ERR="killed by timeout after ${limit}s${LG_ERR:+; $LG_ERR}" ;;
    esac
    if [ "$LG_RC" -ne 0 ] && [ -n "$LG_OUT" ]; then
        NOTES+=("loadgen $1 (${tags//\"/}) exited $LG_RC with a result: $LG_ERR")
    fi
    if [ -s "$TMP/lg.err" ]; then
        {
            printf '== loadgen %s (exit %s)\n' "$*" "$LG_RC"
            cat "$TMP/lg.err"
        } >>"$LOGS/loadgen.stderr.log"
    fi
    return 0
}

# The value of KEY in a flat JSON object (numbers, booleans, plain strings).
json_get() {
    awk -v k="$1" "$AWK_JSON"'{ print jget($0, k); exit }' <<<"$2"
}

# Used by every awk program that reads JSON lines.
AWK_JSON='
function jget(s, k,    i, r) {
    i = index(s, "\"" k "\":")
    if (i == 0) return ""
    r = substr(s, i + length(k) + 3)
    sub(/[,}].*/, "", r)
    gsub(/"/, "", r)
    return r
}
'

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
