#!/bin/sh
# symptoms.sh SYMPTOMS-BINARY [--control] LAB...
#
# For each LAB: copy the tracked files of this tree to a scratch directory,
# apply docs/workshop/bugs/LAB.patch there (plain `git apply`, as a student
# would), build the rung it breaks with its own Makefile (`make server`:
# ASan + UBSan, as the lab sheet has students do), and run
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

failed=0
for lab in "$@"; do
    patch_name=$lab
    [ "$lab" = leak-quiet ] && patch_name=leak
    patch=$root/docs/workshop/bugs/$patch_name.patch
    [ -f "$patch" ] || { echo "FAIL $lab: no $patch"; failed=1; continue; }
    # The rung named in the patch's title; net.h labs are shown on 07-epoll.
    rung=$(sed -n '1s/.*(\([0-9][0-9]-[a-z]*\).*/\1/p' "$patch")
    [ -n "$rung" ] || rung=07-epoll
    tree=$scratch/$lab
    mkdir -p "$tree"
    copy_tree "$tree" || {
        echo "FAIL $lab: cannot copy the tree"; failed=1; continue
    }
    if [ $control = no ] && ! (cd "$tree" && git apply "$patch"); then
        echo "FAIL $lab: $patch_name.patch does not apply"; failed=1; continue
    fi
    if ! make -s -C "$tree/$rung" server >"$scratch/$lab.build" 2>&1; then
        cat "$scratch/$lab.build"
        echo "FAIL $lab: $rung does not build"; failed=1; continue
    fi
    "$symptoms" "$tree/$rung/server" "$lab"
    rc=$?
    if [ $control = yes ]; then
        if [ $rc -eq 1 ]; then echo "ok   $lab (control): the unbroken $rung does not show it"
        else echo "FAIL $lab (control): the unbroken $rung showed the symptom (status $rc)"; failed=1; fi
    else
        if [ $rc -eq 0 ]; then echo "ok   $lab: the symptom on the lab sheet shows"
        else echo "FAIL $lab: the lab sheet's symptom did not show (status $rc)"; failed=1; fi
    fi
    rm -rf "$tree"
done
exit $failed
