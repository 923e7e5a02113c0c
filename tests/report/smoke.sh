#!/usr/bin/env bash
# The reproduction's off-Linux path, run on this machine: registered in
# ctest as repro:portable-smoke. It runs
#   LADDER_FORCE_PORTABLE=1 scripts/reproduce.sh --smoke
# on the executables of the build under test (BIN), with tiny counts, and
# asserts that the path holds: exit 0; every verdict measured, or "not
# measured" only for a reason the platform or an optional tool explains;
# the report says it took the portable path and did not pin; and neither
# taskset nor timeout (GNU's, absent on macOS) was called: both are
# replaced on PATH by stand-ins that record any call.
#
#   tests/report/smoke.sh BIN
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=${1:?usage: smoke.sh BIN}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/repro-smoke.XXXXXX") || exit 1
trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

mkdir -p "$WORK/path"
for tool in taskset timeout nproc; do
    printf '#!/bin/sh\necho "%s $*" >>"%s/called"\nexit 1\n' "$tool" "$WORK" >"$WORK/path/$tool"
    chmod +x "$WORK/path/$tool"
done

PATH="$WORK/path:$PATH" LADDER_FORCE_PORTABLE=1 LADDER_BIN=$BIN RESULTS_DIR=$WORK/results \
    bash "$ROOT/scripts/reproduce.sh" --smoke >"$WORK/out.txt" 2>"$WORK/err.txt"
rc=$?
R=$WORK/results
[ "$rc" -eq 0 ] || fail "reproduce.sh --smoke exited $rc (expected 0)"
[ -s "$R/verdicts.tsv" ] || fail "no verdicts written"
[ "$(wc -l <"$R/verdicts.tsv" 2>/dev/null)" -eq 11 ] 2>/dev/null || fail "expected 11 verdict lines"
[ ! -s "$WORK/called" ] || fail "GNU-only tools were called: $(cat "$WORK/called")"

# The reasons the portable path may give for leaving a claim unmeasured
# (and, for the smoke run's two light rates, sweeps that end before any wall):
# what the platform lacks, or an optional tool.
PLATFORM_REASONS='every sweep ended before its wall|no server figures on this platform'
PLATFORM_REASONS="$PLATFORM_REASONS"'|epoll is Linux-only|libuv not found|left out \(YARDSTICK=0\)'
PLATFORM_REASONS="$PLATFORM_REASONS"'|has no --rate|busy-poll.patch missing|git not found'
while IFS="$(printf '\t')" read -r claim outcome text class; do
    case $class in
    ok) ;;
    skipped)
        printf '%s\n' "$text" | grep -Eq "$PLATFORM_REASONS" ||
            fail "$claim: not measured for a reason the platform does not explain: $text" ;;
    *) fail "$claim: $outcome ($class): $text" ;;
    esac
done <"$R/verdicts.tsv"

grep -q 'LADDER_FORCE_PORTABLE=1' "$R/report.md" ||
    fail "report.md does not say it took the portable path"
grep -q 'Pinning: \*\*none\*\*' "$R/report.md" ||
    fail "report.md does not say that nothing was pinned"
grep -q 'loadgen-kqueue' "$WORK/err.txt" || fail "the run did not use loadgen-kqueue"

if [ "$FAILS" -gt 0 ]; then
    echo "--- verdicts:"
    cat "$WORK/out.txt"
    echo "--- progress (stderr):"
    tail -n 30 "$WORK/err.txt"
    exit 1
fi
echo "repro:portable-smoke: ok ($(sed -n 's/^ELAPSED=//p' "$R/raw/settings.env" | tr -d "'"))"
