# Sourced by scripts/reproduce.sh (its measure_syscalls): the system calls
# a server makes per message echoed, counted outside the timed runs, since
# a traced server is slower. For each server: start it as every run does
# (bench.sh's measured_start), attach `strace -c -f -p PID` (every thread),
# offer a fixed number of messages with one open-loop loadgen run (SYSCALL_N
# connections, SYSCALL_RATE msgs/s for SYSCALL_DURATION s, well under every
# server's capacity), detach strace (SIGINT: it writes its table), stop the
# server with SIGTERM. The row in RAW/syscalls.jsonl is loadgen's JSON line
# with strace's totals added: "syscalls" (every call the server made, from
# the first connection to the last close), "messages" (the echoes loadgen
# verified: bytes_verified / size), and "calls", each call's name and count,
# most frequent first. A server that could not be traced gets a line with
# "error" saying why ("cause":"platform": strace missing, ptrace refused,
# io_uring refused): the report says "not measured" and the reason.
# Written in the bash 3.2 subset, as bench.sh is.

# SYSCALL_RUNGS, SYSCALL_N, SYSCALL_RATE and SYSCALL_DURATION are the claims'
# table's (scripts/lib/claims.txt).
SYSCALL_ATTACH_S=5   # how long strace may take to attach to every thread

# syscalls_stub RUNG WHY: the line of a server that was not traced.
syscalls_stub() {
    printf '{"rung":"%s","requested":%s,"rate_offered":%s,"cause":"platform","error":"%s"}\n' \
        "$1" "$SYSCALL_N" "$SYSCALL_RATE" "$(printf '%s' "$2" | tr -d '"\\')" \
        >>"$RAW/syscalls.jsonl"
    log "syscalls: $1: not measured ($2)"
}

# syscalls_table FILE: strace -c's table as TMP/strace.total ("TOTAL ERRORS")
# and TMP/strace.calls ("NAME=CALLS ...", the names most frequent first).
# Its rows: % time, seconds, usecs/call, calls, errors (blank when none),
# name; the last row's name is "total".
syscalls_table() {
    awk '$1 ~ /^[0-9.]+$/ && NF >= 5 {
             if ($NF == "total") { total = $4; errors = (NF >= 6 ? $5 : 0); next }
             print $4, $NF
         }
         END { print total + 0, errors + 0 > "/dev/stderr" }' "$1" 2>"$TMP/strace.total" |
        sort -rn | awk '{ list = list (NR > 1 ? " " : "") $2 "=" $1 } END { print list }' \
        >"$TMP/strace.calls"
}

# syscalls_attach PID: strace -c -f on PID, in the background (TRACER_PID);
# 0 once it says it attached, else 1 with the reason in TRACE_ERR.
syscalls_attach() {
    local tries=$((SYSCALL_ATTACH_S * 20))
    : >"$TMP/strace.err"
    strace -c -f -o "$TMP/strace.txt" -p "$1" 2>"$TMP/strace.err" &
    TRACER_PID=$!
    TRACER_START=$(proc_start "$TRACER_PID")
    while [ "$tries" -gt 0 ]; do
        grep -q 'attached' "$TMP/strace.err" && return 0
        is_running "$TRACER_PID" "$TRACER_START" || break
        sleep 0.05
        tries=$((tries - 1))
    done
    TRACE_ERR="strace could not trace the server: $(head -n 1 "$TMP/strace.err" | tr -d '"\\')"
    syscalls_detach
    return 1
}

# syscalls_detach: SIGINT to our strace (it detaches and writes its table), bounded.
syscalls_detach() {
    [ -n "${TRACER_PID:-}" ] || return 0
    kill -INT "$TRACER_PID" 2>/dev/null
    wait_finished "$TRACER_PID" "$TRACER_START" 10 || kill -KILL "$TRACER_PID" 2>/dev/null
    wait "$TRACER_PID" 2>/dev/null
    TRACER_PID=""
}

# syscalls_one RUNG: one traced run of RUNG, its line appended to syscalls.jsonl.
syscalls_one() {
    local rung=$1 tags="\"rung\":\"$1\"" total errors calls msgs extra rc=0
    if [ ! -x "$BIN/$rung" ]; then syscalls_stub "$rung" "not built on this platform"; return 0; fi
    port_budget "$SYSCALL_N"
    measured_start "$rung" syscalls "$C10K_SERVER_CPU" || rc=$?
    if [ "$rc" != 0 ]; then
        # Any failed start but io_uring's refusal is the server's, or the host's.
        if [ "$rc" = 1 ] && io_uring_refused "$rung"; then
            syscalls_stub "$rung" "io_uring refused here (${SERVER_ERR#*(}"
        else
            unstarted "$RAW/syscalls.jsonl" "$tags" "$rc"
        fi
        return 0
    fi
    if ! syscalls_attach "$SERVER_PID"; then
        measured_stop
        syscalls_stub "$rung" "$TRACE_ERR"
        return 0
    fi
    log "syscalls: $rung under strace -c -f, $SYSCALL_N connections," \
        "$SYSCALL_RATE msgs/s for ${SYSCALL_DURATION}s"
    LOADGEN_CPU=$C10K_CLIENT_CPU run_loadgen "$tags" $((${SYSCALL_DURATION%.*} + 60)) \
        c10k -n "$SYSCALL_N" --rate "$SYSCALL_RATE" --duration "$SYSCALL_DURATION" -p "$SERVER_PORT"
    syscalls_detach
    measured_stop
    syscalls_table "$TMP/strace.txt"
    read -r total errors <"$TMP/strace.total"
    calls=$(cat "$TMP/strace.calls")
    msgs=$(printf '%s\n' "$LG_OUT" | awk '{ b = $0; s = $0
        sub(/.*"bytes_verified":/, "", b); sub(/[,}].*/, "", b)
        sub(/.*"size":/, "", s); sub(/[,}].*/, "", s)
        if (b + 0 > 0 && s + 0 > 0) printf "%d", b / s }')
    extra="\"tracer\":\"strace -c -f\",\"syscalls\":$total,\"syscall_errors\":$errors"
    extra="$extra,\"messages\":${msgs:-null}"
    extra="$extra,\"calls\":\"$calls\",\"server_stop\":\"$SERVER_STOP\""
    if [ "$total" -eq 0 ]; then
        LG_OUT=""
        save "$RAW/syscalls.jsonl" "$tags" "" \
            "strace counted no system calls ($(head -n 1 "$TMP/strace.err"))"
        return 0
    fi
    save "$RAW/syscalls.jsonl" "$tags" "$extra" \
        "no result (loadgen exit $LG_RC: ${LG_ERR:-no output})"
    printf '%s\n' "$LG_OUT" | grep -Eq \
        '"(lost|corrupt|unanswered|connect_failed|duplicated|timed_out)":[1-9]' &&
        problem "syscalls: $rung misbehaved under strace ($LG_ERR)"
    [ "$SERVER_STOP" = ok ] || problem "syscalls: $rung $SERVER_STOP"
    return 0
}

# syscalls_measure: every server of SYSCALL_RUNGS; strace missing, or a
# platform without it, makes each line "not measured" with the reason.
syscalls_measure() {
    local rung why=""
    if [ "$PLATFORM" != Linux ]; then
        why="strace is Linux's (no tracer is used on $PLATFORM)"
    elif ! command -v strace >/dev/null 2>&1; then
        why="strace not found (install: apt-get install strace)"
    fi
    for rung in $SYSCALL_RUNGS; do
        if [ -n "$why" ]; then syscalls_stub "$rung" "$why"; else syscalls_one "$rung"; fi
    done
}
