#!/usr/bin/env bash
# check-workshop.sh - keep the workshop's patches true.
#
#   scripts/check-workshop.sh [EDITS...]            check (the default)
#   scripts/check-workshop.sh --refresh [EDITS...]  write the solutions' patches
#
# With no EDITS, every docs/workshop/solutions/*.edits and
# docs/workshop/bugs/*.edits (a solution's NAME.patch names its NAME.edits).
# Each is a description followed by edits that find their place by a
# function's name (scripts/lib/labpatch.sh; a bug's are rot13-encoded):
# each is made into a patch of the tree as it is (lab_patch) in the scratch
# directory before it is read. The description may hold, each on a line of
# its own:
#   Caught-by: TEST...   (bug patches) ctest names that must FAIL once applied
#   Changes: TEST...     (solutions) tests no longer expected to pass
#   Adds: TEST...        (solutions) tests the patch adds (tests/workshop/)
#
# Check: the tracked files of this tree (uncommitted edits included) are
# copied to a scratch directory. Each patch in turn is made of it and
# applied there with plain `git apply` (a solution's must be the NAME.patch
# beside its edits, byte for byte: students apply that one), and each rung
# it touches (all of them, for common/) is built the way a student builds
# it, `make server` (one compiler call: ASan + UBSan, -Werror, the phase
# Makefile's flags); a tests/workshop/*.cmake it adds has its test
# program built with one compiler call too. The binaries are kept aside and
# the copy reset for the next patch. The tests run CHECK_JOBS at a time
# (default 3 per CPU), with the suite's own program (tests/echo_tests.c,
# built once); the bugs' start as soon as each bug is built, the solutions'
# once all builds are done:
#   solution: builds without a warning and passes every test of the rungs
#     whose folders it changes (every rung, if it changes only common/)
#     except its Changes: ones, plus the tests it Adds:. As in ctest
#     (tests/CMakeLists.txt), tests that time a server or read its CPU share
#     (LADDER_QUIET_TESTS) run after the others, beside each other, and
#     those that hold thousands of descriptors or load the machine
#     (LADDER_SERIAL_TESTS) run alone, last.
#   bug: builds, and every test named in Caught-by: fails (these run beside
#     the others: a failing test cannot be made to pass by the load).
# A test that skips itself (exit 77: it lacks a privilege here) neither
# passes a solution's test nor catches a bug.
# One line per patch, then "N passed, N failed" and the time of each phase;
# exit 1 if anything failed. Logs: build/check-workshop/<kind>-<name>.log.
# It starts servers: on a shared machine, run it alone (under a lock:
# flock FILE scripts/check-workshop.sh).
#
# Refresh (for maintainers, after a rung changes, or a solution's edits):
# each solution's NAME.patch is written anew from its edits and this tree
# (uncommitted edits included). A bug has no patch to write: lab.sh and the
# check make it of the tree when they need it; refresh says whether its
# edits still find their place. An edit that does not (the code it names was
# renamed, moved to another file or rewritten) is reported with its file and
# function, and its patch left alone: change the edit, then refresh. Run the
# check afterwards: a refreshed bug must still be caught.
#
# Environment: CC (default clang, as scripts/test.sh), CHECK_JOBS (default 3 per
# CPU), CHECK_BUILD_JOBS (make -j for the rungs, default 2).
# bash is not in FreeBSD's base system. Where `#!/usr/bin/env bash` finds
# none, env(1) stops with its own message ("env: bash: No such file or
# directory"); started with sh instead (sh scripts/check-workshop.sh), the line
# below says what to install, before any line sh could not read.
if [ -z "${BASH_VERSION:-}" ]; then
    echo "check-workshop.sh: needs bash: pkg install bash (FreeBSD)" >&2
    exit 1
fi
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[ -f "$root/common/phase.mk" ] && [ -d "$root/docs/workshop" ] || {
    echo "check-workshop: $root is not the ladder's root" \
        "(run scripts/check-workshop.sh from the tree)" >&2
    exit 2
}

mode=check
patches=()
for arg in "$@"; do
    case "$arg" in
    --refresh) mode=refresh ;;
    -h | --help) sed -n '2,/^# bash is not/{/^# bash is not/d;/^#/s/^# \{0,1\}//p;}' "$0"; exit 0 ;;
    -*) echo "check-workshop: unknown option $arg (try --help)" >&2; exit 2 ;;
    *)
        arg=${arg%.patch}
        arg=${arg%.edits}.edits
        patches+=("$(cd "$(dirname "$arg")" && pwd)/$(basename "$arg")")
        ;;
    esac
