#!/bin/sh
# 05-poll's wall (make wall): no ceiling, but still O(n). Shared parts:
# scripts/lib/wall.sh.
. ../scripts/lib/wall.sh

demo() {
    say "05-poll: no ceiling, but still O(n): one client's round trip beside 0 to 10 000 idle ones."
    idle_scan
    at_10k="1839.1 µs at 10 000 (296.63x)."
    say "  expect: growth with the idle count, at least in proportion past 1000: poll() hands the" \
        "  kernel all n descriptors on every call and the server walks all n results. The" \
        "  reference run (docs/reference/): 6.2 µs at 0 idle, 59.8 µs at 1000, $at_10k"
    if [ "$os" = Darwin ]; then
        here="poll() refuses more than OPEN_MAX = 10240 descriptors (EINVAL), whatever the fd limit"
    else
        here="poll() takes as many descriptors as the fd limit allows (ulimit -Hn: $(limit -Hn))"
    fi
    walls "$here" \
        "Linux and FreeBSD: no ceiling of its own; the fd limit is the one" \
        "macOS: OPEN_MAX, 10240 (XNU's poll(): nfds above it is EINVAL): 04's FD_SETSIZE" \
        "       again, ten times higher"
    accept_queue_note
}

wall_main
