#!/bin/sh
# shellcheck disable=SC2046,SC2086,SC3045
# (server_pid_opt and cpu_opt expand to nothing or to two words on purpose;
# ulimit -s, -u and -H are not in POSIX, and limit() copes with a sh without them)
# make wall: one rung's wall, measured and explained. Run by `make wall` in a
# phase folder, after make has built ./server-release (-O2, no sanitizers).
#
# It builds the load client (../build/wall/loadgen) with the C compiler
# alone, starts ./server-release on a port the kernel picks, runs the rung's
# demonstration, prints each figure beside what to expect and why, and stops
# the server whatever happens: on success, on failure and on Ctrl-C. Each wall
# is a limit some kernel chose, so it prints this system's number beside the
# other systems' (Linux, macOS, FreeBSD).
# Exit status: 0 when the demonstration measured, 1 when it could not.
#
# POSIX sh, so that it runs wherever make does: dash (Debian's sh), bash 3.2
# (macOS's sh), posh, the BSDs' sh. Two habits keep it there: an argument list
# that may be empty is written ${1+"$@"}, because bash 3.2 and posh stop on a
# bare "$@" with no arguments under set -u; and nothing needs a GNU-only tool
# off Linux. `date +%s` is not in POSIX, but GNU, BSD and busybox date have it.
#
# Off Linux nothing is pinned (taskset is Linux's), nothing is read from
# /proc, and loadgen is built with its kqueue event loop. LADDER_FORCE_PORTABLE=1
# takes that path on Linux too (kqueue through 06-kqueue's shim), so that the
# code a Mac runs is exercised here.
set -u

rung=$(basename "$(pwd)")
case $rung in
0[1-7]-*) top=.. ;;
0[89]-*) top=../.. ;; # beyond/08-io_uring, beyond/09-reuseport
*) echo "wall.sh: run it from a phase folder (make wall)" >&2; exit 2 ;;
esac
[ -x ./server-release ] || { echo "wall.sh: ./server-release missing; run make wall" >&2; exit 2; }

CC=${CC:-cc}
os=$(uname -s)
forced=no
[ "${LADDER_FORCE_PORTABLE:-0}" = 1 ] && forced=yes
# linux=yes: take Linux's path (taskset, /proc, epoll); never when forced.
linux=no
[ "$os" = Linux ] && [ $forced = no ] && linux=yes
LOADGEN=""
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

# --- this system's limits ----------------------------------------------------

# limit FLAG...: what `ulimit FLAG...` says. posh has no ulimit at all; limits
# are inherited, so another shell on the machine reads the same ones.
limit() {
    v=$( (ulimit ${1+"$@"}) 2>/dev/null) || v=""
    if [ -z "$v" ]; then
        for other in bash ksh zsh mksh; do
            if command -v "$other" >/dev/null 2>&1; then
                v=$("$other" -c "ulimit $*" 2>/dev/null)
                break
            fi
        done
    fi
    echo "$v"
}

# kern NAME: a sysctl off Linux (macOS, the BSDs); empty when it is missing.
kern() {
    [ "$os" = Linux ] || sysctl -n "$1" 2>/dev/null
}

# linux_figure FILE: a figure from /proc on Linux's own path, else empty.
linux_figure() {
    [ $linux = yes ] && cat "$1" 2>/dev/null
}

is_number() {
    case ${1:-x} in *[!0-9]*) return 1 ;; *) return 0 ;; esac
}

# walls HERE OTHER...: the limit this rung meets, as this system sets it and
# as the others do.
walls() {
    say "" "  the wall is a number your kernel chose. Here ($(system_name)):" "    $1"
    shift
    for line in ${1+"$@"}; do say "    $line"; done
}
system_name() {
    if [ $forced = yes ]; then
        echo "Linux, on the off-Linux path: LADDER_FORCE_PORTABLE=1"
    else
        echo "$os"
    fi
}

