#!/bin/sh
# shellcheck disable=SC2034,SC3045
# (the globals set here are read by the scripts that source it; ulimit -s,
# -u and -H are not in POSIX, and limit() copes with a sh without them)
#
# The plumbing every measuring script shares: the walls (NN-name/wall.sh,
# through scripts/lib/wall.sh), the reproduction (scripts/reproduce.sh and
# scripts/lib/bench.sh) and the doctor (scripts/doctor.sh). Sourced, never
# run. POSIX sh, so that the walls run it under dash, posh and macOS's bash
# 3.2; bash sources it as is. No `local`: every variable a function uses for
# itself starts with _l, out of the way of the caller's.
#
#   ladder_rungs          the rungs: the folders NN-name/ with a main.c
#   claims_settings, ladder_settings   the claims' table's settings for a
#                         kind of run, and every name raw/settings.env holds
#   ladder_platform       LADDER_OS, LADDER_FORCED, USE_PROC, PIN
#   limit, kern, proc_figure, is_number, lower
#   accept_queue          the setting that clamps a listen backlog, and its value
#   children_room, threads_room, room_for   how many clients 02-fork and
#                         03-threads may hold here (the room the OS leaves);
#                         thread_cap, the threads the kernel allows a process
#   cpu_count, allowed_cpus, pinned
#   proc_start, proc_state, is_running, wait_finished
#   server_start, server_end      a server on a kernel-chosen port, and
#                         stopping it (SIGTERM, bounded, then SIGKILL)
#   io_uring_refused      08-io_uring did not start: this kernel refuses io_uring
#   now                   the clock in seconds
#   ports_init, port_budget, ports_closed   the ephemeral ports in TIME_WAIT
#   loadgen_path, loadgen_build   the load client, built by clients/loadgen.mk
#   ladder_flags          compiler flags from common/flags.mk, for a compiler call
#
# Off Linux (and with LADDER_FORCE_PORTABLE=1, which takes that path on
# Linux too) nothing is read from /proc and no process is pinned by taskset.

# ---- the rungs ----------------------------------------------------------------

# ladder_rungs DIR: the rungs in DIR (the checkout's root, or its beyond/),
# one folder NN-name/ with a main.c each, in order, on one line.
ladder_rungs() {
    _l_list=""
    for _l_main in "$1"/[0-9][0-9]-*/main.c; do
        [ -f "$_l_main" ] || continue
        _l_main=${_l_main%/main.c}
        _l_list="$_l_list ${_l_main##*/}"
    done
    echo "${_l_list# }"
}

# ---- the claims' table --------------------------------------------------------

