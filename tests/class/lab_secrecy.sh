#!/bin/sh
# lab_secrecy.sh: what students clone keeps the answers. A student is played
# on the kits as students get them: `scripts/lab.sh kit DIR` on a scratch
# copy of this tree, then `git clone DIR/CODE.git` (and the class kit,
# DIR/io-ladder.git). The student knows the lab's code and the lab sheet
# (rung, tests, symptom); every look below is tried on every kit:
#   git: show, show --stat, log -p --all, log -g, reflog, diff, diff --cached,
#     diff HEAD, status --ignored, stash list, stash show -p, ls-files -v,
#     ls-files --debug, branch -a, tag, for-each-ref, fsck --unreachable
#     --dangling --lost-found, count-objects -v, rev-list --all, cat-file
#     --batch-all-objects (every object's content), update-index
#     --no-skip-worktree / --really-refresh then diff, HEAD~1, notes;
#   files: every file of the clone, .git included (grep -r), ls -t, -tr, -tc
#     over the tracked files, the files beside the tracked ones;
#   lab.sh: list, status, diff, reveal, plant.
# A look gives the answer away when what it prints holds: a line of code the
# bug replaced (it is in no file of the kit, so only a diff or an old object
# can show it), a hunk header of the patch the bug's edits make, any line of
# any lab's patch rot13-encoded or an encoded edit's header ("@@ rqvg"), a lab's code beside
# its bug's name (bugs/ANSWERS.md), a facilitator block; or, for file times,
# when the planted file is the newest or the oldest. The kits must also hold
# nothing of kit-omits.txt, no file but the planted ones (and .ladder-lab)
# may differ between a lab's kit and the class kit, and the bug must be in
# the lab's kit all the same.
#
# The same looks must find the answer in a clone of this repository with
# lab L1 planted by `lab.sh plant` (the labs before the kits): if they
# cannot, they test nothing, and this test fails. `lab_secrecy.sh --clone`
# plays the student on such clones for every lab (and fails, as it should).
# No server is started and nothing is built.
# shellcheck disable=SC2015 # ok() always succeeds, so "test && ok || fail" is if-then-else
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lab-secrecy.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
mode=kits
[ "${1:-}" = --clone ] && mode=clone
failures=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
g() { git -c user.name=student -c user.email=student@localhost "$@"; }

# The facilitator's repository: the tracked files as they are now, one commit.
fac=$tmp/facilitator
mkdir -p "$fac"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$src" && git ls-files -z | xargs -0 tar -cf -) | tar -C "$fac" -xf - || exit 2
else
    (cd "$src" && tar --exclude=./build --exclude=./results -cf - .) | tar -C "$fac" -xf - || exit 2
fi
(cd "$fac" && g init -q && g add -A && g commit -qm "the facilitator's tree") || exit 2
LAB_ROOT=$fac
. "$fac/scripts/lib/labpatch.sh"
codes=$(awk '$1 == "lab" { print $2 }' "$fac/docs/workshop/bugs/labs.txt")
[ -n "$codes" ] || { echo "FAIL no lab in docs/workshop/bugs/labs.txt"; exit 1; }

# ---- what would give each lab away -------------------------------------------------

# The facilitator's secrets, per lab, in $tmp/secret/CODE.*: .patch (its edits'
# patch),
# .files (the files it changes), .hunks (its hunk headers), .old (the lines it
# removes, as text), .rot (every diff line of it rot13-encoded, as text), .name.
mkdir -p "$tmp/secret"
texts() { sed 's/^[-+]//; s/^[[:space:]]*//; s/[[:space:]]*$//' | awk 'length($0) >= 12'; }
for c in $codes; do
    s=$tmp/secret/$c
    lab_patch "$fac/docs/workshop/bugs/$c.edits" "$fac" >"$s.patch" ||
        fail "$c: its edits find no place"
    sed -n 's|^+++ b/||p' "$s.patch" >"$s.files"
    grep '^@@ ' "$s.patch" | sed 's/ @@.*/ @@/' >"$s.hunks"
    awk '/^diff --git /{ body = 1 } body && /^-/ && !/^--- /' "$s.patch" | texts | sort -u >"$s.old"
    awk '/^diff --git /{ body = 1 } body && /^[-+]/ && !/^(\+\+\+|---) /' "$s.patch" | texts |
        LC_ALL=C tr "$LAB_ROT13_PLAIN" "$LAB_ROT13_CODED" | sort -u >"$s.rot"
    awk -v code="\`$c\`" '/^### / && $2 == code { print $3; exit }' \
        "$fac/docs/workshop/bugs/ANSWERS.md" >"$s.name"
    [ -s "$s.name" ] && [ -s "$s.files" ] || fail "$c: no patch or no entry in bugs/ANSWERS.md"
