#!/usr/bin/env bash
# End to end: real loadgen runs, fed through the reporter. Registered in
# ctest as report-e2e:<case>. The canned raw results of a good run
# (good/raw) are copied, and the lines of the claims loadgen can measure
# against one echo server (stall for 02-07, closed-loop C10K, the load
# curves and the yardstick's pairs) are replaced by what bin/loadgen printed
# against tests' fake_server, tagged as reproduce.sh tags them. So the keys
# the reporter reads are the keys loadgen writes, and a fault loadgen sees
# reaches the verdict.
#
#   tests/report/e2e.sh LOADGEN FAKE_SERVER CASE
#     correct   fake_server echoes correctly: those claims are measured,
#               C10K reproduced, no fault anywhere, report.sh exits 0
#     corrupt   every fifth connection gets one flipped byte after 200
#               bytes: C10K and the walls say the server misbehaved,
#               naming "corrupt", and report.sh exits 1
# Exit 77 (skipped) when this loadgen has no rate sweep (--threads).
set -uo pipefail
# The keys loadgen writes against the keys the reporter reads: with the
# server's figures, so not on the forced off-Linux path (which reads none).
unset LADDER_FORCE_PORTABLE

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/scripts/lib/ladder.sh" # ladder_rungs
LOADGEN=${1:?usage: e2e.sh LOADGEN FAKE_SERVER CASE}
FAKE=${2:?usage: e2e.sh LOADGEN FAKE_SERVER CASE}
CASE=${3:?usage: e2e.sh LOADGEN FAKE_SERVER CASE}
N=20        # connections per run: small, the test is about the keys
RATE=400    # msgs/s in all for the open loop: 20 per connection per second
DURATION=0.5

if ! "$LOADGEN" --help 2>&1 | grep -q -- '--threads'; then
    echo "report-e2e: skipped: $LOADGEN has no rate sweep (--threads)"
    exit 77
fi
case $CASE in
correct) MODE="--mode echo" ;;
corrupt) MODE="--mode corrupt --every 5 --after 200" ;;
*) echo "e2e.sh: unknown case '$CASE'" >&2; exit 2 ;;
esac