# claims_settings TABLE [KIND...]: the table's settings (scripts/lib/claims.txt)
# for a run of these kinds, as shell assignments in the table's order, each
# value in double quotes for the shell to expand (eval them): a setting's
# default, then its lines for this run's kinds, each over the one before
# (so "${MEM_NS% 10000}" reads the value just set). Thresholds ("judge")
# are report.awk's and left out.
claims_settings() {
    _l_table=$1
    shift
    awk -v kinds=" $* " '
        function set() { v = $0; sub(/^[ \t]*[^ \t]+[ \t]*/, "", v)
            printf "%s=\"%s\"\n", name, v }
        BEGIN { rank["quick"] = 1; rank["full"] = 2; rank["smoke"] = 3; rank["offlinux"] = 4 }
        { sub(/[ \t]*#.*/, "") }
        /^[ \t]*$/ || /^judge / { next }
        /^[A-Z]/ { name = $1; last = 0; set(); next }
        !($1 in rank) || rank[$1] <= last || name == "" {
            printf "claims_settings: %s:%d: \"%s\" is no kind of run after the ones above it" \
                " (quick, full, smoke, offlinux, in that order)\n", FILENAME, FNR, $1 \
                > "/dev/stderr"
            exit 1
        }
        { last = rank[$1] }
        index(kinds, " " $1 " ") { set() }' "$_l_table"
}

# ladder_settings TABLE: every name raw/settings.env holds, on one line: the
# run's kind, the table's settings, then what the run found and measured.
ladder_settings() {
    awk '/^[A-Z]/ { printf "%s ", $1 }' "$1"
    echo QUICK SMOKE FULL RUNGS BEYOND_RUNGS SCAN_CPU C10K_SERVER_CPU C10K_CLIENT_CPU \
        CURVE_STATUS CLIENT_THREADS RUN_SEED M_COMMIT HOST_BUSY HOST_STEAL HOST_TEXT \
        CGROUP_TEXT DAMON_TEXT HEADROOM_STATUS QUOTA_US CURVE_CLIENT_CPUS \
        M_SMT M_VIRT M_CLOCKSOURCE M_GOVERNOR BEYOND_STATUS \
        CORES_STATUS CORES_SERVER_CPUS CORES_CLIENT_THREADS CORES_MIN_CPUS \
        ALLOWED_CPUS LG_MARGIN BUSY_STATUS BUSY_TEXT YARD_STATUS YARD_TEXT YARD_RUNG ELAPSED \
        PLATFORM PORTABLE PIN_TEXT KQUEUE_TEXT SKIP_RUNGS SKIP_WHY MEM_KEY SKIPPED_TOOLS \
        SERVER_FIGURES PORT_BUDGET PORT_TIME_WAIT_S PORT_WAIT_S \
        M_DATE M_LOAD M_CPU M_CORES M_MEM M_KERNEL M_DISTRO M_COMPILER M_BUILD M_SANITIZE \
        M_NOFILE M_SOMAXCONN M_PORTS M_LIBUV M_LISTEN_BEFORE M_LISTEN_AFTER
}

# ---- the platform -------------------------------------------------------------

# ladder_platform: LADDER_OS (uname -s), LADDER_FORCED (1: the off-Linux
# path on Linux), USE_PROC (1: read /proc, Linux's own path only) and PIN
# (how a process is pinned to a CPU: taskset on Linux, cpuset on FreeBSD,
# empty on macOS, which has no such call, and on the forced path).
ladder_platform() {
    LADDER_OS=$(uname -s)
    LADDER_FORCED=0
    [ "${LADDER_FORCE_PORTABLE:-0}" = 1 ] && LADDER_FORCED=1
    USE_PROC=0
    PIN=""
    if [ "$LADDER_OS" = Linux ] && [ $LADDER_FORCED = 0 ]; then
        USE_PROC=1
        command -v taskset >/dev/null 2>&1 && PIN=taskset
    elif [ "$LADDER_OS" = FreeBSD ]; then
        PIN=cpuset
    fi
}

is_number() {
    case ${1:-x} in *[!0-9]*) return 1 ;; *) return 0 ;; esac
}

# lower CAP OTHER: the lower of two caps, either of which may be none (empty,
# "unlimited"): OTHER where it is a number below CAP or CAP is none, else CAP.
lower() {
    if is_number "$2" && { ! is_number "$1" || [ "$2" -lt "$1" ]; }; then
        echo "$2"
    else
        echo "$1"
    fi
}

# limit FLAG...: what `ulimit FLAG...` says. posh has no ulimit at all;
# limits are inherited, so another shell on the machine reads the same ones.
limit() {
    _lv=$( (ulimit ${1+"$@"}) 2>/dev/null) || _lv=""
    if [ -z "$_lv" ]; then
        for _lsh in bash ksh zsh mksh; do
            command -v "$_lsh" >/dev/null 2>&1 || continue
            _lv=$("$_lsh" -c "ulimit $*" 2>/dev/null)
            break
        done
    fi
    echo "$_lv"
}

# kern NAME: a sysctl off Linux (macOS, the BSDs); empty when it is missing.
kern() {
    [ "$LADDER_OS" = Linux ] || sysctl -n "$1" 2>/dev/null
}

# proc_figure FILE: a figure from /proc on Linux's own path, else empty.
proc_figure() {
    [ "$USE_PROC" = 1 ] && cat "$1" 2>/dev/null
}

# accept_queue: ACCEPT_QUEUE_NAME, the setting that clamps a listen
# backlog here, and ACCEPT_QUEUE, its value (empty where it is not read:
# Linux's /proc off its own path).
accept_queue() {
    case $LADDER_OS in
    Linux) ACCEPT_QUEUE_NAME=net.core.somaxconn
        ACCEPT_QUEUE=$(proc_figure /proc/sys/net/core/somaxconn) ;;
    FreeBSD) ACCEPT_QUEUE_NAME=kern.ipc.soacceptqueue
        ACCEPT_QUEUE=$(kern kern.ipc.soacceptqueue) ;;
    *) ACCEPT_QUEUE_NAME=kern.ipc.somaxconn
        ACCEPT_QUEUE=$(kern kern.ipc.somaxconn) ;;
    esac
}

