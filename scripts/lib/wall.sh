#!/bin/sh
# shellcheck disable=SC2034,SC2046,SC2086
# (the globals are the rung scripts'; server_pid_opt and cpu_opt expand to
# nothing or to two words on purpose)
#
# make wall's shared part, sourced by each rung's own demonstration
# (NN-name/wall.sh, beyond/NN-name/wall.sh), which `make wall` runs in the
# rung's folder after make has built ./server-release (-O2, no sanitizers).
# It builds the load client (build/wall/, with clients/loadgen.mk), starts
# ./server-release on a port the kernel picks, and stops it whatever happens:
# on success, on failure and on Ctrl-C. A rung's script defines `demo` and
# ends with `wall_main`: the figures, each beside what to expect and why, and
# each wall beside the other systems' (Linux, macOS, FreeBSD).
# Exit status: 0 when the demonstration measured, 1 when it could not.
#
# POSIX sh, so that it runs wherever make does: dash (Debian's sh), bash 3.2
# (macOS's sh), posh, the BSDs' sh. Two habits keep it there: an argument
# list that may be empty is written ${1+"$@"}, because bash 3.2 and posh
# stop on a bare "$@" with no arguments under set -u; and nothing needs a
# GNU-only tool off Linux. The plumbing (platform, limits, starting and
# stopping the server, ports, the load client) is scripts/lib/ladder.sh's.
set -u

# The top of the tree, from a rung's folder: .. for NN-name, ../.. for
# beyond/NN-name.
rung=$(basename "$(pwd)")
case $rung in
[0-9][0-9]-*) ;;
*) echo "wall: run it from a rung's folder (make wall)" >&2; exit 2 ;;
esac
top=..
[ -f "$top/scripts/lib/ladder.sh" ] || top=../..
[ -x ./server-release ] || { echo "wall: ./server-release missing; run make wall" >&2; exit 2; }
. "$top/scripts/lib/ladder.sh"

CC=${CC:-cc}
ladder_platform
os=$LADDER_OS
ports_init
# The forced path plans its client ports with macOS's TIME_WAIT of 2 x 15 s,
# a wait of its own making (Linux gives each destination its ports).
# LADDER_FORCED_MSL_MS shortens it there only: tests/portability/wall-run.sh
# has the same waits taken and said in seconds rather than half a minute.
if [ "$LADDER_FORCED" = 1 ] && [ "$PORT_BUDGET" -gt 0 ] &&
    is_number "${LADDER_FORCED_MSL_MS:-}"; then
    PORT_TIME_WAIT_S=$((2 * LADDER_FORCED_MSL_MS / 1000))
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wall.XXXXXX") || exit 1
bg_pid=""

# ---- stopping what we started ------------------------------------------------

stop_server() {
    server_end 5
    [ "$SERVER_END" = killed ] && echo "wall: the server ignored SIGTERM for 5 s; killed it" >&2
    return 0
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

say() { printf '%s\n' ${1+"$@"}; }

# ---- this system, beside the others ---------------------------------------------

# walls HERE OTHER...: the limit this rung meets, as this system sets it and
# as the others do.
walls() {
    _w_system=$os
    [ "$LADDER_FORCED" = 1 ] && _w_system="Linux, on the off-Linux path: LADDER_FORCE_PORTABLE=1"
    say "" "  the wall is a number your kernel chose. Here ($_w_system):" "    $1"
    shift
    for line in ${1+"$@"}; do say "    $line"; done
}

# accept_queue_note: the listen backlog is clamped to the kernel's setting;
# a burst of connects past it loses SYNs, which the client resends after 1 s,
# then 3 s: that wait would be counted as the server's.
accept_queue_note() {
    accept_queue
    q=$ACCEPT_QUEUE name=$ACCEPT_QUEUE_NAME
    if ! is_number "$q"; then
        say "  (accept queue: $name not read on this path; Linux's default is 4096 since 5.4," \
            "  macOS's and FreeBSD's 128)"
    elif [ "$q" -lt 1024 ]; then
        say "  (accept queue: $name = $q. A burst of connects past it drops SYNs that the client" \
            "  resends after 1 s, then 3 s, and setup times carry that wait. Raise it first:" \
            "  $(as_root sysctl "$name=4096"))"
    else
        say "  (accept queue: $name = $q; a burst of connects fits without SYN retries)"
    fi
}

# aside LINE...: an indented parenthesis between figures (PORT_SAY: what
# port_budget, in ladder.sh, says before it waits).
aside() { _w_first=$1; shift; say "" "  ($_w_first" "  $*)"; }
PORT_SAY=aside

# as_root COMMAND...: the command as advice gives it here: after sudo, but
# on FreeBSD "as root:", since its base system has no sudo.
as_root() {
    if [ "$os" = FreeBSD ]; then echo "as root: $*"; else echo "sudo $*"; fi
}

# need_fds N: the server and loadgen each need N descriptors; both raise
# their soft limit to the hard one, so only the hard limit can stop them.
# macOS and FreeBSD also cap every process at kern.maxfilesperproc, whatever
# ulimit -Hn says (on macOS often "unlimited"; setrlimit(2) stops there).
# The hard limit itself is set by each system's own file: Linux's
# /etc/security/limits.conf (pam_limits), FreeBSD's /etc/login.conf
# (openfiles, read at login once cap_mkdb has rebuilt its database), and
# macOS's launchd.
need_fds() {
    hard=$(limit -Hn)
    per_proc=$(kern kern.maxfilesperproc)
    needs="this demonstration needs $1 open files per process, but"
    if is_number "$per_proc" && { ! is_number "$hard" || [ "$per_proc" -lt "$hard" ]; }; then
        [ "$per_proc" -ge "$1" ] && return 0
        more=$(($1 + 1000))
        fix=$(as_root sysctl "kern.maxfilesperproc=$more" "kern.maxfiles=$(($1 * 2 + 1000))")
        [ "$os" = Darwin ] && fix="$fix, then sudo launchctl limit maxfiles $more unlimited"
        fail "$needs kern.maxfilesperproc is $per_proc; raise it first: $fix"
    fi
    [ "$hard" = unlimited ] || [ -z "$hard" ] || [ "$hard" -ge "$1" ] && return 0
    case $os in
    Darwin) fix="sudo launchctl limit maxfiles $1 unlimited" ;;
    FreeBSD)
        fix="as root: :openfiles=$1: in your login class in /etc/login.conf, then"
        fix="$fix cap_mkdb /etc/login.conf; log in again" ;;
    *) fix="as root: ulimit -Hn $1, or '*  hard  nofile  $1' in /etc/security/limits.conf" ;;
    esac
    fail "$needs the hard limit (ulimit -Hn) is $hard; raise it first ($fix)"
}