done
if [ ${#patches[@]} -eq 0 ]; then
    shopt -s nullglob
    patches=("$root"/docs/workshop/solutions/*.edits "$root"/docs/workshop/bugs/*.edits)
    shopt -u nullglob
fi
if [ ${#patches[@]} -eq 0 ]; then
    echo "check-workshop: no patches found"
    exit 0
fi

LAB_ROOT=$root
source "$root/scripts/lib/labpatch.sh"
export CC=${CC:-clang}
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)
jobs=${CHECK_JOBS:-$((3 * cpus))}
ALL_RUNGS="01-blocking 02-fork 03-threads 04-select 05-poll 06-kqueue 07-epoll"
# The suite's programs are built like CMake's dev configuration builds them
# (common/phase.mk's DEV_CFLAGS are the same flags).
TEST_CFLAGS="-std=c11 -Wall -Wextra -Werror -g -O1 -fno-omit-frame-pointer"
TEST_CFLAGS="$TEST_CFLAGS -fsanitize=address,undefined -fno-sanitize-recover=all"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/check-workshop.XXXXXX")
src=$scratch/src
kept=$scratch/kept
logs=$root/build/check-workshop
mkdir -p "$logs"
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM
git_() { git -C "$src" -c user.name=check-workshop -c user.email=check@localhost \
    -c advice.detachedHead=false "$@"; }

# ---- reading a patch --------------------------------------------------------

# plain_copy EDITS: the path of the patch EDITS makes of the scratch tree
# (as git apply reads it), under the scratch directory in a folder named
# like EDITS's (bugs, solutions); labedit's message in its .why.
plain_copy() {
    local out
    out=$scratch/plain/$(basename "$(dirname "$1")")/$(basename "$1" .edits).patch
    mkdir -p "$(dirname "$out")" && reset_scratch
    lab_patch "$1" "$src" >"$out" 2>"$out.why"
    echo "$out"
}

# The words of every "KEY:" line in the description (before the diff).
header_field() {
    awk -v key="$2:" '/^diff --git /{exit} $1 == key {for (i = 2; i <= NF; i++) print $i}' "$1"
}
body() { awk 'found || /^diff --git /{found = 1; print}' "$1"; }

# Rung folders the diff touches; common/ touches them all.
touched_rungs() {
    body "$1" | sed -n 's#^diff --git a/\([^ ]*\) b/.*#\1#p' | while read -r path; do
        case "$path" in
        [0-9][0-9]-*/*) echo "${path%%/*}" ;;
        beyond/[0-9][0-9]-*/*) p=${path#beyond/}; echo "beyond/${p%%/*}" ;;
        common/*) printf '%s\n' $ALL_RUNGS ;;
        esac
    done | sort -u
}

# "TEST EXECUTABLE RUNG" for each add_test() of the tests/workshop/*.cmake
# files the patch adds, e.g. "07-epoll:framing workshop_framing 07-epoll".
added_tests() {
    body "$1" | sed -n 's#^+++ b/\(tests/workshop/[^ ]*\.cmake\)$#\1#p' | while read -r f; do
        sed -n 's/.*add_test(NAME \([^ ]*\) COMMAND \([^ ]*\) '\
'\$<TARGET_FILE:\([^>]*\)>).*/\1 \2 \3/p' "$src/$f"
    done
}

# The sources of add_executable(EXE SOURCE...) in the patch's cmake files,
# relative to tests/.
added_sources() { # patch exe
    body "$1" | sed -n 's#^+++ b/\(tests/workshop/[^ ]*\.cmake\)$#\1#p' | while read -r f; do
        sed -n "s/.*add_executable($2 \\([^)]*\\)).*/\\1/p" "$src/$f"
    done
}

# The words of a set(LIST ...) in tests/CMakeLists.txt: LADDER_QUIET_TESTS
# (run after the others, beside each other) or LADDER_SERIAL_TESTS (alone).
listed_tests() {
    awk -v list="$1" '$0 ~ "^set\\(" list "[ )]" { on = 1; sub("^set\\(" list, "") }
         on { line = $0; done = sub(/\).*/, "", line); print line; if (done) exit }' \
        "$root/tests/CMakeLists.txt" | tr -s ' \t' '\n\n' | sed '/^$/d'
}

