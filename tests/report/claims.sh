#!/bin/sh
# The claims' table (scripts/lib/claims.txt) as the reproduction and the
# reporter read it: every kind of run gives every setting a value (the scan's
# contrast rungs excepted, which the quick and smoke runs leave out), the
# thresholds report.awk asks for are the table's and the table has no other,
# and a kind line that is misspelt or out of order stops claims_settings
# instead of being passed over. POSIX sh.
#   tests/report/claims.sh
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TABLE=$ROOT/scripts/lib/claims.txt
. "$ROOT/scripts/lib/ladder.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/claims-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

BEYOND_RUNGS=$(ladder_rungs "$ROOT/beyond")
names=$(awk '/^[A-Z]/ { print $1 }' "$TABLE")
for kinds in "" quick full smoke offlinux "quick offlinux" "smoke offlinux" "full offlinux"; do
    # shellcheck disable=SC2086 # a list of kinds
    settings=$(claims_settings "$TABLE" $kinds) ||
        { fail "kinds '$kinds': claims_settings failed"; continue; }
    for n in $names; do
        # set -u: a value naming a setting that does not exist stops here, as
        # it would stop reproduce.sh.
        if ! value=$( (set -u; eval "$settings" && eval "printf '%s' \"\${$n:-}\"") \
            2>"$work/err"); then
            fail "kinds '$kinds': the settings do not evaluate: $(cat "$work/err")"
            break
        fi
        [ -n "$value" ] || [ "$n" = SCAN_CONTRAST ] || fail "kinds '$kinds': $n is empty"
        case $value in *'$'*) fail "kinds '$kinds': $n kept a \$: $value" ;; esac
    done
done
# Spot checks of what the kinds make of the rung lists.
for kinds in offlinux "full offlinux"; do
    # shellcheck disable=SC2086 # a list of kinds
    got=$(eval "$(claims_settings "$TABLE" $kinds)"
        echo "$MEM_RUNGS $CURVE_RUNGS $C10K_RUNGS $C10K_CLAIM $CURVE_LIGHT_RUNGS")
    case " $got " in *" 07-epoll "*) fail "kinds '$kinds': 07-epoll is in a rung list: $got" ;; esac
done
got=$(eval "$(claims_settings "$TABLE" quick offlinux)"; echo "$MEM_NS|$CURVE_RUNGS|$C10K_RUNGS")
[ "$got" = "1 100 1000|05-poll 06-kqueue|05-poll 06-kqueue" ] ||
    fail "quick off Linux: MEM_NS|CURVE_RUNGS|C10K_RUNGS are '$got'"
got=$(eval "$(claims_settings "$TABLE" smoke offlinux)"; echo "$MEM_NS|$CURVE_RUNGS|$C10K_RUNGS")
[ "$got" = "1 100|05-poll 06-kqueue|05-poll 06-kqueue" ] ||
    fail "smoke off Linux: MEM_NS|CURVE_RUNGS|C10K_RUNGS are '$got'"

# The thresholds: the names report.awk asks judge() for, against the table's.
asked=$(grep -o 'judge("[A-Z0-9_]*")' "$ROOT/scripts/lib/report.awk" | sed 's/judge("//; s/")//' |
    sort -u)
held=$(awk '$1 == "judge" { print $2 }' "$TABLE" | sort -u)
[ -n "$asked" ] || fail "report.awk asks for no threshold by judge()"
[ "$asked" = "$held" ] || fail "thresholds asked for and held differ:
$(printf '%s\n' "$asked" >"$work/a"; printf '%s\n' "$held" >"$work/h"; diff "$work/a" "$work/h")"

# A misspelt kind, and one out of order, each stop the table's reader.
sed 's/^  smoke 0.3$/  smok 0.3/' "$TABLE" >"$work/misspelt"
awk '!done && $0 == "  quick 1" { print "  smoke 1"; done = 1 } 1' "$TABLE" >"$work/unordered"
for bad in misspelt unordered; do
    cmp -s "$TABLE" "$work/$bad" && fail "$bad: the planted line did not change the table"
    if claims_settings "$work/$bad" smoke >/dev/null 2>"$work/err"; then
        fail "$bad kind line: claims_settings went on"
    elif ! grep -q "is no kind of run" "$work/err"; then
        fail "$bad kind line: no message ($(cat "$work/err"))"
    fi
done

[ "$fails" -eq 0 ] && echo "claims table: ok"
[ "$fails" -eq 0 ]
