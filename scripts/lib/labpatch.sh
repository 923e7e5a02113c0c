#!/bin/sh
# Sourced by scripts/lab.sh, scripts/check-workshop.sh and the class tests:
# how a break-it lab (docs/workshop/bugs/CODE.edits) or a workshop solution
# (docs/workshop/solutions/NAME.edits) is stored, and the patch it makes of
# a tree. Needs LAB_ROOT (the repository's top folder, for labedit.awk).
#
# An edits file is a plain description (its title; the Caught-by: line of a
# lab, the Changes: and Adds: lines of a solution, which
# tests/patches/tests.cmake reads), then its edits: each a header line and
# the lines of a diff hunk without line numbers (' ' a line kept, '-' one
# taken out, '+' one put in; empty lines between edits are left out):
#   @@ edit FILE NAME()     the ' ' and '-' lines, in order, found once in the
#                           definition of function NAME in FILE, become the
#                           ' ' and '+' lines
#   @@ edit FILE            the same, found once anywhere in FILE
#   @@ replace FILE NAME()  NAME's definition (signature to closing brace)
#                           becomes the '+' lines
#   @@ before FILE NAME()   the '+' lines go in above NAME and its comment
#   @@ after FILE NAME()    the '+' lines go in below NAME's closing brace
#   @@ delete FILE NAME()   NAME, its comment and the blank line after it go
#   @@ create FILE          a new file: the '+' lines
# An edit finds its place by a function's name and by its own lines, never
# by a line number or by the code around them: moving, adding or rewriting
# code that no edit names leaves every lab and solution applying
# (class:lab-refactor shows it). scripts/lib/labedit.awk makes the edits,
# all or none; one that does not find its place is named, with its file
# and function. A solution's NAME.patch beside it, which students and the
# guide `git apply`, is what lab_patch makes of the tree: written by
# scripts/check-workshop.sh --refresh, compared by its check.
#
# A lab's edits are stored rot13-encoded (a solution's are plain), so that a
# glance at the file, or at a `git log -p` that shows it, does not give the
# lab away. rot13 hides nothing from anyone who means to read it: it keeps
# the answer out of the way, not secret. The encoding starts at the first
# edit's header ("@@ edit" reads "@@ rqvg" encoded).
# POSIX sh: sed and tr with the letters spelled out (no locale's ranges).

LAB_ROT13_PLAIN=ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz
LAB_ROT13_CODED=NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm

# lab_edits_encoded FILE: its edits are rot13-encoded.
lab_edits_encoded() {
    case $(awk '/^@@ / { print $2; exit }' "$1") in
    rqvg | ercynpr | orsber | nsgre | qryrgr | perngr) return 0 ;;
    *) return 1 ;;
    esac
}

# lab_edits_recode FILE: the description as it is, the edits rot13'd (rot13
# is its own inverse: this decodes a lab's edits, and encodes plain ones).
lab_edits_recode() {
    sed -n '/^@@ /q; p' "$1"
    sed -n '/^@@ /,$p' "$1" | LC_ALL=C tr "$LAB_ROT13_PLAIN" "$LAB_ROT13_CODED"
}

# lab_edits_plain FILE: the edits as labedit.awk reads them.
lab_edits_plain() {
    if lab_edits_encoded "$1"; then lab_edits_recode "$1"; else cat "$1"; fi
}

# lab_edits_files FILE: the files its edits change, one a line.
lab_edits_files() { lab_edits_plain "$1" | awk '/^@@ / { print $3 }' | sort -u; }

# lab_edits_apply FILE TREE [NAME]: the edits made on TREE's files, all or
# none (NAME: FILE as the messages call it).
lab_edits_apply() {
    _la=$(mktemp -d "${TMPDIR:-/tmp}/lab-edits.XXXXXX") || return 1
    _lr=1
    if lab_edits_plain "$1" >"$_la/edits" && mkdir "$_la/out" &&
        awk -v root="$2" -v out="$_la/out" -v src="${3:-$1}" \
            -f "${LAB_ROOT:-.}/scripts/lib/labedit.awk" "$_la/edits"; then
        _lr=0
        while read -r _ln _lf; do
            { mkdir -p "$2/$(dirname "$_lf")" && cat "$_la/out/$_ln" >"$2/$_lf"; } || _lr=1
        done <"$_la/out/list"
    fi
    rm -rf "$_la"
    return $_lr
}

# lab_patch FILE TREE: the description, then the `git diff` the edits make
# of TREE's files (as `git apply` takes it from TREE's top folder). TREE is
# not changed; fails, with labedit's message, when an edit finds no place.
lab_patch() {
    _lp=$(mktemp -d "${TMPDIR:-/tmp}/lab-patch.XXXXXX") || return 1
    (
        unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
        lab_edits_plain "$1" >"$_lp/edits" && tree=$(cd "$2" && pwd) && cd "$_lp" || exit 1
        lab_edits_files edits | while IFS= read -r f; do
            [ ! -f "$tree/$f" ] || { mkdir -p "t/$(dirname "$f")" && cp "$tree/$f" "t/$f"; } ||
                exit 1
        done || exit 1
        mkdir -p t && git init -q t && git -C t add -A -f && git -C t write-tree >before &&
            lab_edits_apply edits t "$1" || exit 1
        git -C t add -A -f && git -C t write-tree >after || exit 1
        sed -n '/^@@ /q; p' edits
        git -C t -c diff.noprefix=false -c diff.mnemonicPrefix=false -c core.quotePath=true \
            diff --no-color --no-ext-diff --no-renames "$(cat before)" "$(cat after)"
    )
    _lr=$?
    rm -rf "$_lp"
    return $_lr
}
