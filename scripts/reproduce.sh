#!/usr/bin/env bash
# Reproduce the I/O ladder's measurements on this machine, with one command.
#
#   scripts/reproduce.sh            the full run (under 5 minutes on 2 cores)
#   scripts/reproduce.sh --quick    a smoke run: fewer repetitions, smaller N
#
# It builds the Release configuration (no sanitizers: the only build whose
# numbers mean anything), two servers that are not rungs (the busy-poll
# variant of 01 from the workshop's solution patch, and the libuv yardstick
# scripts/yardstick/uv_echo.c), then for each measurement starts a server on
# a kernel-chosen loopback port, runs bin/loadgen --json against it, and
# stops it with SIGTERM. Everything lands in results/:
#   raw/          every JSON line loadgen printed, tagged with rung and run;
#                 settings.env (settings and machine), problems.txt
#   *.csv         one table per claim (medians where runs were repeated)
#   verdicts.tsv  one verdict per claim: reproduced, NOT reproduced or
#                 not measured, with its inputs and thresholds
#   *.svg         the plots (gnuplot)
#   report.md     machine, settings, tables and verdicts
#   logs/         apt's log, stderr of servers and loadgen when they said anything
# The report is made by scripts/report.sh from raw/ alone, and the verdicts
# are printed at the end.
#
# Environment: CC (default clang); BUILD_DIR to build (Release, no
# sanitizers) and measure in another folder than the release preset's
# build/release, relative to the repository; RESULTS_DIR (default results);
# YARDSTICK=0 to leave the libuv yardstick out.
# Exit status: 0 when every measurement was made and every server
# behaved (a claim that does not reproduce is a finding, reported as such);
# 1 when a measurement could not be made or a server misbehaved (the report
# and stderr say which); 2 for a bad command line.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1

usage() {
    sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"
}

QUICK=0
for arg in "$@"; do
    case "$arg" in
    --quick) QUICK=1 ;;
    -h | --help) usage; exit 0 ;;
    *)
        echo "reproduce.sh: unknown argument '$arg'" >&2
        echo "usage: scripts/reproduce.sh [--quick] [-h]" >&2
        exit 2
        ;;
    esac
done

# ---- settings -------------------------------------------------------------
# Sized to finish within 5 minutes on a 2-core machine. Repetitions were
# trimmed where the medians were stable: 5 stall runs varied by well under
# a millisecond (2 kept), and 3 scan runs agreed within a few per cent (2
# kept). 02-fork and 03-threads are scanned only up to 1000 idle: their line
# is flat, and 10 000 processes take tens of seconds to fork on a small
# machine (the memory and C10K runs still fork 10 000).

RUNGS="01-blocking 02-fork 03-threads 04-select 05-poll 06-kqueue 07-epoll"

STALL_HOLD=1.5       # seconds client A idles
STALL_RUNS=2         # per rung; the report shows medians
IDLE_CLIENTS=100     # idle CPU: this many idle connections ...
IDLE_SECONDS=1       # ... held for this long (CPU time is read in ns)
MEM_RUNGS="02-fork 03-threads 07-epoll"
MEM_NS="1 1000 10000"
SELECT_N=1100        # above FD_SETSIZE (1024) on purpose
SCAN_RUNGS="02-fork 03-threads 04-select 05-poll 06-kqueue 07-epoll"
SCAN_IDLE="0,100,1000,10000"
SCAN_IDLE_SELECT="0,100,1000" # 04-select refuses fds >= FD_SETSIZE
SCAN_IDLE_BLOCKING="0,100,1000" # 02-fork, 03-threads: see above
SCAN_DURATION=1      # seconds of ping-pong per idle count
SCAN_REPS=2
C10K_RUNGS="02-fork 03-threads 05-poll 06-kqueue 07-epoll"
C10K_CLAIM="05-poll 06-kqueue 07-epoll" # 02 and 03 are measured for contrast
C10K_N=10000
C10K_DURATION=2
YARD_NS="1000 10000" # the yardstick's load runs (the larger is C10K_N)
if [ "$QUICK" -eq 1 ]; then
    STALL_RUNS=1
    IDLE_SECONDS=1
    MEM_NS="1 100 1000"
    SCAN_IDLE="0,100,1000"
    SCAN_IDLE_BLOCKING="0,100"
    SCAN_DURATION=0.5
    SCAN_REPS=1
    C10K_N=2000
    C10K_DURATION=1
    YARD_NS="1000 2000"
