#!/bin/sh
# The reference run is the tree's: docs/reference/TREES records the commit
# it was measured at and the tree of every path whose change moves a
# figure (scripts/reproduce.sh --reference writes it). This fails when any
# file of those paths differs at HEAD from what was measured, naming it
# (documents and the walls' expect lines excepted: they quote it): the
# change that moves the figures remakes the reference (on a quiet host)
# and every figure the documents quote (docs:figures). Registered in ctest
# as docs:reference-current; skipped (77) outside a git checkout.
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
# about them: the documents (*.md) and the walls' expect lines (wall.sh),
# which quote the reference and follow it. With the measured commit in the
# history, the files changed since are compared; without it (a shallow
# clone), each path's whole tree.
stale=""
n=0
have_commit=0
git -C "$ROOT" cat-file -e "$measured^{commit}" 2>/dev/null && have_commit=1
while read -r path tree; do
    [ "$path" = commit ] && continue
    n=$((n + 1))
    if [ "$have_commit" = 1 ]; then
        moved=$(git -C "$ROOT" diff --name-only "$measured" HEAD -- "$path" |
            grep -v -e '\.md$' -e '/wall\.sh$' | head -n 1)
        [ -z "$moved" ] || stale="$stale $moved"
    else
        now=$(git -C "$ROOT" rev-parse "HEAD:$path" 2>/dev/null)
        [ "$now" = "$tree" ] || stale="$stale $path"
    fi
done <"$TREES"
[ "$n" -gt 0 ] || { echo "FAIL: $TREES names no path"; exit 1; }
if [ -n "$stale" ]; then
    echo "FAIL: the reference was measured at ${measured:-?}; changed since:$stale"
    echo "      remake it on a quiet host: scripts/reproduce.sh --reference" \
        "(then the documents' figures)"
    exit 1
fi
echo "docs:reference-current: ok ($n paths as measured at $measured)"
