#!/usr/bin/env bash
# Reproduce the I/O ladder's measurements on this machine, with one command.
#
#   scripts/reproduce.sh            the default run (6-8 minutes on 2 cores)
#   scripts/reproduce.sh --full     also the load curves at 100 and 1000
#                                   connections, and 3 sweeps per curve
#   scripts/reproduce.sh --quick    fewer repetitions, smaller N (under 2 minutes)
#   scripts/reproduce.sh --smoke    tiny counts, one run each (under 40 s): the
#                                   path, not the figures (the test suite runs it)
#   scripts/reproduce.sh --keep-damon   leave DAMON's page monitors running (they
#                                   are paused for the run: see damon_pause)
#   scripts/reproduce.sh --reference    the default run, then its report, tables,
#                                   verdicts, settings and plots copied to
#                                   docs/reference/: the figures every document
#                                   quotes (for maintainers, on a quiet machine)
#
# It builds the Release configuration (no sanitizers: the only build whose
# numbers mean anything), two servers that are not rungs (the busy-poll
# variant of 01 from the workshop's solution patch, and the libuv yardstick
# scripts/yardstick/uv_echo.c), then for each measurement starts a server on
# a kernel-chosen loopback port, runs loadgen --json against it, and stops
# it with SIGTERM. Everything lands in results/:
#   raw/          every JSON line loadgen printed, tagged with rung and run;
#                 settings.env (settings and machine), problems.txt
#   *.csv         one table per claim (medians, min and max over the runs)
#   verdicts.tsv  one verdict per claim: reproduced, NOT reproduced or
#                 not measured, with its inputs and thresholds
#   *.svg         the plots (gnuplot)
#   report.md     machine, settings, tables and verdicts
#   logs/         apt's log, stderr of servers and loadgen when they said anything
# The report is made by scripts/report.sh from raw/ alone, and the verdicts
# are printed at the end. Outside the verdicts, two findings: system calls
# per message under strace (05, 07, 08, 09; after the timed runs), and, with
# CORES_MIN_CPUS (4) allowed CPUs or more, 07 against 09 on half of them.
#
# Platforms: Linux (the reference), macOS and FreeBSD. Needs bash (3.2 is
# enough; FreeBSD: pkg install bash), make and a C compiler; without cmake
# the servers and loadgen are built by make (each rung's Makefile and
# clients/loadgen.mk). 02-fork's and 03-threads' runs are sized to the
# processes and threads this OS leaves room for, as make wall sizes them
# (the log says when a run shrank). cmake, gnuplot and libuv are used when
# present (as root on Debian or Ubuntu they are installed with apt-get;
# elsewhere the report says what was skipped and what to install: `brew
# install cmake gnuplot libuv` on macOS, `pkg install cmake gnuplot libuv`
# on FreeBSD).
# Environment: CC (default clang, else cc); BUILD_DIR to build (Release, no
# sanitizers) and measure in another folder than the release preset's
# build/release, relative to the repository; RESULTS_DIR (default results);
# YARDSTICK=0 to leave the libuv yardstick out; LADDER_FORCE_PORTABLE=1 to
# take the off-Linux path on Linux (no taskset, nothing read from /proc,
# loadgen's kqueue backend through the shim, connections from 127.0.0.1);
# LADDER_BIN=DIR to measure the executables in DIR instead of building (the
# test suite's smoke run uses its own build: figures from a sanitizer build
# mean nothing, the path is what it checks).
# Exit status: 0 when every measurement was made (or left out for a reason
# the platform or an optional tool explains) and every server behaved (a
# claim whose numbers do not hold is a finding, reported as such); 1 when a
# server misbehaved in any run of a claim or a measurement could not be
# made (the report and stderr say which); 2 for a bad command line.
# bash is not in FreeBSD's base system. Where `#!/usr/bin/env bash` finds
# none, env(1) stops with its own message ("env: bash: No such file or
# directory"); started with sh instead (sh scripts/reproduce.sh), the line
# below says what to install, before any line sh could not read.
if [ -z "${BASH_VERSION:-}" ]; then
    echo "reproduce.sh: needs bash: pkg install bash (FreeBSD)" >&2
    exit 1
fi
set -uo pipefail
export LC_ALL=C

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1

usage() {
    sed -n '2,/^# bash is not/{/^# bash is not/d;/^#/s/^# \{0,1\}//p;}' "$0"
}

# bad_usage WHY: a bad command line: WHY, the usage line, exit 2.
bad_usage() {
    echo "reproduce.sh: $1" >&2
    echo "usage: scripts/reproduce.sh [--full | --quick | --smoke | --reference]" \
        "[--keep-damon] [-h]" >&2
    exit 2
}

QUICK=0 SMOKE=0 FULL=0 REFERENCE=0 KEEP_DAMON=0
KIND="" # full, quick or smoke; empty: the default run
for arg in "$@"; do
    case "$arg" in
    --full | --quick | --smoke)
        [ -z "$KIND" ] || [ "$KIND" = "${arg#--}" ] ||
            bad_usage "--$KIND and $arg: one kind of run at a time"
        KIND=${arg#--}
        ;;
    --keep-damon) KEEP_DAMON=1 ;;
    --reference) REFERENCE=1 ;;
    -h | --help) usage; exit 0 ;;
    *) bad_usage "unknown argument '$arg'" ;;
    esac
done
# The reference is what every document quotes: the default run's figures,
# never a smaller run's, nor a longer one the documents do not describe.
[ "$REFERENCE" = 1 ] && [ -n "$KIND" ] &&
    bad_usage "--reference is the default run: not with --$KIND"
case $KIND in
full) FULL=1 ;;
quick) QUICK=1 ;;
smoke) SMOKE=1 ;;
esac

# ---- the platform -----------------------------------------------------------

# ladder_platform (scripts/lib/ladder.sh): USE_PROC, 1 to read /proc (Linux
# only), and PIN, how to pin a process to a CPU (taskset, cpuset or nothing;
# on Linux's own path taskset, which build installs where it is missing).
source "$ROOT/scripts/lib/ladder.sh"
ladder_platform
PLATFORM=$LADDER_OS
PORTABLE=$LADDER_FORCED
[ "$USE_PROC" = 1 ] && PIN=taskset
SKIP_RUNGS="" SKIP_WHY=""
MEM_KEY=server_pss_kb
YARD_RUNG=07-epoll
KQUEUE_TEXT="06-kqueue runs on the project's epoll-backed shim on Linux: its figures are epoll's"
if [ "$USE_PROC" = 1 ]; then
    KQUEUE_TEXT="$KQUEUE_TEXT."
elif [ "$PLATFORM" = Linux ]; then
    KQUEUE_TEXT="$KQUEUE_TEXT; loadgen uses kqueue through the same shim."
