#!/bin/sh
# 04-select's wall (make wall): the FD_SETSIZE ceiling, then the O(n) scan.
# Shared parts: scripts/lib/wall.sh.
. ../scripts/lib/wall.sh

demo() {
    need_fds 1200
    say "04-select: the FD_SETSIZE ceiling, then the O(n) scan."
    start_server pinned
    say "" "1. 1100 clients at once (select's fd_set holds descriptors 0 to 1023):"
    loadgen hold -n 1100 --duration 2 --allow-refused
    served=$(key served); refused=$(key refused)
    lost=$(key lost); open=$(key still_open)
    need "$served" "served count"
    msgs=$(grep -c FD_SETSIZE "$tmp/server.err")
    storm="(one per run of refusals, not one per client: a storm must not flood the log):"
    said="the server said so in $msgs line(s) naming FD_SETSIZE"
    say "  served $served, refused $refused; $said" \
        "  $storm" \
        "    $(grep -m1 FD_SETSIZE "$tmp/server.err")" \
        "  still open after 2 s idle: $open, lost: $lost" \
        "  expect: about 1016 served (the descriptors below 1024 not already in use), the rest" \
        "  refused with a message, and the served ones still echoing."
    say "" "2. one client's round trip beside 0, 100 and 1000 idle ones, 2 s each:"
    scan 0,100,1000
    say "  expect: the round trip and the server's CPU per round trip grow with the idle count:" \
        "  select() copies and scans the whole fd_set on every wakeup. The reference run" \
        "  (docs/reference/) went from 6.4 µs to 57.7 µs (9.02x)."
    walls "FD_SETSIZE = 1024 descriptors in an fd_set, fixed when the program is compiled" \
        "Linux (glibc): 1024; FD_SET() past it writes past the set" \
        "macOS: 1024 too; select() returns EINVAL for nfds above it, unless the program is" \
        "       built with _DARWIN_UNLIMITED_SELECT" \
        "FreeBSD: 1024 unless the program defines FD_SETSIZE larger before <sys/select.h>"
}

wall_main
