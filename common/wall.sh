#!/bin/sh
# shellcheck disable=SC2046,SC2086,SC3045
# (server_pid_opt and cpu_opt expand to nothing or to two words on purpose;
# ulimit -s is not in POSIX but every sh this runs under has it)
# make wall: one rung's wall, measured and explained. Run by `make wall` in a
# phase folder, after make has built ./server-release (-O2, no sanitizers).
#
# It builds the load client (../build/wall/loadgen) with the C compiler alone,
# starts ./server-release on a port the kernel picks, runs the rung's
# demonstration, prints each figure beside what to expect and why, and stops
# the server whatever happens: on success, on failure and on Ctrl-C.
# Exit status: 0 when the demonstration measured, 1 when it could not.
#
# Plain POSIX sh, so that it runs wherever make does (macOS, the BSDs).
set -u

rung=$(basename "$(pwd)")
case $rung in
0[1-7]-*) ;;
*) echo "wall.sh: run it from a phase folder (make wall)" >&2; exit 2 ;;
esac
[ -x ./server-release ] || { echo "wall.sh: ./server-release missing; run make wall" >&2; exit 2; }

LOADGEN=../build/wall/loadgen
CC=${CC:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wall.XXXXXX") || exit 1
server_pid=""
bg_pid=""
port=""

# --- stopping what we started --------------------------------------------

# SIGTERM, as a user would stop it; 02-fork then ends its children itself.
# Only if that fails: SIGKILL, to the server's own children first.
stop_server() {
    [ -n "$server_pid" ] || return 0
    kill -TERM "$server_pid" 2>/dev/null
    i=0
    while kill -0 "$server_pid" 2>/dev/null && [ $i -lt 50 ]; do
        sleep 0.1; i=$((i + 1))
    done
    if kill -0 "$server_pid" 2>/dev/null; then
        echo "wall: the server ignored SIGTERM for 5 s; killing it" >&2
        for child in $(pgrep -P "$server_pid" 2>/dev/null); do kill -KILL "$child" 2>/dev/null; done
        kill -KILL "$server_pid" 2>/dev/null
    fi
    wait "$server_pid" 2>/dev/null
    server_pid=""
}

cleanup() {
    trap '' INT TERM HUP
    if [ -n "$bg_pid" ]; then
        kill -TERM "$bg_pid" 2>/dev/null
        wait "$bg_pid" 2>/dev/null
        bg_pid=""
    fi
    stop_server
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo; echo "wall: interrupted; stopping the server" >&2; exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

fail() {
    echo "wall: $*" >&2
    echo "wall: could not measure; nothing is left running" >&2
    exit 1
}

# --- the load client ------------------------------------------------------

# The event loop like clients/CMakeLists.txt picks it: epoll on Linux, kqueue
# where <sys/event.h> exists, poll(2) elsewhere. Rebuilt when a source changed.
build_loadgen() {
    if [ -x "$LOADGEN" ] &&
        [ -z "$(find ../clients -newer "$LOADGEN" \( -name '*.c' -o -name '*.h' \) 2>/dev/null)" ]; then
        return 0
    fi
    if [ "$(uname -s)" = Linux ]; then
        loop=epoll
    elif echo '#include <sys/event.h>' | $CC -E -x c - >/dev/null 2>&1; then
        loop=kqueue
    else
        loop=poll
    fi
    set --
    for f in ../clients/*.c; do
        case $f in
        */loop_*.c) ;;                      # one backend, chosen above
        */loadgen.c) set -- "$@" "$f" ;;
        *) grep -q "^int main(" "$f" || set -- "$@" "$f" ;; # not another program
        esac
    done
    mkdir -p ../build/wall || fail "cannot create ../build/wall"
    echo "building the load client ($loop event loop): $LOADGEN"
    # shellcheck disable=SC2086 # CFLAGS/LDFLAGS are lists of flags
    $CC -std=c11 -O2 -Wall -Wextra -Werror ${CFLAGS:-} -o "$LOADGEN" "$@" \
        "../clients/loop_$loop.c" ${LDFLAGS:-} -lm || fail "the load client did not build"
}

# --- pinning and what this system can show ---------------------------------

# The scans pin server and client to one CPU, as scripts/reproduce.sh does:
# a round trip is then two context switches on one warm core, not a cross-CPU
# wake-up whose cost depends on what the other core is doing. The CPU is the
# first one this shell may run on.
pin_cpu=""
if command -v taskset >/dev/null 2>&1 && [ -r /proc/self/status ]; then
    pin_cpu=$(awk '/^Cpus_allowed_list:/ { split($2, a, /[-,]/); print a[1]; exit }' /proc/self/status)
fi
have_proc=no
[ -r /proc/self/status ] && have_proc=yes

