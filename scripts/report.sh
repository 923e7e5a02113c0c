#!/usr/bin/env bash
# The reproduction's reporter: from RESULTS/raw (the JSON lines loadgen
# printed, settings.env and problems.txt, all written by reproduce.sh) to
# the CSV tables, verdicts.tsv, the plots and report.md in RESULTS. It
# starts nothing and measures nothing, so it can be run again on old raw
# results, and the test suite runs it on canned ones (tests/report/).
#
#   scripts/report.sh [RESULTS]     default: results
#
# The numbers and verdicts are computed by scripts/lib/report.awk; this
# file only lays them out. Set NO_PLOTS=1 to skip gnuplot.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RESULTS=${1:-$ROOT/results}
RAW=$RESULTS/raw
if [ ! -r "$RAW/settings.env" ]; then
    echo "report.sh: $RAW/settings.env not found (run scripts/reproduce.sh first)" >&2
    exit 2
fi
source "$RAW/settings.env"

rm -f "$RESULTS"/*.csv "$RESULTS"/*.svg "$RESULTS"/*.png "$RESULTS"/verdicts.tsv "$RESULTS"/report.md
shopt -s nullglob
awk -v out="$RESULTS" -v rungs="$RUNGS" -v hold="$STALL_HOLD" -v idle_s="$IDLE_SECONDS" \
    -v mem_rungs="$MEM_RUNGS" -v mem_n="${MEM_NS##* }" -v c10k_rungs="$C10K_RUNGS" -v c10k_claim="${C10K_CLAIM:-$C10K_RUNGS}" -v c10k_n="$C10K_N" \
    -v scan_last="${SCAN_IDLE##*,}" -v scan_last_select="${SCAN_IDLE_SELECT##*,}" -v yard_ns="$YARD_NS" \
    -v busy_status="$BUSY_STATUS" -v yard_status="$YARD_STATUS" \
    -f "$ROOT/scripts/lib/report.awk" "$RAW"/*.jsonl /dev/null >"$RESULTS/verdicts.tsv"
shopt -u nullglob

# md FILE COLUMN=HEADER...: a CSV file as a Markdown table ("n/a" for empty
# cells, yes/no for booleans).
md() {
    local file=$RESULTS/$1
    shift
    [ -s "$file" ] || { echo "(no data: ${file##*/} was not written)"; return; }
    awk -F, -v spec="$(printf '%s\n' "$@")" '
        NR == 1 {
            for (i = 1; i <= NF; i++) idx[$i] = i
            n = split(spec, s, "\n")
            for (j = 1; j <= n; j++) { c[j] = substr(s[j], 1, index(s[j], "=") - 1); h = h " " substr(s[j], index(s[j], "=") + 1) " |"; l = l (j == 1 ? "---|" : "--:|") }
            print "|" h; print "|" l
            next
        }
        {
            line = "|"
            for (j = 1; j <= n; j++) {
                x = (c[j] in idx) ? $(idx[c[j]]) : ""
                line = line " " (x == "" ? (c[j] == "error" ? "" : "n/a") : x == "true" ? "**yes**" : x == "false" ? "no" : x) " |"
            }
            print line
        }' "$file"
}