else
    KQUEUE_TEXT="06-kqueue is native kqueue here."
    SKIP_RUNGS=07-epoll SKIP_WHY="epoll is Linux-only"
    YARD_RUNG=06-kqueue
    # macOS has no PSS: rungs are compared on the footprint, the memory the
    # kernel charges the process (phys_footprint), which loadgen reads.
    [ "$PLATFORM" = Darwin ] && MEM_KEY=server_footprint_kb
fi
export LADDER_FORCE_PORTABLE=$PORTABLE

# ---- settings -------------------------------------------------------------
# Every claim's rungs and sizes, for this kind of run, from the claims'
# table (scripts/lib/claims.txt, where each is explained).

RUNGS=$(ladder_rungs "$ROOT")
BEYOND_RUNGS=$(ladder_rungs "$ROOT/beyond")
RUN_KINDS=$KIND
[ -n "$SKIP_RUNGS" ] && RUN_KINDS="$RUN_KINDS offlinux"
export CLAIMS=$ROOT/scripts/lib/claims.txt
# shellcheck disable=SC2086 # a list of kinds
SETTINGS=$(claims_settings "$CLAIMS" $RUN_KINDS) || exit 1
eval "$SETTINGS"

RESULTS=${RESULTS_DIR:-$ROOT/results}
RAW=$RESULTS/raw
# Each CPU's fastest time at loadgen's speed probe over the run, kept by
# loadgen itself (--speed-file): a window on CPUs slower than that is contended.
SPEED_FILE=$RAW/speed.txt
LOGS=$RESULTS/logs
APT_LOG=$LOGS/apt.log

source "$ROOT/scripts/lib/prereqs.sh"
source "$ROOT/scripts/lib/bench.sh"

# The scan pins server and client to one allowed CPU; C10K and the load
# runs put the server on one and loadgen on another when there are two.
read -r -a CPUS <<<"$(allowed_cpus)"
ALLOWED_CPUS=$(echo "${CPUS[*]}" | tr ' ' ',')
SCAN_CPU=${CPUS[0]}
C10K_SERVER_CPU=${CPUS[0]}
C10K_CLIENT_CPU=${CPUS[1]:-${CPUS[0]}}
# The load curves: server on the first CPU, loadgen on the others, one
# event loop per CPU (loadgen --threads) up to LOADGEN_MAX_THREADS, so a
# bigger machine than this 2-core one can outpace a single-threaded server.
LOADGEN_MAX_THREADS=8
CLIENT_THREADS=$((${#CPUS[@]} - 1))
[ "$CLIENT_THREADS" -lt 1 ] && CLIENT_THREADS=1
[ "$CLIENT_THREADS" -gt "$LOADGEN_MAX_THREADS" ] && CLIENT_THREADS=$LOADGEN_MAX_THREADS
CURVE_CLIENT_CPUS=$(echo "${CPUS[*]:1:$CLIENT_THREADS}" | tr ' ' ',')
[ -n "$CURVE_CLIENT_CPUS" ] || CURVE_CLIENT_CPUS=$C10K_CLIENT_CPU
# One loop per core (measure_cores): with this many allowed CPUs or more.
CORES_MIN_CPUS=${CORES_MIN_CPUS:-4}
CORES_STATUS="" CORES_SERVER_CPUS="" CORES_CLIENT_THREADS=""
PIN_WHERE="(scan: server and loadgen both on CPU $SCAN_CPU; load runs: server on CPU"
PIN_WHERE="$PIN_WHERE $C10K_SERVER_CPU, loadgen on CPU $C10K_CLIENT_CPU)."
case $PIN in
taskset) PIN_TEXT="Pinning: taskset $PIN_WHERE" ;;
cpuset) PIN_TEXT="Pinning: cpuset -l $PIN_WHERE" ;;
*)
    PIN_TEXT="macOS has no way to bind a process to a CPU"
    [ "$PORTABLE" = 1 ] && PIN_TEXT="as off Linux"
    PIN_TEXT="Pinning: **none** ($PIN_TEXT). What it weakens: the scan's round trip may include"
    PIN_TEXT="$PIN_TEXT cross-CPU wake-ups (higher and noisier than pinned; the O(n) against"
    PIN_TEXT="$PIN_TEXT O(ready) shape still shows), and in the load runs server and loadgen may"
    PIN_TEXT="$PIN_TEXT share a core, so server CPU % and which side was saturated are less clean."
    PIN_TEXT="$PIN_TEXT CPU time per message is still the server's own."
    SCAN_CPU="" C10K_SERVER_CPU="" C10K_CLIENT_CPU=""
    ;;
esac

# Off Linux, loadgen connects from 127.0.0.1 only, so every run's ports
# come from one range, and those it closes first stay in TIME_WAIT for
# 2 x MSL: the runs are spaced to stay within the range (ports_init and
# port_budget, scripts/lib/ladder.sh; the forced path plans with macOS's
# 16 384 ports and 30 s).
ports_init

TMP=$(mktemp -d "${TMPDIR:-/tmp}/reproduce.XXXXXX") || exit 1
trap bench_cleanup EXIT
trap 'log "interrupted; stopping what we started"; bench_cleanup; exit 130' INT TERM HUP

skipped() { case " $SKIP_RUNGS " in *" $1 "*) return 0 ;; esac; return 1; }
# skipped_run RUNG FILE TAGS: 0, having written the line of a run this
# platform cannot make (skip_run), when RUNG is one it leaves out.
skipped_run() { skipped "$1" || return 1; skip_run "$2" "$3" "$SKIP_WHY"; return 0; }

# first_line FILE: its first line, without the quotes and backslashes that
# would break the JSON and settings it goes into.
first_line() { head -n 1 "$1" | tr -d '"\\'; }

# sized RUNG N: N connections, or fewer where RUNG would meet a cap of this
# OS first, as make wall sizes them (room_for, scripts/lib/ladder.sh):
# 02-fork a process per client (RLIMIT_NPROC, kern.maxprocperuid, less the
# processes this user runs), 03-threads a thread per client
# (kern.num_taskthreads, kern.threads.max_threads_per_proc; on Linux
# kernel.threads-max, kernel.pid_max and RLIMIT_NPROC less the tasks now).
# Sets SIZED_N, and SIZED_TAG for the run's JSON line: "n":N, and where the
# run shrank "asked":N too (the reporter reads it as the run for that N).
# The log says when a run shrank.
sized() {
    SIZED_N=$(room_for "$1" "$2")
    [ "$SIZED_N" -ge 1 ] || SIZED_N=1
    SIZED_TAG="\"n\":$SIZED_N"
    [ "$SIZED_N" -lt "$2" ] || return 0
    log "$1: room for $SIZED_N clients here, not $2: this run holds $SIZED_N"
    SIZED_TAG="$SIZED_TAG,\"asked\":$2"
}

