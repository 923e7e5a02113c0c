#!/usr/bin/env bash
# check-workshop.sh - keep the workshop's patches true.
#
#   scripts/check-workshop.sh [PATCH...]            check (the default)
#   scripts/check-workshop.sh --refresh [PATCH...]  rewrite patches onto the tree
#   scripts/check-workshop.sh --rewrite PATCH DIR   body from a resolved merge
#
# With no PATCH, every docs/workshop/solutions/*.patch and
# docs/workshop/bugs/*.patch. Each patch is a description followed by plain
# `git diff` output against the repository root; the description may hold,
# each on a line of its own:
#   Caught-by: TEST...   (bug patches) ctest names that must FAIL once applied
#   Changes: TEST...     (solutions) tests no longer expected to pass
#   Adds: TEST...        (solutions) tests the patch adds (tests/workshop/)
#
# Check: the tracked files of this tree (uncommitted edits included) are
# copied to a scratch directory, and for each patch in turn the copy is reset,
# the patch applied with plain `git apply`, and the dev configuration
# (ASan + UBSan, -Werror) built, only the targets needed, with -j2.
#   solution: applies, builds without a warning (CMake, and `make` in each rung
#     it touches), and passes every test of those rungs except its Changes:
#     ones, plus the tests it Adds:.
#   bug: applies, builds, and every test named in Caught-by: fails (these run
#     two at a time: a failing test cannot be made to pass by the load).
# One line per patch, then "N passed, N failed"; exit 1 if anything failed.
# Logs: build/check-workshop/<kind>-<name>.log. It starts servers: on the
# shared machine run it under the lock (flock /work/.heavy.lock ...).
#
# Refresh (for maintainers, after the rungs change): each patch is re-applied
# onto this tree's HEAD (plus uncommitted edits), first as is and else with a
# three-way merge (`git apply -3`, which finds the patch's original files in
# the repository's history), and its body is rewritten from the result; the
# description above the first "diff --git" line is kept. A patch that does not
# merge cleanly is left untouched and reported, and the merge is kept in
# build/check-workshop/resolve/NAME (a git tree with conflict markers): fix
# the marked files there, then
#   scripts/check-workshop.sh --rewrite PATCH build/check-workshop/resolve/NAME
# writes the patch body from that tree (the header is kept).
# Run the check afterwards: a refreshed bug must still be caught.
#
# Environment: CC (default clang, as scripts/test.sh), CHECK_JOBS (default 2).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

mode=check
patches=()
for arg in "$@"; do
    case "$arg" in
    --refresh) mode=refresh ;;
    --rewrite) mode=rewrite ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check-workshop: unknown option $arg (try --help)" >&2; exit 2 ;;
    *) patches+=("$(cd "$(dirname "$arg")" && pwd)/$(basename "$arg")") ;;
    esac