# accept_queue_note: the listen backlog is clamped to the kernel's setting;
# a burst of connects past it loses SYNs, which the client resends after 1 s,
# then 3 s: that wait would be counted as the server's.
accept_queue_note() {
    case $os in
    Linux) q=$(linux_figure /proc/sys/net/core/somaxconn); name=net.core.somaxconn ;;
    FreeBSD) q=$(kern kern.ipc.soacceptqueue); name=kern.ipc.soacceptqueue ;;
    *) q=$(kern kern.ipc.somaxconn); name=kern.ipc.somaxconn ;;
    esac
    if ! is_number "$q"; then
        say "  (accept queue: $name not read on this path; Linux's default is 4096 since 5.4," \
            "  macOS's and FreeBSD's 128)"
    elif [ "$q" -lt 1024 ]; then
        say "  (accept queue: $name = $q. A burst of connects past it drops SYNs that the client" \
            "  resends after 1 s, then 3 s, and setup times carry that wait. Raise it first:" \
            "  sudo sysctl $name=4096)"
    else
        say "  (accept queue: $name = $q; a burst of connects fits without SYN retries)"
    fi
}

# --- ephemeral ports ------------------------------------------------------------

# A client's port stays in TIME_WAIT for a while after the client closes.
# Linux picks connect()'s port per destination, and every demonstration here
# starts its server on a new port (and loadgen spreads its sockets over
# 127.0.0.2-254), so runs never compete for ports. macOS and FreeBSD take it
# from one range shared by every destination, and off Linux loadgen sends from
# 127.0.0.1 only: macOS's range is 49152-65535 (16 384 ports), each held for
# 2 x net.inet.tcp.msl = 30 s. So before a run that would not fit beside the
# last one's ports, wait until those are free again. The forced path plans
# with macOS's defaults.
ports_used=0
ports_free_at=0
port_budget() {
    if [ $linux = yes ]; then
        echo 0
    elif [ $forced = yes ]; then
        echo 16384
    else
        first=$(kern net.inet.ip.portrange.first); last=$(kern net.inet.ip.portrange.last)
        if is_number "$first" && is_number "$last"; then echo $((last - first + 1)); else echo 16384; fi
    fi
}
time_wait_s() {
    msl=$(kern net.inet.tcp.msl)
    if [ $forced = no ] && is_number "$msl"; then echo $((2 * msl / 1000)); else echo 30; fi
}
# ports_before N: about to open N connections.
ports_before() {
    budget=$(port_budget)
    [ "$budget" -gt 0 ] && [ $((ports_used + $1 + 512)) -gt "$budget" ] || return 0
    wait_s=$((ports_free_at - $(date +%s)))
    if [ $wait_s -gt 0 ]; then
        say "" "  (waiting $wait_s s: the last run's $ports_used client ports are in TIME_WAIT for" \
            "  $(time_wait_s) s, this system has $budget for every destination, and the next run needs $1)"
        sleep $wait_s
    fi
    ports_used=0
}
# ports_after N: a run that opened N connections has closed them.
ports_after() {
    ports_used=$((ports_used + $1))
    ports_free_at=$(($(date +%s) + $(time_wait_s)))
}

fail() {
    echo "wall: $*" >&2
    echo "wall: could not measure; nothing is left running" >&2
    exit 1
}

# --- the load client ------------------------------------------------------

# The event loop like clients/CMakeLists.txt picks it: epoll on Linux, kqueue
# where <sys/event.h> exists, poll(2) elsewhere; on the forced off-Linux path
# kqueue through 06-kqueue's shim (as CMake builds loadgen-kqueue), kept apart
# as loadgen-shim so that the two paths do not rebuild each other's. Rebuilt
# when a source changed.
build_loadgen() {
    shim=""
    if [ $linux = yes ]; then
        loop=epoll
    elif printf '#include <sys/types.h>\n#include <sys/event.h>\n' | $CC -E -x c - >/dev/null 2>&1; then
        loop=kqueue
    elif [ "$os" = Linux ]; then
        loop=kqueue; shim="-idirafter $top/06-kqueue/linux-shim"
    else
        loop=poll
    fi
    LOADGEN=$top/build/wall/loadgen${shim:+-shim}
    if [ -x "$LOADGEN" ] &&
        [ -z "$(find $top/clients $top/06-kqueue/linux-shim -newer "$LOADGEN" \( -name '*.c' -o -name '*.h' \) 2>/dev/null)" ]; then
        return 0
    fi
    set --
    for f in $top/clients/*.c; do
        case $f in
        */loop_*.c | */proc_*.c) ;;         # one backend, one reader: below
        */loadgen.c) set -- ${1+"$@"} "$f" ;;
        *) grep -q "^int main(" "$f" || set -- ${1+"$@"} "$f" ;; # not another program
        esac
    done
    case $os in # the process reader, as clients/CMakeLists.txt picks it
    Linux) reader=linux ;; Darwin) reader=macos ;; FreeBSD) reader=freebsd ;; *) reader=portable ;;
    esac
    set -- ${1+"$@"} "$top/clients/proc_$reader.c"
    mkdir -p $top/build/wall || fail "cannot create $top/build/wall"
    echo "building the load client ($loop event loop${shim:+, through the kqueue shim}): $LOADGEN"
    # shellcheck disable=SC2086 # CFLAGS/LDFLAGS are lists of flags
    $CC -std=c11 -O2 -Wall -Wextra -Werror ${CFLAGS:-} $shim -o "$LOADGEN" ${1+"$@"} \
        "$top/clients/loop_$loop.c" ${LDFLAGS:-} -lm -pthread || fail "the load client did not build"
}