done
cat "$tmp"/secret/*.rot | sort -u >"$tmp/all.rot"
cat "$tmp"/secret/*.name >"$tmp/names"
printf '%s\n' 'qvss --tvg n/' '@@ rqvg ' '@@ qryrgr ' >>"$tmp/all.rot"

# gone CLONE CODE: the removed lines of CODE that no tracked file of CLONE
# holds (its own lines, when the lab is planted there; none for another lab).
# The tracked files' lines (every file is text) are gathered once per clone,
# after its looks, in CLONE.lines; each removed line is looked up there: the
# answer of a grep over every file for each line, without reading the tree
# again for each line and each lab.
gone() {
    : >"$tmp/gone"
    [ -f "$1.lines" ] ||
        (cd "$1" && git ls-files -z | xargs -0 grep -a -h '' 2>/dev/null) >"$1.lines"
    while IFS= read -r line; do
        grep -qF -- "$line" "$1.lines" || printf '%s\n' "$line" >>"$tmp/gone"
    done <"$tmp/secret/$2.old"
}

# reveals FILE CODE: why FILE gives the answer away, or nothing.
reveals() {
    f=$1 s=$tmp/secret/$2
    grep() { command grep -a "$@"; }
    if [ -s "$tmp/gone" ] && grep -qF -f "$tmp/gone" "$f"; then
        echo "a line the bug replaced: $(grep -F -f "$tmp/gone" "$f" | head -1)"
    elif grep -qF -f "$s.hunks" "$f"; then
        echo "the bug's hunk header: $(grep -F -f "$s.hunks" "$f" | head -1)"
    else
        # The rest depends on FILE alone, not on the lab: it is worked out
        # once per look (FILE.any), not once for each lab the look is judged
        # for (the class kit's looks are judged for every lab).
        [ -f "$f.any" ] || any_lab "$f" >"$f.any"
        cat "$f.any"
    fi
}

# any_lab FILE: why FILE gives some lab away, whichever lab it is judged
# for: a rot13-encoded patch line, a facilitator block, a lab's code beside
# its name; or nothing.
any_lab() {
    if grep -qF -f "$tmp/all.rot" "$1"; then
        echo "a patch line, rot13-encoded: $(grep -F -f "$tmp/all.rot" "$1" | head -1)"
    elif grep -q '^<!-- facilitator -->' "$1"; then
        echo "a facilitator block"
    else
        named "$1"
    fi
}

# named FILE: the first lab (in labs.txt's order) whose code shows as a word
# on a line where its name shows as a word, in any case (grep -w, grep -iw),
# with the first such line. grep keeps the lines that hold a name at all;
# awk pairs them with the codes, in one pass for every lab.
# (The codes go to awk on one line: BWK awk takes no newline in a -v value.)
named() {
    # shellcheck disable=SC2086 # the codes, as words
    command grep -a -iw -f "$tmp/names" "$1" |
        awk -v codes="$(printf '%s ' $codes)" -v dir="$tmp/secret" '
        # word(S, W): W occurs in S with no letter, digit or _ on either side.
        function word(s, w,    at, i, before, after) {
            at = 0
            while ((i = index(substr(s, at + 1), w)) > 0) {
                at += i
                before = at > 1 ? substr(s, at - 1, 1) : ""
                after = substr(s, at + length(w), 1)
                if (before !~ /[A-Za-z0-9_]/ && after !~ /[A-Za-z0-9_]/) return 1
            }
            return 0
        }
        BEGIN {
            n = split(codes, code, " ")
            for (i = 1; i <= n; i++) {
                f = dir "/" code[i] ".name"
                getline name[i] < f
                low[i] = tolower(name[i])
            }
        }
        {
            line = tolower($0)
            for (i = 1; i <= n; i++)
                if (!(i in hit) && word(line, low[i]) && word($0, code[i])) hit[i] = $0
        }
        END {
            for (i = 1; i <= n; i++)
                if (i in hit) {
                    printf "lab %s beside its name \047%s\047: %s\n", code[i], name[i], hit[i]
                    exit
                }
        }'
}

# ---- the student's looks -------------------------------------------------------------

# look WHAT: the output on stdin is look N's (N.out), WHAT it is (N.what).
# (It runs in a pipeline's subshell: N is counted from the files.)
look() {
    _n=$(($(cat "$tmp/look/count" 2>/dev/null || echo 0) + 1))
    echo "$_n" >"$tmp/look/count"
    echo "$1" >"$tmp/look/$_n.what"
    cat >"$tmp/look/$_n.out"
}

# looks CLONE CODE: every look in CLONE (a student's clone; CODE its lab, or
# "" for the class kit), each one's output in $tmp/look/N.out, named in N.what.
looks() {
    rm -rf "$tmp/look"; mkdir -p "$tmp/look"
    (
        cd "$1" || exit 1
        # File times first, before any look reads a file.
        # shellcheck disable=SC2046 # the tracked files, none with a space
        for o in -t -tr -tc; do ls $o $(git ls-files) | head -1 | look "ls $o (first)"; done
        for c in 'show' 'show --stat' 'log -p --all' 'log -g -p' 'reflog' 'diff' 'diff --cached' \
            'diff HEAD' 'status --ignored' 'stash list' 'stash show -p' 'ls-files -v' \
            'ls-files --debug' 'branch -a' 'tag' 'for-each-ref' 'notes list' 'count-objects -v' \
            'fsck --full --unreachable --dangling --lost-found --no-reflogs' \
            'rev-list --all --objects' 'show HEAD~1' 'log -p --all --reflog'; do
            # shellcheck disable=SC2086 # the command's words
            git --no-pager $c 2>&1 | look "git $c"
        done
        git cat-file --batch-all-objects --batch 2>&1 | look "git cat-file --batch-all-objects"
        for f in .git/lost-found/*/*; do [ -f "$f" ] && cat "$f"; done 2>/dev/null |
            look "git fsck --lost-found's files"
        git ls-files -z | xargs -0 git update-index --no-skip-worktree
        git ls-files -z | xargs -0 git update-index --no-assume-unchanged
        git update-index -q --really-refresh
        { git --no-pager diff; git --no-pager diff --stat; } 2>&1 |
            look "git update-index --no-skip-worktree, then git diff"
        grep -r -a -I . . 2>/dev/null | look "grep -r over every file, .git included"
        for f in $(sed 1d .git/packed-refs 2>/dev/null | awk '{ print $1 }'); do
            git --no-pager show "$f" 2>&1
        done | look "git show of every packed ref"
        find . -path ./.git -prune -o -type f -print | sed 's|^\./||' | sort >"$tmp/files.all"
        git ls-files | sort | comm -13 - "$tmp/files.all" | look "files git does not track"
        sh scripts/lab.sh list 2>&1 | look "lab.sh list"
        sh scripts/lab.sh status 2>&1 | look "lab.sh status"
        sh scripts/lab.sh diff 2>&1 | look "lab.sh diff"
        sh scripts/lab.sh reveal --facilitator "${2:-L1}" 2>&1 | look "lab.sh reveal --facilitator"
        sh scripts/lab.sh plant "${2:-L1}" 2>&1 | look "lab.sh plant"
        sh scripts/lab.sh reset >/dev/null 2>&1
    )
}

