#!/bin/sh
# Every measured figure a document quotes comes from a committed source:
# the reference run in docs/reference/ (scripts/reproduce.sh --reference:
# verdicts, tables, report, settings) or, for the class's timeline, the dry
# run's timings in docs/workshop/timings/. The documents are the README,
# every rung's and beyond server's README, docs/reading-the-figures.md, the
# workshop guide, handout, cheat sheet and troubleshooting page, and the
# "expect:" lines that `make wall` prints (scripts/lib/wall.sh and any
# NN-name/wall.sh or beyond/NN-name/wall.sh). A figure typed by hand, or
# left behind by a newer reference run, fails here with its file and line.
# What counts as a figure is in figures.awk; the few that are no
# measurement (a man page's limit, the original write-up's result) are in
# figures.allow, each with the word that names its source beside it.
# Registered in ctest as docs:figures.
#
#   tests/docs/figures.sh [ROOT]
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
HERE=$(cd "$(dirname "$0")" && pwd)
REF=$ROOT/docs/reference
[ -s "$REF/verdicts.tsv" ] ||
    { echo "FAIL: $REF/verdicts.tsv missing (scripts/reproduce.sh --reference)"; exit 1; }
tmp=$(mktemp "${TMPDIR:-/tmp}/figures.XXXXXX") || exit 1
trap 'rm -f "$tmp"' EXIT
# Every number of the sources, one a line ("2026-12-01" gives 2026, 12, 01).
cat "$REF"/verdicts.tsv "$REF"/*.csv "$REF"/report.md "$REF"/settings.env \
    $(ls "$ROOT"/docs/workshop/timings/*.tsv "$ROOT"/docs/workshop/timings/*.txt 2>/dev/null) |
    tr -c '0-9.\n' '\n' | sed 's/^\.*//; s/\.*$//' | grep '[0-9]' | sort -u >"$tmp"
cd "$ROOT" || exit 1
docs=$(ls README.md docs/reading-the-figures.md docs/workshop/README.md docs/workshop/student.md \
    docs/workshop/cheatsheet.md docs/workshop/troubleshooting.md [0-9][0-9]-*/README.md \
    beyond/*/README.md 2>/dev/null)
walls=$(ls scripts/lib/wall.sh [0-9][0-9]-*/wall.sh beyond/*/wall.sh 2>/dev/null)
[ -n "$walls" ] || { echo "FAIL: no wall script (scripts/lib/wall.sh or NN-name/wall.sh)"; exit 1; }
# shellcheck disable=SC2086 # lists of paths without spaces
awk -f "$HERE/figures.awk" "$tmp" "$HERE/figures.allow" mode=md $docs mode=wall $walls