# --- pinning and what this system can show ---------------------------------

# The scans pin server and client to one CPU, as scripts/reproduce.sh does:
# a round trip is then two context switches on one warm core, not a cross-CPU
# wake-up whose cost depends on what the other core is doing. The CPU is the
# first one this shell may run on.
pin_cpu=""
if [ $linux = yes ] && command -v taskset >/dev/null 2>&1 && [ -r /proc/self/status ]; then # linux-only
    pin_cpu=$(awk '/^Cpus_allowed_list:/ { split($2, a, /[-,]/); print a[1]; exit }' /proc/self/status)
fi
have_proc=no
[ $linux = yes ] && [ -r /proc/self/status ] && have_proc=yes

# Unpinned, the kernel may put server and client on different cores and move
# them: a round trip may then include a wake-up across CPUs, whose cost
# depends on whatever else runs. The shape (growth, or none, with the idle
# count) still shows; single figures are noisier. macOS has no call to pin a
# process to a CPU; FreeBSD's is cpuset -l, which this script does not use.
pin_note() {
    if [ -n "$pin_cpu" ]; then
        echo "  (server and client pinned to CPU $pin_cpu: taskset and loadgen --cpu)"
    else
        echo "  (not pinned: taskset is Linux-only. Server and client may wake each other across"
        echo "  CPUs, so single round trips are noisier; the growth with the idle count is the figure)"
    fi
}

# --- the server -------------------------------------------------------------

# start_server pinned|free [server options]: start ./server-release on a
# kernel-chosen port and read the port from its one announcement line.
start_server() {
    how=$1; shift
    : >"$tmp/out"
    if [ "$how" = pinned ] && [ -n "$pin_cpu" ]; then
        taskset -c "$pin_cpu" ${server_bin:-./server-release} -p 0 ${1+"$@"} >"$tmp/out" 2>"$tmp/err" & # linux-only
    else
        ${server_bin:-./server-release} -p 0 ${1+"$@"} >"$tmp/out" 2>"$tmp/err" &
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
    echo "  \$ loadgen $mode -p $port ${*:-}"
    "$LOADGEN" "$mode" -p "$port" --json ${1+"$@"} >"$tmp/json" 2>"$tmp/lgerr" &
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
loadgen() { loadgen_bg ${1+"$@"}; loadgen_wait; }
loadgen_running() { [ -n "$bg_pid" ] && kill -0 "$bg_pid" 2>/dev/null; }

# key NAME [MATCH]: the value of "NAME" in the first result line containing
# MATCH (e.g. '"idle":1000,'); empty when absent or null (a figure loadgen
# could not measure here, such as the server's CPU off Linux).
key() {
    awk -v k="\"$1\":" -v m="${2:-}" 'index($0, m) && index($0, k) {
        s = substr($0, index($0, k) + length(k))
        sub(/[,}].*/, "", s); gsub(/"/, "", s); if (s != "null") print s; exit }' "$tmp/json"
}

# shown VALUE [UNIT]: VALUE (and UNIT) to print, or "not measured here".
shown() { if [ -n "$1" ]; then echo "$1${2:-}"; else echo "not measured here"; fi; }

# ratio A B: A / B to one decimal, empty when either is missing or B is 0.
ratio() {
    [ -n "$1" ] && [ -n "$2" ] || return 0
    awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 != 0) printf "%.1f", a / b }'
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
linux_only() {
    [ $have_proc = yes ] && return 0
    if [ $forced = yes ]; then
        echo "  (${*:-}: read from /proc, which the off-Linux path leaves out)"
    else
        echo "  (${*:-}: Linux's /proc only, left out here)"
    fi
}