# ---- the room 02-fork and 03-threads have --------------------------------------

# proc_cap: the processes this user may have: RLIMIT_NPROC (ulimit -u), and
# on macOS and FreeBSD kern.maxprocperuid when lower; empty when uncapped.
proc_cap() {
    _lcap=$(lower "$(limit -u)" "$(kern kern.maxprocperuid)")
    is_number "$_lcap" && echo "$_lcap"
}

# children_room: how many more processes this user may start: proc_cap less
# those already running (each counts, the kernel's own view per uid) and a
# margin of 50; empty when there is no cap.
children_room() {
    _lcap=$(proc_cap)
    [ -n "$_lcap" ] || return 0
    _lmine=$(ps -U "$(id -u)" -o pid= 2>/dev/null | wc -l | tr -d ' ')
    echo $((_lcap - _lmine - 50))
}

# thread_cap: the threads one process may have, where the kernel caps it
# per process: macOS kern.num_taskthreads (2048 to 16 384 by model), FreeBSD
# kern.threads.max_threads_per_proc (1500 by default). Empty on Linux, which
# caps threads only system-wide (kernel.threads-max, kernel.pid_max) and by
# RLIMIT_NPROC, which counts threads as processes.
thread_cap() {
    case $LADDER_OS in
    Darwin) kern kern.num_taskthreads ;;
    FreeBSD) kern kern.threads.max_threads_per_proc ;;
    esac
}

# threads_room: how many clients 03-threads may hold (a thread each): the
# cap per process less 64 for the server's own threads. On Linux's path,
# where every thread is a task: the smaller of kernel.threads-max and
# kernel.pid_max less the tasks that exist now (/proc/loadavg's 4th field),
# and RLIMIT_NPROC less this user's tasks (it counts threads), each less 64.
# Empty when nothing caps it.
threads_room() {
    _lroom=$(thread_cap)
    if is_number "$_lroom"; then _lroom=$((_lroom - 64)); else _lroom=""; fi
    [ "$USE_PROC" = 1 ] || { [ -n "$_lroom" ] && echo "$_lroom"; return 0; }
    _ltasks=$(sed 's/.*\///; s/ .*//' /proc/loadavg 2>/dev/null)
    is_number "$_ltasks" || _ltasks=0
    for _lf in threads-max pid_max; do
        _lv=$(proc_figure "/proc/sys/kernel/$_lf")
        is_number "$_lv" && room_min $((_lv - _ltasks - 64))
    done
    _lcap=$(limit -u)
    if is_number "$_lcap"; then
        _lmine=$(ps -L -U "$(id -u)" -o lwp= 2>/dev/null | wc -l | tr -d ' ') # linux-only
        room_min $((_lcap - _lmine - 64))
    fi
    [ -n "$_lroom" ] && echo "$_lroom"
}

# room_min N: _lroom becomes N where that is smaller (or _lroom was empty).
room_min() {
    { [ -n "$_lroom" ] && [ "$_lroom" -le "$1" ]; } || _lroom=$1
}

# room_for RUNG N: N, or fewer when RUNG (02-fork: a process a client,
# 03-threads: a thread a client) would meet a cap first; other rungs N.
room_for() {
    case $1 in
    02-fork) _lroom=$(children_room) ;;
    03-threads) _lroom=$(threads_room) ;;
    *) _lroom="" ;;
    esac
    if [ -n "$_lroom" ] && [ "$_lroom" -lt "$2" ]; then echo "$_lroom"; else echo "$2"; fi
}

# ---- CPUs -------------------------------------------------------------------

# The number of CPUs online: getconf on Linux and macOS, sysctl on the BSDs.
cpu_count() {
    getconf _NPROCESSORS_ONLN 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 1
}