# ---- tools and build -------------------------------------------------------

SKIPPED_TOOLS=""
# install_hint PACKAGE: how to get it on this platform.
install_hint() {
    case $PLATFORM in
    Darwin) echo "brew install $1" ;;
    FreeBSD) echo "pkg install $1" ;;
    *) echo "apt-get install $(package_for "$1")" ;;
    esac
}

# skipped_tool WHAT: one more entry of SKIPPED_TOOLS, for the report.
skipped_tool() { SKIPPED_TOOLS="$SKIPPED_TOOLS${SKIPPED_TOOLS:+; }$1"; }

# built NAME STATUS TEXT: NAME's line in the log: TEXT, or why it is not measured.
built() { if [ -z "$2" ]; then log "$1: $3"; else log "$1: not measured: $2"; fi; }

# Optional tools: installed with apt-get as root on Debian (not on the
# portable path, which stands for a machine without apt); otherwise noted.
optional_tool() {
    command -v "$1" >/dev/null 2>&1 && return 0
    if [ "$PORTABLE" = 0 ] && can_apt; then
        apt_install "$(package_for "$1")" >&2 && command -v "$1" >/dev/null 2>&1 && return 0
    fi
    skipped_tool "$1 not found: $2 (install: $(install_hint "$1"))"
    log "$1 not found: $2 ($(install_hint "$1"))"
    return 1
}

build() {
    build_tools
    build_tree
    LOADGEN=$(loadgen_path "$BIN")
    local exe
    for exe in $RUNGS; do
        skipped "$exe" && continue
        [ -x "$BIN/$exe" ] || { echo "reproduce.sh: $BIN/$exe was not built" >&2; exit 1; }
    done
    [ -x "$LOADGEN" ] || { echo "reproduce.sh: $LOADGEN was not built" >&2; exit 1; }
    mkdir -p "$TMP/bin"
    build_busy_poll
    build_yardstick
    # The open loop (--rate lists, --threads) is what the curves need.
    CURVE_STATUS=""
    "$LOADGEN" --help 2>&1 | grep -q -- '--threads' ||
        CURVE_STATUS="this loadgen has no --rate sweep and --threads"
    optional_tool gnuplot "the plots (SVG) were skipped; the tables and verdicts are all there" ||
        true
    check_beyond
}

# build_tools: CC (default clang, else cc), make, and taskset where the
# runs are pinned with it; installed with apt-get where that is possible.
build_tools() {
    if [ -z "${CC:-}" ]; then
        CC=cc
        command -v clang >/dev/null 2>&1 && CC=clang
    fi
    export CC
    command -v make >/dev/null 2>&1 && command -v "$CC" >/dev/null 2>&1 || {
        [ "$PORTABLE" = 0 ] && can_apt && ensure_tools make clang
        command -v "$CC" >/dev/null 2>&1 || {
            echo "reproduce.sh: no C compiler ($CC); install one" \
                "(macOS: xcode-select --install)" >&2
            exit 1
        }
    }
    [ "$PIN" = taskset ] && ensure_tools taskset
    return 0
}

# build_tree: BIN, the folder of executables to measure: LADDER_BIN as it
# is, or the Release build by CMake (BUILD_DIR, else the release preset's
# build/release), or without cmake by make (build_with_make), with one job
# per CPU up to BUILD_MAX_JOBS.
BUILD_MAX_JOBS=2
build_tree() {
    local jobs rc=0
    jobs=$(cpu_count)
    [ "$jobs" -gt "$BUILD_MAX_JOBS" ] && jobs=$BUILD_MAX_JOBS
    if [ -n "${LADDER_BIN:-}" ]; then
        BIN=$LADDER_BIN
        BUILD_DIR=$(cd "$BIN/.." && pwd)
        log "build: none, measuring the executables in $BIN (LADDER_BIN)"
        return 0
    elif ! optional_tool cmake "built with make instead (phase Makefiles, clients/loadgen.mk)"; then
        BUILD_DIR=$TMP/build
        BIN=$BUILD_DIR/bin
        build_with_make >"$TMP/build.log" 2>&1 || rc=$?
    elif [ -n "${BUILD_DIR:-}" ]; then
        log "build: Release, no sanitizers, in $BUILD_DIR"
        cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DLADDER_SANITIZE=none \
            >"$TMP/build.log" 2>&1 &&
            cmake --build "$BUILD_DIR" -j "$jobs" >>"$TMP/build.log" 2>&1 || rc=$?
    else
        BUILD_DIR=$ROOT/build/release
        log "build: cmake --preset release (build/release)"
        cmake --preset release >"$TMP/build.log" 2>&1 &&
            cmake --build --preset release -j "$jobs" >>"$TMP/build.log" 2>&1 || rc=$?
    fi
    BIN=$BUILD_DIR/bin
    [ "$rc" -eq 0 ] && return 0
    tail -n 30 "$TMP/build.log" >&2
    echo "reproduce.sh: the build failed" >&2
    exit 1
}

# Without cmake: each rung's release build by its phase Makefile (make
# server-release: -O2, warnings as errors, the kqueue shim after the system's
# headers) and the load client by clients/loadgen.mk, into BIN.
build_with_make() {
    local rung
    mkdir -p "$BIN"
    log "build: make server-release in each rung and clients/loadgen.mk, without cmake, in $BIN"
    for rung in $RUNGS; do
        skipped "$rung" && continue
        make -s -C "$rung" server-release CC="$CC" || return 1
        cp "$rung/server-release" "$BIN/$rung" || return 1
    done
    loadgen_build "$ROOT" "$BIN"
}

# The servers past the ladder that this machine can run: 08-io_uring exits
# 3 with one line where io_uring is refused (a sysctl, seccomp, an old
# kernel); the curves then say so instead of measuring it.
check_beyond() {
    local rung
    BEYOND_STATUS=""
    [ "$BEYOND_SWEPT" = yes ] || return 0
    for rung in $BEYOND_RUNGS; do
        if [ ! -x "$BIN/$rung" ]; then
            BEYOND_STATUS="$BEYOND_STATUS${BEYOND_STATUS:+; }$rung: not built on this platform"
            continue
        fi
        if [ "$rung" = 08-io_uring ]; then
            if server_start "$TMP" "$BIN/$rung" ""; then
                server_end 5
            elif io_uring_refused "$rung"; then
                BEYOND_STATUS="$BEYOND_STATUS${BEYOND_STATUS:+; }08-io_uring: io_uring"
                BEYOND_STATUS="$BEYOND_STATUS unavailable ($(first_line "$TMP/server.err"))"
                continue
            fi
        fi
        CURVE_RUNGS="$CURVE_RUNGS $rung"
    done
    [ -z "$BEYOND_STATUS" ] || log "beyond: not measured: $BEYOND_STATUS"
}