status_field() { awk -v f="$1:" '$1 == f { print $2; exit }' "/proc/$server_pid/status" 2>/dev/null; }

say() { printf '%s\n' ${1+"$@"}; }

# need_fds N: the server and loadgen each need N descriptors; both raise their
# soft limit to the hard one, so only the hard limit can stop them. macOS and
# FreeBSD also cap every process at kern.maxfilesperproc, whatever ulimit -Hn
# says (on macOS it often says "unlimited"; setrlimit(2) then stops there).
need_fds() {
    hard=$(limit -Hn)
    per_proc=$(kern kern.maxfilesperproc)
    if is_number "$per_proc" && { ! is_number "$hard" || [ "$per_proc" -lt "$hard" ]; }; then
        hard=$per_proc
        is_number "$hard" && [ "$hard" -ge "$1" ] && return 0
        fail "this demonstration needs $1 open files per process, but kern.maxfilesperproc is $hard; raise it first: sudo sysctl kern.maxfilesperproc=$(($1 + 1000)) kern.maxfiles=$(($1 * 2 + 1000)), then sudo launchctl limit maxfiles $(($1 + 1000)) unlimited (macOS)"
    fi
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
    # A negative after_close_ms: B's echo came before A closed.
    case $after in
    -*) when="${after#-} ms before A closed" ;;
    "") when="(when, against A's close, not measured here)" ;;
    *) when="$after ms after A closed" ;;
    esac
    say "" "  B waited $wait_ms ms for its echo; it came $when (stalled: $(shown "$stalled"))."
    if [ "$stalled" != true ]; then
        say "  NOT SHOWN: B was answered while A still held its connection, so this server has no" \
            "  blocking wall to show (a busy-poll or event-loop version?). The blocking rung as" \
            "  shipped makes B wait the whole hold, about 1500 ms."
        return 0
    fi
    say "  expect: about 1500 ms, within a millisecond or so after A closes. The one thread is" \
        "  blocked in read() on A; accept() for B runs only once A leaves. The original" \
        "  write-up measured 1.51 s for a 1.5 s hold."
}

# children_room: how many more processes this user may start (RLIMIT_NPROC,
# and on macOS kern.maxprocperuid too), minus those already running and a
# margin; empty when there is no cap.
children_room() {
    cap=$(limit -u)
    per_uid=$(kern kern.maxprocperuid)
    if is_number "$per_uid" && { ! is_number "$cap" || [ "$per_uid" -lt "$cap" ]; }; then
        cap=$per_uid
    fi
    is_number "$cap" || return 0
    mine=$(ps -U "$(id -u)" -o pid= 2>/dev/null | wc -l | tr -d ' ')
    is_number "$mine" || mine=0
    echo $((cap - mine - 50))
}

