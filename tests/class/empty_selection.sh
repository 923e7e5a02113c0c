#!/bin/sh
# empty_selection.sh: a selection of tests that matches nothing is a
# failure, never a green run.
#   1. the presets: `ctest --preset dev|tsan -R NOTHING` exits non-zero
#      (CMakePresets.json's noTestsAction), tried on a scratch project that
#      uses this tree's presets file and holds one test, which the control
#      selection does pick and pass;
#   2. scripts/test.sh -R NOTHING exits 1, says which selection matched
#      nothing, and never prints "all passed". It only configures and lists
#      (ctest -N): a selection that picks nothing builds and runs nothing.
# shellcheck disable=SC2015 # ok() always succeeds, so "test && ok || fail" is if-then-else
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/empty-selection.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
failures=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
nothing='^no-such-test-anywhere$'

# 1. The presets, on a project of one test.
proj=$tmp/project
mkdir -p "$proj"
cp "$src/CMakePresets.json" "$proj/"
cat >"$proj/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.21)
project(empty_selection NONE)
enable_testing()
add_test(NAME the-one-test COMMAND ${CMAKE_COMMAND} -E true)
EOF
for preset in dev tsan; do
    if ! (cd "$proj" && cmake --preset "$preset" >"$tmp/configure.log" 2>&1); then
        cat "$tmp/configure.log"
        fail "cmake --preset $preset does not configure the scratch project"
        continue
    fi
    (cd "$proj" && ctest --preset "$preset" -R '^the-one-test$') >"$tmp/one.log" 2>&1 &&
        ok "ctest --preset $preset: a selection of one test runs it and passes" ||
        { cat "$tmp/one.log"; fail "ctest --preset $preset -R the-one-test did not pass"; }
    (cd "$proj" && ctest --preset "$preset" -R "$nothing") >"$tmp/none.log" 2>&1
    rc=$?
    [ $rc -ne 0 ] && ok "ctest --preset $preset: a selection of nothing fails (exit $rc)" ||
        fail "ctest --preset $preset -R '$nothing' exited 0: $(tr '\n' ' ' <"$tmp/none.log")"
done

# 2. scripts/test.sh.
bash "$src/scripts/test.sh" -R "$nothing" >"$tmp/test.log" 2>&1
rc=$?
[ $rc -eq 1 ] && ok "scripts/test.sh -R '$nothing' exits 1" ||
    fail "scripts/test.sh -R '$nothing' exited $rc"
grep -qF "matches: ctest -R $nothing" "$tmp/test.log" &&
    ok "it says which selection matched nothing" ||
    fail "it did not say which selection matched nothing"
grep -q 'all passed' "$tmp/test.log" &&
    fail "it printed 'all passed'" || ok "it did not print 'all passed'"
[ $failures -eq 0 ] || { echo "--- scripts/test.sh said:"; cat "$tmp/test.log"; }

echo
if [ $failures -eq 0 ]; then echo "empty selection: passed"; exit 0; fi
echo "empty selection: $failures failed"
exit 1
