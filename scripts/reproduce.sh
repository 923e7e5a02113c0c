#!/usr/bin/env bash
# Reproduce the I/O ladder's measurements on this machine, with one command.
#
#   scripts/reproduce.sh            the full run (under 10 minutes on 2 cores)
#   scripts/reproduce.sh --quick    a smoke run: fewer repetitions, smaller N
#
# It builds the Release configuration (no sanitizers: the only build whose
# numbers mean anything), then for each measurement starts the server itself
# on a kernel-chosen loopback port, runs bin/loadgen --json against it, and
# stops it with SIGTERM. Everything lands in results/:
#   raw/*.jsonl   every JSON line loadgen printed, tagged with rung and run
#   *.csv         one table per claim (medians where runs were repeated)
#   *.svg, *.png  the plots (gnuplot)
#   report.md     machine, settings, tables, and one verdict per claim,
#                 computed from the numbers
#   logs/         stderr of servers and loadgen, when they said anything
# and the verdicts are printed at the end.
#
# Environment: CC (default clang); BUILD_DIR to build (Release, no
# sanitizers) and measure in another folder than the release preset's
# build/release, relative to the repository; RESULTS_DIR (default results).
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
# The full run is sized to finish in under 10 minutes on a 2-core machine.

RUNGS="01-blocking 02-fork 03-threads 04-select 05-poll 06-kqueue 07-epoll"

STALL_HOLD=1.5       # seconds client A idles
STALL_RUNS=5         # per rung; the report shows medians
IDLE_CLIENTS=100     # idle CPU: this many idle connections ...
IDLE_SECONDS=3       # ... held for this long
MEM_RUNGS="02-fork 03-threads 07-epoll"
MEM_NS="1 1000 10000"
SELECT_N=1100        # above FD_SETSIZE (1024) on purpose
SCAN_RUNGS="02-fork 03-threads 04-select 05-poll 06-kqueue 07-epoll"
SCAN_IDLE="0,100,1000,10000"
SCAN_IDLE_SELECT="0,100,1000" # 04-select refuses fds >= FD_SETSIZE
SCAN_DURATION=2      # seconds of ping-pong per idle count
SCAN_REPS=3          # the machine is shared: medians of 3
SCAN_CPU=0           # server and loadgen pinned to this one CPU
C10K_RUNGS="02-fork 03-threads 05-poll 06-kqueue 07-epoll"
C10K_N=10000
C10K_DURATION=5
if [ "$QUICK" -eq 1 ]; then
    STALL_RUNS=1
    IDLE_SECONDS=1
    MEM_NS="1 100 1000"
    SCAN_IDLE="0,100,1000"
    SCAN_DURATION=0.5
    SCAN_REPS=1
    C10K_N=2000
    C10K_DURATION=1
fi

RESULTS=${RESULTS_DIR:-$ROOT/results}
RAW=$RESULTS/raw
LOGS=$RESULTS/logs

source "$ROOT/scripts/lib/prereqs.sh"
source "$ROOT/scripts/lib/bench.sh"
source "$ROOT/scripts/lib/report.sh"

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
}

# ---- measurements ----------------------------------------------------------
# Each one: a fresh server, one loadgen run, SIGTERM. The tags on each JSON
# line say which rung and which repetition it belongs to.

# Claim: one idle client freezes a blocking server; the others do not.
measure_stall() {
    local rung run
    for rung in $RUNGS; do
        log "stall: $rung, $(runs_text "$STALL_RUNS") of a ${STALL_HOLD}s hold"
        for run in $(seq 1 "$STALL_RUNS"); do
            start_server "$rung" stall || continue
            run_loadgen "$RAW/stall.jsonl" "\"rung\":\"$rung\",\"run\":$run" 30 \
                stall -p "$SERVER_PORT" --hold "$STALL_HOLD"
            [ -n "$LG_OUT" ] || failure "stall: $rung run $run: no result (loadgen exit $LG_RC: $LG_ERR)"
            stop_server
        done
    done
}

# Claim: a blocking or sleeping server costs ~0% CPU while its clients idle.
measure_idle_cpu() {
    local rung
    for rung in $RUNGS; do
        # 01-blocking serves one client at a time: any second client would
        # wait in its backlog for an echo that never comes. One idle client
        # is the honest test of what it costs while it waits.
        local n=$IDLE_CLIENTS
        [ "$rung" = 01-blocking ] && n=1
        log "idle CPU: $rung, $n idle clients for ${IDLE_SECONDS}s"
        start_server "$rung" idle || continue
        run_loadgen "$RAW/idle_cpu.jsonl" "\"rung\":\"$rung\"" 60 \
            hold -p "$SERVER_PORT" -n "$n" --duration "$IDLE_SECONDS" --server-pid "$SERVER_PID"
        [ -n "$LG_OUT" ] || failure "idle CPU: $rung: no result (loadgen exit $LG_RC: $LG_ERR)"
        stop_server
    done
}