pin_note() {
    if [ -n "$pin_cpu" ]; then
        echo "  (server and client pinned to CPU $pin_cpu: taskset and loadgen --cpu)"
    else
        echo "  (not pinned: taskset is Linux-only; expect noisier round trips)"
    fi
}

# --- the server -------------------------------------------------------------

# start_server pinned|free [server options]: start ./server-release on a
# kernel-chosen port and read the port from its one announcement line.
start_server() {
    how=$1; shift
    : >"$tmp/out"
    if [ "$how" = pinned ] && [ -n "$pin_cpu" ]; then
        taskset -c "$pin_cpu" ./server-release -p 0 "$@" >"$tmp/out" 2>"$tmp/err" &
    else
        ./server-release -p 0 "$@" >"$tmp/out" 2>"$tmp/err" &
    fi
    server_pid=$!
    i=0
    while [ $i -lt 50 ]; do
        port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$tmp/out")
        [ -n "$port" ] && return 0
        kill -0 "$server_pid" 2>/dev/null || { server_pid=""; fail "the server exited: $(cat "$tmp/err")"; }
        sleep 0.1; i=$((i + 1))
    done
    fail "no 'listening on' line from the server within 5 s"
}

# --- running the load client --------------------------------------------------

# loadgen_bg MODE ARGS...: start it against the server with --json, print the
# command as a student would type it; its result lines go to $tmp/json. It
# runs in the background so the server can be looked at while the clients are
# held; loadgen_wait collects it and stops with "could not measure" when it
# failed, and loadgen does both.
loadgen_bg() {
    mode=$1; shift
    echo "  \$ loadgen $mode -p $port $*"
    "$LOADGEN" "$mode" -p "$port" --json "$@" >"$tmp/json" 2>"$tmp/lgerr" &
    bg_pid=$!
}
loadgen_wait() {
    wait "$bg_pid"
    rc=$?
    bg_pid=""
    [ $rc -eq 0 ] && return 0
    sed 's/^/  /' "$tmp/lgerr" >&2
    fail "loadgen $mode exited with status $rc"
}
loadgen() { loadgen_bg "$@"; loadgen_wait; }
loadgen_running() { [ -n "$bg_pid" ] && kill -0 "$bg_pid" 2>/dev/null; }

# key NAME [MATCH]: the value of "NAME" in the first result line containing
# MATCH (e.g. '"idle":1000,'); empty when absent.
key() {
    awk -v k="\"$1\":" -v m="${2:-}" 'index($0, m) && index($0, k) {
        s = substr($0, index($0, k) + length(k))
        sub(/[,}].*/, "", s); gsub(/"/, "", s); print s; exit }' "$tmp/json"
}

# need VALUE WHAT: stop with "could not measure" when a figure is missing.
need() { [ -n "$1" ] || fail "loadgen gave no $2"; }

# calc EXPRESSION: arithmetic with decimals (awk), e.g. calc "$a / $b".
calc() { awk "BEGIN { printf \"%.1f\", $1 }"; }

# Memory figures come from /proc; off Linux they are left out (said once).
server_pid_opt() {
    if [ $have_proc = yes ]; then
        echo "--server-pid $server_pid"
    fi
}
linux_only() { [ $have_proc = yes ] || echo "  ($*: Linux's /proc only, left out here)"; }

status_field() { awk -v f="$1:" '$1 == f { print $2; exit }' "/proc/$server_pid/status" 2>/dev/null; }

say() { printf '%s\n' "$@"; }

# need_fds N: the server and loadgen each need N descriptors; both raise their
# soft limit to the hard one, so only the hard limit can stop them.
need_fds() {
    hard=$(ulimit -Hn 2>/dev/null)
    [ "$hard" = unlimited ] || [ -z "$hard" ] || [ "$hard" -ge "$1" ] ||
        fail "this demonstration needs $1 open files per process, but the hard limit (ulimit -Hn) is $hard; raise it first (as root: ulimit -Hn $1, or in /etc/security/limits.conf; macOS: sudo launchctl limit maxfiles $1 unlimited)"
}

# --- the demonstrations ---------------------------------------------------------

demo_01() {
    say "01-blocking: one idle client freezes the blocking server." \
        "Client A connects and sends nothing for 1.5 s; client B connects next and sends one line."
    start_server free
    loadgen stall --hold 1.5
    wait_ms=$(key wait_ms); after=$(key after_close_ms); stalled=$(key stalled)
    need "$wait_ms" wait_ms
    say "" "  B waited $wait_ms ms for its echo; it came $after ms after A closed (stalled: $stalled)." \
        "  expect: about 1500 ms, within a millisecond or so after A closes. The one thread is" \
        "  blocked in read() on A; accept() for B runs only once A leaves. The original" \
        "  write-up measured 1.51 s for a 1.5 s hold."
    [ "$stalled" = true ] || say "  NOTE: B was not stalled; this is not what a blocking server does."
}