demo_02() {
    n=1000
    room=$(children_room)
    if [ -n "$room" ] && [ "$room" -lt $n ]; then
        [ "$room" -ge 10 ] ||
            fail "this user may start only $room more processes (ulimit -u: $(limit -u)); that cap is 02's wall here: raise it (ulimit -u, or on macOS sudo sysctl kern.maxprocperuid=...) to see more"
        n=$room
        say "02-fork: every client costs a process. This user may start only about $room more" \
            "processes here, so $n clients (not 1000) connect, echo once each, then idle 3 s."
    else
        say "02-fork: every client costs a process. 1000 clients connect, echo once each, then idle 3 s."
    fi
    start_server free
    loadgen_bg hold -n $n --duration 3 $(server_pid_opt)
    # Count the server's children while the clients are held, not after.
    most=0
    while loadgen_running; do
        k=$(pgrep -P "$server_pid" 2>/dev/null | wc -l | tr -d ' ')
        [ "$k" -gt "$most" ] && most=$k
        sleep 0.2
    done
    loadgen_wait
    served=$(key served); setup=$(key setup_us_per_conn)
    need "$served" "served count"
    say "" "  served $served clients; setup $(shown "$setup" " µs") per connection (connect to first echo)" \
        "  processes while held: $((most + 1)) (the parent and $most children, pgrep -P)"
    if [ $have_proc = yes ]; then
        pss=$(key server_pss_kb); rss=$(key server_rss_kb); procs=$(key server_procs)
        need "$pss" server_pss_kb
        say "  memory: $pss KiB PSS over $procs processes = $(shown "$(ratio "$pss" "$procs")" " KiB") per process;" \
            "          RSS sums to $rss KiB, because it counts every shared page once per process"
    fi
    linux_only "server memory (RSS, PSS)"
    accept_queue_note
    say "  expect: $((n + 1)) processes and tens of KiB of PSS per process (summed RSS says hundreds of" \
        "  MB). Setup is a fork() per client, which copies the parent's page tables: from about" \
        "  0.1 ms to over 1 ms depending on the machine and its load; an event loop accepts a" \
        "  client in tens of µs. The reference run (top README) measured 35.6 KiB and 337 µs" \
        "  per client at 10 000 clients, on a loaded 2-core machine."
    nproc_here="ulimit -u = $(limit -u) processes per user (RLIMIT_NPROC)"
    per_uid=$(kern kern.maxprocperuid)
    [ -n "$per_uid" ] && nproc_here="$nproc_here, kern.maxprocperuid = $per_uid"
    walls "$nproc_here: past it fork() fails (EAGAIN)" \
        "Linux: RLIMIT_NPROC, in the tens of thousands by default (not applied to root)" \
        "macOS: kern.maxprocperuid, often 1300-2700: a class of Macs meets it first" \
        "FreeBSD: kern.maxprocperuid as well (ulimit -u)"
}

# hold_threads LABEL [server options]: hold $threads_n clients and read the
# server's threads and VmSize while they are held (not after: loadgen hold
# closes them all when it ends), then stop the server and print one line.
# The reading kept is the one taken with the most threads alive, never one
# from the teardown. Only /proc says what the threads reserve: off Linux,
# ps -o vsz counts the shared region every process maps (about 390 GiB on
# Apple Silicon, whatever the threads), so no VmSize is printed there.
hold_threads() {
    label=$1; shift
    ports_before "$threads_n"
    start_server free ${1+"$@"}
    loadgen_bg hold -n "$threads_n" --duration 3 $(server_pid_opt)
    threads=0; vmsize=""
    while loadgen_running; do
        if [ $have_proc = yes ]; then
            t=$(status_field Threads)
            if [ -n "$t" ] && [ "$t" -gt "$threads" ]; then
                threads=$t; vmsize=$(status_field VmSize)
            fi
        fi
        sleep 0.2
    done
    loadgen_wait
    ports_after "$threads_n"
    served=$(key served)
    need "$served" "served count"
    stop_server
    if [ $have_proc = yes ]; then
        need "$vmsize" "VmSize reading while the clients were held"
        rss=$(key server_rss_kb)
        say "  $label served $served; while held: $threads threads, VmSize $(calc "$vmsize / 1048576") GiB," \
            "                  resident (RSS) $(shown "$(ratio "$rss" 1024)" " MiB") = $(shown "$(ratio "$rss" "$served")" " KiB") per client"
    else
        say "  $label served $served; while held: threads, VmSize and RSS not measured here" \
            "                  (ps -o vsz counts the shared region each process maps, not the stacks)"
    fi
}

# thread_cap: threads one process may have, where the kernel caps it (macOS:
# kern.num_taskthreads, 2048 to 16 384 depending on the Mac; FreeBSD:
# kern.threads.max_threads_per_proc); empty on Linux, which caps threads only
# system-wide (kernel.threads-max) and by memory and map counts.
thread_cap() {
    case $os in
    Darwin) kern kern.num_taskthreads ;;
    FreeBSD) kern kern.threads.max_threads_per_proc ;;
    esac
}

# default_stack_kib: the stack a thread gets without -s. glibc takes the soft
# RLIMIT_STACK (ulimit -s); macOS's libpthread gives every thread but the
# main one 512 KiB, and FreeBSD's libthr 2 MiB on 64-bit machines
# (THR_STACK_DEFAULT), whatever ulimit -s says.
default_stack_kib() {
    case $os in
    Darwin) echo 512 ;;
    FreeBSD) echo 2048 ;;
    *) limit -s ;;
    esac
}