# student CLONE CODE: play the student on CLONE; fail for every look that
# gives lab CODE (or, on the class kit, any lab) away. Prints how many did.
student() {
    found=0
    looks "$1" "$2"
    # The looks that can give a lab away at all, found with one grep over
    # them all for each kind of answer; reveals judges only those, line by
    # line (the others it would clear, each after five greps). Lab by lab:
    # the lines the lab replaced and its hunk headers.
    { grep -a -l '^<!-- facilitator -->' "$tmp"/look/*.out
        grep -a -l -iw -f "$tmp/names" "$tmp"/look/*.out; } >"$tmp/suspects.any" 2>/dev/null
    for c in ${2:-$codes}; do
        gone "$1" "$c"
        cat "$tmp/gone" "$tmp/secret/$c.hunks" "$tmp/all.rot" >"$tmp/fixed"
        { cat "$tmp/suspects.any"
            grep -a -l -F -f "$tmp/fixed" "$tmp"/look/*.out; } >"$tmp/suspects" 2>/dev/null
        for w in "$tmp"/look/*.what; do
            [ -f "$w" ] || continue
            n=${w%.what}
            IFS= read -r what <"$w"
            case $what in
            "ls -"*)
                planted=$(head -1 "$n.out")
                if grep -qxF -- "$planted" "$tmp/secret/$c.files" 2>/dev/null && [ -n "$2" ]; then
                    why="the planted file comes first: $planted"
                else why=""; fi ;;
            "git ls-files -v")
                why=$(grep -v '^H ' "$n.out" | head -1 | sed 's/^/a file marked: /') ;;
            "git fsck"*)
                why=$(grep -E 'unreachable|dangling' "$n.out" | head -1 |
                    sed 's/^/an object no commit holds: /') ;;
            *) why=""
                if grep -qxF -- "$n.out" "$tmp/suspects"; then why=$(reveals "$n.out" "$c"); fi ;;
            esac
            [ -z "$why" ] && continue
            found=$((found + 1))
            fail "${2:-class kit}: $what shows $why"
        done
    done
    return $found
}

# ---- the control: a clone of this repository, lab L1 planted -----------------------

echo "== the control: a clone of the facilitator's repository, lab L1 planted by lab.sh plant"
control() { # CODE: clone, plant
    rm -rf "$tmp/control" "$tmp/control.lines"
    git clone -q "$fac" "$tmp/control" && (cd "$tmp/control" && sh scripts/lab.sh plant "$1") \
        >/dev/null 2>&1 || { fail "control: plant $1 in a clone"; return 1; }
}
if [ $mode = clone ]; then
    for c in $codes; do control "$c" && student "$tmp/control" "$c"; done
    echo
    echo "lab secrecy (--clone): $failures look(s) give a lab away"
    [ $failures -eq 0 ]
    exit
fi
control L1
before=$failures
student "$tmp/control" L1 >"$tmp/control.log"
found=$?
failures=$before
if [ $found -ge 5 ]; then
    ok "the looks find lab L1 in a clone with plant in $found ways:"
    sed -n 's/^FAIL /       /p' "$tmp/control.log"
else
    cat "$tmp/control.log"
    fail "the looks find lab L1 in a planted clone of the repository in $found ways only"
fi

# ---- the kits ------------------------------------------------------------------------

echo
echo "== the kits: scripts/lab.sh kit DIR, then git clone as a student does"
if ! (cd "$fac" && sh scripts/lab.sh kit "$tmp/kits") >"$tmp/kit.log" 2>&1; then
    cat "$tmp/kit.log"; fail "lab.sh kit"; exit 1
fi
git clone -q "$tmp/kits/io-ladder.git" "$tmp/class" || { fail "clone the class kit"; exit 1; }

# Nothing of kit-omits.txt, in any kit.
omitted=$(sed 's/#.*//; /^[[:space:]]*$/d' "$fac/docs/workshop/kit-omits.txt")
for p in $omitted docs/workshop/bugs/ANSWERS.md docs/workshop/README.md; do
    # shellcheck disable=SC2086 # a pattern
    left=$(cd "$tmp/class" && ls -d $p 2>/dev/null)
    [ -z "$left" ] || fail "the class kit holds $left"
done
for f in docs/workshop/student.md docs/workshop/bugs/README.md docs/workshop/bugs/labs.txt \
    scripts/lab.sh 05-poll/main.c tests/echo_tests.c; do
    [ -f "$tmp/class/$f" ] || fail "the class kit has no $f"
done
student "$tmp/class" "" && ok "class kit: no look gives any lab away"

for c in $codes; do
    k=$tmp/lab-$c
    git clone -q "$tmp/kits/$c.git" "$k" || { fail "$c: clone its kit"; continue; }
    [ "$(cat "$k/.ladder-lab" 2>/dev/null)" = "$c" ] || fail "$c: its kit's .ladder-lab is not $c"
    differ=$(diff -rq -x .git "$tmp/class" "$k" 2>&1 | sed "s|$tmp/||g" |
        grep -v "^Only in lab-$c: .ladder-lab$" | while read -r line; do
        printf '%s\n' "$line" | grep -qF -f "$tmp/secret/$c.files" || printf '%s; ' "$line"; done)
    [ -z "$differ" ] || fail "$c: its kit differs from the class kit beyond the lab: $differ"
    student "$k" "$c" && ok "$c: no look gives it away"
    (cd "$k" && git apply -R --check "$tmp/secret/$c.patch" 2>/dev/null) &&
        ok "$c: the bug is in its kit" || fail "$c: the bug is not in its kit"
done

echo
if [ $failures -eq 0 ]; then echo "lab secrecy: passed"; exit 0; fi
echo "lab secrecy: $failures failed"
exit 1
