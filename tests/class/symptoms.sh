#!/bin/sh
# symptoms.sh SYMPTOMS-BINARY [--control] LAB...
#
# For each LAB (a symptom check of symptoms.c, named after the bug): find
# the lab's code in the facilitator's key (docs/workshop/bugs/ANSWERS.md,
# "### `CODE` NAME"), copy the tracked files of this tree to a scratch
# directory, apply docs/workshop/bugs/CODE.edits there (the patch they make
# of this tree, then plain `git apply`), build the rung it breaks with its
# own Makefile (`make server`: ASan + UBSan, as the lab sheet has students
# do), and run
# `symptoms SERVER LAB`, which passes only if the symptom the lab sheet
# names is there. With --control the patch is not applied: the unbroken
# rung must NOT show the symptom (this shows the check can fail).
# The pseudo-lab leak-quiet uses the leak patch.
# Exit status: 0 when every LAB behaved as expected.
set -u
symptoms=$1
shift
control=no
if [ "${1:-}" = --control ]; then control=yes; shift; fi
cd "$(dirname "$0")/../.." || exit 2
root=$(pwd)
LAB_ROOT=$root
. "$root/scripts/lib/labpatch.sh"
CC=${CC:-clang}
command -v "$CC" >/dev/null 2>&1 || CC=cc
export CC

scratch=$(mktemp -d "${TMPDIR:-/tmp}/symptoms.XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM

# The tracked files (a tarball without .git: everything but build output).
copy_tree() {
    if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
        (cd "$root" && git ls-files -z | xargs -0 tar -cf - 2>/dev/null) | tar -C "$1" -xf -
    else
        (cd "$root" && tar --exclude=./build --exclude=./results -cf - .) | tar -C "$1" -xf -
    fi
}

failed=0 shown=0 skipped=0
for lab in "$@"; do
    patch_name=$lab
    [ "$lab" = leak-quiet ] && patch_name=leak
    code=$(awk -v name="$patch_name" \
        '/^### `/ && $3 == name { gsub(/`/, "", $2); print $2; exit }' \
        "$root/docs/workshop/bugs/ANSWERS.md")
    patch=$root/docs/workshop/bugs/$code.edits
    [ -n "$code" ] && [ -f "$patch" ] || {
        echo "FAIL $lab: no lab $patch_name in ANSWERS.md"; failed=1; continue
    }
    lab_patch "$patch" "$root" >"$scratch/$lab.patch" ||
        { echo "FAIL $lab: $code.edits finds no place in this tree"; failed=1; continue; }
    patch=$scratch/$lab.patch
    # The rung named in the patch's title; net.h labs are shown on 07-epoll.
    rung=$(sed -n '1s/.*(\([0-9][0-9]-[a-z]*\).*/\1/p' "$patch")
    [ -n "$rung" ] || rung=07-epoll
    tree=$scratch/$lab
    mkdir -p "$tree"
    copy_tree "$tree" || {
        echo "FAIL $lab: cannot copy the tree"; failed=1; continue
    }
    if [ $control = no ] && ! (cd "$tree" && git apply "$patch"); then
        echo "FAIL $lab: $code's patch ($patch_name) does not apply"; failed=1; continue
    fi
    if ! make -s -C "$tree/$rung" server >"$scratch/$lab.build" 2>&1; then
        cat "$scratch/$lab.build"
        echo "FAIL $lab: $rung does not build"; failed=1; continue
    fi
    "$symptoms" "$tree/$rung/server" "$lab"
    rc=$?
    case $control,$rc in
    yes,1) echo "ok   $lab (control): the unbroken $rung does not show it"; shown=$((shown + 1)) ;;
    no,0) echo "ok   $lab: the symptom on the lab sheet shows"; shown=$((shown + 1)) ;;
    *,77) echo "skip $lab: this system cannot check it (above)"; skipped=$((skipped + 1)) ;;
    yes,*) echo "FAIL $lab (control): the unbroken $rung showed it (status $rc)"; failed=1 ;;
    *) echo "FAIL $lab: the lab sheet's symptom did not show (status $rc)"; failed=1 ;;
    esac
    rm -rf "$tree"
done
# Every lab skipped and none failed: skipped (77), not a pass.
[ $failed -eq 0 ] && [ $shown -eq 0 ] && [ $skipped -gt 0 ] && exit 77
exit $failed
