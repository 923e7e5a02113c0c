#!/bin/sh
# tree.sh - the scratch tree in which the workshop's patches are built
# (tests/patches/tests.cmake; scripts/check-workshop.sh --refresh).
#
#   tree.sh copy ROOT TREE
#       TREE becomes a git repository holding exactly the tracked files of
#       ROOT as they are now (uncommitted edits included, deleted files left
#       out), committed and tagged "base". TREE/build (the scratch tree's own
#       CMake build, by the dev preset) is kept from one run to the next;
#       every file copied is dated now, so that it builds anew.
#   tree.sh build ROOT TREE EDITS OUT [TARGET...]
#       The patch EDITS makes of TREE (lab_patch) is applied there with plain
#       `git apply` (a solution's must be the NAME.patch beside its edits,
#       byte for byte: students apply that one); TARGETs and every rung the
#       patch touches (all seven for common/) are built by `cmake --preset
#       dev` and kept in OUT, under their CMake names (OUT/07-epoll, as the
#       suite's echo_tests is given them). Warnings fail it. TREE is reset
#       to base first and last.
# POSIX sh.
set -u
mode=$1 root=$2 tree=$3
LAB_ROOT=$root
. "$root/scripts/lib/labpatch.sh"
. "$root/scripts/lib/ladder.sh"
git_() {
    git -C "$tree" -c user.name=check-workshop -c user.email=check@localhost \
        -c advice.detachedHead=false "$@"
}
reset_tree() { git_ reset -q --hard base && git_ clean -fdq; }

if [ "$mode" = copy ]; then
    mkdir -p "$tree" || exit 1
    find "$tree" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} + || exit 1
    (cd "$root" && git ls-files | while IFS= read -r f; do
        [ -e "$f" ] && printf '%s\n' "$f"
    done) >"$tree/.files" || exit 1
    tar -C "$root" -cf - -T "$tree/.files" | tar -C "$tree" -mxf - || exit 1
    rm -f "$tree/.files"
    git_ init -q && git_ add -A && git_ commit -q --allow-empty -m base && git_ tag base
    exit
fi

edits=$4 out=$5
shift 5
kind=$(basename "$(dirname "$edits")")
patch=$out/$(basename "$edits" .edits).patch
mkdir -p "$out" && rm -f "$out"/* && reset_tree || exit 1
if ! lab_patch "$edits" "$tree" >"$patch"; then
    echo "does not apply: an edit finds no place (above)"
    exit 1
fi
if [ "$kind" = solutions ] && ! cmp -s "$patch" "${edits%.edits}.patch"; then
    echo "$(basename "${edits%.edits}.patch") is not what its edits make of this tree" \
        "(run scripts/check-workshop.sh --refresh)"
    exit 1
fi
if ! git_ apply "$patch"; then
    echo "does not apply (git apply)"
    reset_tree
    exit 1
fi
# The rungs the patch touches; common/ touches them all. (The patterns'
# opening parentheses: posh reads a case in $(...) no other way.)
touched=$(sed -n 's#^diff --git a/\([^ ]*\) b/.*#\1#p' "$patch" | while read -r path; do
    case "$path" in
    ([0-9][0-9]-*/*) echo "${path%%/*}" ;;
    (beyond/[0-9][0-9]-*/*) p=${path#beyond/}; echo "${p%%/*}" ;;
    (common/*) ladder_rungs "$root" ;;
    esac
done)
targets=$(printf '%s\n' $touched "$@" | sort -u)
echo "== build in $tree:" $targets
rc=0
# Configured each time: a patch may add a tests/workshop/*.cmake, whose
# targets a build's own re-run of the configuration would not name in time.
(cd "$tree" && cmake --preset dev &&
    cmake --build --preset dev --parallel 2 --target $targets) >"$out/build.log" 2>&1 || rc=1
cat "$out/build.log"
if [ $rc -ne 0 ]; then
    echo "does not build (above)"
elif grep -q 'warning:' "$out/build.log"; then
    echo "does not build cleanly (a warning, above)"
    rc=1
else
    for t in $targets; do cp "$tree/build/dev/bin/$t" "$out/$t" || rc=1; done
fi
reset_tree
exit $rc
