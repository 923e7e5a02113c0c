#!/bin/sh
# lab_rehearsal.sh: the facilitator's rehearsal of the labs in this
# repository (lab.sh plant, not a kit): a planted lab stays out of the way of
# the everyday git commands, and reset gives the tree back. (It is out of the
# way, not secret: students get kits, which tests/class/lab_secrecy.sh plays.)
#
# On a scratch clone (the tracked files as one commit, with a student's
# uncommitted edit, so that plant sets work aside), for every lab that
# `scripts/lab.sh list` names:
#   1. the git commands a curious student tries are run before and after
#      `lab.sh plant CODE` (git show, git log -p, git diff, git diff --cached,
#      git stash show -p, git status, git reflog, git branch -a,
#      git log --all -p). No line that planting adds to their output may be
#      one of the bug's diff lines, hold the text of one, or name the bug
#      (its name in the facilitator's key, bugs/ANSWERS.md); nor may plant's
#      own output. The bug must be in the working tree all the same.
#   2. `lab.sh reset`: only the student's edit is left, git reads every file
#      again, no stash is left, and the lab's patch applies to the tree as it
#      did before plant (or not, as before: L16 over the solution).
# Then: a fix is shown by `lab.sh diff` and saved by reset; `lab.sh reveal`
# without --facilitator prints no answer; and L16 planted over a committed
# edge-triggered solution is just as hidden and leaves the commit in place.
# No server is started and nothing is built.
# shellcheck disable=SC2015 # ok() always succeeds, so "test && ok || fail" is if-then-else
set -u
. "$(dirname "$0")/clone.sh"
class_clone lab-rehearsal
LAB_ROOT=$(pwd)
. scripts/lib/labpatch.sh
EDIT=05-poll/README.md

# The commands, one per line; each one's output (stderr too) goes to
# $1/N.out.
COMMANDS='show
log -p
diff
diff --cached
stash show -p
status
reflog
branch -a
log --all -p'
snapshot() {
    mkdir -p "$1"
    i=0
    echo "$COMMANDS" | while IFS= read -r c; do
        i=$((i + 1))
        # shellcheck disable=SC2086 # the command's words
        git --no-pager $c >"$1/$i.out" 2>&1
        echo "git $c" >"$1/$i.cmd"
    done
}

# The bug's diff lines of a decoded patch, with their sign ("-    foo();"),
# and their text alone when long enough to be telling (>= 12 characters).
bug_lines() {
    awk '/^diff --git /{ body = 1 } body && /^[-+]/ && !/^(\+\+\+|---) / { print }' "$1"
}
bug_texts() {
    bug_lines "$1" | sed 's/^[-+][[:space:]]*//; s/[[:space:]]*$//' | awk 'length($0) >= 12'
}

# shows WHAT FILE PATCH NAME: fail if FILE holds a diff line of PATCH, the
# text of one, or NAME.
shows() {
    what=$1 file=$2 patch=$3 name=$4 bad=""
    bug_lines "$patch" >"$tmp/lines"
    bug_texts "$patch" >"$tmp/texts"
    if grep -qxF -f "$tmp/lines" "$file"; then
        bad="a diff line: $(grep -xF -f "$tmp/lines" "$file" | head -1)"
    elif [ -s "$tmp/texts" ] && grep -qF -f "$tmp/texts" "$file"; then
        bad="the text of a diff line: $(grep -F -f "$tmp/texts" "$file" | head -1)"
    elif grep -qiw -- "$name" "$file"; then
        bad="the name '$name': $(grep -iw -- "$name" "$file" | head -1)"
    fi
    [ -z "$bad" ] || { fail "$what shows $bad"; return 1; }
}

# new_lines BEFORE AFTER: the lines of AFTER that BEFORE does not hold.
new_lines() { sort -u "$1" >"$tmp/b"; sort -u "$2" | comm -13 "$tmp/b" -; }

name_of() {
    awk -v code="\`$1\`" '/^### / && $2 == code { print $3; exit }' docs/workshop/bugs/ANSWERS.md
}