demo_02() {
    say "02-fork: every client costs a process. 1000 clients connect, echo once each, then idle 3 s."
    start_server free
    loadgen_bg hold -n 1000 --duration 3 $(server_pid_opt)
    # Count the server's children while the clients are held, not after.
    most=0
    while loadgen_running; do
        n=$(pgrep -P "$server_pid" 2>/dev/null | wc -l | tr -d ' ')
        [ "$n" -gt "$most" ] && most=$n
        sleep 0.2
    done
    loadgen_wait
    served=$(key served); setup=$(key setup_us_per_conn)
    need "$served" "served count"
    say "" "  served $served clients; setup $setup µs per connection (connect to first echo)" \
        "  processes while held: $((most + 1)) (the parent and $most children, pgrep -P)"
    if [ $have_proc = yes ]; then
        pss=$(key server_pss_kb); rss=$(key server_rss_kb); procs=$(key server_procs)
        need "$pss" server_pss_kb
        say "  memory: $pss KiB PSS over $procs processes = $(calc "$pss / $procs") KiB per process;" \
            "          RSS sums to $rss KiB, because it counts every shared page once per process"
    fi
    linux_only "server memory (RSS, PSS)"
    say "  expect: 1001 processes and tens of KiB of PSS per process (summed RSS says hundreds of" \
        "  MB). Setup is a fork() per client, which copies the parent's page tables: from about" \
        "  0.1 ms to over 1 ms depending on the machine and its load; an event loop accepts a" \
        "  client in tens of µs. The reference run (top README) measured 43.6 KiB and 1.9 ms" \
        "  per client at 10 000 clients, on a loaded 2-core machine."
}

# hold_threads LABEL [server options]: hold 10 000 clients and read the
# server's threads and VmSize while they are held (not after: loadgen hold
# closes them all when it ends), then stop the server and print one line.
hold_threads() {
    label=$1; shift
    start_server free "$@"
    loadgen_bg hold -n 10000 --duration 3 $(server_pid_opt)
    threads=0; vmsize=""
    while loadgen_running; do
        if [ $have_proc = yes ]; then
            t=$(status_field Threads)
            if [ -n "$t" ] && [ "$t" -ge "$threads" ]; then
                threads=$t; vmsize=$(status_field VmSize)
            fi
        else
            v=$(ps -o vsz= -p "$server_pid" 2>/dev/null | tr -d ' ')
            [ -n "$v" ] && vmsize=$v
        fi
        sleep 0.2
    done
    loadgen_wait
    served=$(key served)
    need "$served" "served count"
    need "$vmsize" "VmSize reading while the clients were held"
    stop_server
    if [ $have_proc = yes ]; then
        rss=$(key server_rss_kb)
        say "  $label served $served; while held: $threads threads, VmSize $(calc "$vmsize / 1048576") GiB," \
            "                  resident (RSS) $(calc "$rss / 1024") MiB = $(calc "$rss / $served") KiB per client"
    else
        say "  $label served $served; while held: VmSize $(calc "$vmsize / 1048576") GiB (from ps)"
    fi
}

demo_03() {
    need_fds 10100
    say "03-threads: every client costs a thread and its stack. 10 000 clients connect, echo" \
        "once each, then idle 3 s; the server is read while they are held."
    hold_threads "default stacks:"
    say "" "  again with 64 KiB stacks (./server-release -s 64):"
    hold_threads "64 KiB stacks: " -s 64
    linux_only "the thread count and RSS"
    stack_kib=$(ulimit -s)
    case $stack_kib in
    *[!0-9]*|'') estimate="(ulimit -s: ${stack_kib:-unknown})" ;;
    *) estimate="(ulimit -s: $stack_kib KiB, so about $(calc "10000 * $stack_kib / 1048576") GiB)" ;;
    esac
    say "" "  expect: 10 001 threads, and VmSize near 10 000 x the default stack size" \
        "  $estimate, although a client touches only" \
        "  a few KiB of it. With -s 64 it shrinks to well under 1 GiB while RSS barely moves:" \
        "  address space, not memory. What stays is a kernel task per client, scheduled on its own."
}

