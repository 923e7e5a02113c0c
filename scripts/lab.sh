#!/bin/sh
# lab.sh - the break-it labs (docs/workshop/bugs/), planted so that the diff
# does not give them away.
#
#   scripts/lab.sh list           the labs, with their rung
#   scripts/lab.sh plant NAME     set your work aside and plant bugs/NAME.patch
#   scripts/lab.sh check [NAME]   build, then run the tests that catch it:
#                                 exit 1 while they fail, 0 once they pass
#   scripts/lab.sh reveal [NAME]  the answer, from the facilitator's notes
#   scripts/lab.sh reset          back to your branch and your own work
#   scripts/lab.sh status         what is planted, and what was set aside
#   scripts/lab.sh idle-cpu [RUNG]  build RUNG's ./server-release (default
#                                 01-blocking), start it with nobody connected,
#                                 print its CPU share after 3 s, stop it
#
# plant: uncommitted work (edits, new files, a solution applied with
# git apply) is set aside with `git stash --include-untracked`, and the script
# says so. The bug is then committed on a branch of its own, ladder-lab, with
# a neutral message, so `git diff` and `git status` show nothing planted. If
# the bug does not apply because a workshop solution is committed on your
# branch (et-one-read on top of the edge-triggered solution), that solution
# is reverted on ladder-lab first, and the script says so. What it did is
# kept in the git directory (ladder-lab.state), for reset.
#
# check: configures build/dev (ASan + UBSan) when needed and always builds
# the rungs and the test driver before running ctest, so what it tests is
# the tree as it is now, your latest edit included.
#
# reset: your edits made during the lab (your fix) are saved as a diff in the
# git directory (its path is printed), the tree goes back to your branch, the
# ladder-lab branch is deleted and the work set aside is put back.
#
# POSIX sh (runs under dash, posh, and macOS's /bin/sh); needs git, and cmake
# and a C compiler for check.
set -u

usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "lab.sh: $*" >&2; exit 2; }

cd "$(dirname "$0")/.." || exit 2
root=$(pwd)
bugs=$root/docs/workshop/bugs
solutions=$root/docs/workshop/solutions
BRANCH=ladder-lab
MESSAGE="Lab exercise"

command -v git >/dev/null 2>&1 || die "git is missing (Debian/Ubuntu: apt-get install git; macOS: xcode-select --install)"
git rev-parse --git-dir >/dev/null 2>&1 || die "$root is not a git clone: the labs need git to set work aside and restore it"
gitdir=$(cd "$(git rev-parse --git-dir)" && pwd)
state=$gitdir/ladder-lab.state

# A commit needs an identity; a fresh classroom machine may have none.
git_() { git -c user.name="${GIT_AUTHOR_NAME:-lab.sh}" -c user.email="${GIT_AUTHOR_EMAIL:-lab@localhost}" \
    -c advice.detachedHead=false "$@"; }