# Claim: fork and threads pay for each connection in memory and setup time.
measure_memory() {
    local rung n
    for rung in $MEM_RUNGS; do
        for n in $MEM_NS; do
            log "memory: $rung, $n connections"
            start_server "$rung" memory || continue
            run_loadgen "$RAW/memory.jsonl" "\"rung\":\"$rung\",\"n\":$n" 120 \
                hold -p "$SERVER_PORT" -n "$n" --duration 1 --server-pid "$SERVER_PID"
            [ -n "$LG_OUT" ] || failure "memory: $rung n=$n: no result (loadgen exit $LG_RC: $LG_ERR)"
            stop_server
        done
    done
}

# Claim: select refuses fds >= FD_SETSIZE and keeps serving the rest.
measure_select_ceiling() {
    log "select ceiling: 04-select, $SELECT_N connections"
    start_server 04-select select || return
    run_loadgen "$RAW/select.jsonl" '"rung":"04-select"' 60 \
        hold -p "$SERVER_PORT" -n "$SELECT_N" --duration 1 --allow-refused --server-pid "$SERVER_PID"
    [ -n "$LG_OUT" ] || failure "select ceiling: no result (loadgen exit $LG_RC: $LG_ERR)"
    stop_server
    # The server's own count of refusals: one stderr line each.
    SELECT_SERVER_REFUSALS=$(grep -c 'FD_SETSIZE' "$LOGS/select.04-select.stderr.log" 2>/dev/null)
}

# Claims: select and poll are O(n) per wakeup; kqueue and epoll O(ready).
# Server and loadgen share one CPU, so a round trip is two context switches
# on that CPU, not cross-CPU wake-ups whose cost varies with the other core.
measure_scan() {
    local rep rung idle
    for rep in $(seq 1 "$SCAN_REPS"); do
        for rung in $SCAN_RUNGS; do
            idle=$SCAN_IDLE
            [ "$rung" = 04-select ] && idle=$SCAN_IDLE_SELECT
            log "scan: $rung, idle $idle, ${SCAN_DURATION}s each, run $rep/$SCAN_REPS, pinned to CPU $SCAN_CPU"
            start_server "$rung" scan "$SCAN_CPU" || continue
            run_loadgen "$RAW/scan.jsonl" "\"rung\":\"$rung\",\"run\":$rep" 240 \
                scan -p "$SERVER_PORT" --idle "$idle" --duration "$SCAN_DURATION" \
                --server-pid "$SERVER_PID" --cpu "$SCAN_CPU"
            local got
            got=$(printf '%s\n' "$LG_OUT" | grep -c '"idle":')
            [ "$got" -eq "$(tr ',' '\n' <<<"$idle" | wc -l)" ] ||
                failure "scan: $rung run $rep: $got of the idle counts $idle measured (loadgen exit $LG_RC: $LG_ERR)"
            stop_server
        done
    done
}

# Claim: C10K, every byte verified. 07-epoll runs twice back to back: the
# second run must not be starved of ports or fds by the first.
measure_c10k() {
    local rung run runs
    for rung in $C10K_RUNGS; do
        runs=1
        [ "$rung" = 07-epoll ] && runs=2
        for run in $(seq 1 "$runs"); do
            log "c10k: $rung, $C10K_N connections for ${C10K_DURATION}s (run $run of $runs)"
            start_server "$rung" c10k || continue
            run_loadgen "$RAW/c10k.jsonl" "\"rung\":\"$rung\",\"run\":$run" 180 \
                c10k -p "$SERVER_PORT" -n "$C10K_N" --duration "$C10K_DURATION" \
                --server-pid "$SERVER_PID"
            [ -n "$LG_OUT" ] || failure "c10k: $rung run $run: no result (loadgen exit $LG_RC: $LG_ERR)"
            stop_server
        done
    done
}

# ---- main -------------------------------------------------------------------

build
rm -rf "$RAW" "$LOGS"
mkdir -p "$RAW" "$LOGS"
rm -f "$RESULTS"/*.csv "$RESULTS"/*.svg "$RESULTS"/*.png "$RESULTS"/report.md
log "measuring with $BIN; results in $RESULTS"

collect_machine_info
KERNEL_BEFORE=$(listen_counters)
log "listen queue before: $(tr '\n' ' ' <<<"$KERNEL_BEFORE")"

measure_stall
measure_idle_cpu
measure_select_ceiling
measure_memory
measure_scan
measure_c10k

KERNEL_AFTER=$(listen_counters)
log "listen queue after: $(tr '\n' ' ' <<<"$KERNEL_AFTER")"
log "writing tables, plots and report"
write_results
log "done in $(elapsed_text); report: $RESULTS/report.md"
print_summary

[ ${#FAILURES[@]} -eq 0 ] && [ ${#PROBLEMS[@]} -eq 0 ]
