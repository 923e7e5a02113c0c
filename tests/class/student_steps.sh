#!/bin/sh
# student_steps.sh: the guide's student commands, in order, on a scratch
# clone, with an edit that breaks the rung before each check. A check that
# passes against a stale build (the binary of before the edit, the
# `git apply` or the `git apply -R`) fails this test.
#
# The rung is 05-poll and the breakage is lab L1's bug (every connection
# asks for POLLOUT): its test, 05-poll:idle-does-not-block, takes
# seconds, and it is exactly the kind of edit a student makes by hand.
#   1. a fresh clone: `scripts/lab.sh check L1` configures the
#      build itself and goes GREEN
#   2. the student's edit that breaks it: the next check goes RED
#   3. the edit undone with git checkout: GREEN
#   4. the lab's patch with git apply: RED; git apply -R: GREEN
#   5. the lab planted with lab.sh plant: RED, hidden from git diff; lab.sh
#      reset: GREEN, the tree clean and the student's set-aside edit back
# (tests/class/lab_rehearsal.sh plants every lab and runs the git commands a
# curious student tries.)
# shellcheck disable=SC2015 # ok() always succeeds, so "test && ok || fail" is if-then-else
set -u
# L1's test reads the server's CPU share, which the forced off-Linux path's
# reader (ps(1), whole seconds on Linux) cannot; macOS's libproc can.
if [ "${LADDER_FORCE_PORTABLE:-0}" = 1 ]; then
    echo "skipped: on the forced off-Linux path (LADDER_FORCE_PORTABLE=1) the tests cannot see"
    echo "  the CPU share that shows lab L1's bug, so its check cannot go red here"
    exit 77
fi
step() { echo; echo "== $*"; }
. "$(dirname "$0")/clone.sh"
class_clone student-steps

# expect_check red|green WHAT: run the lab check as a student would.
expect_check() {
    want=$1; shift
    sh scripts/lab.sh check L1 >"$tmp/check.log" 2>&1
    rc=$?
    case "$want:$rc" in
    green:0 | red:1) ok "$*: check went $want" ;;
    *) cat "$tmp/check.log"; fail "$*: check exited $rc, want $want" ;;
    esac
}

# The student's own edit: interest() asks for POLLOUT always.
break_by_hand() {
    sed 's/return wants_write(c) ? POLLOUT : POLLIN;/return POLLIN | POLLOUT;/' \
        05-poll/main.c >"$tmp/m.c" &&
        cat "$tmp/m.c" >05-poll/main.c
    grep -q 'return POLLIN | POLLOUT;' 05-poll/main.c ||
        { fail "the hand edit did not apply (05-poll/main.c changed?)"; exit 1; }
}

step "1. fresh clone, nothing built: the check configures and builds"
[ ! -d build/dev ] || fail "the scratch clone already has build/dev"
expect_check green "fresh clone"

step "2. an edit that breaks the rung"
break_by_hand
expect_check red "after the edit"

step "3. the edit undone"
git checkout -q 05-poll/main.c
expect_check green "after git checkout"

step "4. the lab as a patch: git apply, then git apply -R"
LAB_ROOT=$(pwd)
. scripts/lib/labpatch.sh
lab_patch docs/workshop/bugs/L1.edits . >"$tmp/L1.patch" || fail "L1's edits find no place"
git apply "$tmp/L1.patch" || fail "git apply"
expect_check red "after git apply"
git apply -R "$tmp/L1.patch" || fail "git apply -R"
expect_check green "after git apply -R"

step "5. lab.sh plant over a student's uncommitted edit, then reset"
echo "/* the student's note */" >>05-poll/README.md
sh scripts/lab.sh plant L1 >"$tmp/plant.log" 2>&1 || { cat "$tmp/plant.log"; fail "plant"; }
grep -q 'set aside' "$tmp/plant.log" && ok "plant said it set the edit aside" ||
    fail "plant did not say it set the edit aside"
[ -z "$(git status --porcelain)" ] && ok "git status shows nothing planted" ||
    fail "git status shows the plant: $(git status --porcelain)"
git diff --quiet HEAD && ok "git diff shows nothing" || fail "git diff shows the bug"
expect_check red "lab planted"
sh scripts/lab.sh reset >"$tmp/reset.log" 2>&1 || { cat "$tmp/reset.log"; fail "reset"; }
[ "$(git status --porcelain)" = " M 05-poll/README.md" ] &&
    ok "reset: only the student's own edit is left" ||
    fail "after reset: $(git status --porcelain | tr '\n' ' ')"
[ -z "$(git ls-files -v | grep '^S')" ] && ok "reset: git reads every file again" ||
    fail "reset left files marked skip-worktree: $(git ls-files -v | grep '^S' | tr '\n' ' ')"
expect_check green "after reset"

echo
if [ $failures -eq 0 ]; then echo "student steps: passed"; exit 0; fi
echo "student steps: $failures failed"
exit 1