get() { [ -f "$state" ] && sed -n "s/^$1=//p" "$state"; }
patch_of() { echo "$bugs/$1.patch"; }
known() { [ -n "$1" ] && [ -f "$(patch_of "$1")" ] && case $1 in */* | .*) false ;; *) true ;; esac; }
need_known() { known "$1" || die "no lab named '$1' (lab.sh list)"; }

# Words of the patch's "Caught-by:" line (before its diff).
caught_by() { awk '/^diff --git /{exit} $1 == "Caught-by:" {for (i = 2; i <= NF; i++) print $i}' "$(patch_of "$1")"; }
# The rung in the patch's title line: "Bug lab: ... (07-epoll)."
rung_of() { sed -n '1s/.*(\([^)]*\))\.*$/\1/p' "$(patch_of "$1")"; }

# Column N of the lab's row in the student sheet (bugs/README.md): 5 is
# "what you will see", 6 the hint.
sheet_column() {
    awk -F'|' -v name="\`$1\`" -v col="$2" '{ c = $2; gsub(/^ +| +$/, "", c) }
        c == name { v = $col; gsub(/^ +| +$/, "", v); print v; exit }' "$bugs/README.md"
}

dirty() { [ -n "$(git status --porcelain --untracked-files=normal)" ]; }

# Solutions whose change the working tree (worktree) or the index and HEAD
# (cached) carries. (A mode word rather than "$@": posh rejects an empty
# "$@" under set -u.)
solutions_in_tree() {
    where=; [ "$1" = cached ] && where=--cached
    for s in "$solutions"/*.patch; do
        [ -f "$s" ] || continue
        # shellcheck disable=SC2086 # empty or one option
        if git apply -R --check $where "$s" >/dev/null 2>&1; then basename "$s" .patch; fi
    done
}

# ---- plant ----------------------------------------------------------------

cmd_plant() {
    name=$1
    need_known "$name"
    [ -f "$state" ] && die "lab '$(get name)' is planted; run 'scripts/lab.sh reset' before planting another"
    for f in MERGE_HEAD CHERRY_PICK_HEAD REVERT_HEAD rebase-merge rebase-apply; do
        [ -e "$gitdir/$f" ] && die "a git merge, rebase or cherry-pick is in progress: finish or abort it first"
    done
    git rev-parse -q --verify "refs/heads/$BRANCH" >/dev/null &&
        die "a branch $BRANCH exists but no lab is recorded; look at it, then: git branch -D $BRANCH"
    orig=$(git symbolic-ref -q --short HEAD) || orig=""
    orig_commit=$(git rev-parse HEAD) || die "this clone has no commit"
    stash=""
    if dirty; then
        applied=$(solutions_in_tree worktree | tr '\n' ' ')
        git_ stash push -q --include-untracked -m "lab.sh: work set aside while lab $name is planted" ||
            die "git stash failed: nothing was changed; commit or clean your work by hand and plant again"
        stash=$(git rev-parse -q --verify refs/stash)
        echo "Your uncommitted work is set aside (git stash, entry \"lab.sh: work set aside while lab $name is planted\")."
        [ -n "$applied" ] && echo "  It includes the applied solution(s): $applied- set aside too, so the lab starts from the rung as it is."
        echo "  'scripts/lab.sh reset' puts it back."
    fi
    {
        echo "name=$name"
        echo "orig=$orig"
        echo "orig_commit=$orig_commit"
        echo "stash=$stash"
    } >"$state"
    if ! git_ checkout -q -b "$BRANCH"; then
        undo_plant
        die "could not create the branch $BRANCH; nothing is planted"
    fi
    patch=$(patch_of "$name")
    if ! git apply --check "$patch" >/dev/null 2>&1; then
        # A solution committed on the branch may be in the way (et-one-read
        # changes code that edge-triggered.patch removes).
        for s in $(solutions_in_tree cached); do
            if git apply -R --index "$solutions/$s.patch" 2>/dev/null &&
                git_ commit -q -m "$MESSAGE (base)" && git apply --check "$patch" >/dev/null 2>&1; then
                echo "Your branch carries the $s solution; it is taken out on the lab branch, which starts from the rung without it."
                break
            fi
        done
    fi
    if ! git apply --index "$patch" 2>/dev/null || ! git_ commit -q -m "$MESSAGE"; then
        undo_plant
        die "docs/workshop/bugs/$name.patch does not apply to your branch (it changes $(rung_of "$name"); has your branch changed it?); nothing is planted and your work is back"
    fi
    echo "Lab '$name' is planted in $(rung_of "$name") (on the branch $BRANCH; git diff shows nothing)."
    echo "  What you will see: $(sheet_column "$name" 5)"
    echo "  Next: scripts/lab.sh check    (builds, then runs the tests that catch it; red until you fix it)"
}

# Back to where plant started, with the work set aside restored.
undo_plant() {
    o=$(get orig); oc=$(get orig_commit); s=$(get stash)
    git_ reset -q --hard 2>/dev/null
    if [ -n "$o" ]; then git_ checkout -q -f "$o"; else git_ checkout -q -f --detach "$oc"; fi
    git rev-parse -q --verify "refs/heads/$BRANCH" >/dev/null && git_ branch -q -D "$BRANCH"
    restore_stash "$s"
    rm -f "$state"
}

# restore_stash SHA: apply the entry plant made and drop it from the list.
restore_stash() {
    [ -n "$1" ] || return 0
    if ! git_ stash apply -q --index "$1" 2>/dev/null && ! git_ stash apply -q "$1"; then
        echo "lab.sh: could not put your set-aside work back; it is still in 'git stash list' ($1)" >&2
        return 1
    fi
    ref=$(git stash list --format='%gd %H' | awk -v h="$1" '$2 == h { print $1; exit }')
    [ -n "$ref" ] && git_ stash drop -q "$ref"
    echo "Your set-aside work is back."
}

# ---- reset ----------------------------------------------------------------

cmd_reset() {
    if [ ! -f "$state" ]; then
        echo "No lab is planted; nothing to reset."
        return 0
    fi
    name=$(get name)
    if dirty; then
        fix=$gitdir/ladder-lab-$name.diff
        { git diff HEAD; git ls-files --others --exclude-standard; } >"$fix"
        echo "Your edits made during the lab are saved in $fix"
    fi
    tip=$(git rev-parse -q --verify "refs/heads/$BRANCH")
    undo_plant || exit 1
    echo "Lab '$name' is taken out (the lab branch was at ${tip:-?}); you are back on $(git symbolic-ref -q --short HEAD || git rev-parse --short HEAD)."
}

# ---- check ----------------------------------------------------------------

# Configure build/dev as `cmake --preset dev` does, but with -S/-B so CMake
# older than 3.21 (no presets v3) works too; then build what the tests run.
build_for() { # rung...
    bld=$root/build/dev
    if [ ! -f "$bld/CMakeCache.txt" ]; then
        if [ -z "${CC:-}" ]; then
            if command -v clang >/dev/null 2>&1; then CC=clang; else CC=cc; fi
            export CC
        fi
        echo "== configuring build/dev (ASan + UBSan, $CC) =="
        cmake -S "$root" -B "$bld" -DCMAKE_BUILD_TYPE=Debug -DLADDER_SANITIZE=address >"$gitdir/ladder-lab-cmake.log" 2>&1 || {
            cat "$gitdir/ladder-lab-cmake.log" >&2
            die "cmake could not configure build/dev (scripts/doctor.sh says what is missing)"
        }
    fi
    echo "== building $* and the test driver (build/dev) =="
    # Re-run CMake's generation step too, so a solution's new test files are seen.
    cmake "$bld" >/dev/null 2>&1
    cmake --build "$bld" -j "${LAB_JOBS:-2}" --target echo_tests "$@" || {
        echo "lab.sh: the build failed (above): nothing was tested" >&2
        exit 1
    }
}

cmd_check() {
    name=${1:-$(get name)}
    [ -n "$name" ] || die "no lab is planted; name one: lab.sh check NAME"
    need_known "$name"
    tests=$(caught_by "$name")
    [ -n "$tests" ] || die "$name.patch names no Caught-by: tests"
    rungs=$(for t in $tests; do echo "${t%%:*}"; done | sort -u | tr '\n' ' ')
    # shellcheck disable=SC2086 # a list of targets
    build_for $rungs
    # shellcheck disable=SC2086 # joins the words with |
    regex="^($(echo $tests | tr ' ' '|'))\$"
    echo "== ctest -R '$regex' =="
    out=$gitdir/ladder-lab-ctest.log
    (cd "$root/build/dev" && ctest -j "${LAB_JOBS:-2}" --output-on-failure -R "$regex") >"$out" 2>&1
    rc=$?
    sed -n '/^ *[0-9]*\/[0-9]* Test *#/p; /tests passed, /p' "$out"
    n=$(echo "$tests" | wc -w | tr -d ' ')
    # ctest adds the "build" test that every test requires: count only ours.
    ran=$(sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .*/\1/p' "$out" | grep -Ec "$regex")
    if [ "$ran" -ne "$n" ]; then
        cat "$out"
        die "ctest did not run the $n tests (see above)"
    fi
    if [ $rc -eq 0 ]; then
        echo "GREEN: every test that catches '$name' passes against the code as it is now."
        return 0
    fi
    echo "RED: the tests above fail against the code as it is now; each one printed what it saw:"
    echo "  less $out"
    return 1
}

