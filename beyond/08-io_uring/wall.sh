#!/bin/sh
# 08-io_uring's wall (make wall): the same echo as 07, requests and
# completions instead of readiness, against 07-epoll at the same open-loop
# load: CPU per echo, and system calls per echo where strace may trace the
# server. Shared parts: scripts/lib/wall.sh.
. ../../scripts/lib/wall.sh

demo() {
    rate=20000
    need_fds 1100
    say "08-io_uring: the same echo as 07, requests and completions instead of readiness." \
        "1000 clients, $rate messages per second in all (open loop), against 07-epoll and 08."
    make -s -C $top/07-epoll server-release CC="$CC" >/dev/null || fail "07-epoll did not build"
    for which in 07 08; do
        server_bin=./server-release
        [ $which = 07 ] && server_bin=$top/07-epoll/server-release
        start_server free
        loadgen c10k -n 1000 --rate "$rate" --duration 3 $(server_pid_opt)
        per_message "$which:"
        syscalls_per_message "$which:"
        stop_server
    done
    server_bin=""
    linux_only "server CPU per echo"
    say "  expect: both keep up at about the same CPU per echo: the socket work in the kernel is" \
        "  the same. What changes is the system calls: 07 makes a read(), a write() and a share" \
        "  of an epoll_wait() per echo (about 3-5), 08 one io_uring_enter() per turn for all the" \
        "  turn's requests (well under 1 per echo once turns batch several messages)."
}

# per_message LABEL: one line from the last c10k run, its server CPU per echo.
per_message() {
    msgs=$(key msgs); scpu=$(key server_cpu_ms)
    need "$msgs" "message count"
    if [ -n "$scpu" ]; then
        cost="$(calc "$scpu * 1000 / ($msgs + 0.000001)") µs of server CPU per echo"
    else
        cost="server CPU not read on this path"
    fi
    say "  $1 $(key msgs_per_s) echoes/s of the offered $rate, p50 $(key rtt_p50_us) µs," \
        "     p99 $(key rtt_p99_us) µs; $cost"
}

# syscalls_per_message LABEL: strace -c over a second of the same load, if
# strace is here and may trace the server.
syscalls_per_message() {
    if ! command -v strace >/dev/null 2>&1; then
        say "  $1 system calls per echo: not measured (strace is not installed)"; return 0
    elif [ "$USE_PROC" = 0 ]; then
        say "  $1 system calls per echo: not measured (strace is not used on this path)"; return 0
    fi
    strace -c -f -p "$SERVER_PID" -o "$tmp/strace" 2>/dev/null &
    tracer=$!
    sleep 0.5
    loadgen c10k -n 1000 --rate "$rate" --duration 2
    kill -INT "$tracer" 2>/dev/null; wait "$tracer" 2>/dev/null
    calls=$(awk '$NF == "total" { print $4; exit }' "$tmp/strace" 2>/dev/null)
    if is_number "$calls" && [ -n "$(key msgs)" ]; then
        say "  $1 $(calc "$calls / ($(key msgs) + 0.000001)") system calls per echo (strace -c -f)"
    else
        say "  $1 system calls per echo: not measured (strace could not trace the server)"
    fi
}

wall_main