# ---- the scratch tree -------------------------------------------------------

# A git repository holding exactly the tracked files of this tree as they are
# now (those deleted in the working tree left out), committed as "base"; with
# no repository, the files less build/ and results/. (tar -T and these
# options are POSIX pax-era ones that GNU and BSD tar share.)
make_scratch() {
    mkdir -p "$src" || return 1
    if git -C "$root" rev-parse --verify -q HEAD >/dev/null 2>&1; then
        (cd "$root" && git ls-files |
            while IFS= read -r f; do [ -e "$f" ] && printf '%s\n' "$f"; done) \
            >"$scratch/files" || return 1
        tar -C "$root" -cf - -T "$scratch/files" | tar -C "$src" -xf - || return 1
    else
        tar -C "$root" --exclude=./build --exclude=./results --exclude=./.git -cf - . |
            tar -C "$src" -xf - || return 1
    fi
    git_ init -q && git_ add -A && git_ commit -q --allow-empty -m base && git_ tag base
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

# The suite's test names (echo_tests lists them); which apply to a rung,
# echo_tests itself says (exit 2, "does not apply").
suite_tests() {
    "$scratch/bin/echo_tests" | awk '/^tests:/ { on = 1; next } on && NF { print $1 }'
}

# build_suite: echo_tests from the base tree, once, with the fault library
# that some of its tests preload into the server (built as tests/CMakeLists.txt
# builds it: without sanitizers, as it sits in front of the server's).
# The harness reads processes through platform/proc_<reader>.c, the one
# tests/CMakeLists.txt picks: this system's, or the portable one (ps(1))
# under LADDER_FORCE_PORTABLE=1.
build_suite() {
    local lib=$scratch/bin/libladder_fault.so reader
    case $(uname -s) in
    Linux) reader=linux ;; Darwin) reader=macos ;; FreeBSD) reader=freebsd ;; *) reader=portable ;;
    esac
    [ "${LADDER_FORCE_PORTABLE:-0}" = 1 ] && reader=portable
    HARNESS_SRCS="$src/tests/harness.c $src/platform/proc.c $src/platform/proc_$reader.c"
    mkdir -p "$scratch/bin" &&
        $CC -std=c11 -Wall -Wextra -Werror -O1 -shared -fPIC -o "$lib" \
            "$src/tests/fault.c" -ldl >"$logs/suite.log" 2>&1 &&
        $CC $TEST_CFLAGS -DLADDER_FAULT_LIB="\"$lib\"" -I"$src/tests" \
            -o "$scratch/bin/echo_tests" "$src/tests/echo_tests.c" $HARNESS_SRCS \
            -lm >>"$logs/suite.log" 2>&1
}

# ---- the test pool ----------------------------------------------------------

# Jobs are lines "ID<TAB>ALONE<TAB>COMMAND..." in $scratch/jobs; each one's
# output goes to $scratch/res/ID.out and its exit status to ID.rc.
: >"$scratch/jobs"
njobs=0
# queue PLAN TEST ALONE(yes|no) COMMAND...: a job for TEST of the patch PLAN.
queue() {
    local plan=$1 test=$2 alone=$3
    shift 3
    njobs=$((njobs + 1))
    printf '%s\t%s\t%s\n' "$njobs" "$alone" "$*" >>"$scratch/jobs"
    echo "$njobs $test" >>"$plan/jobs"
}

# Each test limits its own waits; the watchdog (TEST_TIMEOUT s, as ctest's
# TIMEOUT in tests/CMakeLists.txt) only catches a hang in the test program.
TEST_TIMEOUT=300
run_job() { # id command...
    local id=$1 pid dog
    shift
    "$@" >"$scratch/res/$id.out" 2>&1 &
    pid=$!
    (
        trap 'kill "$nap" 2>/dev/null; exit 0' TERM
        sleep "$TEST_TIMEOUT" &
        nap=$!
        wait "$nap"
        echo "check-workshop: killed after $TEST_TIMEOUT s" >>"$scratch/res/$id.out"
        kill -TERM "$pid" 2>/dev/null
    ) &
    dog=$!
    wait "$pid"
    echo $? >"$scratch/res/$id.rc"
    kill -TERM "$dog" 2>/dev/null
    wait "$dog" 2>/dev/null
}