# ---- reveal, list, status ---------------------------------------------------

cmd_reveal() {
    name=${1:-$(get name)}
    [ -n "$name" ] || die "name the lab: lab.sh reveal NAME"
    need_known "$name"
    awk -v head="### \`$name\`" 'index($0, head) == 1 { on = 1; print; next }
        on && /^### / { exit } on { print }' "$bugs/ANSWERS.md"
    echo
    echo "The planted change (docs/workshop/bugs/$name.patch):"
    awk 'found || /^diff --git /{found = 1; print}' "$(patch_of "$name")"
}

cmd_list() {
    for p in "$bugs"/*.patch; do
        n=$(basename "$p" .patch)
        printf '  %-20s %s\n' "$n" "$(rung_of "$n")"
    done
}

cmd_status() {
    if [ ! -f "$state" ]; then
        echo "No lab is planted."
    else
        from=$(get orig); [ -n "$from" ] || from=$(get orig_commit)
        echo "Lab '$(get name)' is planted on the branch $BRANCH (made from $from)."
        if [ -n "$(get stash)" ]; then echo "  Your work is set aside in git stash ($(get stash))."; fi
    fi
}

# ---- idle-cpu ---------------------------------------------------------------

# The busy-poll demonstration: what does the server cost with nobody there?
# The server is started here, by pid, and stopped on every way out (also
# Ctrl-C), so no spinning server is left to skew later measurements.
cmd_idle_cpu() {
    rung=${1:-01-blocking}
    case $rung in 0[1-7]-*) ;; *) die "usage: lab.sh idle-cpu [RUNG], e.g. 01-blocking" ;; esac
    [ -f "$root/$rung/Makefile" ] || die "no rung $rung"
    make -s -C "$root/$rung" server-release || die "make server-release failed in $rung"
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/idle-cpu.XXXXXX") || exit 2
    pid=""
    trap 'if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi; rm -rf "$tmp"' EXIT
    trap 'exit 130' INT TERM
    "$root/$rung/server-release" -p 0 >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    i=0
    until grep -q '^listening on' "$tmp/out"; do
        i=$((i + 1))
        if [ $i -gt 50 ] || ! kill -0 "$pid" 2>/dev/null; then die "the server did not start: $(cat "$tmp/err")"; fi
        sleep 0.1
    done
    echo "$rung/server-release: $(cat "$tmp/out") (pid $pid), nobody connected; measuring 3 s..."
    sleep 3
    # ps's %cpu: CPU time over the process's life (Linux) or a short decaying
    # average (macOS, BSD); over a 3-second life both read the same.
    cpu=$(ps -o %cpu= -p "$pid" | tr -d ' ')
    echo "  CPU: ${cpu:-?} % of one core (ps -o %cpu), with nobody connected"
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    pid=""
    echo "  server stopped."
}

case ${1:-} in
idle-cpu) [ $# -le 2 ] || die "usage: lab.sh idle-cpu [RUNG]"; cmd_idle_cpu "${2:-}" ;;
plant) [ $# -eq 2 ] || die "usage: lab.sh plant NAME (lab.sh list)"; cmd_plant "$2" ;;
check) [ $# -le 2 ] || die "usage: lab.sh check [NAME]"; cmd_check "${2:-}" ;;
reveal) [ $# -le 2 ] || die "usage: lab.sh reveal [NAME]"; cmd_reveal "${2:-}" ;;
reset) cmd_reset ;;
list) cmd_list ;;
status) cmd_status ;;
-h | --help | help) usage ;;
*) usage >&2; exit 2 ;;
esac
