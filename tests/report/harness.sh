#!/usr/bin/env bash
# The reproduction's harness where a run goes wrong around the server
# rather than in it, and its command line: registered in ctest as
# repro:harness. scripts/lib/ladder.sh and scripts/lib/bench.sh are sourced
# as scripts/reproduce.sh sources them; the "servers" are sh scripts, and no
# loadgen runs.
#   1. A CPU quota whose cgroup file cannot be written is the harness's
#      failure, saved with cause "tool" and the file named; the report
#      would count cause "server" against the claim's server.
#   2. A server that exits instead of announcing is said to have exited,
#      with its status (check_beyond reads SERVER_END and SERVER_RC).
#   3. bench_cleanup (the script's exit and interrupt) kills a server's
#      children too when the server outlives its SIGTERM (about 10 s).
#   4. reproduce.sh refuses two kinds of run, and --reference with any
#      (TMPDIR points nowhere: a script that took the line would stop at
#      its mktemp, before it touches the host).
#   5. measured_stop returns 0 for a server that stops cleanly and wrote
#      nothing to stderr (no caller may take a silent server for a failure).
#
#   tests/report/harness.sh
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/repro-harness.XXXXXX") || exit 1
CHILD_FILE=$WORK/child.pid
export CHILD_FILE
cleanup() {
    local pid
    pid=$(cat "$CHILD_FILE" 2>/dev/null)
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    [ -n "${SERVER_PID:-}" ] && kill -KILL "$SERVER_PID" 2>/dev/null
    [ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# ---- 4. the command line ------------------------------------------------------
before=$FAILS
for args in "--quick --smoke" "--full --quick" "--smoke --full" "--reference --quick" \
    "--smoke --reference" "--reference --full"; do
    # shellcheck disable=SC2086 # the arguments, one word each
    TMPDIR=$WORK/nowhere RESULTS_DIR=$WORK/results bash "$ROOT/scripts/reproduce.sh" $args \
        >/dev/null 2>"$WORK/usage.err"
    rc=$?
    if [ "$rc" -ne 2 ]; then
        fail "reproduce.sh $args: exit $rc, expected 2 (a bad command line)"
    elif ! grep -Eq '^reproduce.sh: .*(one kind of run at a time|--reference is the default run)' \
        "$WORK/usage.err"; then
        fail "reproduce.sh $args: no reason given: $(head -n 1 "$WORK/usage.err")"
    fi
done
[ ! -e "$WORK/results" ] || fail "a refused command line made $WORK/results"
[ "$FAILS" -eq "$before" ] &&
    echo "command line: two kinds of run, and --reference with one, refused"

# ---- the harness -----------------------------------------------------------------
BIN=$WORK/bin RAW=$WORK/raw LOGS=$WORK/logs TMP=$WORK/tmp
mkdir -p "$BIN" "$RAW" "$LOGS" "$TMP"
: >"$RAW/problems.txt"
# shellcheck source=SCRIPTDIR/../../scripts/lib/ladder.sh
source "$ROOT/scripts/lib/ladder.sh"
ladder_platform
ports_init
# shellcheck source=SCRIPTDIR/../../scripts/lib/bench.sh
source "$ROOT/scripts/lib/bench.sh"

printf '#!/bin/sh\necho "no io_uring here" >&2\nexit 3\n' >"$BIN/exits"
# It ignores SIGTERM, and so does the child it leaves (a 02-fork still
# ending its children, seen from outside).
# shellcheck disable=SC2016 # the script's own $! and $CHILD_FILE
printf '#!/bin/sh\ntrap "" TERM\nsleep 120 &\necho $! >"$CHILD_FILE"\n%s\nwait\n' \
    'echo "listening on 127.0.0.1:1"' >"$BIN/stubborn"
# It announces, says nothing, and ends at SIGTERM with status 0.
printf '#!/bin/sh\ntrap "exit 0" TERM\n%s\nwhile :; do sleep 0.1; done\n' \
    'echo "listening on 127.0.0.1:1"' >"$BIN/quiet"
chmod +x "$BIN/exits" "$BIN/stubborn" "$BIN/quiet"

# ---- 1. a quota that cannot be set ----------------------------------------------
# A folder where the cgroup's file should be: no write to it succeeds, as
# root or not.
QUOTA_CGROUP=$WORK/cgroup
mkdir -p "$QUOTA_CGROUP/cpu.cfs_period_us"
SERVER_QUOTA_PCT=50 one_run "$RAW/headroom.jsonl" '"rung":"exits","quota_pct":50,"n":1,"run":1' \
    10 exits "" hold -n 1 --duration 1 2>"$WORK/quota.err"
line=$(cat "$RAW/headroom.jsonl")
case $line in
*'"cause":"tool"'*"could not write 2000 to $QUOTA_CGROUP/cpu.cfs_period_us"*) ;;
*) fail "a quota not set: expected cause \"tool\" and the file named, got: $line" ;;
esac
[ "$N_FAILURES" -eq 1 ] && [ "$N_PROBLEMS" -eq 0 ] ||
    fail "a quota not set: $N_FAILURES measurements not made (1 expected)," \
        "$N_PROBLEMS server problems (0 expected)"