# allowed_cpus: the CPUs this process may run on, as "0 1 ...": on Linux
# its affinity (a container's cpuset or a taskset around the script: CPU 0
# is not always among them), on FreeBSD its cpuset(1) mask, elsewhere all.
# FreeBSD prints two lines, "pid N mask: 0, 1" and "pid N domain policy:
# first-touch mask: 0" (the memory domains): only the first is the CPUs.
allowed_cpus() {
    _llist=""
    case $PIN in
    taskset)
        _llist=$(taskset -cp $$ 2>/dev/null | sed -n 's/.*: *//p') # linux-only
        [ -n "$_llist" ] || _llist=$(cat /sys/fs/cgroup/cpuset.cpus.effective 2>/dev/null)
        ;;
    cpuset)
        _llist=$(cpuset -g -p $$ 2>/dev/null | awk '$1 == "pid" && $3 == "mask:" {
            sub(/^[^:]*: */, ""); gsub(/ /, ""); print; exit }')
        ;;
    esac
    [ -n "$_llist" ] || _llist="0-$(($(cpu_count) - 1))"
    awk -v l="$_llist" 'BEGIN {
        n = split(l, part, ",")
        for (i = 1; i <= n; i++) {
            m = split(part[i], r, "-")
            for (c = r[1] + 0; c <= r[m] + 0; c++) printf "%s%d", (out++ ? " " : ""), c
        }
    }'
}

# pinned CPU CMD...: exec CMD on CPU only, where PIN says how (taskset,
# cpuset -l); as is when CPU is empty or there is no way to pin.
pinned() {
    _lcpu=$1
    shift
    if [ -n "$_lcpu" ]; then
        case $PIN in
        taskset) exec taskset -c "$_lcpu" "$@" ;; # linux-only
        cpuset) exec cpuset -l "$_lcpu" "$@" ;;
        esac
    fi
    exec "$@"
}

# ---- processes -------------------------------------------------------------

