#!/usr/bin/env bash
# The reproduction's reporter: from RESULTS/raw (the JSON lines loadgen
# printed, settings.env and problems.txt, all written by reproduce.sh) to
# the CSV tables, verdicts.tsv, the plots and report.md in RESULTS. It
# starts nothing and measures nothing, so it can be run again on the raw
# results of a run (as this version of reproduce.sh writes them: a setting
# an older settings.env lacks is empty), and the test suite runs it on
# canned ones (tests/report/).
#
#   scripts/report.sh [RESULTS]     default: results
#
# The numbers and verdicts are computed by scripts/lib/report.awk; this
# file only lays them out. Set NO_PLOTS=1 to skip gnuplot.
#
# Exit status: 0 when every claim was measured or left out for a reason
# the platform or an optional tool explains (a finding that contradicts a
# claim included); 1 when a server misbehaved in any run of a claim or a
# measurement that should have been made was not; 2 without raw results.
# Runs on bash 3.2 and the BWK awk (macOS's): multi-line values reach awk
# through files or the environment, never through -v.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RESULTS=${1:-$ROOT/results}
RAW=$RESULTS/raw
if [ ! -r "$RAW/settings.env" ]; then
    echo "report.sh: $RAW/settings.env not found (run scripts/reproduce.sh first)" >&2
    exit 2
fi
# Every setting is exported, so that report.awk reads it from ENVIRON; one
# that settings.env lacks is empty. The thresholds come from the claims'
# table (CLAIMS), which report.awk reads itself.
source "$ROOT/scripts/lib/ladder.sh"
CLAIMS=${CLAIMS:-$ROOT/scripts/lib/claims.txt}
set -a
for v in $(ladder_settings "$CLAIMS"); do eval "$v="; done
source "$RAW/settings.env"
set +a
export CLAIMS
# judge NAME: a threshold of the claims' table, for the text that explains it.
judge() { awk -v n="$1" '$1 == "judge" && $2 == n { print $3; exit }' "$CLAIMS"; }
# The knees' step across a doubling: x1.19 for KNEE_CUTS 4.
knee_step=$(awk -v c="${KNEE_CUTS:-4}" 'BEGIN { printf "%.2f", 2 ^ (1 / c) }')
# The longest a server held to 25% waits for its next period (3 quotas).
quota_wait="?"
[ -n "${QUOTA_US:-}" ] && quota_wait=$((QUOTA_US * 3 / 1000))
export REPORT_OUT=$RESULTS
MEM_NAME=PSS
[ "$MEM_KEY" = server_pss_kb ] || MEM_NAME=footprint

rm -f "$RESULTS"/*.csv "$RESULTS"/*.svg "$RESULTS"/*.png "$RESULTS"/verdicts.tsv \
    "$RESULTS"/report.md "$RESULTS"/findings.tsv
shopt -s nullglob
if ! awk -f "$ROOT/scripts/lib/report.awk" "$RAW"/*.jsonl /dev/null >"$RESULTS/verdicts.tsv"; then
    echo "report.sh: scripts/lib/report.awk failed: no verdicts" >&2
    exit 1
fi
shopt -u nullglob

# md FILE COLUMN=HEADER...: a CSV file as a Markdown table ("n/a" for empty
# cells, yes/no for booleans). The column specs are joined with "|", which
# no Markdown cell can hold anyway.
md() {
    local file=$RESULTS/$1 spec
    shift
    [ -s "$file" ] || { echo "(no data: ${file##*/} was not written)"; return; }
    spec=$(printf '%s|' "$@")
    awk -F, -v spec="${spec%|}" '
        NR == 1 {
            for (i = 1; i <= NF; i++) idx[$i] = i
            n = split(spec, s, "|")
            for (j = 1; j <= n; j++) {
                at = index(s[j], "=")
                c[j] = substr(s[j], 1, at - 1)
                h = h " " substr(s[j], at + 1) " |"
                l = l (j == 1 ? "---|" : "--:|")
            }
            print "|" h; print "|" l
            next
        }
        {
            line = "|"
            for (j = 1; j <= n; j++) {
                x = (c[j] in idx) ? $(idx[c[j]]) : ""
                if (x == "") x = (c[j] == "error" || c[j] == "status") ? "" : "n/a"
                else if (x == "true") x = "**yes**"
                else if (x == "false") x = "no"
                line = line " " x " |"
            }
            print line
        }' "$file"
}