grep -q '^measurement not made: headroom.jsonl' "$RAW/problems.txt" ||
    fail "a quota not set: problems.txt does not say a measurement was not made"
[ -s "$TMP/server.err" ] && fail "a quota not set: the server was started all the same"
QUOTA_CGROUP=""
echo "quota: $line"

# ---- 2. a server that exits at once ------------------------------------------------
if server_start "$TMP" "$BIN/exits" ""; then
    fail "exits: server_start succeeded"
else
    case $SERVER_ERR in
    "exits exited with status 3 before announcing (no io_uring here"*) ;;
    *) fail "exits: SERVER_ERR is: $SERVER_ERR" ;;
    esac
    [ "$SERVER_END" = early ] && [ "$SERVER_RC" = 3 ] ||
        fail "exits: SERVER_END=$SERVER_END SERVER_RC=$SERVER_RC (early and 3 expected)"
fi
one_run "$RAW/stall.jsonl" '"rung":"exits","run":1' 10 exits "" stall --hold 1 2>/dev/null
line=$(cat "$RAW/stall.jsonl")
case $line in
*'"cause":"server"'*'server did not start: exits exited with status 3 before announcing'*) ;;
*) fail "exits: expected cause \"server\" and its exit status, got: $line" ;;
esac
echo "exits: $line"

# ---- 5. a server that stops cleanly and said nothing ------------------------------
# measured_stop's status is the stop's: 0, with no empty log kept.
if ! measured_start quiet quiet.1 ""; then
    fail "quiet: did not start: $SERVER_ERR"
else
    measured_stop >/dev/null 2>&1
    rc=$?
    [ "$rc" -eq 0 ] && [ "$SERVER_STOP" = ok ] ||
        fail "quiet: measured_stop returned $rc, SERVER_STOP=$SERVER_STOP (0 and ok expected)"
    [ -e "$LOGS/quiet.1.quiet.stderr.log" ] && fail "quiet: an empty stderr log was kept"
    [ "$FAILS" -eq 0 ] && echo "quiet: stopped, status 0, no log kept"
fi

# ---- 3. the clean-up stops a server's children ------------------------------------
if ! server_start "$TMP" "$BIN/stubborn" ""; then
    fail "stubborn: did not start: $SERVER_ERR"
else
    server=$SERVER_PID child=$(cat "$CHILD_FILE")
    bench_cleanup 2>/dev/null
    # is_running, not kill -0: an orphan killed is a zombie until its new
    # parent reaps it, and not every init does at once.
    is_running "$server" && fail "bench_cleanup left the server $server running"
    # SIGKILL takes effect when the child next runs: on a loaded machine
    # that can be a moment after kill(2) returns.
    if ! wait_finished "$child" "" 2; then
        fail "bench_cleanup left the server's child $child running"
    else
        echo "clean-up: the server and its child are gone"
    fi
fi

if [ "$FAILS" -gt 0 ]; then
    echo "$FAILS check(s) failed"
    exit 1
fi
echo "all passed"