# The write-up's detour: 01-blocking made non-blocking and polled in a loop,
# from the workshop's solution patch, applied to a scratch copy.
build_busy_poll() {
    local patch=docs/workshop/solutions/busy-poll.patch dir=$TMP/busy-poll
    BUSY_STATUS="" BUSY_TEXT="01-blocking with $patch applied (git apply), make server-release"
    if [ ! -f "$patch" ]; then
        BUSY_STATUS="$patch missing"
    elif ! command -v git >/dev/null 2>&1; then
        BUSY_STATUS="git not found, needed to apply $patch"
    else
        mkdir -p "$dir" && cp -R 01-blocking common "$dir/"
        rm -f "$dir/01-blocking/server" "$dir/01-blocking/server-release" # a checkout's own builds
        if ! (cd "$dir" && git apply --include='01-blocking/*' "$ROOT/$patch") \
            >"$TMP/busy.log" 2>&1; then
            BUSY_STATUS="$patch does not apply: $(first_line "$TMP/busy.log")"
        elif ! make -s -C "$dir/01-blocking" CC="$CC" server-release >"$TMP/busy.log" 2>&1; then
            BUSY_STATUS="the patched 01-blocking does not build: $(first_line "$TMP/busy.log")"
        else
            cp "$dir/01-blocking/server-release" "$TMP/bin/busy-poll"
        fi
    fi
    built busy-poll "$BUSY_STATUS" "built from $patch"
}

# The yardstick: the same echo server on libuv, when libuv can be had.
build_yardstick() {
    YARD_STATUS="" YARD_TEXT="scripts/yardstick/uv_echo.c, cc -O2 ... -luv" M_LIBUV=""
    local flags=""
    # Homebrew keeps libuv under its own prefix, outside the compiler's default paths.
    command -v brew >/dev/null 2>&1 && flags="-I$(brew --prefix)/include -L$(brew --prefix)/lib"
    if [ "${YARDSTICK:-1}" = 0 ]; then
        YARD_STATUS="left out (YARDSTICK=0)"
    elif ! HEADER=uv.h compiles "$CC" $flags -luv &&
        ! { [ "$PORTABLE" = 0 ] && try_libuv "$CC"; }; then
        YARD_STATUS="libuv not found (install: $(install_hint libuv))"
        skipped_tool "libuv not found: the yardstick was not measured ($(install_hint libuv))"
    # shellcheck disable=SC2046 # flags, one word each
    elif ! "$CC" $(ladder_flags "$ROOT" STD RELEASE WARN) $flags scripts/yardstick/uv_echo.c \
        -o "$TMP/bin/uv-echo" -luv >"$TMP/uv.log" 2>&1; then
        YARD_STATUS="uv_echo.c does not build: $(first_line "$TMP/uv.log")"
    else
        M_LIBUV=$( (dpkg-query -W -f '${Version}' "$(package_for libuv)" ||
            pkg-config --modversion libuv) 2>/dev/null || echo "installed")
        CURVE_RUNGS="$CURVE_RUNGS uv-echo"
        [ "$SCAN_YARDSTICK" = yes ] && SCAN_CONTRAST="$SCAN_CONTRAST uv-echo"
        C10K_EXTRA=uv-echo
    fi
    built yardstick "$YARD_STATUS" "uv-echo built (libuv $M_LIBUV)"
}

# ---- measurements ----------------------------------------------------------
# Each one: a fresh server, one loadgen run with its own deadline (the
# third argument), SIGTERM. The tags on each JSON line say what it was.

# Claim: one idle client freezes a blocking server; the others do not.
measure_stall() {
    local rung run
    for rung in $RUNGS; do
        skipped_run "$rung" "$RAW/stall.jsonl" "\"rung\":\"$rung\",\"run\":1" && continue
        log "stall: $rung, $STALL_RUNS x a ${STALL_HOLD}s hold"
        for run in $(seq 1 "$STALL_RUNS"); do
            one_run "$RAW/stall.jsonl" "\"rung\":\"$rung\",\"run\":$run" 20 "$rung" "" \
                stall --hold "$STALL_HOLD"
        done
    done
}

# Claims: a blocking or sleeping server costs ~0% CPU while its clients
# idle; a busy-polling one burns a core.
measure_idle_cpu() {
    local rung n run rungs=$RUNGS
    [ -z "$BUSY_STATUS" ] && rungs="$rungs busy-poll"
    for rung in $rungs; do
        skipped_run "$rung" "$RAW/idle_cpu.jsonl" "\"rung\":\"$rung\",\"run\":1" && continue
        # 01-blocking (and its busy-poll variant) serves one client at a
        # time: a second client would wait for an echo that never comes.
        n=$IDLE_CLIENTS
        case $rung in 01-blocking | busy-poll) n=1 ;; esac
        log "idle CPU: $rung, $n idle clients for ${IDLE_SECONDS}s, $IDLE_RUNS x"
        for run in $(seq 1 "$IDLE_RUNS"); do
            one_run "$RAW/idle_cpu.jsonl" "\"rung\":\"$rung\",\"run\":$run" 30 "$rung" "" \
                hold -n "$n" --duration "$IDLE_SECONDS" --server-pid @PID
        done
    done
    # Where loadgen reads no server figures (a platform it has no source
    # for), every server figure is null: the report says so, not "failed".
    SERVER_FIGURES=1
    grep -q '"server_cpu_ms":null' "$RAW/idle_cpu.jsonl" &&
        ! grep -q '"server_cpu_ms":[0-9]' "$RAW/idle_cpu.jsonl" && SERVER_FIGURES=0
}

# Claim: fork and threads pay for each connection in memory and setup time.
measure_memory() {
    local rung n
    for rung in $MEM_RUNGS; do
        for n in $MEM_NS; do
            sized "$rung" "$n"
            log "memory: $rung, $SIZED_N connections"
            one_run "$RAW/memory.jsonl" "\"rung\":\"$rung\",$SIZED_TAG" 60 "$rung" "" \
                hold -n "$SIZED_N" --duration 1 --server-pid @PID
        done
    done
}

# Claim: select refuses fds >= FD_SETSIZE and keeps serving the rest.
measure_select_ceiling() {
    log "select ceiling: 04-select, $SELECT_N connections"
    COUNT_LINES=FD_SETSIZE one_run "$RAW/select.jsonl" '"rung":"04-select"' 30 04-select "" \
        hold -n "$SELECT_N" --duration 1 --allow-refused --server-pid @PID
}