# ---- pinning ----------------------------------------------------------------

# The scans pin server and client to one CPU, as scripts/reproduce.sh does:
# a round trip is then two context switches on one warm core, not a
# cross-CPU wake-up whose cost depends on what the other core is doing. The
# CPU is the first one this shell may run on.
pin_cpu=""
[ -n "$PIN" ] && pin_cpu=$(allowed_cpus | awk '{ print $1 }')

# Unpinned, the kernel may put server and client on different cores and move
# them: a round trip may then include a wake-up across CPUs, whose cost
# depends on whatever else runs. The shape (growth, or none, with the idle
# count) still shows; single figures are noisier. Linux pins with taskset
# (loadgen --cpu pins loadgen itself), FreeBSD with cpuset -l around both;
# macOS has no call to pin a process to a CPU.
pin_note() {
    if [ -n "$pin_cpu" ] && [ "$PIN" = cpuset ]; then
        echo "  (server and client pinned to CPU $pin_cpu: cpuset -l)"
    elif [ -n "$pin_cpu" ]; then
        echo "  (server and client pinned to CPU $pin_cpu: taskset and loadgen --cpu)"
    else
        why="no taskset (Linux) or cpuset (FreeBSD) here"
        [ "$os" = Darwin ] && why="macOS has no call to pin a process to a CPU"
        [ "$LADDER_FORCED" = 1 ] &&
            why="the off-Linux path pins nothing, as macOS, which has no call for it"
        say "  (not pinned: $why." \
            "  Server and client may wake each other across CPUs, so single round trips are" \
            "  noisier; the growth with the idle count is the figure)"
    fi
}

# ---- the server and the load client ---------------------------------------------

# start_server pinned|free [server options]: ${server_bin:-./server-release}
# on a kernel-chosen port; port is the one it announced.
start_server() {
    cpu=""
    [ "$1" = pinned ] && cpu=$pin_cpu
    shift
    server_start "$tmp" "${server_bin:-./server-release}" "$cpu" ${1+"$@"} || fail "$SERVER_ERR"
    port=$SERVER_PORT
}