done
if [ ${#patches[@]} -eq 0 ]; then
    shopt -s nullglob
    patches=("$root"/docs/workshop/solutions/*.patch "$root"/docs/workshop/bugs/*.patch)
    shopt -u nullglob
fi
if [ ${#patches[@]} -eq 0 ]; then
    echo "check-workshop: no patches found"
    exit 0
fi

export CC=${CC:-clang}
jobs=${CHECK_JOBS:-2}
ALL_RUNGS="01-blocking 02-fork 03-threads 04-select 05-poll 06-kqueue 07-epoll"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/check-workshop.XXXXXX")
src=$scratch/src
bld=$src/build/dev
logs=$root/build/check-workshop
mkdir -p "$logs"
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM
git_() { git -C "$src" -c user.name=check-workshop -c user.email=check@localhost \
    -c advice.detachedHead=false "$@"; }

# ---- reading a patch --------------------------------------------------------

# The words of every "KEY:" line in the description (before the diff).
header_field() {
    awk -v key="$2:" '/^diff --git /{exit} $1 == key {for (i = 2; i <= NF; i++) print $i}' "$1"
}
description() { awk '/^diff --git /{exit} {print}' "$1"; }
body() { awk 'found || /^diff --git /{found = 1; print}' "$1"; }

# Rung folders the diff touches; common/ touches them all.
touched_rungs() {
    body "$1" | sed -n 's#^diff --git a/\([^ ]*\) b/.*#\1#p' | while read -r path; do
        case "$path" in
        [0-9][0-9]-*/*) echo "${path%%/*}" ;;
        common/*) printf '%s\n' $ALL_RUNGS ;;
        esac
    done | sort -u
}

# Executables the patch's tests/workshop/*.cmake files define.
added_targets() {
    body "$1" | sed -n 's#^+++ b/\(tests/workshop/[^ ]*\.cmake\)$#\1#p' | while read -r f; do
        sed -n 's/.*add_executable(\([A-Za-z0-9_.-]*\).*/\1/p' "$src/$f"
    done
}

# "^(a|b|c)$" for ctest -R; test names are [0-9a-z:-] only.
name_regex() { local IFS='|'; echo "^($*)\$"; }

# ---- the scratch tree -------------------------------------------------------

# A git repository holding exactly the tracked files of this tree as they are
# now, committed as "base". Cloned from this repository when there is one,
# so that its history (the blobs `git apply -3` needs) is at hand.
make_scratch() {
    if git -C "$root" rev-parse --verify -q HEAD >/dev/null 2>&1 &&
        git clone -q --shared --no-checkout "$root" "$src" &&
        git_ checkout -q --detach "$(git -C "$root" rev-parse HEAD)"; then
        git -C "$root" ls-files -z | tar -C "$root" --null --ignore-failed-read -T - -cf - 2>/dev/null |
            tar -C "$src" -xf - || return 1
        # Tracked files deleted in the working tree are deleted here too.
        git -C "$root" ls-files -z --deleted | (cd "$src" && xargs -0 -r rm -f)
    else
        # No repository, or one git cannot clone: the files alone will do for
        # checking (--refresh then cannot merge three-way).
        rm -rf "$src" && mkdir -p "$src" &&
            tar -C "$root" --exclude=./build --exclude=./results --exclude=./.git -cf - . |
            tar -C "$src" -xf - && git_ init -q || return 1
    fi
    git_ add -A && git_ commit -q --allow-empty -m base && git_ tag base
}

reset_scratch() {
    git_ reset -q --hard base && git_ clean -fdq
}

# ---- check ------------------------------------------------------------------

npass=0
nfail=0
verdict() { # ok|FAIL name message
    printf '%-4s %-34s %s\n' "$1" "$2" "$3"
    if [ "$1" = ok ]; then npass=$((npass + 1)); else nfail=$((nfail + 1)); fi
}

# Names of all tests ctest knows in the scratch build.
all_tests() { (cd "$bld" && ctest -N) | sed -n 's/^ *Test *#[0-9]*: \(.*\)$/\1/p'; }

# Run the named tests (log appended); print the names of those that did not
# pass, or "?" if ctest did not run exactly that many.
run_tests() { # log parallel name...
    local log=$1 par=$2 out=$scratch/ctest.out
    shift 2
    (cd "$bld" && ctest -j "$par" --output-on-failure -R "$(name_regex "$@")") >"$out" 2>&1
    cat "$out" >>"$log"
    grep -q "tests failed out of $#\$" "$out" || echo "? (ctest did not run the $# tests)"
    # ctest lists failed and skipped tests alike as "N - name (why)". A test
    # that skipped itself (exit 77: it lacks a privilege here) neither fails
    # a solution nor catches a bug.
    sed -n '/(Skipped)$/d; s/^[[:space:]]*[0-9][0-9]* - \([^ ]*\) (.*)$/\1/p' "$out" | sort -u
}

# configure + build the given targets; fail on an error or any warning.
build() { # log target...
    local log=$1
    shift
    {
        echo "== cmake configure"
        (cd "$src" && cmake --preset dev) &&
            echo "== cmake --build --target $*" &&
            cmake --build "$bld" -j "$jobs" --target "$@"
    } >>"$log" 2>&1 || return 1
    ! grep -q 'warning:' "$log"
}

check_patch() {
    local patch=$1 kind name log start t
    kind=$(basename "$(dirname "$patch")")
    name="$kind/$(basename "$patch" .patch)"
    log="$logs/$kind-$(basename "$patch" .patch).log"
    : >"$log"
    start=$SECONDS
    reset_scratch
    if ! git_ apply "$patch" >>"$log" 2>&1; then
        verdict FAIL "$name" "does not apply (git apply; try --refresh); log: $log"
        return
    fi
    local rungs caught changes adds targets=(echo_tests) known
    rungs=$(touched_rungs "$patch")
    caught=$(header_field "$patch" Caught-by)
    changes=$(header_field "$patch" Changes)
    adds=$(header_field "$patch" Adds)
    for r in $rungs $(printf '%s\n' $caught | sed 's/:.*//'); do
        [[ " ${targets[*]} " == *" $r "* ]] || targets+=("$r")
    done
    targets+=($(added_targets "$patch"))
    if ! build "$log" "${targets[@]}"; then
        verdict FAIL "$name" "does not build cleanly (error or warning); log: $log"
        return
    fi
    known=$(all_tests)
    local missing=()
    for t in $caught $changes $adds; do
        grep -qxF -- "$t" <<<"$known" || missing+=("$t")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        verdict FAIL "$name" "names tests that do not exist: ${missing[*]}; log: $log"
        return
    fi

    if [ "$kind" = bugs ]; then
        if [ -z "$caught" ]; then
            verdict FAIL "$name" "no Caught-by: line"
            return
        fi
        local failed escaped=()
        failed=$(run_tests "$log" "$jobs" $caught)
        for t in $caught; do
            grep -qxF -- "$t" <<<"$failed" || escaped+=("$t")
        done
        if [ ${#escaped[@]} -gt 0 ]; then
            verdict FAIL "$name" "not caught by ${escaped[*]} (it passed); log: $log"
        else
            verdict ok "$name" "caught by $(echo $caught) [$((SECONDS - start)) s]"
        fi
        return
    fi

    # A solution: students build with `make` too.
    for r in $rungs; do
        if [ -f "$src/$r/Makefile" ] && ! { echo "== make -C $r" && make -C "$src/$r"; } >>"$log" 2>&1; then
            verdict FAIL "$name" "make in $r fails; log: $log"
            return
        fi
    done
    if grep -q 'warning:' "$log"; then
        verdict FAIL "$name" "warnings in the build; log: $log"
        return
    fi
    local expected=()
    for t in $known; do
        local rung=${t%%:*}
        grep -qxF -- "$t" <<<"$(printf '%s\n' $changes)" && continue
        if grep -qxF -- "$rung" <<<"$rungs" || grep -qxF -- "$t" <<<"$(printf '%s\n' $adds)"; then
            expected+=("$t")
        fi
    done
    if [ ${#expected[@]} -eq 0 ]; then
        verdict FAIL "$name" "no test to run (touches no rung?)"
        return
    fi
    local failed
    failed=$(run_tests "$log" 1 "${expected[@]}")
    if [ -n "$failed" ]; then
        verdict FAIL "$name" "failing: $(echo $failed); log: $log"
    else
        local note=""
        [ -n "$changes" ] && note="; changes $(echo $changes)"
        verdict ok "$name" "${#expected[@]} tests pass$note [$((SECONDS - start)) s]"
    fi
}

# ---- refresh ----------------------------------------------------------------

# The patch's description, then the diff of tree $1 (a scratch-like git tree
# with a "base" tag) against base, into $2.
write_patch() { # tree patch out
    {
        description "$2"
        git -C "$1" -c diff.noprefix=false -c diff.mnemonicPrefix=false diff --cached --no-color \
            --no-ext-diff --no-renames base
    } >"$3"
}

refresh_patch() {
    local patch=$1 name new how keep
    name="$(basename "$(dirname "$patch")")/$(basename "$patch" .patch)"
    reset_scratch
    if git_ apply --index "$patch" 2>/dev/null; then
        how="applied as is"
    elif git_ apply -3 "$patch" >"$scratch/apply.log" 2>&1; then
        how="three-way merged"
    else
        keep=$logs/resolve/$(basename "$patch" .patch)
        rm -rf "$keep" && mkdir -p "$logs/resolve" && cp -a "$src" "$keep"
        verdict FAIL "$name" "conflicts in $(git_ diff --name-only --diff-filter=U | tr '\n' ' ')- fix them in $keep, then: $0 --rewrite $patch $keep"
        return
    fi
    new=$scratch/new.patch
    write_patch "$src" "$patch" "$new"
    if cmp -s "$new" "$patch"; then
        verdict ok "$name" "unchanged ($how)"
    else
        cp "$new" "$patch"
        verdict ok "$name" "rewritten ($how)"
    fi
}

# --rewrite PATCH DIR: DIR is a merge kept by refresh, its conflicts fixed.
rewrite_patch() {
    local patch=$1 dir=$2
    if ! git -C "$dir" rev-parse -q --verify base >/dev/null 2>&1; then
        echo "check-workshop: $dir is not a tree kept by --refresh" >&2
        exit 2
    fi
    git -C "$dir" add -A -- . ':!build'
    if git -C "$dir" diff --cached base | grep -qE '^\+(<<<<<<<|>>>>>>>|=======$)'; then
        echo "check-workshop: conflict markers left in $dir:" >&2
        git -C "$dir" diff --cached base | grep -nE '^\+(<<<<<<<|>>>>>>>)' >&2
        exit 1
    fi
    write_patch "$dir" "$patch" "$patch.new" && mv "$patch.new" "$patch"
    echo "rewrote $patch from $dir; now check it: $0 $patch"
}

# ---- main -------------------------------------------------------------------

if [ "$mode" = rewrite ]; then
    if [ ${#patches[@]} -ne 2 ] || [ ! -f "${patches[0]}" ] || [ ! -d "${patches[1]}" ]; then
        echo "usage: $0 --rewrite PATCH DIR" >&2
        exit 2
    fi
    rewrite_patch "${patches[0]}" "${patches[1]}"
    exit
fi
started=$SECONDS
if ! make_scratch >"$logs/scratch.log" 2>&1; then
    echo "check-workshop: cannot make a scratch copy of the tree; see $logs/scratch.log" >&2
    exit 1
fi
echo "== workshop patches: $mode (${#patches[@]} patches, scratch $scratch)"
for p in "${patches[@]}"; do
    if [ "$mode" = refresh ]; then refresh_patch "$p"; else check_patch "$p"; fi
done
echo "($((SECONDS - started)) s)"
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
