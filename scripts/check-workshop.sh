#!/bin/sh
# check-workshop.sh - keep the workshop's patches true.
#
#   scripts/check-workshop.sh [EDITS...]            check (the default)
#   scripts/check-workshop.sh --refresh [EDITS...]  write the solutions' patches
#
# With no EDITS, every docs/workshop/solutions/*.edits and
# docs/workshop/bugs/*.edits (a solution's NAME.patch names its NAME.edits).
# Each is a description followed by edits that find their place by a
# function's name (scripts/lib/labpatch.sh; a bug's are rot13-encoded),
# made into a patch of the tree as it is. The description may hold, each on
# a line of its own:
#   Caught-by: TEST...   (bug patches) ctest names that must FAIL once applied
#   Changes: TEST...     (solutions) tests no longer expected to pass
#   Adds: TEST...        (solutions) tests the patch adds (tests/workshop/)
#
# Check: the workshop preset's build (build/workshop: the dev preset, ASan +
# UBSan, with LADDER_WORKSHOP_CHECKS), then `ctest --preset workshop`, the
# tests labelled "workshop" (tests/patches/tests.cmake says what they are).
# Each patch is applied with plain `git apply` to a scratch copy of the
# tracked files of this tree (uncommitted edits included; a solution's
# patch must be the NAME.patch beside its edits, byte for byte: students
# apply that one) and the rungs it touches are built there by the dev
# preset; then
#   solution: builds without a warning and passes every test of the rungs
#     whose folders it changes (every rung, if it changes only common/)
#     except its Changes: ones, plus the tests it Adds:;
#   bug: builds, and every test named in Caught-by: fails.
# A test that skips itself (exit 77: it lacks a privilege here) neither
# passes a solution's test nor catches a bug. ctest schedules them as the
# suite's own (the quiet and serial lists in tests/CMakeLists.txt). A
# patch's tests are named RUNG.NAME:TEST, its build NAME:build; exit 1 if
# any fails. Logs: build/workshop/Testing/Temporary/LastTest.log, and each
# patch as made of the tree and its build's log in
# build/workshop/tests/workshop/NAME/. It starts servers: on a shared machine, run it alone (under a
# lock: flock FILE scripts/check-workshop.sh).
#
# Refresh (for maintainers, after a rung changes, or a solution's edits):
# each solution's NAME.patch is written anew from its edits and this tree
# (uncommitted edits included). A bug has no patch to write: lab.sh and the
# check make it of the tree when they need it; refresh says whether its
# edits still find their place. An edit that does not (the code it names was
# renamed, moved to another file or rewritten) is reported with its file and
# function, and its patch left alone: change the edit, then refresh. Run the
# check afterwards: a refreshed bug must still be caught.
#
# Environment: CC (default clang, as scripts/test.sh; read when build/workshop
# is first configured), CHECK_JOBS (ctest -j, default the preset's 4).
set -u
cd "$(dirname "$0")/.." || exit 2
root=$PWD
[ -f "$root/common/phase.mk" ] && [ -d "$root/docs/workshop" ] || {
    echo "check-workshop: $root is not the ladder's root" \
        "(run scripts/check-workshop.sh from the tree)" >&2
    exit 2
}

mode=check
names=
for arg in "$@"; do
    case "$arg" in
    --refresh) mode=refresh ;;
    -h | --help) sed -n '2,/^set -u/{/^set -u/d;/^#/s/^# \{0,1\}//p;}' "$0"; exit 0 ;;
    -*) echo "check-workshop: unknown option $arg (try --help)" >&2; exit 2 ;;
    *) names="$names $(basename "${arg%.patch}" .edits)" ;;
    esac
done

if [ "$mode" = check ]; then
    export CC=${CC:-clang}
    # One patch's tests are labelled patch=NAME.
    select=
    [ -z "$names" ] || select="^patch=($(echo $names | tr ' ' '|'))\$"
    cmake --preset workshop >/dev/null &&
        cmake --build --preset workshop ||
        { echo "check-workshop: the workshop build (build/workshop) failed" >&2; exit 1; }
    exec ctest --preset workshop ${CHECK_JOBS:+-j "$CHECK_JOBS"} ${select:+-L "$select"}
fi

# ---- refresh ----------------------------------------------------------------

LAB_ROOT=$root
. "$root/scripts/lib/labpatch.sh"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/check-workshop.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM
if ! sh "$root/tests/patches/tree.sh" copy "$root" "$scratch/tree" >"$scratch/log" 2>&1; then
    cat "$scratch/log" >&2
    echo "check-workshop: cannot make a scratch copy of the tree" >&2
    exit 1
fi
if [ -n "$names" ]; then
    edits=
    for n in $names; do
        for d in solutions bugs; do
            [ -f "docs/workshop/$d/$n.edits" ] && edits="$edits docs/workshop/$d/$n.edits"
        done
    done
else
    edits=$(ls docs/workshop/solutions/*.edits docs/workshop/bugs/*.edits 2>/dev/null)
fi
npass=0
nfail=0
verdict() { # ok|FAIL name message
    printf '%-4s %-34s %s\n' "$1" "$2" "$3"
    if [ "$1" = ok ]; then npass=$((npass + 1)); else nfail=$((nfail + 1)); fi
}
echo "== workshop patches: refresh ($(echo $edits | wc -w | tr -d ' ') patches)"
for e in $edits; do
    kind=$(basename "$(dirname "$e")")
    name=$kind/$(basename "$e" .edits)
    stored=${e%.edits}.patch
    if ! lab_patch "$e" "$scratch/tree" >"$scratch/patch" 2>"$scratch/why"; then
        verdict FAIL "$name" "$(sed 's/^labedit: [^ ]* line [0-9]*: //' "$scratch/why")"
    elif [ "$kind" = bugs ]; then
        verdict ok "$name" "its edits find their place (made when used: no patch to write)"
    elif cmp -s "$scratch/patch" "$stored"; then
        verdict ok "$name" "unchanged"
    else
        cp "$scratch/patch" "$stored" && verdict ok "$name" "rewritten: $(basename "$stored")"
    fi
done
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