plots() {
    [ "${NO_PLOTS:-0}" = 1 ] || ! command -v gnuplot >/dev/null 2>&1 && return
    local gp=$ROOT/scripts/plot.gp dat=$RESULTS/.memory.dat rungs="" rung pinned
    if [ -s "$RESULTS/scan.csv" ]; then
        for rung in $SCAN_RUNGS; do grep -q "^$rung," "$RESULTS/scan.csv" && rungs="$rungs $rung"; done
        pinned="server and client pinned to CPU $SCAN_CPU, medians of $SCAN_REPS"
        gnuplot -e "kind='scan'; data='$RESULTS/scan.csv'; rungs='${rungs# }'; col=4; term='svg'; out='$RESULTS/scan-rtt.svg'; ylab='round trip, median (µs)'; ttl='One active client beside N idle ones ($pinned)'" "$gp"
        gnuplot -e "kind='scan'; data='$RESULTS/scan.csv'; rungs='${rungs# }'; col=8; term='svg'; out='$RESULTS/scan-cpu.svg'; ylab='server CPU per 1000 round trips (ms)'; ttl='Server CPU per round trip beside N idle connections ($pinned)'" "$gp"
    fi
    if [ -s "$RESULTS/memory_per_conn.csv" ]; then
        awk -F, -v rungs="$MEM_RUNGS" -v ns="${MEM_NS#1 }" 'NR > 1 { v[$1, $2] = ($3 == "" ? "NaN" : $3) }
            END { nn = split(ns, n, " "); nr = split(rungs, r, " ")
                  for (i = 1; i <= nr; i++) { printf "%s", r[i]; for (j = 1; j <= nn; j++) printf " %s", ((r[i], n[j]) in v) ? v[r[i], n[j]] : "NaN"; print "" } }' \
            "$RESULTS/memory_per_conn.csv" >"$dat"
        gnuplot -e "kind='memory'; data='$dat'; ns='${MEM_NS#1 }'; rungs_mem='$MEM_RUNGS'; term='svg'; out='$RESULTS/memory.svg'; ylab='server memory per connection, PSS (KiB)'; ttl='What one more connection costs the server'" "$gp"
        rm -f "$dat"
    fi
}