# The pool: at most $jobs tests at once. launch waits for a free slot;
# launch_new starts the jobs queued since the last call that may share the
# machine; drain waits for all of them.
running=()
launched=0
reap() {
    local still=() p
    for p in ${running[@]+"${running[@]}"}; do
        if kill -0 "$p" 2>/dev/null; then still+=("$p"); else wait "$p" 2>/dev/null; fi
    done
    running=(${still[@]+"${still[@]}"})
}
launch() { # id command...
    reap
    while [ ${#running[@]} -ge "$jobs" ]; do
        sleep 0.1
        reap
    done
    run_job "$@" </dev/null &
    running+=($!)
}
launch_new() {
    local id alone cmd
    while IFS="$(printf '\t')" read -r id alone cmd; do
        [ "$id" -gt "$launched" ] || continue
        launched=$id
        # shellcheck disable=SC2086 # the command is words without spaces
        [ "$alone" = no ] && launch "$id" $cmd
    done <"$scratch/jobs"
    return 0
}
# run_quiet: the jobs that time a server or read its CPU share, once the
# others are done, side by side (each server they start should sleep).
run_quiet() {
    local id alone cmd
    while IFS="$(printf '\t')" read -r id alone cmd; do
        # shellcheck disable=SC2086
        [ "$alone" = quiet ] && launch "$id" $cmd
    done <"$scratch/jobs"
    drain
}
drain() { wait; running=(); }
# run_alone: the jobs that must have the machine to themselves, one by one.
run_alone() {
    local id alone cmd
    while IFS="$(printf '\t')" read -r id alone cmd; do
        # shellcheck disable=SC2086
        [ "$alone" = yes ] && run_job "$id" $cmd </dev/null
    done <"$scratch/jobs"
    return 0
}

# job_result ID: pass, fail, skip (exit 77) or n/a (the test does not apply
# to that rung); the output joins the patch's log.
job_result() { # id log
    local rc
    rc=$(cat "$scratch/res/$1.rc" 2>/dev/null || echo 1)
    cat "$scratch/res/$1.out" >>"$2" 2>/dev/null
    if [ "$rc" = 0 ]; then echo pass
    elif [ "$rc" = 77 ]; then echo skip
    elif [ "$rc" = 2 ] && grep -q 'does not apply' "$scratch/res/$1.out"; then echo n/a
    else echo fail
    fi
}

# ---- check, phase 1: apply and build each patch -------------------------------

# Per patch, in $scratch/plan/N: its name, kind, log and the queued jobs
# ("JOB TEST" lines); a patch that failed before testing has its verdict
# there already. prepare_patch sets plan, kind and log for the steps below.
np=0
prepare_patch() { # plain-copy [stored-patch]
    local patch=$1 rungs caught changes adds
    plan_patch "$patch"
    reset_scratch
    if [ -s "$patch.why" ]; then
        cat "$patch.why" >>"$log"
        early "does not apply: $(sed 's/^labedit: [^ ]* line [0-9]*: //' "$patch.why")"
        return
    fi
    if [ -n "${2:-}" ] && ! cmp -s "$patch" "$2"; then
        early "$(basename "$2") is not what its edits make of this tree (run --refresh)"
        return
    fi
    if ! git_ apply "$patch" >>"$log" 2>&1; then
        early "does not apply (git apply); log: $log"
        return
    fi
    rungs=$(touched_rungs "$patch")
    caught=$(header_field "$patch" Caught-by)
    changes=$(header_field "$patch" Changes)
    adds=$(header_field "$patch" Adds)
    echo "$changes" >"$plan/changes"
    build_rungs $rungs $(printf '%s\n' $caught | sed 's/:.*//') || return
    build_added "$patch" || return
    if grep -q 'warning:' "$log"; then
        early "does not build cleanly (a warning); log: $log"
        return
    fi
    all=$(suite_tests)
    names_exist $caught $changes $adds || return
    if [ "$kind" = bugs ]; then
        queue_bug $caught
    else
        queue_solution "$patch" "$rungs"
    fi
}

# plan_patch PATCH: the next plan folder, with the patch's name, kind and log.
plan_patch() {
    np=$((np + 1))
    plan=$scratch/plan/$np
    mkdir -p "$plan"
    kind=$(basename "$(dirname "$1")")
    log="$logs/$kind-$(basename "$1" .patch).log"
    echo "$kind/$(basename "$1" .patch)" >"$plan/name"
    echo "$kind" >"$plan/kind"
    echo "$log" >"$plan/log"
    : >"$log"
    : >"$plan/jobs"
}

# early VERDICT: the patch failed before its tests; this is why.
early() { echo "$1" >"$plan/verdict"; }

# build_rungs RUNG...: `make server` in each (once), kept under a folder
# named after the rung (echo_tests reads the rung from the path).
build_rungs() {
    local r
    for r in $(printf '%s\n' "$@" | sort -u); do
        rm -f "$src/$r/server"
        if ! { echo "== make -C $r server" && make -C "$src/$r" server; } >>"$log" 2>&1; then
            early "does not build: make in $r fails; log: $log"
            return 1
        fi
        mkdir -p "$kept/$np/$r" && cp "$src/$r/server" "$kept/$np/$r/server"
    done
}

# build_added PATCH: the test programs it adds, one compiler call each, with
# the harness they link (ladder_harness in CMake: HARNESS_SRCS here).
build_added() {
    local t exe rung srcs
    added_tests "$1" >"$plan/added"
    while read -r t exe rung; do
        [ -n "$t" ] || continue
        srcs=$(added_sources "$1" "$exe")
        echo "== build $exe: $srcs" >>"$log"
        # shellcheck disable=SC2086 # TEST_CFLAGS and the sources are lists
        if ! (cd "$src/tests" && $CC $TEST_CFLAGS -I. -o "$kept/$np/$exe" $srcs $HARNESS_SRCS -lm) \
            >>"$log" 2>&1; then
            early "does not build: $exe; log: $log"
            return 1
        fi
    done <"$plan/added"
}

# names_exist TEST...: each a "RUNG:TEST" of the suite, or one the patch adds.
names_exist() {
    local t missing=()
    for t in "$@"; do
        if grep -q "^$t " "$plan/added"; then continue; fi
        case " $(echo $all) " in *" ${t#*:} "*) ;; *) missing+=("$t") ;; esac
        [ -d "$src/${t%%:*}" ] || missing+=("$t")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    early "names tests that do not exist: ${missing[*]}; log: $log"
    return 1
}

