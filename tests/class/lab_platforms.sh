#!/bin/sh
# lab_platforms.sh: one per-platform lab list, and everything takes it from
# there. docs/workshop/bugs/labs.txt is checked against
#   - the bug patches: a lab for each patch, its rung as the patch's title
#     says, its tests (Linux's) those of the patch's Caught-by line;
#   - the lab sheet (bugs/README.md): a row for each lab, with its rung and
#     every test of its Linux list (bar *:TEST, written NN:TEST there);
#   - the tables of the lab sheet, the guide and the handout: each is
#     `scripts/lab.sh list --markdown`, as generated from labs.txt;
#   - the suggested sets: on each platform, only labs it can check;
#   - scripts/doctor.sh: it names the labs this machine can check, as
#     `lab.sh list` does, on Linux's path and on the forced off-Linux one.
# Every command runs under the shell and awk given (posh and BWK awk too:
# tests/class/tests.cmake registers both). Nothing is built.
# shellcheck disable=SC2015 # ok() always succeeds, so "test && ok || fail" is if-then-else
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
SH=${LAB_SH:-sh}
failures=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
cd "$root" || exit 2
list=docs/workshop/bugs/labs.txt
lab() { "$SH" scripts/lab.sh "$@"; }

echo "== labs.txt against the patches"
codes=$(awk '$1 == "lab" { print $2 }' $list)
patches=$(for p in docs/workshop/bugs/L*.edits; do basename "$p" .edits; done | sort)
[ "$(echo "$codes" | sort)" = "$patches" ] && ok "a lab for each patch: $(echo $codes)" ||
    fail "labs.txt names $(echo $codes), the patches are $(echo $patches)"
for c in $codes; do
    p=docs/workshop/bugs/$c.edits
    [ -f "$p" ] || continue
    want=$(awk '/^@@ /{exit} $1 == "Caught-by:" {
        for (i = 2; i <= NF; i++) print $i }' "$p" | sort | tr '\n' ' ')
    got=$(LADDER_FORCE_PORTABLE=0 "$SH" -c '. scripts/lib/ladder.sh; ladder_platform
        LAB_ROOT=.; . scripts/lib/labs.sh; lab_tests "$0" linux' "$c" | sort | tr '\n' ' ')
    [ "$got" = "$want" ] || fail "$c: labs.txt's tests on Linux: $got; its Caught-by: $want"
    rung=$(awk -v c="$c" '$1 == "lab" && $2 == c { print $3 }' $list)
    title=$(sed -n '1s/.*(\([^,)]*\).*/\1/p' "$p")
    [ "$rung" = "$title" ] || fail "$c: labs.txt's rung $rung, its patch's title ($title)"
    row=$(grep "^| \`$c\` |" docs/workshop/bugs/README.md)
    [ -n "$row" ] || { fail "$c: no row on the lab sheet"; continue; }
    case $row in "| \`$c\` | $rung"*) ;; *) fail "$c: the lab sheet's rung: $row" ;; esac
    for t in $(awk -v c="$c" '$1 == "lab" && $2 == c { print $4 }' $list | tr ',' ' '); do
        case $t in \*:*) t=NN:${t#\*:} ;; esac
        case $row in *"$t"*) ;; *) fail "$c: the lab sheet's row does not name $t" ;; esac
    done
done
[ $failures -eq 0 ] && ok "each lab's rung and tests are its patch's and the lab sheet's"

echo
echo "== the documents' tables are lab.sh list --markdown"
lab list --markdown >"${TMPDIR:-/tmp}/labs-table.$$" || fail "lab.sh list --markdown"
for d in docs/workshop/bugs/README.md docs/workshop/README.md docs/workshop/student.md; do
    [ -f "$d" ] || continue
    block=$(awk '/^<!-- \/labs.txt -->/ { on = 0 } on { print }
        /^<!-- labs.txt: / { on = 1 }' "$d")
    if [ -z "$block" ]; then fail "$d has no labs.txt table"
    elif [ "$block" = "$(cat "${TMPDIR:-/tmp}/labs-table.$$")" ]; then
        ok "$d: its table is labs.txt's"
    else
        fail "$d: its table is not lab.sh list --markdown's (regenerate it):"
        echo "$block" | diff - "${TMPDIR:-/tmp}/labs-table.$$" | sed 's/^/     /'
    fi
done
rm -f "${TMPDIR:-/tmp}/labs-table.$$"

echo
echo "== the suggested sets: only labs the platform can check"
for p in linux macos freebsd; do
    set=$("$SH" -c '. scripts/lib/ladder.sh; ladder_platform; LAB_ROOT=.; . scripts/lib/labs.sh
        for c in $(lab_suggested "$0"); do lab_offered "$c" "$0" || echo "$c ($LAB_WHY)"; done
        lab_suggested "$0" | wc -w' "$p")
    bad=$(echo "$set" | sed '$d')
    n=$(echo "$set" | sed -n '$p' | tr -d ' ')
    if [ -n "$bad" ]; then fail "$p: suggested, not checkable there: $bad"
    elif [ "$n" -ge 3 ]; then ok "$p: its $n suggested labs are labs it can check"
    else fail "$p: only $n labs suggested"; fi
done

echo
echo "== doctor.sh and lab.sh list name the same labs, on both paths"
for forced in 0 1; do
    want=$(LADDER_FORCE_PORTABLE=$forced lab list | awk '$0 !~ /not on this system/ { print $1 }' |
        tr '\n' ' ' | sed 's/ $//')
    said=$(LADDER_FORCE_PORTABLE=$forced "$SH" scripts/doctor.sh 2>/dev/null |
        sed -n 's/^ok  *break-it labs this machine can check: \(.*\) (docs.*/\1/p')
    [ -n "$want" ] && [ "$said" = "$want" ] &&
        ok "LADDER_FORCE_PORTABLE=$forced: doctor.sh and lab.sh list: $want" ||
        fail "LADDER_FORCE_PORTABLE=$forced: doctor.sh says '$said', lab.sh list '$want'"
    if [ $forced = 1 ]; then
        LADDER_FORCE_PORTABLE=1 lab check L2 >"${TMPDIR:-/tmp}/labs-check.$$" 2>&1
        rc=$?
        out=$(cat "${TMPDIR:-/tmp}/labs-check.$$")
        case $rc:$out in
        "77:not on this system: lab L2: its rung, 07-epoll, is not built"*)
            ok "forced: lab.sh check L2 says not on this system (77)" ;;
        *) fail "forced: lab.sh check L2 exited $rc: $out" ;;
        esac
        rm -f "${TMPDIR:-/tmp}/labs-check.$$"
    fi
done

echo
if [ $failures -eq 0 ]; then echo "lab platforms: passed"; exit 0; fi
echo "lab platforms: $failures failed"
exit 1