# proc_start PID: the start time of a process, or "" if there is none. With
# the pid it names one process for good (a pid is reused once its owner is
# gone). Linux: clock ticks after boot (field 22 of /proc/PID/stat);
# elsewhere ps's lstart, to the second: enough for an unreaped child.
proc_start() {
    if [ "$USE_PROC" = 1 ]; then
        read -r _lstat 2>/dev/null <"/proc/$1/stat" || return 0
        # shellcheck disable=SC2086 # the fields after the command, split
        set -- ${_lstat##*) }
        printf '%s' "${20}"
    else
        ps -o lstart= -p "$1" 2>/dev/null | tr -s ' ' | sed 's/ $//'
    fi
}

# proc_state PID [START]: the one-letter state of that process, "" if it is
# gone. A child that has exited but not been waited for is a zombie, "Z":
# kill -0 would still succeed on it.
proc_state() {
    _lwant=${2:-}
    if [ "$USE_PROC" = 1 ]; then
        read -r _lstat 2>/dev/null <"/proc/$1/stat" || return 0
        # shellcheck disable=SC2086 # from field 3 (state) on: field 22 is ${20}
        set -- ${_lstat##*) }
        [ -z "$_lwant" ] || [ "${20}" = "$_lwant" ] || return 0
        printf '%s' "$1"
    else
        _lstat=$(ps -o state= -p "$1" 2>/dev/null | tr -d ' ')
        [ -n "$_lstat" ] || return 0
        [ -z "$_lwant" ] || [ "$(proc_start "$1")" = "$_lwant" ] || return 0
        printf '%s' "$_lstat" | cut -c1
    fi
}

# is_running PID [START]
is_running() {
    _ls=$(proc_state "$1" "${2:-}")
    [ -n "$_ls" ] && [ "$_ls" != Z ] && [ "$_ls" != X ]
}

# wait_finished PID START SECONDS: wait until that process has finished (or
# is gone), at most SECONDS (whole); 0 if it has.
wait_finished() {
    _ltries=$(($3 * 20))
    while is_running "$1" "$2"; do
        [ "$_ltries" -gt 0 ] || return 1
        sleep 0.05
        _ltries=$((_ltries - 1))
    done
    return 0
}

# ---- a server under test -------------------------------------------------------

SERVER_PID=""   # the server now running, if any
SERVER_START="" # its start time (proc_start)
SERVER_PORT=""
SERVER_ERR=""   # why server_start failed

# server_start DIR EXE CPU [SERVER-ARGS...]: start EXE -p 0 -b 127.0.0.1
# (pinned to CPU unless it is empty), its stdout in DIR/server.out and its
# stderr in DIR/server.err, and wait at most 5 s for its one announcement,
# "listening on 127.0.0.1:PORT". Sets SERVER_PID, SERVER_START, SERVER_PORT;
# 1, with SERVER_ERR saying why and the server stopped, when it did not come
# (SERVER_END and SERVER_RC as server_end sets them: "early" and its exit
# status when it exited before announcing).
server_start() {
    _ldir=$1 _lexe=$2 _lcpu=$3
    shift 3
    : >"$_ldir/server.out"
    : >"$_ldir/server.err"
    (pinned "$_lcpu" "$_lexe" -p 0 -b 127.0.0.1 ${1+"$@"}) \
        >"$_ldir/server.out" 2>"$_ldir/server.err" &
    SERVER_PID=$!
    SERVER_START=$(proc_start "$SERVER_PID")
    SERVER_PORT=""
    _ltries=100
    while [ $_ltries -gt 0 ]; do
        SERVER_PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' \
            "$_ldir/server.out" | sed 1q)
        [ -n "$SERVER_PORT" ] && return 0
        is_running "$SERVER_PID" "$SERVER_START" || break
        sleep 0.05
        _ltries=$((_ltries - 1))
    done
    _lwhy=$(tail -n 2 "$_ldir/server.err" | tr '\n"\\' '   ')
    server_end 0
    if [ "$SERVER_END" = early ]; then
        SERVER_ERR="${_lexe##*/} exited with status $SERVER_RC before announcing ($_lwhy)"
    else
        SERVER_ERR="${_lexe##*/} did not print 'listening on 127.0.0.1:PORT' within 5 s ($_lwhy)"
    fi
    return 1
}

# io_uring_refused RUNG: 0 when server_start has just failed because RUNG is
# 08-io_uring and it exited 3 before announcing, its one line saying why: the
# kernel refuses io_uring here (a sysctl, seccomp, an old kernel).
io_uring_refused() {
    [ "$1" = 08-io_uring ] && [ "${SERVER_END:-}" = early ] && [ "${SERVER_RC:-}" = 3 ]
}

# server_end SECONDS: stop the server: SIGTERM (as a user would: 02-fork
# then ends its children itself), then wait at most SECONDS; past that,
# SIGKILL to its own children first, then to it. Reaps it. SERVER_RC is its
# exit status; SERVER_END says how it ended: "term", "killed" (SIGKILL was
# needed) or "early" (it had exited before SIGTERM).
server_end() {
    SERVER_RC=0
    SERVER_END=term
    [ -n "$SERVER_PID" ] || return 0
    if ! is_running "$SERVER_PID" "$SERVER_START"; then
        SERVER_END=early
    else
        kill -TERM "$SERVER_PID" 2>/dev/null
        if ! wait_finished "$SERVER_PID" "$SERVER_START" "$1"; then
            SERVER_END=killed
            for _lchild in $(pgrep -P "$SERVER_PID" 2>/dev/null); do
                kill -KILL "$_lchild" 2>/dev/null
            done
            kill -KILL "$SERVER_PID" 2>/dev/null
        fi
    fi
    wait "$SERVER_PID" 2>/dev/null
    SERVER_RC=$?
    SERVER_PID=""
}

# ---- ephemeral ports ---------------------------------------------------------
# A client's port stays in TIME_WAIT for 2 x MSL after the client closes
# first. Linux picks connect()'s port per destination, every run here starts
# its server on a new port, and loadgen spreads its sockets over
# 127.0.0.2-254 there: runs never compete for ports. macOS and FreeBSD take
# it from one range shared by every destination, and off Linux loadgen sends
# from 127.0.0.1 only: macOS's range is 49152-65535 (16 384 ports), each held
# for 2 x net.inet.tcp.msl = 30 s. So a run that would not fit beside the
# recent runs' ports first waits for them. The forced path plans with
# macOS's defaults. A margin of 512 ports is left for everything else.

# now: the clock in seconds, with a fraction where the shell has one (bash
# 5's EPOCHREALTIME; `date +%s` is not POSIX, but GNU, BSD and busybox have it).
now() {
    if [ -n "${EPOCHREALTIME:-}" ]; then printf '%s' "$EPOCHREALTIME"; else date +%s; fi
}

# ports_init: PORT_BUDGET (0: no need to count) and PORT_TIME_WAIT_S.
ports_init() {
    PORT_BUDGET=0 PORT_TIME_WAIT_S=0 PORT_LEDGER="" PORT_WAIT_S=0
    [ "$USE_PROC" = 1 ] && return 0
    _lfirst=$(kern net.inet.ip.portrange.first)
    _llast=$(kern net.inet.ip.portrange.last)
    _lmsl=$(kern net.inet.tcp.msl)
    is_number "$_lfirst" && is_number "$_llast" || { _lfirst=49152 _llast=65535; }
    is_number "$_lmsl" || _lmsl=15000
    PORT_BUDGET=$((_llast - _lfirst + 1 - 512))
    PORT_TIME_WAIT_S=$((2 * _lmsl / 1000))
}

# port_budget N: about to open N connections: wait until they fit beside
# those of the recent runs still in TIME_WAIT, then book them. It says so
# first, through PORT_SAY (a command: the script's own voice) or on
# stderr; PORT_WAIT_S adds up the waits.
port_budget() {
    [ "${PORT_BUDGET:-0}" -gt 0 ] || return 0
    _lt=$(now)
    # Oldest first: free runs until the new one fits; wait for the last freed.
    _lwait=$(printf '%s\n' "$PORT_LEDGER" | awk -v t="$_lt" -v tw="$PORT_TIME_WAIT_S" \
        -v need="$1" -v b="$PORT_BUDGET" '
        NF == 2 && $1 > t - tw { when[++n] = $1; cnt[n] = $2; used += $2 }
        END {
            w = 0
            for (i = 1; i <= n && used + need > b; i++) { used -= cnt[i]; w = when[i] + tw - t }
            printf "%d", (w > 0 ? w + 1 : 0)
        }')
    if [ "$_lwait" -gt 0 ]; then
        set -- "$1" "waiting $_lwait s for client ports in TIME_WAIT to come free:" \
            "the next run opens $1, and $PORT_BUDGET fit in $PORT_TIME_WAIT_S s"
        if [ -n "${PORT_SAY:-}" ]; then $PORT_SAY "$2" "$3"; else echo "$2" "$3" >&2; fi
        sleep "$_lwait"
        PORT_WAIT_S=$((PORT_WAIT_S + _lwait))
    fi
    PORT_LEDGER=$(printf '%s\n' "$PORT_LEDGER" |
        awk -v t="$(now)" -v tw="$PORT_TIME_WAIT_S" 'NF == 2 && $1 > t - tw')
    PORT_LEDGER=$(printf '%s\n%s %s' "$PORT_LEDGER" "$(now)" "$1")
}

# ports_closed: the run booked last has closed its connections: their
# TIME_WAIT starts now, not when they were booked.
ports_closed() {
    [ "${PORT_BUDGET:-0}" -gt 0 ] || return 0
    PORT_LEDGER=$(printf '%s\n' "$PORT_LEDGER" | awk -v t="$(now)" 'NF == 2 { l[++n] = $0; c = $2 }
        END { for (i = 1; i < n; i++) print l[i]; if (n) print t, c }')
}

# ---- the load client ---------------------------------------------------------

# loadgen_path DIR: the load client these scripts run, as clients/loadgen.mk
# (or CMake) builds it in DIR: loadgen, or on the forced path loadgen-kqueue
# (kqueue, through 06-kqueue's shim on Linux: the code a Mac runs).
loadgen_path() {
    if [ "$LADDER_FORCED" = 1 ]; then echo "$1/loadgen-kqueue"; else echo "$1/loadgen"; fi
}

# loadgen_build TOP DIR: build it into DIR with make and clients/loadgen.mk
# (which picks the event loop); rebuilt only when a source changed.
loadgen_build() {
    ${MAKE:-make} -s -f "$1/clients/loadgen.mk" LADDER_TOP="$1" LOADGEN_DIR="$2" \
        CC="${CC:-cc}" "$(loadgen_path "$2")"
}

# ladder_flags TOP NAME...: those lines of TOP/common/flags.mk, for a compiler a script calls.
ladder_flags() {
    _l_mk=$1/common/flags.mk
    shift
    for _l_name in "$@"; do sed -n "s/^$_l_name *= *//p" "$_l_mk"; done | paste -s -d ' ' -
}