# queue_bug TEST...: the Caught-by: tests, beside the others.
queue_bug() {
    local t
    [ $# -gt 0 ] || { early "no Caught-by: line"; return; }
    for t in "$@"; do
        queue "$plan" "$t" no "$scratch/bin/echo_tests" "$kept/$np/${t%%:*}/server" "${t#*:}"
    done
}

# queue_solution PATCH RUNGS: every test of its rungs but its Changes:, and
# what it adds. Its rungs are those whose folder it changes; one that
# changes only common/ is tested in every rung. (A change to common/ beside
# a rung's own, such as reuseport's new listener option, is built into
# every rung above, warnings as errors, but tested where it is used.)
queue_solution() {
    local r t exe rung test_rungs quiet serial
    test_rungs=$(body "$1" |
        sed -n 's#^diff --git a/\(\(beyond/\)\{0,1\}[0-9][0-9]-[^/ ]*\)/.*#\1#p' | sort -u)
    [ -n "$test_rungs" ] || test_rungs=$2
    quiet=" $(listed_tests LADDER_QUIET_TESTS | tr '\n' ' ') "
    serial=" $(listed_tests LADDER_SERIAL_TESTS | tr '\n' ' ') "
    for r in $test_rungs; do
        for t in $all; do
            grep -qxF -- "${r#beyond/}:$t" "$plan/changes" && continue
            queue "$plan" "${r#beyond/}:$t" "$(schedule "$t" "$quiet" "$serial")" \
                "$scratch/bin/echo_tests" "$kept/$np/$r/server" "$t"
        done
    done
    while read -r t exe rung; do
        [ -n "$t" ] || continue
        queue "$plan" "$t" yes "$kept/$np/$exe" "$kept/$np/$rung/server"
    done <"$plan/added"
}

# schedule TEST " QUIET " " SERIAL ": how the pool runs it, as ctest does
# (tests/CMakeLists.txt's lists): yes (alone, last), quiet or no.
schedule() {
    case "$3" in *" $1 "*) echo yes; return ;; esac
    case "$2" in *" $1 "*) echo quiet; return ;; esac
    echo no
}

# ---- check, phase 2: verdicts -------------------------------------------------