fi

RESULTS=${RESULTS_DIR:-$ROOT/results}
RAW=$RESULTS/raw
LOGS=$RESULTS/logs
APT_LOG=$LOGS/apt.log

source "$ROOT/scripts/lib/prereqs.sh"
source "$ROOT/scripts/lib/bench.sh"

# The scan pins server and client to one allowed CPU; C10K and the load
# runs put the server on one and loadgen on another when there are two.
read -r -a CPUS <<<"$(allowed_cpus)"
ALLOWED_CPUS=$(tr ' ' ',' <<<"${CPUS[*]}")
SCAN_CPU=${CPUS[0]}
C10K_SERVER_CPU=${CPUS[0]}
C10K_CLIENT_CPU=${CPUS[1]:-${CPUS[0]}}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/reproduce.XXXXXX") || exit 1
trap cleanup EXIT
trap 'log "interrupted; stopping what we started"; cleanup; exit 130' INT TERM HUP

# ---- build ------------------------------------------------------------------

build() {
    ensure_tools cmake make clang gnuplot taskset
    export CC=${CC:-clang}
    local jobs
    jobs=$(nproc 2>/dev/null || echo 2)
    if [ -n "${BUILD_DIR:-}" ]; then
        log "build: Release, no sanitizers, in $BUILD_DIR"
        cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DLADDER_SANITIZE=none \
            >"$TMP/build.log" 2>&1 &&
            cmake --build "$BUILD_DIR" -j "$jobs" >>"$TMP/build.log" 2>&1
    else
        BUILD_DIR=$ROOT/build/release
        log "build: cmake --preset release (build/release)"
        cmake --preset release >"$TMP/build.log" 2>&1 &&
            cmake --build --preset release -j "$jobs" >>"$TMP/build.log" 2>&1
    fi
    local rc=$?
    if [ "$rc" -ne 0 ]; then
        tail -n 30 "$TMP/build.log" >&2
        echo "reproduce.sh: the build failed" >&2
        exit 1
    fi
    BIN=$BUILD_DIR/bin
    local exe
    for exe in $RUNGS loadgen; do
        if [ ! -x "$BIN/$exe" ]; then
            echo "reproduce.sh: $BIN/$exe was not built" >&2
            exit 1
        fi
    done
    mkdir -p "$TMP/bin"
    build_busy_poll
    build_yardstick
}

# The write-up's detour: 01-blocking made non-blocking and polled in a loop,
# from the workshop's solution patch, applied to a scratch copy.
build_busy_poll() {
    local patch=docs/workshop/solutions/busy-poll.patch dir=$TMP/busy-poll
    BUSY_STATUS="" BUSY_TEXT="01-blocking with $patch applied (git apply), cc -O2"
    if [ ! -f "$patch" ]; then
        BUSY_STATUS="$patch missing"
    else
        mkdir -p "$dir" && cp -r 01-blocking common "$dir/"
        if ! (cd "$dir" && git apply --include='01-blocking/*' "$ROOT/$patch") >"$TMP/busy.log" 2>&1; then
            BUSY_STATUS="$patch does not apply: $(head -n 1 "$TMP/busy.log" | tr -d '"\\')"
        elif ! "$CC" -std=c11 -O2 -Wall -Wextra -I"$dir/common" "$dir/01-blocking/main.c" \
            -o "$TMP/bin/busy-poll" >"$TMP/busy.log" 2>&1; then
            BUSY_STATUS="the patched 01-blocking does not build: $(head -n 1 "$TMP/busy.log" | tr -d '"\\')"
        fi
    fi
    [ -z "$BUSY_STATUS" ] && log "busy-poll: built from $patch" || log "busy-poll: not measured: $BUSY_STATUS"
}

