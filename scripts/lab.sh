#!/bin/sh
# lab.sh - the break-it labs (docs/workshop/bugs/), planted out of sight.
#
#   scripts/lab.sh list           the labs (neutral codes, L1 ...), with their rung,
#                                 and which of them this system can check
#   scripts/lab.sh plant CODE     set your work aside and plant lab CODE
#   scripts/lab.sh check [CODE]   build, then run the tests that catch it:
#                                 exit 1 while they fail, 0 once they pass, 77
#                                 (with "not on this system: REASON") where
#                                 this system cannot tell
#   scripts/lab.sh diff           your edits since the lab was planted (your fix)
#   scripts/lab.sh reset          back to your own tree and your own work
#   scripts/lab.sh status         what is planted, and what was set aside
#   scripts/lab.sh idle-cpu [RUNG]  build RUNG's ./server-release (default
#                                 01-blocking), start it with nobody connected,
#                                 print its CPU share after 3 s, stop it
#   scripts/lab.sh kit DIR        (facilitator) make the student kits in DIR
# The answer to a lab is the facilitator's to give (docs/workshop/README.md).
#
# In a student kit (made by `lab.sh kit`) each lab is a kit of its own whose
# one commit already holds the bug: there `check` tests for that lab, `diff`
# and `reset` work on your edits since you cloned, and there is nothing to
# plant.
#
# Which labs a system can check is docs/workshop/bugs/labs.txt, the one
# per-platform list (scripts/lib/labs.sh reads it): a lab whose rung is not
# built here, or whose check needs what this system lacks (LeakSanitizer, a
# figure this system's process reader cannot give, room for a thousand
# processes or threads), says "not on this system" with the reason and
# exits 77 from plant and check, never 1 (RED) or 0 (GREEN).
#
# Labs have codes, not names: a name would be the answer. A lab,
# docs/workshop/bugs/CODE.edits, is a list of edits that find their place
# by a function's name (scripts/lib/labpatch.sh), so a refactor of the code
# around them leaves it planting; they are kept rot13-encoded, so neither a
# glance at the file nor a `git log -p` that shows it reads as the bug.
#
# plant (here, in the facilitator's repository: a rehearsal; students get
# kits): uncommitted work (edits, new files, a solution applied with git
# apply) is set aside with `git stash --include-untracked` (the entry names
# the code only), and the script says so. The bug is then made of the tree
# as it is (its edits as a patch) and applied to the working tree alone,
# and the files it changes are marked `git update-index --skip-worktree`,
# so that git show, git log -p, git diff, git status and git stash show
# nothing of it. That keeps it out of
# the way, not secret: `git ls-files -v` marks those files with an S, the
# planted blob is in the object store (git fsck), and they are the newest
# files (ls -t); which is why students get kits, where nothing is planted
# after the clone. If the bug does not apply because a workshop solution is
# committed on your branch (L16 on top of the edge-triggered solution),
# that solution is taken out in the working tree too, out of sight in the
# same way, and the script says so. What it did is kept in the git
# directory (ladder-lab.state), for diff and reset.
#
# While a lab is planted, git shows no edit to those files, your fix
# included: `lab.sh diff` shows everything you changed since plant.
#
# check: configures build/dev (ASan + UBSan) when needed and always builds
# the rungs and the test driver before running ctest, so what it tests is
# the tree as it is now, your latest edit included.
#
# reset: your edits made during the lab (your fix) are saved as a diff in the
# git directory (its path is printed), the planted files go back to your
# branch's and are read by git again, and the work set aside is put back.
# Commits you made meanwhile stay.
#
# kit DIR: the student kits, made from this repository's HEAD, as bare git
# repositories in DIR (a new folder): DIR/io-ladder.git, the class kit, and
# DIR/L1.git ... DIR/L16.git, one per lab. Each holds the tracked files less
# what docs/workshop/kit-omits.txt names (the guide, the answer table, the
# bug's edits and the solutions, the class tests that plant them) and less the
# facilitator blocks of the documents (between "<!-- facilitator -->" and
# "<!-- /facilitator -->"), as one commit with no parent, and no object that
# commit does not hold. A lab's kit has its bug in that commit and a file
# .ladder-lab naming its code: no git command can compare the bug with the
# code it replaced, for that code is not in the kit, and a clone writes every
# file at once. Students clone the kit they are given
# (git clone DIR/L1.git io-ladder-L1), never this repository.
#
# POSIX sh (runs under dash, posh, and macOS's /bin/sh); needs git, and cmake
# and a C compiler for check.
set -u