# Claims: select and poll are O(n) per wakeup; kqueue and epoll O(ready).
# Server and loadgen share one CPU, so a round trip is two context switches
# on that CPU, not cross-CPU wake-ups whose cost varies with the other core.
measure_scan() {
    local rep rung rungs
    for rep in $(seq 1 "$SCAN_REPS"); do
        rungs=$SCAN_CLAIM
        [ "$rep" = 1 ] && rungs="$SCAN_CONTRAST $SCAN_CLAIM"
        for rung in $rungs; do
            scan_rung "$rung" "$rep"
        done
    done
}

# scan_rung RUNG REP: one scan of RUNG over its idle counts.
scan_rung() {
    local rung=$1 rep=$2 idle count deadline tags
    case $rung in
    02-fork | 03-threads) idle=$SCAN_IDLE_BLOCKING ;;
    04-select) idle=$SCAN_IDLE_SELECT ;;
    *) idle=$SCAN_IDLE ;;
    esac
    if skipped "$rung"; then
        [ "$rep" = 1 ] && for count in $(echo "$idle" | tr ',' ' '); do
            skip_run "$RAW/scan.jsonl" "\"rung\":\"$rung\",\"run\":1,\"idle\":$count" "$SKIP_WHY"
        done
        return 0
    fi
    count=$(echo "$idle" | tr ',' '\n' | wc -l | tr -d ' ')
    deadline=$(awk -v n="$count" -v d="$SCAN_DURATION" 'BEGIN { printf "%d", n * (d + 5) + 30 }')
    tags="\"rung\":\"$rung\",\"run\":$rep"
    log "scan: $rung, idle $idle, ${SCAN_DURATION}s each," \
        "run $rep/$SCAN_REPS${SCAN_CPU:+, on CPU $SCAN_CPU}"
    LOADGEN_CPU=$SCAN_CPU one_run "$RAW/scan.jsonl" "$tags" "$deadline" "$rung" "$SCAN_CPU" \
        scan --idle "$idle" --duration "$SCAN_DURATION" --server-pid @PID || return 0
    [ "$(printf '%s\n' "$LG_OUT" | grep -c '"idle":')" -ne "$count" ] &&
        failure "scan: $rung run $rep: only some of the idle counts $idle were measured ($LG_ERR)"
    return 0
}

# Claim: C10K, closed loop, every byte verified, server and client each on
# its own CPU. 07-epoll runs twice back to back: the second run must not be
# starved of ports or fds by the first. The yardstick gets one run too,
# for its peak memory at 10 000.
measure_c10k() {
    local rung run runs n tags
    for rung in $C10K_RUNGS ${C10K_EXTRA:-} ${SKIP_RUNGS}; do
        tags="\"rung\":\"$rung\",\"n\":$C10K_N,\"run\":1"
        skipped_run "$rung" "$RAW/c10k.jsonl" "$tags" && continue
        runs=1
        [ "$rung" = 07-epoll ] && runs=2
        sized "$rung" "$C10K_N"
        for run in $(seq 1 "$runs"); do
            log "c10k: $rung, $SIZED_N connections for ${C10K_DURATION}s, closed loop (run $run)"
            tags="\"rung\":\"$rung\",$SIZED_TAG,\"run\":$run"
            LOADGEN_CPU=$C10K_CLIENT_CPU one_run "$RAW/c10k.jsonl" "$tags" \
                $((${C10K_DURATION%.*} + 60)) "$rung" "$C10K_SERVER_CPU" \
                c10k -n "$SIZED_N" --duration "$C10K_DURATION" --server-pid @PID
        done
    done
}

# The walls: one load curve per rung (CURVE_RATES in the claims' table), the sweeps of all
# rungs interleaved rep by rep, server on its CPU and loadgen's threads on
# the others.
measure_curves() {
    local rep n rung order headroom
    if [ -n "$CURVE_STATUS" ]; then log "curves: not measured: $CURVE_STATUS"; return 0; fi
    headroom=$(headroom_list)
    HEADROOM_STATUS=""
    [ -n "$QUOTA_CGROUP" ] ||
        HEADROOM_STATUS="no cpu cgroup here to hold a server to a quota (Linux, as root)"
    for rep in $(seq 1 "$CURVE_REPS"); do
        for n in $CURVE_NS; do
            # shellcheck disable=SC2086 # lists of words
            order=$(shuffled "curves$rep$n" 04-select $CURVE_RUNGS \
                $([ "$n" = "${CURVE_NS##* }" ] && echo $headroom))
            log "curves: round $rep at $n connections, in the order $order"
            for rung in $order; do
                curve "$rung" "$n" "$rep"
            done
        done
    done
}

# headroom_list: the headroom sweeps (HEADROOM_RUNGS in the claims' table), one "RUNG@PCT" a
# line, for the rungs on this run's curves, where a cpu cgroup can hold a
# server to a quota (QUOTA_CGROUP, bench.sh's cgroup_init).
headroom_list() {
    local rung q
    [ -n "$QUOTA_CGROUP" ] || return 0
    for rung in $HEADROOM_RUNGS; do
        case " $CURVE_RUNGS " in *" $rung "*) ;; *) continue ;; esac
        skipped "$rung" && continue
        for q in $HEADROOM_QUOTAS; do echo "$rung@$q"; done
    done
}

# shuffled SEED WORD...: the words in a random order drawn from SEED and
# this run's RUN_SEED (recorded in the settings), one line.
shuffled() {
    local seed
    seed=$(printf '%s' "$RUN_SEED$1" | cksum | awk '{ print $1 % 2147483647 }')
    shift
    printf '%s\n' "$@" | awk -v s="$seed" 'BEGIN { srand(s) } { printf "%.9f %s\n", rand(), $0 }' |
        sort -n | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $2 } END { print "" }'
}

# The knees (KNEE_REPS in the claims' table): the brackets are the reporter's (report.awk's
# brackets mode reads the sweeps just made, with the rules the report
# itself judges by), one run per rung and round, the rungs in a new random
# order each round; then the extra rounds of the knees its unsteady mode
# names.
measure_knees() {
    local brackets rep
    [ -z "$CURVE_STATUS" ] && [ "$KNEE_REPS" -gt 0 ] && [ -s "$RAW/curves.jsonl" ] || return 0
    brackets=$(knee_brackets brackets)
    if [ -z "$brackets" ]; then
        log "knees: no rung's knee was bracketed on the server's side: nothing to bisect"
        return 0
    fi
    for rep in $(seq 1 "$KNEE_REPS"); do
        knee_round "$rep" "$KNEE_REPS" "$brackets"
    done
    for rep in $(seq $((KNEE_REPS + 1)) $((KNEE_REPS + KNEE_MORE_REPS))); do
        brackets=$(knee_brackets unsteady)
        [ -n "$brackets" ] || break
        knee_round "$rep" $((KNEE_REPS + KNEE_MORE_REPS)) "$brackets"
    done
}