demo_04() {
    need_fds 1200
    say "04-select: the FD_SETSIZE ceiling, then the O(n) scan."
    start_server pinned
    say "" "1. 1100 clients at once (select's fd_set holds descriptors 0 to 1023):"
    loadgen hold -n 1100 --duration 2 --allow-refused
    served=$(key served); refused=$(key refused)
    lost=$(key lost); open=$(key still_open)
    need "$served" "served count"
    msgs=$(grep -c FD_SETSIZE "$tmp/err")
    say "  served $served, refused $refused; the server logged $msgs refusals naming FD_SETSIZE, e.g.:" \
        "    $(grep -m1 FD_SETSIZE "$tmp/err")" \
        "  still open after 2 s idle: $open, lost: $lost" \
        "  expect: about 1016 served (the descriptors below 1024 not already in use), the rest" \
        "  refused with a message, and the served ones still echoing."
    say "" "2. one client's round trip beside 0, 100 and 1000 idle ones, 2 s each:"
    scan 0,100,1000
    say "  expect: the round trip and the server's CPU per round trip grow with the idle count:" \
        "  select() copies and scans the whole fd_set on every wakeup. The reference run (top" \
        "  README) went from 26.4 µs to 145.6 µs (5.5x)."
}

# scan LIST: loadgen scan pinned, then one line per idle count.
scan() {
    cpu_opt=""
    [ -n "$pin_cpu" ] && cpu_opt="--cpu $pin_cpu"
    loadgen scan --idle "$1" --duration 2 $(server_pid_opt) $cpu_opt
    pin_note
    first=""; first_cpu=""
    for n in $(echo "$1" | tr ',' ' '); do
        p50=$(key rtt_p50_us "\"idle\":$n,"); cpu=$(key server_cpu_ms_per_1k "\"idle\":$n,")
        need "$p50" "round trip at $n idle"
        [ -n "$first" ] || { first=$p50; first_cpu=$cpu; }
        line=$(printf '  %6s idle: round trip %8s µs (%sx)' "$n" "$p50" "$(calc "$p50 / $first")")
        if [ -n "$cpu" ] && [ -n "$first_cpu" ] && [ "$first_cpu" != 0 ]; then
            line="$line, server CPU $cpu ms per 1000 round trips ($(calc "$cpu / $first_cpu")x)"
        fi
        say "$line"
    done
    linux_only "server CPU per round trip"
}

demo_05() {
    need_fds 10100
    say "05-poll: no ceiling, but still O(n): one client's round trip beside 0 to 10 000 idle ones."
    start_server pinned
    scan 0,100,1000,10000
    say "  expect: growth with the idle count, roughly in proportion past 1000: poll() hands the" \
        "  kernel all n descriptors on every call and the server walks all n results. The" \
        "  reference run (top README): 26.0 µs at 0 idle, 114 µs at 1000, 1167 µs at 10 000 (44.8x)."
}

demo_flat() {
    need_fds 10100
    api=$1
    say "$rung: O(ready). One client's round trip beside 0 to 10 000 idle ones, then C10K."
    start_server pinned
    scan 0,100,1000,10000
    [ "$rung" = 06-kqueue ] && [ "$(uname -s)" = Linux ] &&
        say "  (on Linux kevent() is the teaching shim over epoll: this is epoll's behaviour)"
    say "  expect: flat, within noise, from 0 to 10 000 idle: the interest list lives in the" \
        "  kernel and $api returns only the ready descriptors. The reference run measured" \
        "  24-29 µs from 0 to 10 000 idle (1.13x)."
    stop_server
    say "" "C10K: 10 000 clients at once, all ping-ponging 64-byte messages for 5 s, every byte checked" \
        "  (server and client not pinned: they share the machine's CPUs)."
    start_server free
    loadgen c10k -n 10000 $(server_pid_opt)
    served=$(key served); lost=$(key lost); corrupt=$(key corrupt)
    need "$served" "served count"
    say "" "  served $served of $(key requested), lost $lost, corrupt $corrupt; $(key bytes_verified) bytes verified;" \
        "  $(key msgs_per_s) echoes per second; client CPU $(key client_cpu_pct)% of a core"
    if [ $have_proc = yes ]; then
        msgs=$(key msgs); scpu=$(key server_cpu_ms)
        say "  server: $(key server_rss_kb) KiB resident for all 10 000; CPU $(calc "$scpu * 1000 / ($msgs + 0.000001)") µs per echo"
    fi
    linux_only "server memory and CPU"
    say "  expect: all 10 000 served, nothing lost or corrupt, a few MB resident: an idle" \
        "  connection costs the server a small struct, not a process or a stack. The echo rate" \
        "  is whichever side is slower; on 2 cores client and server each take about a core."
}

build_loadgen
echo
case $rung in
01-*) demo_01 ;;
02-*) demo_02 ;;
03-*) demo_03 ;;
04-*) demo_04 ;;
05-*) demo_05 ;;
06-*) demo_flat "kevent()" ;;
07-*) demo_flat "epoll_wait()" ;;
esac
stop_server
echo
echo "(Release build ./server-release; server stopped, port $port free again.)"