usage() { sed -n '2,/^# The answer to a lab/p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "lab.sh: $*" >&2; exit 2; }
# not_here WHY: the verdict of a lab this system cannot check.
not_here() { echo "not on this system: $*"; exit 77; }

cd "$(dirname "$0")/.." || exit 2
root=$(pwd)
bugs=$root/docs/workshop/bugs
solutions=$root/docs/workshop/solutions
. "$root/scripts/lib/labpatch.sh"
. "$root/scripts/lib/ladder.sh"
ladder_platform
LAB_ROOT=$root
. "$root/scripts/lib/labs.sh"
labs_platform
# A student kit has no patches; its lab (if it is a lab's kit) is named in
# .ladder-lab.
kit=no
[ -n "$(ls "$bugs"/L*.edits 2>/dev/null)" ] || kit=yes
kit_lab=""
[ -f "$root/.ladder-lab" ] && kit_lab=$(sed -n 1p "$root/.ladder-lab")

command -v git >/dev/null 2>&1 ||
    die "git is missing (Debian/Ubuntu: apt-get install git; macOS: xcode-select --install)"
git rev-parse --git-dir >/dev/null 2>&1 ||
    die "$root is not a git clone: the labs need git to set work aside and restore it"
gitdir=$(cd "$(git rev-parse --git-dir)" && pwd)
state=$gitdir/ladder-lab.state
scratch=""
trap '[ -z "$scratch" ] || rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM

# A stash needs an identity; a fresh classroom machine may have none.
git_() {
    git -c user.name="${GIT_AUTHOR_NAME:-lab.sh}" \
        -c user.email="${GIT_AUTHOR_EMAIL:-lab@localhost}" "$@"
}

# planted KEY: what the plant recorded (code, head, stash); empty when none is.
planted() { [ -f "$state" ] && sed -n "s/^$1=//p" "$state"; }
edits_of() { echo "$bugs/$1.edits"; }
need_lab_code() {
    case $1 in */* | .*) ;; *) lab_known "$1" && return 0 ;; esac
    die "no lab with the code '$1' (lab.sh list)"
}
need_patch() {
    [ $kit = no ] && [ -f "$(edits_of "$1")" ] && return 0
    [ -n "$kit_lab" ] && die "this kit is lab $kit_lab's: its bug is in the code as you cloned it"
    die "labs come as kits of their own: ask the facilitator for lab $1's" \
        "(git clone .../$1.git)"
}
# A scratch folder in the git directory, removed on the way out; made before
# any command substitution needs it (a subshell's would outlive its trap).
scratch_dir() {
    [ -n "$scratch" ] || scratch=$(mktemp -d "$gitdir/ladder-lab.XXXXXX") || die "mktemp failed"
}
# plain CODE: the path of the lab's patch as git apply reads it, made of the
# working tree as it is now (labedit's message on $scratch/why if it cannot).
plain() { lab_patch "$(edits_of "$1")" "$root" >"$scratch/$1.patch" 2>"$scratch/why" &&
    echo "$scratch/$1.patch"; }

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

# plant_preflight: nothing planted yet, no git operation half done, no
# file git has been told to ignore changes to.
plant_preflight() {
    [ -f "$state" ] &&
        die "lab $(planted code) is planted; run 'scripts/lab.sh reset' before planting another"
    for f in MERGE_HEAD CHERRY_PICK_HEAD REVERT_HEAD rebase-merge rebase-apply; do
        [ -e "$gitdir/$f" ] &&
            die "a git merge, rebase or cherry-pick is in progress: finish or abort it first"
    done
    [ -z "$(git ls-files -v | awk '$1 == "S" || $1 ~ /^[a-z]$/')" ] ||
        die "some files are marked skip-worktree or assume-unchanged (git ls-files -v): clear them"
}

# set_work_aside: uncommitted work goes to git stash (stash: its commit).
set_work_aside() {
    stash=""
    dirty || return 0
    applied=$(solutions_in_tree worktree | tr '\n' ' ')
    entry="lab.sh: work set aside while lab $code is planted"
    git_ stash push -q --include-untracked -m "$entry" ||
        die "git stash failed: nothing was changed; commit or clean your work and plant again"
    stash=$(git rev-parse -q --verify refs/stash)
    echo "Your uncommitted work is set aside (git stash, entry \"$entry\")."
    [ -n "$applied" ] &&
        echo "  It includes the applied solution(s): $applied- set aside too," \
            "so the lab starts from the rung as it is."
    echo "  'scripts/lab.sh reset' puts it back."
}

# solution_out_of_the_way: the lab's patch in $patch, made of the tree;
# where it cannot be, a solution committed on the branch may be in the way
# (L16 changes code that edge-triggered.patch removes): it is taken out if
# that lets the lab apply.
solution_out_of_the_way() {
    patch=$(plain "$code") && return 0
    for s in $(solutions_in_tree cached); do
        if git apply -R "$solutions/$s.patch" 2>/dev/null; then
            if patch=$(plain "$code"); then
                echo "Your branch carries the $s solution; it is taken out for the lab," \
                    "which starts from the rung without it."
                break
            fi
            git apply "$solutions/$s.patch"
        fi
    done
}

cmd_plant() {
    code=$1
    need_lab_code "$code"
    need_patch "$code"
    lab_ready "$code" || not_here "lab $code: $LAB_WHY (nothing is planted; lab.sh list)"
    plant_preflight
    head_commit=$(git rev-parse HEAD) || die "this clone has no commit"
    set_work_aside
    {
        echo "code=$code"
        echo "head=$head_commit"
        echo "stash=$stash"
    } >"$state"
    solution_out_of_the_way
    if [ -z "$patch" ] || ! git apply "$patch" 2>/dev/null; then
        undo_plant
        die "lab $code does not apply to your branch (it changes $(lab_rung "$code");" \
            "has your branch changed it?); nothing is planted and your work is back:" \
            "$(sed 's/^labedit: [^ ]* line [0-9]*: //' "$scratch/why")"
    fi
    hide_planted
    echo "Lab $code is planted in $(lab_rung "$code") (git diff and git status show nothing of it)."
    echo "  What you will see: $(sheet_column "$code" 5)"
    echo "  Next: scripts/lab.sh check    (builds, then runs the tests that catch it;" \
        "red until you fix it)"
}

# The files plant changed: recorded with the planted content (a blob in the
# object store, for diff and reset), then marked skip-worktree.
hide_planted() {
    git diff --name-only | while IFS= read -r f; do
        echo "file=$(git hash-object -w -- "$f") $f"
    done >>"$state"
    planted_files | while IFS= read -r f; do git update-index --skip-worktree -- "$f"; done
}
planted_files() { sed -n 's/^file=[^ ]* //p' "$state"; }

# Back to where plant started: the planted files as committed and read by
# git again, and the work set aside restored.
undo_plant() {
    planted_files | while IFS= read -r f; do git update-index --no-skip-worktree -- "$f"; done
    git_ reset -q --hard 2>/dev/null
    restore_stash "$(planted stash)"
    rm -f "$state"
}

# restore_stash SHA: apply the entry plant made and drop it from the list.
restore_stash() {
    [ -n "$1" ] || return 0
    if ! git_ stash apply -q --index "$1" 2>/dev/null && ! git_ stash apply -q "$1"; then
        echo "lab.sh: could not put your set-aside work back;" \
            "it is still in 'git stash list' ($1)" >&2
        return 1
    fi
    ref=$(git stash list --format='%gd %H' | awk -v h="$1" '$2 == h { print $1; exit }')
    [ -n "$ref" ] && git_ stash drop -q "$ref"
    echo "Your set-aside work is back."
}

# ---- diff and reset ---------------------------------------------------------

# lab_edits: what changed since plant, as a diff against the planted tree
# (HEAD with the planted files as planted), then the files git does not
# track that are new. Read through an index of its own, which has no
# skip-worktree marks.
lab_edits() {
    idx=$scratch/index
    GIT_INDEX_FILE=$idx git read-tree HEAD || return 1
    sed -n 's/^file=//p' "$state" | while read -r blob f; do
        GIT_INDEX_FILE=$idx git update-index --cacheinfo "100644,$blob,$f"
    done
    GIT_INDEX_FILE=$idx git diff
    git ls-files --others --exclude-standard | sed 's/^/new file, not tracked: /'
}

cmd_diff() {
    if [ -n "$kit_lab" ]; then
        git diff HEAD
        git ls-files --others --exclude-standard | sed 's/^/new file, not tracked: /'
        return 0
    fi
    [ -f "$state" ] || { echo "No lab is planted: git diff shows your edits."; return 0; }
    lab_edits
}

# keep_edits FILE WHAT: the diff on stdin kept in FILE, and WHAT FILE said;
# FILE removed when the diff is empty.
keep_edits() {
    cat >"$1"
    if [ -s "$1" ]; then echo "$2 $1"; else rm -f "$1"; fi
}

# In a lab's kit: your edits saved as a diff, then the kit as you cloned it.
kit_reset() {
    git diff HEAD | keep_edits "$gitdir/ladder-lab-$kit_lab.diff" "Your edits are saved in"
    git_ reset -q --hard HEAD || exit 1
    echo "Lab $kit_lab's kit is as you cloned it (your commits, if any, stay)."
}

cmd_reset() {
    [ -z "$kit_lab" ] || { kit_reset; return; }
    [ -f "$state" ] || { echo "No lab is planted; nothing to reset."; return 0; }
    code=$(planted code)
    lab_edits 2>/dev/null |
        keep_edits "$gitdir/ladder-lab-$code.diff" "Your edits made during the lab are saved in"
    [ "$(git rev-parse HEAD)" = "$(planted head)" ] ||
        echo "(Your branch has moved since the lab was planted; its commits stay.)"
    undo_plant || exit 1
    branch=$(git symbolic-ref -q --short HEAD | sed 's/^/ (/; s/$/)/')
    echo "Lab $code is taken out; your tree is as your branch has it$branch."
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
        cmake -S "$root" -B "$bld" -DCMAKE_BUILD_TYPE=Debug -DLADDER_SANITIZE=address \
            >"$gitdir/ladder-lab-cmake.log" 2>&1 || {
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
    code=${1:-$(planted code)}
    [ -n "$code" ] || code=$kit_lab
    [ -n "$code" ] || die "no lab is planted; name one: lab.sh check CODE"
    need_lab_code "$code"
    # Before any build: a lab this system cannot check says so, and why.
    lab_ready "$code" || not_here "lab $code: $LAB_WHY"
    tests=$(lab_tests "$code")
    rungs=$(for t in $tests; do echo "${t%%:*}"; done | sort -u | tr '\n' ' ')
    # shellcheck disable=SC2086 # a list of targets
    build_for $rungs
    # shellcheck disable=SC2086 # joins the words with |
    regex="^($(echo $tests | tr ' ' '|'))\$"
    echo "== ctest -R '$regex' =="
    out=$gitdir/ladder-lab-ctest.log
    # -V keeps every test's lines in the log: a check a test could not make
    # here says "skip", and a green that rests on one is no green. -FA: not
    # ctest's "build" test, which would build the whole tree (loadgen, the
    # shim, the reporter's tests) when build_for has just built what these
    # tests run.
    (cd "$root/build/dev" && ctest -j "${LAB_JOBS:-2}" -V -FA '^ladder-build$' -R "$regex") \
        >"$out" 2>&1
    rc=$?
    sed -n '/^ *[0-9]*\/[0-9]* Test *#/p; /tests passed, /p' "$out"
    n=$(echo "$tests" | wc -w | tr -d ' ')
    # Count only ours (-FA leaves out the "build" test every test requires).
    ran=$(sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .*/\1/p' "$out" | grep -Ec "$regex")
    if [ "$ran" -ne "$n" ]; then
        cat "$out"
        die "ctest did not run the $n tests (see above)"
    fi
    skips=$(sed -n 's/^[0-9]*: *skip\(ped:\)\{0,1\} *//p' "$out" | sort -u)
    if [ $rc -eq 0 ] && [ -n "$skips" ]; then
        echo "The tests pass, but some of their checks cannot be made on this system, and"
        echo "any of them may be the one that catches lab $code:"
        printf '%s\n' "$skips" | sed 's/^/  /'
        not_here "lab $code: its tests pass, but the checks above are skipped on this" \
            "system's path ($(lab_platform_name "$LAB_PLATFORM")), so this is no GREEN"
    fi
    if [ $rc -eq 0 ]; then
        echo "GREEN: every test that catches lab $code passes against the code as it is now."
        return 0
    fi
    echo "RED: the tests above fail against the code as it is now; each one printed what it saw:"
    echo "  less $out"
    return 1
}

# ---- reveal, list, status ---------------------------------------------------

# The facilitator's step, once a pair has a fix (or for the wrap-up): the
# answer from bugs/ANSWERS.md and the planted edits. It asks for
# --facilitator so that no student meets the answer by trying the commands
# of the usage; it is a gate against accidents, not a lock.
cmd_reveal() {
    [ $kit = no ] || die "the answers are not in the kit: ask the facilitator"
    if [ "${1:-}" != --facilitator ]; then
        echo "The answer is the facilitator's to give: ask them once your fix is green." >&2
        exit 2
    fi
    code=${2:-$(planted code)}
    [ -n "$code" ] || die "name the lab: lab.sh reveal --facilitator CODE"
    need_lab_code "$code"
    awk -v head="### \`$code\` " 'index($0, head) == 1 { on = 1; print; next }
        on && /^### / { exit } on { print }' "$bugs/ANSWERS.md"
    echo
    reveal_change "$code"
}

# reveal_change CODE: the patch its edits make of HEAD's files, or the edits
# themselves where they find no place there (a solution in the way).
reveal_change() {
    head_tree=$scratch/head
    lab_edits_files "$(edits_of "$1")" | while IFS= read -r f; do
        mkdir -p "$head_tree/$(dirname "$f")" &&
            { git show "HEAD:$f" >"$head_tree/$f" 2>/dev/null || rm -f "$head_tree/$f"; }
    done
    if lab_patch "$(edits_of "$1")" "$head_tree" >"$scratch/reveal.patch" 2>/dev/null; then
        echo "The planted change (docs/workshop/bugs/$1.edits, as a patch of HEAD):"
        sed -n '/^diff --git /,$p' "$scratch/reveal.patch"
    else
        echo "The planted change (docs/workshop/bugs/$1.edits, decoded):"
        lab_edits_plain "$(edits_of "$1")" | sed -n '/^@@ /,$p'
    fi
}

# The codes in their order, each with its rung and whether this system can
# check it (and why not); --markdown: the per-platform table the lab sheet,
# the guide and the handout carry (class:lab-platforms compares them).
cmd_list() {
    if [ "${1:-}" = --markdown ]; then list_markdown; return; fi
    for n in $(lab_codes); do
        if lab_ready "$n"; then
            printf '  %-5s %s\n' "$n" "$(lab_rung "$n")"
        else
            printf '  %-5s %-13s not on this system: %s\n' "$n" "$(lab_rung "$n")" "$LAB_WHY"
        fi
    done
    [ -z "$kit_lab" ] || echo "This kit is lab $kit_lab's: 'scripts/lab.sh check' tests for it."
}


# offered_on P: the codes P can check, on one line.
offered_on() {
    for n in $(lab_codes); do lab_offered "$n" "$1" && printf '%s ' "$n"; done | sed 's/ $//'
}

list_markdown() {
    echo "| system | labs it can check | suggested for a class | not there, and why |"
    echo "|---|---|---|---|"
    for p in linux macos freebsd; do
        why=$(for n in $(lab_codes); do
            lab_offered "$n" "$p" || printf '%s\t%s\n' "$n" "$LAB_WHY"
        done | awk -F'\t' '{ if (!($2 in seen)) { order[++k] = $2; seen[$2] = $1 }
                                 else seen[$2] = seen[$2] " " $1 }
                           END { for (i = 1; i <= k; i++) {
                                     printf "%s%s (%s)", (i > 1 ? "; " : ""),
                                         seen[order[i]], order[i] }
                           }')
        printf '| %s | %s | %s | %s |\n' "$(lab_platform_name "$p")" "$(offered_on "$p")" \
            "$(lab_suggested "$p")" "${why:-none}"
    done
}

cmd_status() {
    if [ -n "$kit_lab" ]; then
        echo "This kit is lab $kit_lab's; 'scripts/lab.sh diff' shows your edits since the clone."
    elif [ ! -f "$state" ]; then
        echo "No lab is planted."
    else
        echo "Lab $(planted code) is planted (on $(git rev-parse --short "$(planted head)"));" \
            "'lab.sh diff' shows your edits since."
        [ -z "$(planted stash)" ] ||
            echo "  Your work is set aside in git stash ($(planted stash))."
    fi
}

# ---- kit ----------------------------------------------------------------------

# kit_tree DIR: HEAD's tracked files in DIR (a new git repository), less
# what kit-omits.txt names and the documents' facilitator blocks.
kit_tree() {
    { mkdir -p "$1" && git -C "$1" init -q; } || die "cannot make $1"
    git archive --format=tar HEAD | tar -C "$1" -xf - || die "git archive failed"
    sed 's/#.*//; /^[[:space:]]*$/d' "$root/docs/workshop/kit-omits.txt" |
        while read -r path; do
            # shellcheck disable=SC2086 # a path or a pattern
            rm -rf "${1:?}"/$path
        done
    git -C "$1" ls-files --others -- '*.md' | while IFS= read -r f; do
        grep -q '^<!-- facilitator -->' "$1/$f" || continue
        awk '/^<!-- facilitator -->/ { off = 1 } !off { print }
             /^<!-- \/facilitator -->/ { off = 0 }' "$1/$f" >"$1/$f.kit" && mv "$1/$f.kit" "$1/$f"
    done
}

# kit_commit WORK BARE MESSAGE: WORK's files as one root commit, cloned bare
# into BARE with only the objects that commit holds, every file of it
# written at once; WORK removed.
kit_commit() {
    (
        cd "$1" || exit 1
        date=$(git -C "$root" log -1 --format=%cI HEAD)
        export GIT_AUTHOR_DATE="$date" GIT_COMMITTER_DATE="$date"
        git add -A && git -c user.name="I/O ladder" -c user.email="kit@localhost" commit -q -m "$3"
    ) || die "could not commit the kit in $1"
    git clone -q --bare --no-local "$1" "$2" || die "could not clone $1 into $2"
    git -C "$2" remote remove origin 2>/dev/null
    git -C "$2" gc -q --prune=now
    rm -rf "$1"
}

cmd_kit() {
    dir=$1
    [ $kit = no ] || die "this is a student kit: make kits from the facilitator's repository"
    [ ! -e "$dir" ] || [ -z "$(ls -A "$dir" 2>/dev/null)" ] || die "$dir exists and is not empty"
    mkdir -p "$dir" || die "cannot make $dir"
    dir=$(cd "$dir" && pwd) || die "cannot make $dir"
    work=$dir/.work
    scratch_dir
    head=$(git rev-parse --short HEAD)
    dirty && echo "(Uncommitted changes here are not in the kits: they are made from HEAD, $head.)"
    kit_tree "$work"
    kit_commit "$work" "$dir/io-ladder.git" "The I/O ladder: the class kit"
    echo "class kit: $dir/io-ladder.git"
    for n in $(lab_codes); do
        kit_tree "$work"
        lab_edits_apply "$(edits_of "$n")" "$work" || die "lab $n does not apply to HEAD"
        echo "$n" >"$work/.ladder-lab"
        kit_commit "$work" "$dir/$n.git" "The I/O ladder: the kit of lab $n"
    done
    echo "lab kits: $dir/L*.git ($(lab_codes | wc -l | tr -d ' '), from $head)"
    echo "A pair clones the class kit, then its lab's: git clone $dir/L1.git io-ladder-L1"
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
    # Started, awaited and stopped as the walls do it (scripts/lib/ladder.sh).
    trap 'server_end 5; rm -rf "$tmp"' EXIT
    trap 'exit 130' INT TERM
    server_start "$tmp" "$root/$rung/server-release" "" ||
        die "the server did not start: $SERVER_ERR"
    pid=$SERVER_PID
    echo "$rung/server-release: $(cat "$tmp/server.out") (pid $pid), nobody connected;" \
        "measuring 3 s..."
    sleep 3
    # ps's %cpu: CPU time over the process's life (Linux) or a short decaying
    # average (macOS, BSD); over a 3-second life both read the same.
    cpu=$(ps -o %cpu= -p "$pid" | tr -d ' ')
    echo "  CPU: ${cpu:-?} % of one core (ps -o %cpu), with nobody connected"
    server_end 5
    echo "  server stopped."
}

case ${1:-} in plant | diff | reset | reveal | kit) scratch_dir ;; esac
case ${1:-} in
idle-cpu) [ $# -le 2 ] || die "usage: lab.sh idle-cpu [RUNG]"; cmd_idle_cpu "${2:-}" ;;
plant) [ $# -eq 2 ] || die "usage: lab.sh plant CODE (lab.sh list)"; cmd_plant "$2" ;;
check) [ $# -le 2 ] || die "usage: lab.sh check [CODE]"; cmd_check "${2:-}" ;;
diff) cmd_diff ;;
reveal)
    [ $# -le 3 ] || die "usage: lab.sh reveal --facilitator [CODE]"
    cmd_reveal "${2:-}" "${3:-}"
    ;;
reset) cmd_reset ;;
list) [ $# -le 2 ] || die "usage: lab.sh list [--markdown]"; cmd_list "${2:-}" ;;
kit) [ $# -eq 2 ] || die "usage: lab.sh kit DIR"; cmd_kit "$2" ;;
status) cmd_status ;;
-h | --help | help) usage ;;
*) usage >&2; exit 2 ;;
esac