report_md() {
    local quick=""
    [ "$QUICK" = 1 ] && quick=" A **--quick** smoke run: fewer repetitions and smaller N; not the project's claims."
    cat <<EOF
# The I/O ladder, measured on this machine

Made by \`scripts/reproduce.sh\` on $M_DATE in $ELAPSED.$quick Every verdict is
computed by \`scripts/lib/report.awk\` from the tables below and prints its
inputs and thresholds; "not measured" says what was missing.

## Verdicts

| claim | verdict |
|---|---|
$(awk -F'\t' '{ printf "| %s | **%s**: %s |\n", $1, $2, $3 }' "$RESULTS/verdicts.tsv")

## Machine

$M_CPU, $M_CORES CPUs (allowed: $ALLOWED_CPUS), $M_MEM; $M_KERNEL, $M_DISTRO; $M_COMPILER;
build ${M_BUILD:-?}, sanitizers ${M_SANITIZE:-?}; load average at start $M_LOAD; open files $M_NOFILE;
somaxconn $M_SOMAXCONN; ephemeral ports $M_PORTS; libuv: ${M_LIBUV:-none}.
Listen queue of the whole network namespace (drops would show as connects near 1000 ms):
before ${M_LISTEN_BEFORE:-?}, after ${M_LISTEN_AFTER:-?}.
06-kqueue runs on the project's epoll-backed shim on Linux: its figures are epoll's.

## Settings

- Each measurement: a fresh server on a kernel-chosen loopback port, one \`loadgen ... --json --timeout T\`
  (its own deadline, so it prints a partial result and the reason), wrapped in \`timeout\` T + $LG_MARGIN s; SIGTERM, exit 0 expected.
- Stall: \`stall --hold $STALL_HOLD\`, $STALL_RUNS runs per rung (medians; they vary by well under a millisecond).
- Idle CPU: \`hold -n $IDLE_CLIENTS --duration $IDLE_SECONDS --server-pid PID\` (01-blocking and busy-poll: \`-n 1\`). Busy-poll: $BUSY_TEXT.
- Memory: \`hold -n N --duration 1 --server-pid PID\` at N = $MEM_NS; per connection = (PSS at N - PSS at 1) / (N - 1).
- Select ceiling: \`hold -n $SELECT_N --allow-refused\` against 04-select.
- Scan: \`scan --idle $SCAN_IDLE --duration $SCAN_DURATION\` (04-select: $SCAN_IDLE_SELECT; 02-fork and 03-threads:
  ${SCAN_IDLE_BLOCKING:-$SCAN_IDLE}, their line is flat and 10 000 forks take long), $SCAN_REPS runs per rung (medians; the
  medians of 3 agreed within a few per cent, so 2 are kept). Server and loadgen pinned to CPU $SCAN_CPU
  (the first allowed CPU), so a round trip is two context switches on one CPU.
- C10K and yardstick load: \`c10k -n N --duration $C10K_DURATION\`, server on CPU $C10K_SERVER_CPU and loadgen on CPU $C10K_CLIENT_CPU;
  N = $C10K_N for $C10K_RUNGS (07-epoll twice back to back; the claim is ${C10K_CLAIM:-$C10K_RUNGS}'s), and
  N = $YARD_NS for 07-epoll and uv-echo.
  Yardstick: $YARD_TEXT.

## 1. Stall

$(md stall.csv rung=rung runs=runs wait_ms="wait (ms)" wait_ms_min=min wait_ms_max=max after_close_ms="after A closed (ms)" stalled_ntrue="runs stalled" error=error)

## 2. Idle CPU

$(md idle_cpu.csv rung=rung served="idle clients" idle_s="idle (s)" server_cpu_ms="server CPU (ms)" server_cpu_pct="% of one core" server_threads=threads server_rss_kb="RSS (KiB)" error=error)

## 3. Memory and setup time per connection

$(md memory.csv rung=rung n=N served=served server_rss_kb="RSS (KiB)" server_pss_kb="PSS (KiB)" server_procs=processes server_threads=threads setup_us_per_conn="setup (µs/conn)" error=error)

$(md memory_per_conn.csv rung=rung n=N pss_kb_per_conn="PSS per conn (KiB)" rss_kb_per_conn="RSS per conn (KiB)" setup_us_per_conn="setup (µs/conn)")

## 4. The select ceiling

$(md select.csv rung=rung requested=requested served=served refused=refused lost=lost corrupt=corrupt still_open="still open" server_refusal_lines="server's FD_SETSIZE lines" error=error)

## 5. O(n) against O(ready)

$(md scan.csv rung=rung idle=idle runs=runs rtt_p50_us="p50 (µs)" rtt_p50_us_min=min rtt_p50_us_max=max rtt_p99_us="p99 (µs)" server_cpu_ms_per_1k="server CPU per 1k round trips (ms)" error=error)

## 6. C10K
With every connection busy, the round trip is queueing (about N / messages per second); the figure to
compare between rungs is the server's CPU time per message. A run is **client-bound** when loadgen used
90% or more of its core: its messages/s is the client's limit, not the server's.

$(md c10k.csv rung=rung n=N run=run served=served lost=lost unanswered=unanswered failed=failed corrupt=corrupt msgs_per_s="messages/s" server_cpu_us_per_msg="server CPU per message (µs)" client_cpu_pct="client CPU (%)" client_bound="client-bound" rtt_p50_us="rtt p50 (µs)" connect_ms_max="slowest connect (ms)" server_rss_kb="RSS (KiB)" server_threads=threads error=error)

## 7. Yardstick: 07-epoll beside libuv

$(md yardstick.csv rung=rung n=N runs=runs server_cpu_us_per_msg="server CPU per message (µs)" msgs_per_s="messages/s" client_bound_ntrue="client-bound runs" server_rss_kb="RSS (KiB)" server_hwm_kb="peak RSS (KiB)" error=error)

## Problems

$(if [ -s "$RAW/problems.txt" ]; then sed 's/^/- /' "$RAW/problems.txt"; else echo "None: every measurement gave a result and every server exited 0 on SIGTERM."; fi)

Raw JSON lines are in \`raw/\`, one CSV per table beside this file, stderr of servers and loadgen in \`logs/\`.
EOF
}

mkdir -p "$RESULTS/logs"
plots 2>>"$RESULTS/logs/gnuplot.log" || true
report_md >"$RESULTS/report.md"
awk -F'\t' '{ printf "%-10s %s: %s\n", $1, $2, $3 }' "$RESULTS/verdicts.tsv"
