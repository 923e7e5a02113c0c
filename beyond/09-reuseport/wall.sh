#!/bin/sh
# 09-reuseport's wall (make wall): 07's loop once per CPU, each with its own
# listener on the port; how the kernel spread the connections. Shared
# parts: scripts/lib/wall.sh.
. ../../scripts/lib/wall.sh

demo() {
    need_fds 10100
    say "09-reuseport: 07's loop once per CPU, each with its own listener on the port." \
        "10 000 clients at once for 2 s; then each loop says how many it took (-v, at exit)."
    start_server free -v
    port_budget 10000
    loadgen c10k -n 10000 --duration 2 $(server_pid_opt)
    ports_closed
    stop_server
    served=$(key served)
    need "$served" "served count"
    counts="lost $(key lost), corrupt $(key corrupt)"
    cpu=$(shown "$(key server_cpu_pct)" "% of one core")
    say "" "  served $served of $(key requested), $counts;" \
        "  $(shown "$(key msgs_per_s)") echoes per second; server CPU $cpu"
    grep 'loop [0-9]*: [0-9]* connections' "$tmp/server.err" | sed 's/^[^:]*: /  /'
    say "  expect: one line per online CPU, the counts close to 10 000 / loops: the kernel" \
        "  hashes each connection's addresses and ports to one listener. On 2 cores the load" \
        "  client takes one of them, so the echo rate is the client's, not the loops'."
    walls "SO_REUSEPORT spreads connections on Linux (3.9+)" \
        "FreeBSD: SO_REUSEPORT_LB (12.0+); plain SO_REUSEPORT does not spread" \
        "macOS: SO_REUSEPORT binds but does not spread: one listener gets them"
}

wall_main