# The yardstick: the same echo server on libuv, when libuv can be had.
build_yardstick() {
    YARD_STATUS="" YARD_TEXT="scripts/yardstick/uv_echo.c, cc -O2 ... -luv" M_LIBUV=""
    if [ "${YARDSTICK:-1}" = 0 ]; then
        YARD_STATUS="left out (YARDSTICK=0)"
    elif ! try_libuv "$CC"; then
        YARD_STATUS="libuv not installable here (Debian: apt-get install libuv1-dev)"
    elif ! "$CC" -std=c11 -O2 -Wall -Wextra scripts/yardstick/uv_echo.c -o "$TMP/bin/uv-echo" -luv \
        >"$TMP/uv.log" 2>&1; then
        YARD_STATUS="uv_echo.c does not build: $(head -n 1 "$TMP/uv.log" | tr -d '"\\')"
    else
        M_LIBUV=$(dpkg-query -W -f '${Version}' libuv1-dev 2>/dev/null || echo "installed")
        SCAN_RUNGS="$SCAN_RUNGS uv-echo"
    fi
    [ -z "$YARD_STATUS" ] && log "yardstick: uv-echo built (libuv $M_LIBUV)" || log "yardstick: not measured: $YARD_STATUS"
}

# ---- measurements ----------------------------------------------------------
# Each one: a fresh server, one loadgen run with its own deadline (the
# second number), SIGTERM. The tags on each JSON line say what it was.

# Claim: one idle client freezes a blocking server; the others do not.
measure_stall() {
    local rung run
    for rung in $RUNGS; do
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
    local rung n rungs=$RUNGS
    [ -z "$BUSY_STATUS" ] && rungs="$rungs busy-poll"
    for rung in $rungs; do
        # 01-blocking (and its busy-poll variant) serves one client at a
        # time: a second client would wait for an echo that never comes.
        n=$IDLE_CLIENTS
        case $rung in 01-blocking | busy-poll) n=1 ;; esac
        log "idle CPU: $rung, $n idle clients for ${IDLE_SECONDS}s"
        one_run "$RAW/idle_cpu.jsonl" "\"rung\":\"$rung\"" 30 "$rung" "" \
            hold -n "$n" --duration "$IDLE_SECONDS" --server-pid @PID
    done
}

# Claim: fork and threads pay for each connection in memory and setup time.
measure_memory() {
    local rung n
    for rung in $MEM_RUNGS; do
        for n in $MEM_NS; do
            log "memory: $rung, $n connections"
            one_run "$RAW/memory.jsonl" "\"rung\":\"$rung\",\"n\":$n" 60 "$rung" "" \
                hold -n "$n" --duration 1 --server-pid @PID
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
    local rep rung idle count
    for rep in $(seq 1 "$SCAN_REPS"); do
        for rung in $SCAN_RUNGS; do
            case $rung in
            02-fork | 03-threads) idle=$SCAN_IDLE_BLOCKING ;;
            04-select) idle=$SCAN_IDLE_SELECT ;;
            *) idle=$SCAN_IDLE ;;
            esac
            count=$(tr ',' '\n' <<<"$idle" | wc -l)
            log "scan: $rung, idle $idle, ${SCAN_DURATION}s each, run $rep/$SCAN_REPS, on CPU $SCAN_CPU"
            one_run "$RAW/scan.jsonl" "\"rung\":\"$rung\",\"run\":$rep" \
                "$(awk -v n="$count" -v d="$SCAN_DURATION" 'BEGIN { printf "%d", n * (d + 5) + 30 }')" \
                "$rung" "$SCAN_CPU" scan --idle "$idle" --duration "$SCAN_DURATION" \
                --server-pid @PID --cpu "$SCAN_CPU" &&
                [ "$(grep -c '"idle":' <<<"$LG_OUT")" -ne "$count" ] &&
                failure "scan: $rung run $rep: only some of the idle counts $idle were measured ($LG_ERR)"
        done
    done
}

# Claim: C10K, every byte verified, server and client each on its own CPU.
# 07-epoll runs twice back to back: the second run must not be starved of
# ports or fds by the first. The yardstick gets the same runs as 07-epoll.
measure_c10k() {
    local rung run runs n
    for rung in $C10K_RUNGS; do
        runs=1
        [ "$rung" = 07-epoll ] && runs=2
        for run in $(seq 1 "$runs"); do
            c10k_run "$rung" "$C10K_N" "$run"
        done
    done
    [ -z "$YARD_STATUS" ] || return 0
    c10k_run uv-echo "$C10K_N" 1
    for n in $YARD_NS; do
        [ "$n" = "$C10K_N" ] && continue
        c10k_run 07-epoll "$n" 1
        c10k_run uv-echo "$n" 1
    done
}

