#!/usr/bin/env bash
# The reporter's tests, registered in ctest as report:<case>. Each case
# copies the canned raw results of a complete good run (good/raw), breaks
# them the way a real run can break, runs scripts/report.sh on the copy
# (no server, no loadgen, no plots) and asserts the verdict lines.
#
#   tests/report/check.sh CASE
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CASE=${1:?usage: check.sh CASE}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/report-test.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cp -r "$HERE/good/raw" "$WORK/raw"
RAW=$WORK/raw
FAILS=0

# edit FILE AWK-PROGRAM: rewrite one canned file.
edit() { awk "$2" "$RAW/$1" >"$WORK/tmp" && mv "$WORK/tmp" "$RAW/$1"; }
# A stub line: what reproduce.sh writes when a run gave no result.
stub() { echo "{$1,\"error\":\"$2\"}"; }

# expect CLAIM OUTCOME [WORDS]: that claim's verdict has that outcome and
# its text contains WORDS.
expect() {
    local line
    line=$(awk -F'\t' -v c="$1" '$1 == c' "$WORK/verdicts.tsv")
    if [ "$(cut -f2 <<<"$line")" != "$2" ] || [[ "$line" != *"${3:-}"* ]]; then
        echo "FAIL: $1: expected '$2'${3:+ mentioning '$3'}, got: ${line:-no verdict line}"
        FAILS=$((FAILS + 1))
    fi
}
all_reproduced_but() {
    local claim
    for claim in stall idle busy-poll memory select 'O(n)' 'O(ready)' c10k yardstick; do
        [[ " $* " == *" $claim "* ]] || expect "$claim" reproduced
    done
}

case $CASE in
good) ;;
c10k-lost) # one rung loses connections mid-run (and 02-fork, outside the claim)
    edit c10k.jsonl '/"rung":"(05-poll|02-fork)"/ { sub(/"lost":0/, "\"lost\":37") } 1' ;;
c10k-contrast) # only a rung outside the claim loses connections
    edit c10k.jsonl '/"rung":"03-threads"/ { sub(/"lost":0/, "\"lost\":5") } 1'
    edit c10k.jsonl '/"rung":"02-fork"/ { print "{\"rung\":\"02-fork\",\"n\":10000,\"run\":1,\"error\":\"server did not start\"}"; next } 1' ;;
c10k-timeout) # loadgen's deadline: a partial result with error set
    edit c10k.jsonl '/"rung":"06-kqueue"/ { sub(/"unanswered":0/, "\"unanswered\":12"); sub(/"error":null/, "\"error\":\"timeout\"") } 1' ;;
pss-unreadable)
    edit memory.jsonl '{ sub(/"server_pss_kb":[0-9]+/, "\"server_pss_kb\":null") } 1' ;;
missing-files)
    rm "$RAW/stall.jsonl" "$RAW/scan.jsonl"
    : >"$RAW/select.jsonl" ;;
failed-runs) # no result at all from some runs, or an error with no counter set
    edit idle_cpu.jsonl '/"rung":"03-threads"/ { print "{\"rung\":\"03-threads\",\"error\":\"no result (loadgen exit 124)\"}"; next } 1'
    edit c10k.jsonl '/"rung":"07-epoll","n":10000,"run":2/ { sub(/"error":null/, "\"error\":\"server did not start\"") } 1'
    stub '"rung":"04-select"' "loadgen exit 2" >"$RAW/select.jsonl" ;;
empty-values) # a key missing or null where a number should be
    edit stall.jsonl '/01-blocking/ { sub(/"after_close_ms":[-0-9.]+/, "\"after_close_ms\":null") } 1'
    edit idle_cpu.jsonl '/"rung":"05-poll"/ { sub(/"server_cpu_pct":[0-9.]+,/, "") } 1'
    edit c10k.jsonl '/"rung":"uv-echo","n":1000/ { sub(/"server_cpu_us_per_msg":[0-9.]+/, "\"server_cpu_us_per_msg\":") } 1' ;;
not-reproduced) # the claims fail on these numbers
    edit stall.jsonl '/01-blocking/ { sub(/"after_close_ms":[-0-9.]+/, "\"after_close_ms\":40.5") } 1'
    edit idle_cpu.jsonl '/"rung":"07-epoll"/ { sub(/"server_cpu_pct":[0-9.]+/, "\"server_cpu_pct\":12.5") } 1'
    edit c10k.jsonl '/"rung":"07-epoll","n":1000/ { sub(/"server_cpu_us_per_msg":[0-9.]+/, "\"server_cpu_us_per_msg\":9.99") } 1' ;;