# check_lab CODE: plant it over the student's edit, look, reset, look.
check_lab() {
    code=$1
    name=$(name_of "$code")
    [ -n "$name" ] || { fail "$code: not in docs/workshop/bugs/ANSWERS.md"; return; }
    # The patch its edits make of the tree as cloned (kept for the later
    # checks, made over a committed solution).
    patch=$tmp/$code.patch
    [ -s "$patch" ] || lab_patch "docs/workshop/bugs/$code.edits" . >"$patch" ||
        fail "$code: its edits find no place"
    applied=no
    git apply --check "$patch" 2>/dev/null && applied=yes
    echo "/* the student's note */" >>"$EDIT"
    rm -rf "$tmp/before" "$tmp/after"
    snapshot "$tmp/before"
    if ! sh scripts/lab.sh plant "$code" >"$tmp/plant.log" 2>&1; then
        cat "$tmp/plant.log"; fail "$code: plant failed"; git checkout -q -- "$EDIT"; return
    fi
    seen=0
    shows "$code: plant's output" "$tmp/plant.log" "$patch" "$name" || seen=1
    snapshot "$tmp/after"
    for cmd in "$tmp"/after/*.cmd; do
        n=$(basename "$cmd" .cmd)
        new_lines "$tmp/before/$n.out" "$tmp/after/$n.out" >"$tmp/new"
        shows "$code: $(cat "$cmd")" "$tmp/new" "$patch" "$name" || seen=1
    done
    [ $seen -eq 0 ] && ok "$code: plant's output and $(echo "$COMMANDS" | wc -l | tr -d ' ')" \
        "git commands show nothing of it"
    git apply -R --check "$patch" 2>/dev/null && ok "$code: the bug is in the working tree" ||
        fail "$code: the bug is not in the working tree"
    if ! sh scripts/lab.sh reset >"$tmp/reset.log" 2>&1; then
        cat "$tmp/reset.log"; fail "$code: reset failed"
    fi
    after=$(git status --porcelain | tr '\n' ' ')
    [ "$after" = " M $EDIT " ] && ok "$code: reset leaves only the student's edit" ||
        fail "$code: after reset: $after"
    [ -z "$(git ls-files -v | grep -v '^H ')" ] ||
        fail "$code: reset left files marked: $(git ls-files -v | grep -v '^H ')"
    now=no
    git apply --check "$patch" 2>/dev/null && now=yes
    [ $now = $applied ] ||
        fail "$code: the lab's patch applied to the tree before plant: $applied, after reset: $now"
    [ -z "$(git stash list)" ] || fail "$code: reset left a stash: $(git stash list)"
    git checkout -q -- "$EDIT"
}

codes=$(sh scripts/lab.sh list | awk '{ print $1 }')
[ "$(echo "$codes" | wc -w)" -eq "$(ls docs/workshop/bugs/*.edits | wc -l)" ] ||
    fail "lab.sh list does not name every lab: $(echo $codes)"
for code in $codes; do check_lab "$code"; done

echo
echo "== a fix: lab.sh diff shows it, reset saves it"
lab_patch docs/workshop/bugs/L1.edits . >"$tmp/L1.patch" || fail "L1's edits find no place"
sh scripts/lab.sh plant L1 >/dev/null 2>&1 || fail "plant L1"
git apply -R "$tmp/L1.patch" || fail "the fix (the patch reversed) does not apply"
[ -z "$(git diff)" ] || fail "git diff shows an edit of a planted file (expected: hidden)"
sh scripts/lab.sh diff >"$tmp/diff.log" 2>&1
grep -q '^diff --git a/05-poll/main.c' "$tmp/diff.log" && ok "lab.sh diff shows the fix" ||
    { cat "$tmp/diff.log"; fail "lab.sh diff does not show the fix"; }
sh scripts/lab.sh reset >"$tmp/reset.log" 2>&1
saved=$(sed -n 's/^Your edits made during the lab are saved in //p' "$tmp/reset.log")
[ -n "$saved" ] && [ -f "$saved" ] && grep -q '^diff --git a/05-poll/main.c' "$saved" &&
    ok "reset saved the fix in $saved" ||
    { cat "$tmp/reset.log"; fail "reset did not save the fix"; }
[ -z "$(git status --porcelain)" ] && ok "reset: the tree is clean" ||
    fail "after reset: $(git status --porcelain)"

echo
echo "== reveal is the facilitator's step"
sh scripts/lab.sh reveal L1 >"$tmp/reveal.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && ! grep -q "$(name_of L1)" "$tmp/reveal.log"; then
    ok "lab.sh reveal L1 refuses (exit $rc)"
else fail "lab.sh reveal L1 exited $rc: $(head -3 "$tmp/reveal.log")"; fi
sh scripts/lab.sh reveal --facilitator L1 >"$tmp/reveal.log" 2>&1
grep -q "^### \`L1\` $(name_of L1)" "$tmp/reveal.log" && grep -q '^diff --git ' "$tmp/reveal.log" &&
    ok "lab.sh reveal --facilitator L1 prints the answer and the diff" ||
    fail "reveal --facilitator L1"

echo
echo "== L16 over a committed edge-triggered solution"
git apply --index docs/workshop/solutions/edge-triggered.patch && g commit -qm "my exercise" ||
    fail "the edge-triggered solution does not apply"
sol=$(git rev-parse HEAD)
check_lab L16
grep -q 'taken out for the lab' "$tmp/plant.log" && ok "plant said it took the solution out" ||
    fail "plant did not say it took the solution out: $(cat "$tmp/plant.log")"
[ "$(git rev-parse HEAD)" = "$sol" ] && ok "the student's commit stays" || fail "HEAD moved"

echo
if [ $failures -eq 0 ]; then echo "lab rehearsal: passed"; exit 0; fi
echo "lab rehearsal: $failures failed"
exit 1