WORK=$(mktemp -d "${TMPDIR:-/tmp}/report-e2e.XXXXXX") || exit 1
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill -TERM "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
    fi
    [ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
cp -R "$HERE/good/raw" "$WORK/raw"
RAW=$WORK/raw
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# One fake_server for every run, on a kernel-chosen port.
"$FAKE" -p 0 $MODE >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
PORT=""
for _ in $(seq 1 100); do
    PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$WORK/server.out")
    [ -n "$PORT" ] && break
    sleep 0.05
done
[ -n "$PORT" ] || { echo "FAIL: fake_server did not start: $(cat "$WORK/server.err")"; exit 1; }

# lg TAGS ARGS...: one loadgen run, its JSON line(s) tagged, on stdout
# (with the server's figures, except in stall mode, which has none). The
# suite runs tests side by side, so the host is busy by design: windows are
# never judged contended here (--contended-pct 100), their figures still
# written; contention has its own cases (report:curve-contended).
lg() {
    local tags=$1 pid=""
    shift
    [ "$1" = stall ] || pid="--server-pid $SERVER_PID --contended-pct 100"
    "$LOADGEN" "$@" -p "$PORT" $pid --json --timeout 20 2>>"$WORK/lg.err" |
        sed -n "s/^{/{$tags,/p; " | sed 's/}$/,"server_hwm_kb":null,"server_stop":"ok"}/'
}

# Stall: 02-07 answer at once (01 stays canned: it is the one that blocks).
edit_out() { awk "$2" "$RAW/$1" >"$WORK/tmp" && mv "$WORK/tmp" "$RAW/$1"; }
edit_out stall.jsonl '/"rung":"01-blocking"/'
for rung in $(ladder_rungs "$ROOT"); do
    [ "$rung" = 01-blocking ] && continue
    lg "\"rung\":\"$rung\",\"run\":1" stall --hold 0.2 >>"$RAW/stall.jsonl"
done
# Closed-loop C10K at N for the claim's rungs (07-epoll twice).
: >"$RAW/c10k.jsonl"
for tr in 05-poll:1 06-kqueue:1 07-epoll:1 07-epoll:2; do
    lg "\"rung\":\"${tr%:*}\",\"n\":$N,\"run\":${tr#*:}" c10k -n "$N" --duration "$DURATION" \
        >>"$RAW/c10k.jsonl"
done
# A two-step curve per swept server (two loadgen threads), and two yardstick pairs.
: >"$RAW/curves.jsonl"
for rung in 04-select 02-fork 03-threads 05-poll 06-kqueue 07-epoll uv-echo \
    08-io_uring 09-reuseport; do
    lg "\"rung\":\"$rung\",\"n\":$N,\"run\":1" c10k -n "$N" --rate "$RATE,$((2 * RATE))" \
        --duration "$DURATION" --threads 2 >>"$RAW/curves.jsonl"
done
: >"$RAW/pairs.jsonl"
for pair in 1 2; do
    for rung in 07-epoll uv-echo; do
        lg "\"rung\":\"$rung\",\"pair\":$pair,\"order\":1" c10k -n "$N" --rate "$RATE" \
            --duration "$DURATION" >>"$RAW/pairs.jsonl"
    done
done
{
    grep -v '^C10K_N=\|^C10K_RUNGS=\|^CURVE_NS=\|^CURVE_N_SELECT=\|^YARD_PAIRS=' "$RAW/settings.env"
    echo "C10K_N=$N"
    echo 'C10K_RUNGS="05-poll 06-kqueue 07-epoll"'
    echo "CURVE_NS=$N"
    echo "CURVE_N_SELECT=$N"
    echo "YARD_PAIRS=2"
} >"$WORK/tmp" && mv "$WORK/tmp" "$RAW/settings.env"

NO_PLOTS=1 bash "$ROOT/scripts/report.sh" "$WORK" >"$WORK/out.txt" 2>"$WORK/err.txt"
rc=$?
[ -s "$WORK/err.txt" ] && fail "report.sh wrote to stderr: $(cat "$WORK/err.txt")"

# verdict_of CLAIM: outcome TAB text TAB class of that claim.
verdict_of() { awk -F'\t' -v c="$1" '$1 == c { print $2 "\t" $3 "\t" $4 }' "$WORK/verdicts.tsv"; }
case $CASE in
correct)
    [ "$rc" -eq 0 ] || fail "report.sh exited $rc (expected 0)"
    [ "$(verdict_of stall | cut -f1)" = reproduced ] || fail "stall: $(verdict_of stall)"
    [ "$(verdict_of c10k | cut -f1)" = reproduced ] || fail "c10k: $(verdict_of c10k)"
    verdict_of c10k | grep -q "05-poll $N/$N served" ||
        fail "c10k does not show 05-poll's $N/$N served: $(verdict_of c10k)"
    # The curves measured every server: a verdict on the numbers (which of
    # two identical servers is cheaper, or faster, is chance), never a fault
    # or a gap.
    for claim in "c10k wall" yardstick; do
        [ "$(verdict_of "$claim" | cut -f3)" = ok ] ||
            fail "$claim: expected a measured verdict, got: $(verdict_of "$claim")"
    done
    # Two rates far below any wall: every rung's sweep ends before its
    # wall, which the walls verdict says (skipped), never a fault or a gap.
    case $(verdict_of walls | cut -f3) in
    ok) ;;
    skipped) verdict_of walls | grep -q 'the sweep ended before the wall' ||
        fail "walls: skipped for another reason: $(verdict_of walls)" ;;
    *) fail "walls: expected measured or past-the-sweep, got: $(verdict_of walls)" ;;
    esac
    grep -q '"msgs":[1-9]' "$RAW/c10k.jsonl" || fail "no c10k run echoed a message in its window"
    ;;
corrupt)
    [ "$rc" -eq 1 ] || fail "report.sh exited $rc (expected 1)"
    for claim in c10k walls; do
        verdict_of "$claim" | grep -q "^NOT reproduced	the server misbehaved: .*corrupt" ||
            fail "$claim: expected 'the server misbehaved' naming corrupt," \
                "got: $(verdict_of "$claim")"
        [ "$(verdict_of "$claim" | cut -f3)" = server ] || fail "$claim: class is not server"
    done
    ;;
esac
if [ "$FAILS" -gt 0 ]; then
    echo "--- verdicts:"
    cat "$WORK/out.txt"
    echo "--- loadgen's stderr:"
    tail -n 20 "$WORK/lg.err"
    exit 1
fi
echo "report-e2e:$CASE: ok"