c10k_run() {
    log "c10k: $1, $2 connections for ${C10K_DURATION}s (run $3), server on CPU $C10K_SERVER_CPU, loadgen on CPU $C10K_CLIENT_CPU"
    one_run "$RAW/c10k.jsonl" "\"rung\":\"$1\",\"n\":$2,\"run\":$3" $((${C10K_DURATION%.*} + 60)) "$1" "$C10K_SERVER_CPU" \
        c10k -n "$2" --duration "$C10K_DURATION" --server-pid @PID --cpu "$C10K_CLIENT_CPU"
}

# The listen-queue counters of the whole network namespace (other activity
# on the machine counts too): a full accept queue drops SYNs, which clients
# retry after 1 s, 3 s, ...
listen_counters() {
    awk '$1 == "TcpExt:" && !seen++ { for (i = 2; i <= NF; i++) name[i] = $i; next }
         $1 == "TcpExt:" { for (i = 2; i <= NF; i++) if (name[i] ~ /^Listen(Overflows|Drops)$/) printf "%s %s ", name[i], $i }' \
        /proc/net/netstat 2>/dev/null
}

# Settings and machine, for scripts/report.sh.
write_settings() {
    local cc v
    cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null)
    M_CPU=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
    M_CORES=$(nproc 2>/dev/null || echo "?")
    M_MEM=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
    M_KERNEL=$(uname -sr)
    M_DISTRO=$( (. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}") || true)
    M_COMPILER=$("${cc:-$CC}" --version 2>/dev/null | head -n 1)
    M_BUILD=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null)
    M_SANITIZE=$(sed -n 's/^LADDER_SANITIZE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null)
    M_NOFILE="soft $(ulimit -Sn), hard $(ulimit -Hn)"
    M_SOMAXCONN=$(cat /proc/sys/net/core/somaxconn 2>/dev/null)
    M_PORTS=$(tr '\t' ' ' </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
    ELAPSED=$(awk -v a="$START_TIME" -v b="$EPOCHREALTIME" 'BEGIN { s = int(b - a + 0.5); printf "%dm %02ds", s / 60, s % 60 }')
    for v in QUICK RUNGS STALL_HOLD STALL_RUNS IDLE_CLIENTS IDLE_SECONDS MEM_RUNGS MEM_NS SELECT_N \
        SCAN_RUNGS SCAN_IDLE SCAN_IDLE_SELECT SCAN_IDLE_BLOCKING SCAN_DURATION SCAN_REPS SCAN_CPU C10K_RUNGS C10K_CLAIM C10K_N \
        C10K_DURATION C10K_SERVER_CPU C10K_CLIENT_CPU YARD_NS ALLOWED_CPUS LG_MARGIN BUSY_STATUS BUSY_TEXT \
        YARD_STATUS YARD_TEXT ELAPSED M_DATE M_LOAD M_CPU M_CORES M_MEM M_KERNEL M_DISTRO M_COMPILER M_BUILD \
        M_SANITIZE M_NOFILE M_SOMAXCONN M_PORTS M_LIBUV M_LISTEN_BEFORE M_LISTEN_AFTER; do
        printf '%s=%q\n' "$v" "${!v}"
    done >"$RAW/settings.env"
}

# ---- main -------------------------------------------------------------------

rm -rf "$RAW" "$LOGS"
mkdir -p "$RAW" "$LOGS"
: >"$RAW/problems.txt"
M_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
M_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
M_LISTEN_BEFORE=$(listen_counters)
build
log "measuring with $BIN on CPUs $ALLOWED_CPUS; results in $RESULTS"

measure_stall
measure_idle_cpu
measure_select_ceiling
measure_memory
measure_scan
measure_c10k

M_LISTEN_AFTER=$(listen_counters)
log "writing tables, plots and report"
write_settings
printf '\n== Verdicts (%s; full report: %s) ==\n' "$ELAPSED" "${RESULTS#"$ROOT"/}/report.md"
bash "$ROOT/scripts/report.sh" "$RESULTS"
for w in "${FAILURES[@]}"; do printf 'measurement not made: %s\n' "$w"; done
for w in "${PROBLEMS[@]}"; do printf 'server problem: %s\n' "$w"; done

[ ${#FAILURES[@]} -eq 0 ] && [ ${#PROBLEMS[@]} -eq 0 ]