no-yardstick) # libuv not installable, busy-poll patch not there
    sed -i 's/^YARD_STATUS=.*/YARD_STATUS="libuv not installable (apt-get failed)"/; s/^BUSY_STATUS=.*/BUSY_STATUS="docs\/workshop\/solutions\/busy-poll.patch missing"/' "$RAW/settings.env"
    edit c10k.jsonl '!/uv-echo/'
    edit idle_cpu.jsonl '!/busy-poll/' ;;
*) echo "check.sh: unknown case '$CASE'" >&2; exit 2 ;;
esac

NO_PLOTS=1 bash "$ROOT/scripts/report.sh" "$WORK" >"$WORK/out.txt" 2>"$WORK/err.txt"
rc=$?
if [ "$rc" -ne 0 ] || [ -s "$WORK/err.txt" ]; then
    echo "FAIL: report.sh exited $rc; stderr:"
    cat "$WORK/err.txt"
    FAILS=$((FAILS + 1))
fi
[ "$(wc -l <"$WORK/verdicts.tsv")" -eq 9 ] || { echo "FAIL: expected 9 verdict lines"; FAILS=$((FAILS + 1)); }

case $CASE in
good) all_reproduced_but ;;
c10k-lost)
    expect c10k "NOT reproduced" "05-poll run 1: 37 lost"
    expect c10k "NOT reproduced" "for contrast: 02-fork run 1: 37 lost"
    all_reproduced_but c10k ;;
c10k-contrast)
    expect c10k reproduced "03-threads run 1: 5 lost"
    all_reproduced_but ;;
c10k-timeout)
    expect c10k "NOT reproduced" "06-kqueue run 1: 12 unanswered"
    all_reproduced_but c10k ;;
pss-unreadable)
    expect memory "not measured" "server_pss_kb empty (PSS unreadable)"
    all_reproduced_but memory ;;
missing-files)
    expect stall "not measured" "raw/stall.jsonl missing or empty"
    expect 'O(n)' "not measured" "raw/scan.jsonl missing or empty"
    expect 'O(ready)' "not measured" "raw/scan.jsonl missing or empty"
    expect select "not measured" "raw/select.jsonl missing or empty"
    all_reproduced_but stall 'O(n)' 'O(ready)' select ;;
failed-runs)
    expect idle "not measured" "03-threads: run failed (no result (loadgen exit 124))"
    expect c10k "not measured" "07-epoll,10000,2: run failed (server did not start)"
    expect select "not measured" "04-select: run failed (loadgen exit 2)"
    # A failed run leaves its group without a median: 07-epoll at 10 000 is
    # also one of the yardstick's figures.
    expect yardstick "not measured" "07-epoll,10000: run failed"
    # Every other rung's figure is still shown beside the reason.
    expect idle "not measured" "07-epoll 0.01%"
    all_reproduced_but idle c10k select yardstick ;;
empty-values)
    expect stall "not measured" "01-blocking: after_close_ms empty"
    expect idle "not measured" "05-poll: server_cpu_pct empty"
    expect yardstick "not measured" "uv-echo,1000: server_cpu_us_per_msg empty"
    all_reproduced_but stall idle yardstick ;;
not-reproduced)
    expect stall "NOT reproduced" "answered 40.50 ms after A closed"
    expect idle "NOT reproduced" "07-epoll 12.50%"
    expect yardstick "NOT reproduced" "07-epoll 9.99 us, libuv 5.20 us"
    all_reproduced_but stall idle yardstick ;;
no-yardstick)
    expect yardstick "not measured" "libuv not installable"
    expect busy-poll "not measured" "busy-poll.patch missing"
    all_reproduced_but yardstick busy-poll ;;
esac

# The report and the tables are written in every case.
for f in report.md verdicts.tsv; do
    [ -s "$WORK/$f" ] || { echo "FAIL: $f not written"; FAILS=$((FAILS + 1)); }
done
if [ "$FAILS" -gt 0 ]; then
    echo "--- verdicts:"
    cat "$WORK/out.txt"
    exit 1
fi
echo "report:$CASE: ok"
