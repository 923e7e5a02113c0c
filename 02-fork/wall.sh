#!/bin/sh
# 02-fork's wall (make wall): every client costs a process, up to the
# processes this user may still start (room_for, scripts/lib/ladder.sh).
# Shared parts: scripts/lib/wall.sh.
. ../scripts/lib/wall.sh

demo() {
    n=$(room_for 02-fork 1000)
    if [ "$n" -lt 1000 ]; then
        [ "$n" -ge 10 ] || fail "this user may start only $n more processes" \
            "(ulimit -u: $(limit -u)); that cap is 02's wall here: raise it (ulimit -u," \
            "or on macOS sudo sysctl kern.maxprocperuid=...) to see more"
        say "02-fork: every client costs a process. This user may start only about $n more" \
            "processes here, so $n clients (not 1000) connect, echo once each, then idle 3 s."
    else
        say \
    "02-fork: every client costs a process. 1000 clients connect, echo once each, then idle 3 s."
    fi
    start_server free
    loadgen_bg hold -n $n --duration 3 $(server_pid_opt)
    # Count the server's children while the clients are held, not after.
    most=0
    while loadgen_running; do
        k=$(pgrep -P "$SERVER_PID" 2>/dev/null | wc -l | tr -d ' ')
        [ "$k" -gt "$most" ] && most=$k
        sleep 0.2
    done
    loadgen_wait
    served=$(key served); setup=$(shown "$(key setup_us_per_conn)" " µs")
    need "$served" "served count"
    say "" "  served $served clients; setup $setup per connection (connect to first echo)" \
        "  processes while held: $((most + 1)) (the parent and $most children, pgrep -P)"
    memory
    linux_only "server memory (RSS, PSS)"
    accept_queue_note
    expect="  expect: $((n + 1)) processes and tens of KiB of PSS per process"
    say "$expect (summed RSS says hundreds of" \
        "  MB). Setup is a fork() per client, which copies the parent's page tables: from under" \
        "  0.1 ms to over 1 ms depending on the machine and its load; an event loop accepts a" \
        "  client in tens of µs. The reference run (docs/reference/) measured 35.61 KiB and" \
        "  104.1 µs per client at 10 000 clients, on a 2-core machine."
    wall
}

# memory: PSS and RSS over the server's processes (Linux's /proc).
memory() {
    [ "$USE_PROC" = 1 ] || return 0
    pss=$(key server_pss_kb); rss=$(key server_rss_kb); procs=$(key server_procs)
    need "$pss" server_pss_kb
    each=$(shown "$(ratio "$pss" "$procs")" " KiB")
    say "  memory: $pss KiB PSS over $procs processes = $each per process;" \
        "          RSS sums to $rss KiB, because it counts every shared page once per process"
}

wall() {
    here="ulimit -u = $(limit -u) processes per user (RLIMIT_NPROC)"
    per_uid=$(kern kern.maxprocperuid)
    [ -n "$per_uid" ] && here="$here, kern.maxprocperuid = $per_uid"
    walls "$here: past it fork() fails (EAGAIN)" \
        "Linux: RLIMIT_NPROC, in the tens of thousands by default (not applied to root)" \
        "macOS: kern.maxprocperuid, often 1300-2700: a class of Macs meets it first" \
        "FreeBSD: kern.maxprocperuid as well (ulimit -u)"
}

wall_main
