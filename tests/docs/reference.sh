#!/bin/sh
# The reference run is the tree's: docs/reference/TREES records the commit
# it was measured at and the tree of every path whose change moves a
# figure (scripts/reproduce.sh --reference writes it). This fails when any
# file of those paths differs at HEAD from what was measured, naming it
# (documents and the walls' expect lines excepted: they quote it): the
# change that moves the figures remakes the reference (on a quiet host)
# and every figure the documents quote (docs:figures). The reporter
# (scripts/report.sh, scripts/lib/report.awk) measures nothing itself:
# what it makes of the reference's raw results must be the committed
# report, verdicts and tables, and the knees it chooses from the
# reference's sweeps must be those the run bisected; a change to it
# re-reports the reference (the command is printed) instead of measuring
# again. Registered in ctest as docs:reference-current; skipped (77)
# outside a git checkout.
#
#   tests/docs/reference.sh [ROOT]
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
TREES=$ROOT/docs/reference/TREES
command -v git >/dev/null 2>&1 && git -C "$ROOT" rev-parse HEAD >/dev/null 2>&1 || {
    echo "skipped: not a git checkout (or no git): nothing to compare the reference with"
    exit 77
}
[ -s "$TREES" ] || {
    echo "FAIL: $TREES missing: the reference does not say what it measured"
    exit 1
}
[ -s "$ROOT/docs/reference/raw/settings.env" ] || {
    echo "FAIL: docs/reference/raw/ missing: the report's raw results are not committed"
    exit 1
}
measured=$(sed -n 's/^commit //p' "$TREES")
# A change moves the figures unless it is only to what the code prints
# about them: the documents (*.md) and the walls' scripts (wall.sh), which
# quote the reference and follow it; or only to what the reproduction
# never runs: the lab kit's libraries (scripts/lib/lab*). With the measured
# commit in the history, the files changed since are compared; without it
# (a shallow clone) that cannot be told from TREES, whose trees hold the
# documents too, so the paths are not compared there (skipped, 77, once the
# report has been compared).
stale=""
n=0
have_commit=0
git -C "$ROOT" cat-file -e "$measured^{commit}" 2>/dev/null && have_commit=1
while read -r path tree; do
    [ "$path" = commit ] && continue
    n=$((n + 1))
    [ "$have_commit" = 1 ] || continue
    moved=$(git -C "$ROOT" diff --name-only "$measured" HEAD -- "$path" |
        grep -v -e '\.md$' -e '/wall\.sh$' -e '^scripts/lib/report\.awk$' \
            -e '^scripts/lib/lab[a-z]*\.[a-z]*$' | head -n 1)
    [ -z "$moved" ] || stale="$stale $moved"
done <"$TREES"
[ "$n" -gt 0 ] || { echo "FAIL: $TREES names no path"; exit 1; }
if [ -n "$stale" ]; then
    echo "FAIL: the reference was measured at ${measured:-?}; changed since:$stale"
    echo "      remake it on a quiet host: scripts/reproduce.sh --reference" \
        "(then the documents' figures)"
    exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/reference.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cp -R "$ROOT/docs/reference/raw" "$work/raw" || exit 1
NO_PLOTS=1 bash "$ROOT/scripts/report.sh" "$work" >"$work/report.out" 2>&1
differ=""
for f in "$ROOT"/docs/reference/*.csv "$ROOT/docs/reference/verdicts.tsv" \
    "$ROOT/docs/reference/report.md"; do
    cmp -s "$f" "$work/${f##*/}" || differ="$differ ${f##*/}"
done
if [ -n "$differ" ]; then
    echo "FAIL: the reporter makes another report of the reference's raw results:$differ"
    for f in $differ; do # where the first differing line differs, committed then made
        awk -v f="$f" 'NR == FNR { a[FNR] = $0; next }
            !done && $0 != a[FNR] {
                for (i = 1; substr($0, i, 1) == substr(a[FNR], i, 1); i++) ;
                i = i > 60 ? i - 60 : 1; done = 1
                printf "      %s:%d: %s\n      %s:%d: %s\n", f, FNR, substr(a[FNR], i, 140),
                    f, FNR, substr($0, i, 140) }' "$ROOT/docs/reference/$f" "$work/$f"
    done
    echo "      re-report it: r=\$(mktemp -d) && cp -R docs/reference/raw \$r/ &&"
    echo "      NO_PLOTS=1 scripts/report.sh \$r; cp \$r/report.md \$r/verdicts.tsv \$r/*.csv" \
        "docs/reference/"
    exit 1
fi
# The reporter chose the knees the run bisected too (its brackets and
# unsteady modes: measure_knees in scripts/reproduce.sh): on the reference's
# sweeps it must choose the same ones, round by round, each from the rate
# the round started at (the lowest of the bracket's four).
. "$work/raw/settings.env"
# The headroom sweeps as reproduce.sh's headroom_list made them.
sweeps=""
[ -n "$HEADROOM_STATUS" ] || for r in $HEADROOM_RUNGS; do
    case " $CURVE_RUNGS " in *" $r "*) for q in $HEADROOM_QUOTAS; do
        sweeps="$sweeps $r@$q"; done ;; esac
