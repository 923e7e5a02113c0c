#!/bin/sh
# The README's measured table quotes the committed reference run: every
# decimal figure in it (1500.3, 39.63, 200.86x ...) must appear in one of
# docs/reference/'s verdicts, tables or report, as the reproduction wrote
# it. A figure typed by hand, or left behind by a newer reference run,
# fails here, naming itself. Registered in ctest as docs:figures.
#
#   tests/docs/figures.sh [ROOT]
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
REF=$ROOT/docs/reference
[ -s "$REF/verdicts.tsv" ] || { echo "FAIL: $REF/verdicts.tsv missing (scripts/reproduce.sh --reference)"; exit 1; }
# The section from its heading to the next one, table rows only.
rows=$(awk '/^## What it measured here/ { on = 1; next } /^## / { on = 0 } on && /^\|/' "$ROOT/README.md")
[ -n "$rows" ] || { echo "FAIL: README.md has no table under 'What it measured here'"; exit 1; }
figures=$(printf '%s\n' "$rows" | grep -o '[0-9][0-9]*\.[0-9][0-9]*' | sort -u)
checked=0 missing=0
for x in $figures; do
    checked=$((checked + 1))
    if ! cat "$REF"/verdicts.tsv "$REF"/*.csv "$REF"/report.md | grep -qF -- "$x"; then
        echo "FAIL: README.md quotes $x, which the reference run in docs/reference/ does not hold"
        missing=$((missing + 1))
    fi
done
[ "$checked" -gt 0 ] || { echo "FAIL: no decimal figure found in the README's table"; exit 1; }
[ "$missing" -eq 0 ] || exit 1
echo "docs:figures: $checked figures, each in docs/reference/"
