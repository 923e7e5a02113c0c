#!/bin/sh
# Sourced by scripts/lab.sh, scripts/check-workshop.sh and the class tests:
# how a break-it lab's patch (docs/workshop/bugs/CODE.patch) is stored.
#
# A lab patch is a plain description (its title, the Caught-by: line that
# scripts/check-workshop.sh reads), then its diff, stored rot13-encoded so
# that a glance at the file, or at a `git log -p` that shows the file, does
# not give the lab away. rot13 hides nothing from anyone who means to read
# it: it keeps the answer out of the way, not secret. The description is
# everything before the first line that starts the diff ("diff --git ",
# encoded "qvss --tvg "). A patch whose diff is not encoded reads as itself.
# POSIX sh: sed and tr with the letters spelled out (no locale's ranges).

LAB_ROT13_PLAIN=ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz
LAB_ROT13_CODED=NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm

# lab_patch_recode FILE FIRST-DIFF-LINE: the lines before the first one that
# starts with FIRST-DIFF-LINE as they are, then the rest rot13'd (rot13 is
# its own inverse).
lab_patch_recode() {
    sed -n "/^$2/q; p" "$1"
    sed -n "/^$2/,\$p" "$1" | LC_ALL=C tr "$LAB_ROT13_PLAIN" "$LAB_ROT13_CODED"
}

# lab_patch_decode FILE: the patch as `git apply` reads it.
lab_patch_decode() { lab_patch_recode "$1" 'qvss --tvg '; }

# lab_patch_encode FILE: a plain patch as it is stored.
lab_patch_encode() { lab_patch_recode "$1" 'diff --git '; }

# lab_patch_is_encoded FILE
lab_patch_is_encoded() { grep -q '^qvss --tvg ' "$1"; }
