#!/bin/sh
# lab_verdicts.sh: a lab never lies, on the Mac path. On a scratch clone,
# with LADDER_FORCE_PORTABLE=1 (the path off Linux: labs.txt's macOS column,
# the portable process reader, 06 through the shim), lab.sh run by posh and
# BWK awk first on PATH where they are installed, for every lab:
#   plant CODE    planted (0), or "not on this system: ..." (77) and nothing
#                 planted
#   check         RED (1), or "not on this system: ..." (77); GREEN here is a
#                 lie: the bug is in the tree
#   reset, then check CODE on the code as it was (only after a RED): GREEN
#                 (0), or 77 saying why; RED here is a lie: nothing is wrong
# A lab labs.txt offers on macOS that this path cannot check (a figure the
# portable reader, ps(1), does not give on Linux, where macOS's libproc
# does) is listed, not failed: its 77 says why. The labs this path checks
# for real are printed, and at least one lab must be.
# Builds the scratch clone's build/dev (two jobs), then a check per lab.
#   lab_verdicts.sh [CODE...]            those labs (default: every lab)
#   lab_verdicts.sh --except CODE...     every lab but those
# ctest runs it as two halves side by side (tests/class/tests.cmake): the
# named labs, and --except the same names, so a lab added to labs.txt is in
# the second. Each half must check a lab for real.
# shellcheck disable=SC2015 # ok() always succeeds, so "test && ok || fail" is if-then-else
set -u
except=no
if [ "${1:-}" = --except ]; then except=yes; shift; fi
picked=" $* "
. "$(dirname "$0")/clone.sh"
class_clone lab-verdicts
every=" $(awk '$1 == "lab" { printf "%s ", $2 }' docs/workshop/bugs/labs.txt)"
for c in $picked; do
    case $every in *" $c "*) ;; *) echo "lab_verdicts.sh: no lab $c in labs.txt"; exit 2 ;; esac
done
# wanted CODE: whether this run checks that lab.
wanted() {
    case $picked in *" $1 "*) [ $except = no ]; return ;; esac
    [ $except = yes ] || [ "$picked" = "  " ]
}
codes=""
for c in $every; do wanted "$c" && codes="$codes $c"; done
mkdir -p "$tmp/bin"

LAB_SH="sh"
if command -v posh >/dev/null 2>&1; then LAB_SH=posh; fi
if command -v original-awk >/dev/null 2>&1; then
    ln -s "$(command -v original-awk)" "$tmp/bin/awk"
    PATH=$tmp/bin:$PATH
fi
LADDER_FORCE_PORTABLE=1
export LADDER_FORCE_PORTABLE PATH
echo "lab.sh under $LAB_SH, awk: $(command -v awk), LADDER_FORCE_PORTABLE=1"
lab() { "$LAB_SH" scripts/lab.sh "$@" >"$tmp/out" 2>&1; rc=$?; }
says_why() { grep -q '^not on this system: ' "$tmp/out"; }
show() { sed 's/^/     | /' "$tmp/out" | tail -"${1:-12}"; }

real="" skipped="" offered_mac=$(LAB_ROOT=. sh -c '. scripts/lib/ladder.sh; ladder_platform
    . scripts/lib/labs.sh; for c in $(lab_codes); do lab_offered "$c" macos && echo "$c"; done')
for c in $codes; do
    echo
    echo "== $c"
    lab plant "$c"
    if [ $rc -eq 77 ]; then
        if says_why && [ -z "$(git status --porcelain)" ]; then
            ok "$c: plant: $(grep '^not on this system' "$tmp/out")"
            skipped="$skipped $c"
        else show; fail "$c: plant exited 77 without saying why, or changed the tree"; fi
        continue
    fi
    [ $rc -eq 0 ] || { show; fail "$c: plant exited $rc"; continue; }
    lab check
    red=$rc
    case $rc in
    1) ok "$c: planted: RED" ;;
    77) if says_why; then ok "$c: planted: $(grep '^not on this system' "$tmp/out")"
        else show; fail "$c: planted: check exited 77 without saying why"; fi ;;
    0) show; fail "$c: planted: GREEN, with the bug in the tree (a lie)" ;;
    *) show; fail "$c: planted: check exited $rc" ;;
    esac
    lab reset
    [ $rc -eq 0 ] && [ -z "$(git status --porcelain)" ] || { show; fail "$c: reset"; }
    if [ $red -eq 1 ]; then
        lab check "$c"
        case $rc in
        0) ok "$c: the code as it was: GREEN"; real="$real $c" ;;
        77) if says_why; then ok "$c: as it was: $(grep '^not on this system' "$tmp/out")"
            else show; fail "$c: as it was: check exited 77 without saying why"; fi ;;
        1) show 30; fail "$c: the code as it was: RED, with nothing wrong (a lie)" ;;
        *) show; fail "$c: as it was: check exited $rc" ;;
        esac
    elif [ $red -eq 77 ]; then
        skipped="$skipped $c"
    fi
done

echo
echo "checked for real on this path:${real:- none}"
echo "not on this system here:${skipped:- none}"
for c in $offered_mac; do
    case " $skipped " in
    *" $c "*) echo "  $c: offered on macOS, not checkable on this path (above)" ;;
    esac
done
[ -n "$real" ] || fail "no lab was checked for real on the forced path"
if [ $failures -eq 0 ]; then echo "lab verdicts: passed"; exit 0; fi
echo "lab verdicts: $failures failed"
exit 1