# gp SETTINGS: one plot, scripts/plot.gp with gnuplot's -e SETTINGS.
# (Newlines in SETTINGS are for this file's width: gnuplot gets spaces.)
gp() { gnuplot -e "$(printf '%s' "$1" | tr '\n' ' ')" "$ROOT/scripts/plot.gp"; }

# The scan: round trip and CPU per round trip against idle connections.
plot_scan() {
    local rungs="" rung how data="data='$RESULTS/scan.csv'"
    for rung in ${SCAN_CONTRAST:-} $SCAN_CLAIM; do
        grep -q "^$rung," "$RESULTS/scan.csv" && rungs="$rungs $rung"
    done
    how="${SCAN_CPU:+server and client pinned to CPU $SCAN_CPU, }medians of $SCAN_REPS"
    data="kind='scan'; $data; rungs='${rungs# }'; term='svg'"
    gp "$data; col=4; out='$RESULTS/scan-rtt.svg'; ylab='round trip, median (µs)';
        ttl='One active client beside N idle ones ($how)'"
    gp "$data; col=8; out='$RESULTS/scan-cpu.svg'; ylab='server CPU per 1000 round trips (ms)';
        ttl='Server CPU per round trip beside N idle connections ($how)'"
}

# The load curves: p90 against the offered rate, CPU per message against the achieved one.
plot_curves() {
    local nsel=${CURVE_NS##* } rungs="" rung how data
    for rung in 04-select $CURVE_RUNGS; do
        grep -q "^$rung," "$RESULTS/curves.csv" && rungs="$rungs $rung"
    done
    how="open loop, server on one CPU, loadgen on CPU(s) ${CURVE_CLIENT_CPUS:-?}"
    how="$how; 04-select at ${CURVE_N_SELECT:-?}"
    data="kind='curve'; data='$RESULTS/curves.csv'; rungs='${rungs# }'; nsel='$nsel'; term='svg'"
    gp "$data; xcol=3; col=12; objective=$(judge OBJ_US); out='$RESULTS/curve-latency.svg';
        xlab='offered rate (messages/s)'; ylab='round trip, p90 (µs, from the intended send)';
        ttl='Load curves at $nsel connections ($how)'"
    gp "$data; xcol=5; col=9; out='$RESULTS/curve-cpu.svg'; xlab='achieved rate (messages/s)';
        ylab='server CPU per message (µs)';
        ttl='What a message costs each server as load grows ($nsel connections)'"
}

# Memory per connection: one bar per rung and N, from a matrix gnuplot reads.
plot_memory() {
    local dat=$RESULTS/.memory.dat
    awk -F, -v rungs="$MEM_RUNGS" -v ns="${MEM_NS#1 }" '
        NR > 1 { v[$1, $2] = ($3 == "" ? "NaN" : $3) }
        END {
            nn = split(ns, n, " "); nr = split(rungs, r, " ")
            for (i = 1; i <= nr; i++) {
                printf "%s", r[i]
                for (j = 1; j <= nn; j++) printf " %s", ((r[i], n[j]) in v) ? v[r[i], n[j]] : "NaN"
                print ""
            }
        }' "$RESULTS/memory_per_conn.csv" >"$dat"
    gp "kind='memory'; data='$dat'; ns='${MEM_NS#1 }'; rungs_mem='$MEM_RUNGS'; term='svg';
        out='$RESULTS/memory.svg'; ylab='server memory per connection, $MEM_NAME (KiB)';
        ttl='What one more connection costs the server'"
    rm -f "$dat"
}

plots() {
    [ "${NO_PLOTS:-0}" = 1 ] || ! command -v gnuplot >/dev/null 2>&1 && return
    [ -s "$RESULTS/scan.csv" ] && plot_scan
    [ -s "$RESULTS/curves.csv" ] && plot_curves
    [ -s "$RESULTS/memory_per_conn.csv" ] && plot_memory
    return 0
}

# finding KEY: a finding's text from findings.tsv (report.awk), or why it is missing.
finding() {
    local text
    text=$(awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$RESULTS/findings.tsv" 2>/dev/null)
    printf '%s\n' "${text:-(no finding: report.awk wrote none for $1)}"
}

# How many steps of the curves and knees loadgen found contended, ran again,
# and still found contended (their JSON lines: contended, contended_retries),
# and how many of those kept were slowed (slowdown_pct over slowed_bound_pct).
# (A run without bisection rounds or headroom sweeps has no file for them.)
contention_summary() {
    cat "$RAW"/{curves,knees,headroom,headroom_knees}.jsonl 2>/dev/null | awk '
        /"contended_retries":/ { steps++; r = $0; sub(/.*"contended_retries":/, "", r)
            if (r + 0 > 0) retried++
            d = $0; b = $0; sub(/.*"slowdown_pct":/, "", d); sub(/.*"slowed_bound_pct":/, "", b)
            if ($0 ~ /"slowdown_pct":[0-9-]/ && d + 0 > b + 0) slowed++
            if ($0 ~ /"contended":true/) { still++
                s = $0; sub(/.*"rung":"/, "", s); sub(/".*/, "", s)
                t = $0; sub(/.*"rate_offered":/, "", t); sub(/[.,].*/, "", t)
                which = which (which == "" ? "" : ", ") s " at " t } }
        END { if (!steps) { print "not measured (no contention figures in these results)"; exit }
              printf "%d of %d windows run again, %d still contended after their retries%s",
                  retried, steps, still, still ? " (" which "; they count for nobody)" : ""
              printf "; %d of those kept ran on CPUs slower than their best at the speed " \
                  "probe by more than its bound (counted as contended)", slowed }'
}

# report.md, section by section.
report_md() {
    local run="" claims="not the project's claims." portable="" waited="" scan_pin
    scan_pin="server and loadgen on CPU $SCAN_CPU (a round trip: two switches on one CPU)"
    [ -n "${SCAN_CPU:-}" ] || scan_pin="nothing pinned"
    [ "${FULL:-0}" = 1 ] &&
        run=" A **--full** run: curves at $CURVE_NS connections, $CURVE_REPS sweeps each."
    [ "$QUICK" = 1 ] && run=" A **--quick** run: fewer repetitions and smaller N; $claims"
    [ "${SMOKE:-0}" = 1 ] &&
        run=" A **--smoke** run: tiny counts, one run each, to exercise the path; $claims"
    [ "$PORTABLE" = 1 ] && portable="; **LADDER_FORCE_PORTABLE=1**: the off-Linux path taken
on Linux (no taskset, nothing read from /proc by the scripts, loadgen's kqueue backend through
the shim, connections from 127.0.0.1 only)"
    [ "${PORT_WAIT_S:-0}" != 0 ] &&
        waited="Waited $PORT_WAIT_S s in all for ephemeral ports in TIME_WAIT to come free
(at most ${PORT_BUDGET:-?} fresh ports within ${PORT_TIME_WAIT_S:-?} s)."
    cat <<EOF
# The I/O ladder, measured on this machine

Made by \`scripts/reproduce.sh\` on $M_DATE in $ELAPSED.$run Every verdict is
computed by \`scripts/lib/report.awk\` from the tables below and prints its
inputs and thresholds. **NOT reproduced** means the numbers contradict the claim, or the server
misbehaved in some run of it (any corrupt, lost, refused, reset, unanswered, timed-out,
duplicated or extra byte); **not measured** says what was missing, and whether the platform or an
optional tool explains it.

## Verdicts

| claim | verdict |
|---|---|
$(awk -F'\t' '{ printf "| %s | **%s**: %s |\n", $1, $2, $3 }' "$RESULTS/verdicts.tsv")

## Machine

$M_CPU, $M_CORES CPUs (allowed: $ALLOWED_CPUS; SMT: ${M_SMT:-unknown}), $M_MEM;
virtual machine: ${M_VIRT:-unknown};
clocksource ${M_CLOCKSOURCE:-unknown}; frequency governor ${M_GOVERNOR:-unknown};
$M_KERNEL, $M_DISTRO; $M_COMPILER;
build ${M_BUILD:-?}, sanitizers ${M_SANITIZE:-?}; load average at start ${M_LOAD:-unknown};
open files $M_NOFILE;
accept queue limit ${M_SOMAXCONN:-unknown}; ephemeral ports ${M_PORTS:-unknown};
libuv: ${M_LIBUV:-none}.
Listen queue of the whole network namespace (drops would show as connects near 1000 ms):
before ${M_LISTEN_BEFORE:-unknown}, after ${M_LISTEN_AFTER:-unknown}.
Platform: $PLATFORM$portable.
$KQUEUE_TEXT
${PIN_TEXT:-Pinning: server and loadgen pinned with taskset, as the settings below say.}
Measured at commit ${M_COMMIT:-unknown}.
Host before the run: ${HOST_TEXT:-not recorded}.
Server CPU: ${CGROUP_TEXT:-summed over its processes}.
DAMON's page monitors: ${DAMON_TEXT:-not recorded}.
Contention in the load curves: $(contention_summary).
$([ -n "$SKIPPED_TOOLS" ] && printf 'Skipped: %s\n' "$SKIPPED_TOOLS")
$waited

## Settings

- Each measurement: a fresh server on a kernel-chosen loopback port, one
  \`loadgen ... --json --timeout T\` (its own deadline, so it prints a partial result and the
  reason), inside a watchdog at T + $LG_MARGIN s; SIGTERM, exit 0 expected.
- Stall: \`stall --hold $STALL_HOLD\`, $STALL_RUNS runs per rung (median, min-max).
- Idle CPU: \`hold -n $IDLE_CLIENTS --duration $IDLE_SECONDS --server-pid PID\`
  (01-blocking and busy-poll: \`-n 1\`). Busy-poll: $BUSY_TEXT.
- Memory: \`hold -n N --duration 1 --server-pid PID\` at N = $MEM_NS, one run each (a count of
  pages, not a timing); per connection = ($MEM_NAME at N - $MEM_NAME at 1) / (N - 1).
- Select ceiling: \`hold -n $SELECT_N --allow-refused\` against 04-select, one run (a count).
- Scan: \`scan --idle $SCAN_IDLE --duration $SCAN_DURATION\` (04-select: $SCAN_IDLE_SELECT;
  02-fork and 03-threads: ${SCAN_IDLE_BLOCKING:-$SCAN_IDLE}: their line is flat and 10 000 forks
  take long), $SCAN_REPS runs per rung (median, min-max), $scan_pin.
- C10K, closed loop ("how many can it hold"): \`c10k -n $C10K_N --duration $C10K_DURATION\`,
  server on CPU ${C10K_SERVER_CPU:-?} and loadgen on CPU ${C10K_CLIENT_CPU:-?}, for $C10K_RUNGS
  (07-epoll twice back to back); the claim is ${C10K_CLAIM:-$C10K_RUNGS}'s.
- Load curves, open loop: \`c10k -n N --rate $CURVE_RATES --duration $CURVE_DURATION
  --threads $CLIENT_THREADS\` (one window per rate on the same connections, each drained before
  the next, the sweep stopping after the first rate it fell behind at) at N = $CURVE_NS
  (04-select at $CURVE_N_SELECT; rates below ${CURVE_HEAVY_FROM:-0} only for
  ${CURVE_LIGHT_RUNGS:-every rung}),
  $CURVE_REPS sweep(s) per rung in a random order, windows found contended run again up to
  ${CURVE_RETRIES:-0} times, then $KNEE_REPS bisection rounds of each knee bracketed on the
  server's side (its inner rates at about x$knee_step and its top, the rungs in a new random
  order each round; $KNEE_MORE_REPS more for an unsteady knee), server on CPU
  ${C10K_SERVER_CPU:-?} and loadgen on ${CURVE_CLIENT_CPUS:-?}, for 04-select
  $CURVE_RUNGS.${CURVE_STATUS:+ Not measured: $CURVE_STATUS.}${BEYOND_STATUS:+ Beyond the ladder,
  not measured: $BEYOND_STATUS.}
- Yardstick: $YARD_PAIRS pairs of \`c10k -n $YARD_N --rate $YARD_RATE --duration $YARD_DURATION\`,
  $YARD_RUNG and libuv, in random order within each pair. Yardstick: $YARD_TEXT.
- System calls: after the timed runs, each server once under \`strace -c -f\` (attached to every
  thread), one open-loop \`c10k\` run at the connections and rate its row of section 9 says.

## 1. Stall

$(md stall.csv rung=rung runs=runs wait_ms="wait (ms)" wait_ms_min=min wait_ms_max=max \
    after_close_ms="after A closed (ms)" stalled_ntrue="runs stalled" faulty_runs="faulty runs" \
    error=error)

## 2. Idle CPU

$(md idle_cpu.csv rung=rung served="idle clients" idle_s="idle (s)" \
    server_cpu_ms="server CPU (ms)" server_cpu_pct="% of one core" \
    server_wakeups_per_s="wakeups/s" server_threads=threads \
    server_rss_kb="RSS (KiB)" faulty_runs="faulty runs" error=error)

## 3. Memory and setup time per connection

$(md memory.csv rung=rung n=N served=served server_rss_kb="RSS (KiB)" server_pss_kb="PSS (KiB)" \
    server_footprint_kb="footprint (KiB)" server_procs=processes server_threads=threads \
    setup_us_per_conn="setup (µs/conn)" faulty_runs="faulty runs" error=error)

$(md memory_per_conn.csv rung=rung n=N mem_kb_per_conn="$MEM_NAME per conn (KiB)" \
    rss_kb_per_conn="RSS per conn (KiB)" kernel_kb_per_conn="kernel per conn (KiB)" \
    setup_us_per_conn="setup (µs/conn)")

The kernel's share is the slope, fitted over N = $MEM_NS, of the growth of the machine's kernel
stacks, page tables and slab while the connections opened: it counts both ends of each loopback
connection (loadgen's sockets too, the same for every rung), so the difference between rungs is
the server's: a process or a thread per client costs a kernel stack, a task and page tables that
no PSS shows.

## 4. The select ceiling

$(md select.csv rung=rung requested=requested served=served refused=refused lost=lost \
    corrupt=corrupt still_open="still open" server_refusal_lines="server's FD_SETSIZE lines" \
    faulty_runs="faulty runs" error=error)

## 5. O(n) against O(ready)

$(md scan.csv rung=rung idle=idle runs=runs rtt_p50_us="p50 (µs)" rtt_p50_us_min=min \
    rtt_p50_us_max=max rtt_p99_us="p99 (µs)" \
    server_cpu_ms_per_1k="server CPU per 1k round trips (ms)" faulty_runs="faulty runs" error=error)

## 6. C10K, closed loop: how many can it hold

Each connection sends its next message when its echo is back, so the client sets the pace and the
round trip is queueing (about N / messages per second). What counts here is that every connection
was served and made progress in the window (echoes per connection: min / median / max); what a
message costs each server, and where each one's wall is, is read off the load curves, in section 7.

$(md c10k.csv rung=rung n=N run=run served=served lost=lost unanswered=unanswered corrupt=corrupt \
    duplicated=duplicated client_errors="client errors" msgs=msgs \
    echoes_per_conn_min="echoes/conn min" echoes_per_conn_p50=median echoes_per_conn_max=max \
    msgs_per_s="messages/s" saturated=saturated connect_ms_max="slowest connect (ms)" \
    server_hwm_kb="peak RSS (KiB)" server_threads=threads faulty_runs="faulty runs" error=error)

## 7. The walls: load curves and capacities

Open loop: each rate is offered on a fixed schedule over all N connections, and every round trip is
timed from its message's intended send time, in two parts: the client's send lag (how long after it
could have gone loadgen sent it) and the service time (the rest: the server's). A rung's
**capacity** is the highest offered rate it kept up with (at least $(judge CURVE_KEPT) of it
achieved) with its p$(judge OBJ_PCT) service time within $(judge OBJ_US) µs, below the first rate
it failed. A step is the client's, and counts for nobody, only when the client was the saturated
side (a loadgen thread at $(judge SAT_PCT)% of its core, the server below it); where both were, the
step is the server's and the table says "both saturated". A window whose CPUs went to other work or
waited for them (loadgen's contended bound), or ran a fixed probe at its edges more than loadgen's
slowed bound slower than their best this run (a host slowed by what a guest is not told: other
guests on its cache and memory), is run again, up to $CURVE_RETRIES times, and counts for nobody if
it stays contended. Where the doubling sweep brackets a knee on the server's side, the bracket is
cut at about x$knee_step and swept $KNEE_REPS more times, the rungs in random order: the capacity is
then the median of those rounds, with its range. A knee whose rounds lie two bisection steps apart
or more is swept $KNEE_MORE_REPS times more and marked unsteady: its figure is a band, and another
run may land anywhere in it (a server that flips between keeping up and a backlog it does not
leave). A capacity only the client (or the sweep's top) held back is "at least", with the
utilization law's estimate of the rate at a full core (rate / server CPU share): an estimate, not a
measurement.

$(md capacity.csv rung=rung n=N capacity_msgs_per_s="capacity (msg/s)" capacity_min=min \
    capacity_max=max repeats=repeats unsteady=unsteady at_least="at least" why=why \
    estimate_msgs_per_s="estimate at a full core (msg/s)" both_saturated_at="both saturated at" \
    contended_steps="contended steps" floor_p90_us="lowest p90 (µs)" \
    cpu_us_per_msg="CPU per msg there (µs)" server_cpu_pct="server CPU there (%)" \
    ctx_switches_per_msg="context switches per msg there")

Beyond the ladder, beside 07-epoll: $(finding beyond).

Headroom: on two cores the client costs about what an O(ready) loop does per message, so those knees
lie beyond it. These rungs were swept again, doubling and then bisected as above, with the server
held by a cgroup quota to ${HEADROOM_QUOTAS:-no} percent of its CPU (${QUOTA_US:-?} µs of CPU per
period of 100/quota times that), where the knee is within the client's reach; such a server is
saturated at $(judge SAT_PCT)% of its quota. A server out of quota waits for its next period, up to
$quota_wait ms at 25%: under a quota the objective allows that wait on top of its
$(judge OBJ_US) µs. A knee scales to a full core only if the cost per message does not change with
the rate: scaled, the two highest quotas' knees within one bisection step give the figure at a full
core; the higher quota's above by more, a lower bound (the cost per message fell as the rate rose);
below, none. $(finding headroom).

$(md headroom_capacity.csv rung=rung quota_pct="quota (% of a core)" n=N \
    capacity_msgs_per_s="capacity (msg/s)" capacity_min=min capacity_max=max repeats=repeats \
    at_least="at least" why=why per_core_msgs_per_s="per full core (msg/s)" per_core_min=min \
    per_core_max=max)

09-reuseport against 07-epoll: $(finding reuseport).

One loop per core, on server CPUs of its own: $(finding cores).

Every step (medians over the sweeps):

$(md curves.csv rung=rung n=N rate_offered="offered" rate_achieved=achieved \
    server_cpu_pct="server CPU (%)" server_cpu_us_per_msg="CPU/msg (µs)" \
    server_ctx_switches_per_msg="switches/msg" rtt_p50_us="p50 (µs)" rtt_p90_us="p90 (µs)" \
    rtt_p99_us="p99 (µs)" rtt_p999_us="p99.9 (µs)" service_p90_us="service p90 (µs)" \
    lag_p90_us="send lag p90 (µs)" late_sends="late sends" \
    schedule_lag_ms_max="worst lag (ms)" client_thread_cpu_pct_max="loadgen thread (%)" \
    foreign_cpu_pct="others' CPU (%)" steal_pct="steal (%)" \
    contended_ntrue="contended" contended_retries="retries" faulty_runs="faulty runs" error=error)
$( [ -s "$RESULTS/knees.csv" ] && printf '\n%s\n\n%s\n' "The bisection rounds, every step:" \
    "$(md knees.csv rung=rung n=N run=round rate_offered="offered" rate_achieved=achieved \
        server_cpu_pct="server CPU (%)" service_p90_us="service p90 (µs)" \
        lag_p90_us="send lag p90 (µs)" client_thread_cpu_pct_max="loadgen thread (%)" \
        contended_ntrue="contended" contended_retries="retries" faulty_runs="faulty runs" \
        error=error)")

## 8. Yardstick: $YARD_RUNG beside libuv

$(md pairs.csv rung=rung pair=pair order=order server_cpu_us_per_msg="CPU per msg (µs)" \
    server_cpu_pct="server CPU (%)" rtt_p90_us="p90 (µs)" rtt_p99_us="p99 (µs)" \
    faulty_runs="faulty runs" error=error)

## 9. System calls per message

Counted outside the timed runs (a traced server is slower): every call the server made, from its
first connection to its last close, over the messages echoed. Opening and closing the connections
(accept, fcntl, epoll_ctl, close) is counted in, once per connection.

$(md syscalls.csv rung=rung n=N rate_offered="offered (msg/s)" messages="messages echoed" \
    syscalls="system calls" syscalls_per_msg="per message" \
    top_calls_per_msg="top calls per message" status=status)

Finding: $(finding syscalls).

## Problems

$(if [ -s "$RAW/problems.txt" ]; then sed 's/^/- /' "$RAW/problems.txt";
else echo "None: every measurement gave a result and every server exited 0 on SIGTERM."; fi)

Raw JSON lines are in \`raw/\`, one CSV per table beside this file, stderr of servers and loadgen
in \`logs/\`.
EOF
}

mkdir -p "$RESULTS/logs"
plots 2>>"$RESULTS/logs/gnuplot.log" || true
report_md >"$RESULTS/report.md"
awk -F'\t' '{ printf "%-10s %s: %s\n", $1, $2, $3 }' "$RESULTS/verdicts.tsv"
# A server that misbehaved, or a measurement that was not made, fails the run.
awk -F'\t' '$4 == "server" || $4 == "failed" { exit 1 }' "$RESULTS/verdicts.tsv"