demo_03() {
    threads_n=10000
    cap=$(thread_cap)
    if is_number "$cap" && [ $((cap - 64)) -lt $threads_n ]; then
        threads_n=$((cap - 64))
        capped="this kernel allows $cap threads per process: $threads_n clients (the cap less room for the server's own)"
    else
        capped=""
    fi
    need_fds $((threads_n + 100))
    if [ -n "$capped" ]; then
        say "03-threads: every client costs a thread and its stack. Here $capped" \
            "connect, echo once each, then idle 3 s; the server is read while they are held."
    else
        say "03-threads: every client costs a thread and its stack. 10 000 clients connect, echo" \
            "once each, then idle 3 s; the server is read while they are held."
    fi
    hold_threads "default stacks:"
    say "" "  again with 64 KiB stacks (./server-release -s 64):"
    hold_threads "64 KiB stacks: " -s 64
    linux_only "the thread count and RSS"
    stack_kib=$(default_stack_kib)
    if is_number "$stack_kib"; then
        estimate="($stack_kib KiB each, so about $(calc "$threads_n * $stack_kib / 1048576") GiB)"
    else
        estimate="(ulimit -s: ${stack_kib:-unknown})"
    fi
    say "" "  expect: $((threads_n + 1)) threads, and VmSize near $threads_n x the default stack size" \
        "  $estimate, although a client touches only" \
        "  a few KiB of it. With -s 64 it shrinks to well under 1 GiB while RSS barely moves:" \
        "  address space, not memory. What stays is a kernel task per client, scheduled on its own."
    if is_number "$cap"; then
        here="$cap threads per process: past it pthread_create() fails (EAGAIN)"
    else
        here="no cap per process; kernel.threads-max = $(linux_figure /proc/sys/kernel/threads-max) for the system"
        [ $linux = yes ] || here="no cap per process (kernel.threads-max, in /proc, not read on this path)"
    fi
    walls "$here; a thread's default stack: $stack_kib KiB" \
        "Linux: no cap per process (kernel.threads-max for the system); stacks of ulimit -s, often 8 MiB" \
        "macOS: kern.num_taskthreads per process (2048 to 16 384 by model, 4096 on many); 512 KiB" \
        "       stacks whatever ulimit -s says" \
        "FreeBSD: kern.threads.max_threads_per_proc per process; 2 MiB stacks (64-bit)"
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
    say "  served $served, refused $refused; the server said so in $msgs line(s) naming FD_SETSIZE" \
        "  (one per run of refusals, not one per client: a storm must not flood the log):" \
        "    $(grep -m1 FD_SETSIZE "$tmp/err")" \
        "  still open after 2 s idle: $open, lost: $lost" \
        "  expect: about 1016 served (the descriptors below 1024 not already in use), the rest" \
        "  refused with a message, and the served ones still echoing."
    say "" "2. one client's round trip beside 0, 100 and 1000 idle ones, 2 s each:"
    scan 0,100,1000
    say "  expect: the round trip and the server's CPU per round trip grow with the idle count:" \
        "  select() copies and scans the whole fd_set on every wakeup. The reference run (top" \
        "  README) went from 25.9 µs to 117.0 µs (4.5x)."
    walls "FD_SETSIZE = 1024 descriptors in an fd_set, fixed when the program is compiled" \
        "Linux (glibc): 1024; FD_SET() past it writes past the set" \
        "macOS: 1024 too; select() returns EINVAL for nfds above it, unless the program is" \
        "       built with _DARWIN_UNLIMITED_SELECT" \
        "FreeBSD: 1024 unless the program defines FD_SETSIZE larger before <sys/select.h>"
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
        line=$(printf '  %6s idle: round trip %8s µs (%sx)' "$n" "$p50" "$(shown "$(ratio "$p50" "$first")")")
        if [ -z "$cpu" ]; then
            line="$line, server CPU not measured here"
        elif [ -n "$(ratio "$cpu" "$first_cpu")" ]; then
            line="$line, server CPU $cpu ms per 1000 round trips ($(ratio "$cpu" "$first_cpu")x)"
        else
            line="$line, server CPU $cpu ms per 1000 round trips"
        fi
        say "$line"
    done
    linux_only "server CPU per round trip"
}