done
# knee_starts ROUND FILE...: "rung n rate" of each knee run of ROUND, at its first rate.
knee_starts() {
    round=$1; shift
    cat "$@" 2>/dev/null | awk -v round="$round" '
        function field(k,    v) { if (!match($0, "\"" k "\":[^,}]*")) return ""
            v = substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3)
            gsub(/"/, "", v); return v }
        field("run") == round {
            key = field("rung") (field("quota_pct") == "" ? "" : "@" field("quota_pct"))
            key = key " " field("n")
            if (!(key in seen)) { seen[key] = 1; printf "%s %d\n", key, field("rate_offered") } }' |
        sort
}
# chosen ROUND MODE: what the reporter names in MODE from the sweeps and the rounds before.
chosen() {
    d=$work/round$1
    mkdir -p "$d"
    for f in curves headroom; do cp "$work/raw/$f.jsonl" "$d/" 2>/dev/null; done
    for f in knees headroom_knees; do
        awk -v r="$1" 'match($0, /"run":[0-9]+/) && substr($0, RSTART + 6, RLENGTH - 6) + 0 < r' \
            "$work/raw/$f.jsonl" >"$d/$f.jsonl" 2>/dev/null
    done
    CLAIMS=$ROOT/scripts/lib/claims.txt REPORT_MODE=$2 HEADROOM_SWEEPS="$sweeps" \
        CURVE_RUNGS="$CURVE_RUNGS" CURVE_NS="$CURVE_NS" CURVE_N_SELECT="$CURVE_N_SELECT" \
        PLATFORM="$PLATFORM" QUOTA_US="$QUOTA_US" \
        awk -f "$ROOT/scripts/lib/report.awk" $(for f in "$d"/*.jsonl; do
            [ -s "$f" ] && echo "$f"; done) |
        awk '{ printf "%s %s %d\n", $1, $2, $3 * ($4 / $3) ^ 0.25 + 0.5 }' | sort
}
round=1
while [ "$round" -le $((KNEE_REPS + KNEE_MORE_REPS)) ]; do
    if [ "$round" -le "$KNEE_REPS" ]; then
        [ "$round" -gt 1 ] || brackets=$(chosen 1 brackets)
        want=$brackets
    else
        want=$(chosen "$round" unsteady)
    fi
    got=$(knee_starts "$round" "$work/raw/knees.jsonl" "$work/raw/headroom_knees.jsonl")
    if [ "$want" != "$got" ]; then
        echo "FAIL: the reporter chooses other knees on the reference's sweeps, round $round"
        echo "      (rung, connections, first rate) it chooses:" $want
        echo "      the reference bisected:" $got
        exit 1
    fi
    [ -n "$want" ] || break
    round=$((round + 1))
done
rounds=$(cat "$work/raw/knees.jsonl" "$work/raw/headroom_knees.jsonl" 2>/dev/null |
    grep -o '"run":[0-9]*' | sed 's/.*://' | sort -n | tail -n 1)
if [ "${rounds:-0}" -ne $((round - 1)) ]; then
    echo "FAIL: the reference bisected knees in ${rounds:-0} rounds; the reporter's choice" \
        "on its sweeps stops after $((round - 1))"
    exit 1
fi
if [ "$have_commit" = 0 ]; then
    echo "skipped: the reference's report is the reporter's, but the commit it was measured" \
        "at ($measured) is not in this clone's history (shallow?): its paths are not compared"
    exit 77
fi
echo "docs:reference-current: ok ($n paths as measured at $measured; its report and its" \
    "knees are the reporter's)"