# knee_brackets MODE: report.awk's "rung n low high" lines (MODE brackets:
# every knee the sweeps bracketed; unsteady: those whose rounds so far are).
knee_brackets() {
    local f files=""
    for f in curves headroom knees headroom_knees; do
        [ -s "$RAW/$f.jsonl" ] && files="$files $RAW/$f.jsonl"
    done
    # shellcheck disable=SC2086 # a list of files
    REPORT_MODE=$1 CURVE_RUNGS="$CURVE_RUNGS" CURVE_NS="$CURVE_NS" \
        CURVE_N_SELECT="$CURVE_N_SELECT" PLATFORM="$PLATFORM" QUOTA_US="$QUOTA_US" \
        HEADROOM_SWEEPS="$(headroom_list | tr '\n' ' ')" awk -f "$ROOT/scripts/lib/report.awk" \
        $files
}

# knee_round REP OF BRACKETS: one bisection round of each bracket.
knee_round() {
    local rep=$1 of=$2 brackets=$3 rung cn lo hi rates order quota file tags
    # shellcheck disable=SC2046 # one word per rung
    order=$(shuffled "knees$rep" $(printf '%s\n' "$brackets" | awk '{ print $1 }'))
    log "knees: round $rep/$of, in the order $order"
    for rung in $order; do
        read -r cn lo hi <<<"$(awk -v r="$rung" '$1 == r { print $2, $3, $4 }' <<<"$brackets")"
        rates=$(awk -v lo="$lo" -v hi="$hi" -v c="$KNEE_CUTS" 'BEGIN { for (j = 1; j <= c; j++)
            printf "%s%d", (j > 1 ? "," : ""), lo * (hi / lo) ^ (j / c) + 0.5 }')
        log "knee: $rung, $cn connections, $rates msgs/s (between $lo and $hi)"
        quota="" file=knees
        case $rung in *@*) quota=${rung#*@} rung=${rung%@*} file=headroom_knees ;; esac
        tags="\"rung\":\"$rung\",${quota:+\"quota_pct\":$quota,}\"n\":$cn,\"run\":$rep"
        SERVER_QUOTA_PCT=$quota sweep "$file" "$tags" "$rung" "$cn" "$rates"
    done
}

# sweep FILE TAGS RUNG N RATES: one open-loop run of RATES msgs/s at N connections into
# RAW/FILE.jsonl (a curve's or a knee's), the server on its CPU (held to SERVER_QUOTA_PCT
# of it, if set) and loadgen's threads on the others.
sweep() {
    LOADGEN_CPU=$CURVE_CLIENT_CPUS one_run "$RAW/$1.jsonl" "$2" 120 "$3" "$C10K_SERVER_CPU" \
        c10k -n "$4" --rate "$5" --duration "$CURVE_DURATION" --threads "$CLIENT_THREADS" \
        --retry-contended "$CURVE_RETRIES" --server-pid @PID
}

# curve RUNG N REP: one sweep of the rates at N connections (04-select:
# below FD_SETSIZE, swept once, at the largest N).
curve() {
    local rung=$1 cn=$2 rep=$3 tags rates quota="" file=curves
    case $rung in *@*) quota=${rung#*@} rung=${rung%@*} file=headroom ;; esac
    if [ "$rung" = 04-select ]; then
        [ "$cn" = "${CURVE_NS##* }" ] || return 0
        [ "$cn" -gt "$CURVE_N_SELECT" ] && cn=$CURVE_N_SELECT
    fi
    skipped_run "$rung" "$RAW/curves.jsonl" "\"rung\":\"$rung\",\"n\":$cn,\"run\":$rep" && return 0
    sized "$rung" "$cn"
    cn=$SIZED_N
    tags="\"rung\":\"$rung\",${quota:+\"quota_pct\":$quota,}$SIZED_TAG,\"run\":$rep"
    rates=$CURVE_RATES
    # The light steps only where a verdict reads them (never under a quota).
    case " $CURVE_LIGHT_RUNGS " in *" $rung "*) [ -z "$quota" ] ;; *) false ;; esac ||
        rates=$(echo "$CURVE_RATES" | tr ',' '\n' | awk -v f="$CURVE_HEAVY_FROM" '
            $1 + 0 >= f { printf "%s%s", (n++ ? "," : ""), $1 } END { print "" }')
    [ -n "$rates" ] || rates=$CURVE_RATES
    log "curve: $rung, $cn connections, $rates msgs/s, ${CURVE_DURATION}s each" \
        "(run $rep/$CURVE_REPS${quota:+; the server held to $quota% of its CPU})"
    SERVER_QUOTA_PCT=$quota sweep "$file" "$tags" "$rung" "$cn" "$rates"
}