# loadgen_bg MODE ARGS...: start it against the server with --json, print
# the command as a student would type it; its result lines go to $tmp/json.
# It runs in the background so the server can be looked at while the
# clients are held; loadgen_wait collects it and stops with "could not
# measure" when it failed, and loadgen does both.
# With lg_cpu set (scan, on FreeBSD) it runs under cpuset -l lg_cpu.
lg_cpu=""
loadgen_bg() {
    mode=$1; shift
    echo "  \$ ${lg_cpu:+cpuset -l $lg_cpu }loadgen $mode -p $port ${*:-}"
    (pinned "$lg_cpu" "$LOADGEN" "$mode" -p "$port" --json ${1+"$@"}) >"$tmp/json" 2>"$tmp/lgerr" &
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

# Memory figures come from /proc; off Linux they are left out (said once).
server_pid_opt() {
    [ "$USE_PROC" = 1 ] && echo "--server-pid $SERVER_PID"
}
linux_only() {
    [ "$USE_PROC" = 1 ] && return 0
    if [ "$LADDER_FORCED" = 1 ]; then
        echo "  (${*:-}: read from /proc, which the off-Linux path leaves out)"
    else
        echo "  (${*:-}: Linux's /proc only, left out here)"
    fi
}
status_field() {
    awk -v f="$1:" '$1 == f { print $2; exit }' "/proc/$SERVER_PID/status" 2>/dev/null
}

# ---- the figures ------------------------------------------------------------

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

# ---- the scan: one round trip beside idle clients ------------------------------

# scan LIST: loadgen scan pinned, then one line per idle count.
scan() {
    cpu_opt=""
    if [ -n "$pin_cpu" ] && [ "$PIN" = cpuset ]; then
        lg_cpu=$pin_cpu # loadgen --cpu is Linux's: cpuset -l runs it there
    elif [ -n "$pin_cpu" ]; then
        cpu_opt="--cpu $pin_cpu"
    fi
    loadgen scan --idle "$1" --duration 2 $(server_pid_opt) $cpu_opt
    lg_cpu=""
    pin_note
    first=""; first_cpu=""
    for n in $(echo "$1" | tr ',' ' '); do
        scan_line "$n"
    done
    linux_only "server CPU per round trip"
}

# scan_line N: the line for N idle clients, against the first count's.
scan_line() {
    p50=$(key rtt_p50_us "\"idle\":$1,"); cpu=$(key server_cpu_ms_per_1k "\"idle\":$1,")
    need "$p50" "round trip at $1 idle"
    [ -n "$first" ] || { first=$p50; first_cpu=$cpu; }
    times=$(shown "$(ratio "$p50" "$first")")
    line=$(printf '  %6s idle: round trip %8s µs (%sx)' "$1" "$p50" "$times")
    cpu_times=$(ratio "$cpu" "$first_cpu")
    if [ -z "$cpu" ]; then
        line="$line, server CPU not measured here"
    else
        line="$line, server CPU $cpu ms per 1000 round trips${cpu_times:+ (${cpu_times}x)}"
    fi
    say "$line"
}

# idle_scan: the scan at 0 to 10 000 idle, its ports counted (05, 06, 07).
idle_scan() {
    need_fds 10100
    start_server pinned
    port_budget 10001
    scan 0,100,1000,10000
    ports_closed
}

# ---- 06 and 07: O(ready), then C10K -----------------------------------------------

# flat_demo API: the scan, flat, then 10 000 clients at once.
flat_demo() {
    say "$rung: O(ready). One client's round trip beside 0 to 10 000 idle ones, then C10K."
    idle_scan
    [ "$rung" = 06-kqueue ] && [ "$os" = Linux ] &&
        say "  (on Linux kevent() is the teaching shim over epoll: this is epoll's behaviour)"
    say "  expect: flat, within noise, from 0 to 10 000 idle: the interest list lives in the" \
        "  kernel and $1 returns only the ready descriptors. The reference run measured" \
        "  6.1 -> 6.2 µs for 06 (1.02x) and 5.9 -> 5.9 µs for 07 (1.00x), 0 to 10 000 idle."
    stop_server
    c10k="C10K: 10 000 clients at once, all ping-ponging 64-byte messages for 5 s,"
    say "" "$c10k every byte checked" \
        "  (server and client not pinned: they share the machine's CPUs)."
    port_budget 10000
    start_server free
    loadgen c10k -n 10000 $(server_pid_opt)
    ports_closed
    c10k_lines
    say "  expect: all 10 000 served, nothing lost or corrupt, a few MB resident: an idle" \
        "  connection costs the server a small struct, not a process or a stack. The echo rate" \
        "  is whichever side is slower; on 2 cores client and server each take about a core."
    accept_queue_note
}

# c10k_lines: what the last c10k run served, and what it cost the server.
c10k_lines() {
    served=$(key served)
    need "$served" "served count"
    bytes=$(shown "$(key bytes_verified)")
    rate=$(shown "$(key msgs_per_s)"); client=$(shown "$(key client_cpu_pct)" "%")
    counts="lost $(key lost), corrupt $(key corrupt)"
    say "" "  served $served of $(key requested), $counts; $bytes bytes verified;" \
        "  $rate echoes per second; client CPU $client of a core"
    if [ "$USE_PROC" = 1 ]; then
        msgs=$(key msgs); scpu=$(key server_cpu_ms)
        per_echo=""
        [ -n "$scpu" ] && per_echo=$(ratio "$(calc "$scpu * 1000")" "$msgs")
        rss=$(shown "$(key server_rss_kb)" " KiB")
        say "  server: $rss resident for all 10 000; CPU $(shown "$per_echo" " µs") per echo"
    fi
    linux_only "server memory and CPU"
}

# ---- main -------------------------------------------------------------------

# wall_main: build the load client, run the rung's demo, stop the server.
wall_main() {
    LOADGEN=$(loadgen_path "$top/build/wall")
    loadgen_build "$top" "$top/build/wall" || fail "the load client did not build"
    echo
    demo
    stop_server
    echo
    echo "(Release build ./server-release; server stopped, port $port free again.)"
}
