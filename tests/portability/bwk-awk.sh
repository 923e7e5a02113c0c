#!/bin/sh
# portability:report-bwk-awk - the reporter's tests (tests/report/check.sh,
# every case) with the BWK awk, "the one true awk" that macOS ships, as
# `awk`: Debian packages it as original-awk. It refuses what mawk and gawk
# accept (a newline in a -v value, for one), so this is where a GNU-ism in
# scripts/report.sh or scripts/lib/report.awk shows on Linux.
#
#   tests/portability/bwk-awk.sh ROOT
# Exit 77 (skipped) without original-awk.
set -u
root=${1:?usage: bwk-awk.sh ROOT}
bwk=$(command -v original-awk 2>/dev/null) || {
    echo "skipped: original-awk is not installed (apt-get install original-awk)"
    exit 77
}
bin=$(mktemp -d "${TMPDIR:-/tmp}/bwk-awk.XXXXXX") || exit 1
trap 'rm -rf "$bin"' EXIT INT TERM
ln -s "$bwk" "$bin/awk"
# The case names are the labels of check.sh's `case` blocks.
cases=$(sed -n 's/^\([a-z0-9][a-z0-9-]*\)).*/\1/p' "$root/tests/report/check.sh" | sort -u)
[ -n "$cases" ] || { echo "FAIL: no cases found in tests/report/check.sh"; exit 1; }
failed=""
n=0
for c in $cases; do
    n=$((n + 1))
    if PATH="$bin:$PATH" bash "$root/tests/report/check.sh" "$c" >"$bin/$c.log" 2>&1; then
        echo "ok   report:$c under BWK awk"
    else
        echo "FAIL report:$c under BWK awk:"
        sed 's/^/    /' "$bin/$c.log" | head -20
        failed="$failed $c"
    fi
done
[ -z "$failed" ] || { echo "FAIL: under the BWK awk ($bwk):$failed"; exit 1; }
echo "all $n report cases pass under the BWK awk ($bwk)"