demo_05() {
    need_fds 10100
    say "05-poll: no ceiling, but still O(n): one client's round trip beside 0 to 10 000 idle ones."
    start_server pinned
    ports_before 10001
    scan 0,100,1000,10000
    ports_after 10001
    say "  expect: growth with the idle count, roughly in proportion past 1000: poll() hands the" \
        "  kernel all n descriptors on every call and the server walks all n results. The" \
        "  reference run (top README): 20.5 µs at 0 idle, 144 µs at 1000, 3645 µs at 10 000 (178x)."
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

demo_flat() {
    need_fds 10100
    api=$1
    say "$rung: O(ready). One client's round trip beside 0 to 10 000 idle ones, then C10K."
    start_server pinned
    ports_before 10001
    scan 0,100,1000,10000
    ports_after 10001
    [ "$rung" = 06-kqueue ] && [ "$os" = Linux ] &&
        say "  (on Linux kevent() is the teaching shim over epoll: this is epoll's behaviour)"
    say "  expect: flat, within noise, from 0 to 10 000 idle: the interest list lives in the" \
        "  kernel and $api returns only the ready descriptors. The reference run measured" \
        "  20-26 µs from 0 to 10 000 idle (1.02x for 06, 1.07x for 07)."
    stop_server
    say "" "C10K: 10 000 clients at once, all ping-ponging 64-byte messages for 5 s, every byte checked" \
        "  (server and client not pinned: they share the machine's CPUs)."
    ports_before 10000
    start_server free
    loadgen c10k -n 10000 $(server_pid_opt)
    ports_after 10000
    served=$(key served); lost=$(key lost); corrupt=$(key corrupt)
    need "$served" "served count"
    say "" "  served $served of $(key requested), lost $lost, corrupt $corrupt; $(shown "$(key bytes_verified)") bytes verified;" \
        "  $(shown "$(key msgs_per_s)") echoes per second; client CPU $(shown "$(key client_cpu_pct)" "%") of a core"
    if [ $have_proc = yes ]; then
        msgs=$(key msgs); scpu=$(key server_cpu_ms)
        per_echo=""
        [ -n "$scpu" ] && per_echo=$(ratio "$(calc "$scpu * 1000")" "$msgs")
        say "  server: $(shown "$(key server_rss_kb)" " KiB") resident for all 10 000; CPU $(shown "$per_echo" " µs") per echo"
    fi
    linux_only "server memory and CPU"
    say "  expect: all 10 000 served, nothing lost or corrupt, a few MB resident: an idle" \
        "  connection costs the server a small struct, not a process or a stack. The echo rate" \
        "  is whichever side is slower; on 2 cores client and server each take about a core."
    accept_queue_note
}

# --- beyond the ladder (beyond/) ---------------------------------------------

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
    if ! command -v strace >/dev/null 2>&1 || [ $linux = no ]; then
        say "  $1 system calls per echo: not measured (strace is not installed)"; return 0
    fi
    strace -c -f -p "$server_pid" -o "$tmp/strace" 2>/dev/null &
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

demo_08() {
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

demo_09() {
    need_fds 10100
    say "09-reuseport: 07's loop once per CPU, each with its own listener on the port." \
        "10 000 clients at once for 2 s; then each loop says how many it took (-v, at exit)."
    start_server free -v
    ports_before 10000
    loadgen c10k -n 10000 --duration 2 $(server_pid_opt)
    ports_after 10000
    stop_server
    say "" "  served $(key served) of $(key requested), lost $(key lost), corrupt $(key corrupt);" \
        "  $(key msgs_per_s) echoes per second; server CPU $(key server_cpu_pct)% of one core"
    grep 'loop [0-9]*: [0-9]* connections' "$tmp/err" | sed 's/^[^:]*: /  /'
    say "  expect: one line per online CPU, the counts close to 10 000 / loops: the kernel" \
        "  hashes each connection's addresses and ports to one listener. On 2 cores the load" \
        "  client takes one of them, so the echo rate is the client's, not the loops'."
    walls "SO_REUSEPORT spreads connections on Linux (3.9+)" \
        "FreeBSD: SO_REUSEPORT_LB (12.0+); plain SO_REUSEPORT does not spread" \
        "macOS: SO_REUSEPORT binds but does not spread: one listener gets them"
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
08-*) demo_08 ;;
09-*) demo_09 ;;
esac
stop_server
echo
echo "(Release build ./server-release; server stopped, port $port free again.)"