judge_patch() { # N
    local plan=$scratch/plan/$1 name kind log id t res ran=0 bad=() skipped=()
    name=$(cat "$plan/name"); kind=$(cat "$plan/kind"); log=$(cat "$plan/log")
    if [ -f "$plan/verdict" ]; then
        verdict FAIL "$name" "$(cat "$plan/verdict")"
        return
    fi
    while read -r id t; do
        res=$(job_result "$id" "$log")
        case $res in
        n/a) continue ;;
        skip) skipped+=("$t") ;;
        pass) [ "$kind" = bugs ] && bad+=("$t") ;;
        fail) [ "$kind" = bugs ] || bad+=("$t") ;;
        esac
        ran=$((ran + 1))
    done <"$plan/jobs"
    if [ "$kind" = bugs ]; then
        # A named test that does not apply to its rung, or skipped itself,
        # catches nothing.
        local caught
        caught=$(awk '{ print $2 }' "$plan/jobs" | tr '\n' ' ')
        if [ ${#bad[@]} -gt 0 ] || [ ${#skipped[@]} -gt 0 ] ||
            [ "$ran" -ne "$(wc -l <"$plan/jobs")" ]; then
            local why="${bad[*]:-}${skipped[*]:+ (skipped: ${skipped[*]})}"
            verdict FAIL "$name" "not caught by $why (of $caught); log: $log"
        else
            verdict ok "$name" "caught by $caught"
        fi
        return
    fi
    if [ "$ran" -eq 0 ]; then
        verdict FAIL "$name" "no test to run (touches no rung?)"
    elif [ ${#bad[@]} -gt 0 ]; then
        verdict FAIL "$name" "failing: ${bad[*]}; log: $log"
    else
        local changes note=""
        changes=$(cat "$plan/changes")
        [ -n "$changes" ] && note="; changes $(echo $changes)"
        verdict ok "$name" "$((ran - ${#skipped[@]})) tests pass$note"
    fi
}

# ---- refresh ----------------------------------------------------------------

# refresh_patch EDITS: a solution's NAME.patch written from its edits; a
# bug's edits tried.
refresh_patch() {
    local edits=$1 name plain stored
    name="$(basename "$(dirname "$edits")")/$(basename "$edits" .edits)"
    plain=$(plain_copy "$edits")
    if [ -s "$plain.why" ]; then
        verdict FAIL "$name" "$(sed 's/^labedit: [^ ]* line [0-9]*: //' "$plain.why")"
    elif [ "$(basename "$(dirname "$edits")")" = bugs ]; then
        verdict ok "$name" "its edits find their place (made when used: no patch to write)"
    elif stored=${edits%.edits}.patch && cmp -s "$plain" "$stored"; then
        verdict ok "$name" "unchanged"
    else
        cp "$plain" "$stored" && verdict ok "$name" "rewritten: $(basename "$stored")"
    fi
}

# ---- main -------------------------------------------------------------------

started=$SECONDS
if ! make_scratch >"$logs/scratch.log" 2>&1; then
    echo "check-workshop: cannot make a scratch copy of the tree; see $logs/scratch.log" >&2
    exit 1
fi
echo "== workshop patches: $mode (${#patches[@]} patches, scratch $scratch)"
if [ "$mode" = refresh ]; then
    for p in "${patches[@]}"; do refresh_patch "$p"; done
    echo "($((SECONDS - started)) s)"
    echo "$npass passed, $nfail failed"
    [ "$nfail" -eq 0 ]
    exit
fi
if ! build_suite; then
    echo "check-workshop: the test suite (tests/echo_tests.c) does not build;" \
        "see $logs/suite.log" >&2
    exit 1
fi
# The bugs first, each one's tests started as soon as it is built, so that
# building the next patches overlaps them (a failing test mostly waits out
# its time-outs, and the load cannot make it pass); then the solutions, whose
# tests start once every build is done, then the quiet ones, and last those
# that run alone.
mkdir -p "$scratch/res"
for p in "${patches[@]}"; do
    case $p in */bugs/*) prepare_patch "$(plain_copy "$p")"; launch_new ;; esac
done
for p in "${patches[@]}"; do
    case $p in */bugs/*) ;; *) prepare_patch "$(plain_copy "$p")" "${p%.edits}.patch" ;; esac
done
built=$SECONDS
echo "(applied and built in $((built - started)) s, the bugs' tests meanwhile;" \
    "$njobs tests, $jobs at a time)"
launch_new
drain
run_quiet
run_alone
i=0
while [ $i -lt $np ]; do
    i=$((i + 1))
    judge_patch $i
done
echo "(builds done after $((built - started)) s, tests done $((SECONDS - built)) s later)"
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