# One loop per core, where there are cores for it: 07-epoll and 09-reuseport
# (-t S) swept on the same S server CPUs, loadgen's threads on the others.
# The curves pin every server to one CPU, where 09's loops share it; this
# is the run in which 09 can gain. It needs CORES_MIN_CPUS allowed CPUs
# (half for the server, half for loadgen) and CPU pinning; else one line
# per rung says why it was not measured.
measure_cores() {
    local why="" s threads cpus rung extra tags n=${CURVE_NS##* }
    s=$((${#CPUS[@]} / 2))
    if [ -n "$CURVE_STATUS" ]; then why=$CURVE_STATUS
    elif [ "$BEYOND_SWEPT" != yes ]; then why="a --$KIND run does not sweep 09"
    elif [ ! -x "$BIN/09-reuseport" ]; then why="09-reuseport is not built on this platform"
    elif [ -z "$C10K_SERVER_CPU" ]; then why="no CPU pinning here"
    elif [ "${#CPUS[@]}" -lt "$CORES_MIN_CPUS" ]; then
        why="${#CPUS[@]} allowed CPUs; one loop per core against one loop needs"
        why="$why $CORES_MIN_CPUS, half for the server and half for loadgen's threads"
    fi
    if [ -n "$why" ]; then
        CORES_STATUS=$why
        log "cores: not measured: $why"
        for rung in 07-epoll 09-reuseport; do
            skip_run "$RAW/cores.jsonl" "\"rung\":\"$rung\",\"n\":$n,\"run\":1" "$why"
        done
        return 0
    fi
    cpus=$(echo "${CPUS[*]:0:$s}" | tr ' ' ',')
    threads=$((${#CPUS[@]} - s))
    [ "$threads" -gt "$LOADGEN_MAX_THREADS" ] && threads=$LOADGEN_MAX_THREADS
    CORES_SERVER_CPUS=$cpus CORES_CLIENT_THREADS=$threads
    for rung in 07-epoll 09-reuseport; do
        extra=""; [ "$rung" = 09-reuseport ] && extra="-t $s"
        tags="\"rung\":\"$rung\",\"n\":$n,\"run\":1"
        log "cores: $rung on CPUs $cpus, loadgen on $threads thread(s), $CURVE_RATES msgs/s"
        # shellcheck disable=SC2086 # extra is -t S or nothing
        SERVER_ARGS=$extra LOADGEN_CPU=$(echo "${CPUS[*]:$s:$threads}" | tr ' ' ',') \
            one_run "$RAW/cores.jsonl" "$tags" 120 "$rung" "$cpus" \
            c10k -n "$n" --rate "$CURVE_RATES" --duration "$CURVE_DURATION" \
            --threads "$threads" --server-pid @PID
    done
}

# The yardstick: YARD_PAIRS pairs of runs, YARD_RUNG and libuv, the order
# within each pair drawn at random (and recorded), at one rate.
measure_yardstick() {
    local pair first second rung order
    [ -n "$CURVE_STATUS$YARD_STATUS" ] && return 0
    for pair in $(seq 1 "$YARD_PAIRS"); do
        first=$YARD_RUNG second=uv-echo
        awk -v s="$pair$$" 'BEGIN { srand(s); exit rand() < 0.5 }' &&
            first=uv-echo second=$YARD_RUNG
        order=1
        for rung in $first $second; do
            log "yardstick: pair $pair/$YARD_PAIRS, $rung, $YARD_N connections at $YARD_RATE msgs/s"
            LOADGEN_CPU=$C10K_CLIENT_CPU one_run "$RAW/pairs.jsonl" \
                "\"rung\":\"$rung\",\"pair\":$pair,\"order\":$order" 60 "$rung" "$C10K_SERVER_CPU" \
                c10k -n "$YARD_N" --rate "$YARD_RATE" --duration "$YARD_DURATION" \
                --retry-contended "$CURVE_RETRIES" --server-pid @PID
            order=2
        done
    done
}

# System calls per message (scripts/lib/syscalls.sh), after the timed runs:
# strace slows the server it traces, so no timed figure comes from it.
measure_syscalls() {
    source "$ROOT/scripts/lib/syscalls.sh"
    if [ "$PLATFORM" = Linux ]; then
        optional_tool strace "system calls per message were not counted" || true
    fi
    syscalls_measure
}

# The listen-queue counters of the whole network namespace (other activity
# on the machine counts too): a full accept queue drops SYNs, which clients
# retry after 1 s, 3 s, ... Linux: /proc/net/netstat; elsewhere netstat -s
# ("listen queue overflows").
listen_counters() {
    if [ "$USE_PROC" = 1 ]; then
        awk '$1 == "TcpExt:" && !seen++ { for (i = 2; i <= NF; i++) name[i] = $i; next }
             $1 == "TcpExt:" { for (i = 2; i <= NF; i++)
                 if (name[i] ~ /^Listen(Overflows|Drops)$/) printf "%s %s ", name[i], $i }' \
            /proc/net/netstat 2>/dev/null
    elif [ "$PLATFORM" != Linux ]; then
        netstat -s -p tcp 2>/dev/null |
            awk '/listen queue overflow/ { printf "listen queue overflows %s ", $1 }'
    fi
}

# The machine, for the report: /proc on Linux, sysctl elsewhere.
describe_machine() {
    M_CORES=$(cpu_count)
    M_KERNEL=$(uname -sr)
    M_NOFILE="soft $(ulimit -Sn), hard $(ulimit -Hn)"
    if [ "$USE_PROC" = 1 ]; then describe_linux; else describe_sysctl; fi
    M_LOAD=$(uptime 2>/dev/null | sed -n 's/.*load average[s]*: *//p')
}

# The machine from /proc and /sys (Linux's own path).
describe_linux() {
    local sys=/sys/devices/system
    M_CPU=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
    M_MEM=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
    M_SOMAXCONN="somaxconn $(cat /proc/sys/net/core/somaxconn 2>/dev/null)"
    M_PORTS=$(tr '\t' ' ' </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
    M_DISTRO=$( (. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}") || true)
    M_SMT=$(cat $sys/cpu/smt/control 2>/dev/null || echo "not exposed")
    M_SMT="$M_SMT, $(awk '/^siblings/ { s = $3 } /^cpu cores/ { c = $4 }
        END { if (c) printf "%d thread(s) per core", s / c
              else printf "threads per core unknown" }' /proc/cpuinfo)"
    M_VIRT=$(systemd-detect-virt 2>/dev/null) ||
        M_VIRT=$(grep -q '^flags.* hypervisor' /proc/cpuinfo && echo "yes (hypervisor flag)" ||
            echo "none seen")
    M_CLOCKSOURCE=$(cat $sys/clocksource/clocksource0/current_clocksource 2>/dev/null)
    M_GOVERNOR=$(cat $sys/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo "not exposed")
}

# The machine from sysctl (macOS, FreeBSD; on the forced path, Linux's
# sysctl knows none of these names). macOS: the CPU's brand string, then
# hw.model (the Mac's model), cores against logical CPUs, the hypervisor
# flag; FreeBSD: hw.model (there, the CPU), threads per core, kern.vm_guest,
# the timecounter, and freebsd-version for the release.
describe_sysctl() {
    local brand
    brand=$(sysctl -n machdep.cpu.brand_string 2>/dev/null)
    if [ -n "$brand" ]; then
        M_CPU="$brand$(sysctl -n hw.model 2>/dev/null | sed 's/^/ (/; s/$/)/')"
    else
        M_CPU=$(sysctl -n hw.model 2>/dev/null)
    fi
    M_MEM=$(sysctl -n hw.memsize 2>/dev/null || sysctl -n hw.physmem 2>/dev/null)
    [ -n "$M_MEM" ] && M_MEM=$(awk -v b="$M_MEM" 'BEGIN { printf "%.1f GiB", b / 1073741824 }')
    M_SOMAXCONN=$(sysctl -n kern.ipc.somaxconn 2>/dev/null ||
        sysctl -n kern.ipc.soacceptqueue 2>/dev/null)
    [ -n "$M_SOMAXCONN" ] && M_SOMAXCONN="kern.ipc.somaxconn $M_SOMAXCONN"
    M_PORTS=$(sysctl -n net.inet.ip.portrange.first net.inet.ip.portrange.last 2>/dev/null |
        tr '\n' ' ')
    M_DISTRO=""
    if command -v sw_vers >/dev/null 2>&1; then
        M_DISTRO=$(sw_vers -productVersion 2>/dev/null | sed 's/^/macOS /')
    elif command -v freebsd-version >/dev/null 2>&1; then
        M_DISTRO="FreeBSD $(freebsd-version 2>/dev/null)"
    fi
    [ -n "$M_PORTS" ] && M_PORTS="$M_PORTS(from 127.0.0.1 only; TIME_WAIT ${PORT_TIME_WAIT_S}s)"
    M_SMT=$(sysctl -n kern.smp.threads_per_core 2>/dev/null | sed 's/$/ thread(s) per core/') ||
        M_SMT=$(sysctl -n hw.physicalcpu hw.logicalcpu 2>/dev/null | tr '\n' ' ' |
            awk '{ printf "%s cores, %s logical CPUs", $1, $2 }')
    M_VIRT=$(sysctl -n kern.vm_guest 2>/dev/null) ||
        M_VIRT=$(sysctl -n kern.hv_vmm_present 2>/dev/null | sed 's/^1$/yes/; s/^0$/none seen/')
    M_CLOCKSOURCE=$(sysctl -n kern.timecounter.hardware 2>/dev/null)
    M_GOVERNOR="not exposed"
}

# Settings and machine, for scripts/report.sh.
write_settings() {
    local cc v cache=$BUILD_DIR/CMakeCache.txt
    cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$cache" 2>/dev/null)
    M_COMPILER=$("${cc:-$CC}" --version 2>/dev/null | head -n 1)
    M_BUILD=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$cache" 2>/dev/null)
    M_SANITIZE=$(sed -n 's/^LADDER_SANITIZE:[A-Z]*=//p' "$cache" 2>/dev/null)
    [ -f "$cache" ] || { M_BUILD="Release (-O2, without cmake)"; M_SANITIZE=none; }
    ELAPSED=$(awk -v a="$START_TIME" -v b="$(now)" \
        'BEGIN { s = int(b - a + 0.5); printf "%dm %02ds", s / 60, s % 60 }')
    for v in $(ladder_settings "$CLAIMS"); do
        setting "$v"
    done >"$RAW/settings.env"
}

# setting NAME: one line NAME='value', single-quoted for the shell (no
# newlines).
setting() {
    printf "%s='%s'\n" "$1" \
        "$(eval "printf '%s' \"\${$1:-}\"" | tr '\n' ' ' | sed "s/'/'\\\\''/g")"
}

# ---- main -------------------------------------------------------------------

rm -rf "$RAW" "$LOGS"
mkdir -p "$RAW" "$LOGS"
: >"$RAW/problems.txt"
M_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
M_LISTEN_BEFORE=$(listen_counters)
describe_machine
RUN_SEED=${RUN_SEED:-$$}
M_COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) || M_COMMIT="not a git checkout"
git -C "$ROOT" diff --quiet HEAD 2>/dev/null || M_COMMIT="$M_COMMIT with uncommitted changes"
cgroup_init
damon_pause
host_busy "$HOST_SAMPLE_S"
if [ -n "$HOST_BUSY" ]; then
    HOST_TEXT="$HOST_BUSY% of the $(cpu_count) CPUs' time busy with other work, $HOST_STEAL%"
    HOST_TEXT="$HOST_TEXT stolen, over ${HOST_SAMPLE_S}s before the run"
    log "host: $HOST_TEXT"
else
    HOST_TEXT="not measured here (no /proc/stat)"
fi
# What a reference measured: the commit and the tree of every path whose
# change moves a figure (tests/docs/reference.sh holds the reference to
# them). It is made from committed code only.
REFERENCE_PATHS="$(ladder_rungs "$ROOT") common beyond clients platform"
REFERENCE_PATHS="$REFERENCE_PATHS scripts/lib scripts/reproduce.sh CMakeLists.txt CMakePresets.json"
if [ "$REFERENCE" = 1 ]; then
    # shellcheck disable=SC2086 # a list of paths
    if ! git -C "$ROOT" diff --quiet HEAD -- $REFERENCE_PATHS 2>/dev/null; then
        echo "reproduce.sh: --reference measures committed code only: commit the changes" \
            "to $REFERENCE_PATHS first" >&2
        exit 1
    fi
    REFERENCE_TREES="commit $(git -C "$ROOT" rev-parse HEAD)"
    for p in $REFERENCE_PATHS; do
        REFERENCE_TREES="$REFERENCE_TREES
$p $(git -C "$ROOT" rev-parse "HEAD:$p")"
    done
fi
if [ "$REFERENCE" = 1 ] && [ -n "$HOST_BUSY" ] &&
    awk -v b="$HOST_BUSY" -v s="$HOST_STEAL" -v q="$HOST_QUIET_PCT" \
        'BEGIN { exit !(b + s > q) }'; then
    echo "reproduce.sh: --reference needs a quiet host: $HOST_TEXT (at most" \
        "$HOST_QUIET_PCT% allowed); run it when nothing else runs" >&2
    exit 1
fi
C10K_EXTRA=""
build
LOADGEN_CPU=""
forced=""
[ "$PORTABLE" = 1 ] && forced=", LADDER_FORCE_PORTABLE=1"
log "measuring with $BIN ($PLATFORM$forced, loadgen ${LOADGEN##*/}, CPUs $ALLOWED_CPUS);" \
    "results in $RESULTS"

# The knees bisect what the curves bracketed; strace's count comes after every timed run.
for m in stall idle_cpu select_ceiling memory scan c10k curves knees cores yardstick syscalls; do
    "measure_$m"
done

M_LISTEN_AFTER=$(listen_counters)
log "writing tables, plots and report"
write_settings
printf '\n== Verdicts (%s; full report: %s) ==\n' "$ELAPSED" "${RESULTS#"$ROOT"/}/report.md"
bash "$ROOT/scripts/report.sh" "$RESULTS"
report_rc=$?
[ "$N_FAILURES" -gt 0 ] && grep '^measurement not made' "$RAW/problems.txt"
if [ "$REFERENCE" = 1 ] && [ "$report_rc" -eq 0 ]; then
    rm -rf "$ROOT/docs/reference" && mkdir -p "$ROOT/docs/reference/raw"
    cp "$RESULTS"/report.md "$RESULTS"/verdicts.tsv "$RESULTS"/*.csv "$RAW/settings.env" \
        "$ROOT/docs/reference/"
    cp "$RAW"/*.jsonl "$RAW"/settings.env "$RAW"/problems.txt "$ROOT/docs/reference/raw/"
    [ -f "$SPEED_FILE" ] && cp "$SPEED_FILE" "$ROOT/docs/reference/raw/"
    for svg in "$RESULTS"/*.svg; do [ -f "$svg" ] && cp "$svg" "$ROOT/docs/reference/"; done
    printf '%s\n' "$REFERENCE_TREES" >"$ROOT/docs/reference/TREES"
    log "reference: report, tables, verdicts, settings, raw/ and plots copied to docs/reference/"
fi
[ "$report_rc" -eq 0 ] && [ "$N_FAILURES" -eq 0 ] && [ "$N_PROBLEMS" -eq 0 ]
