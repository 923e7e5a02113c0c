#!/usr/bin/env bash
# The test command. From a fresh clone: configure, build the sanitizer
# configurations, and run the black-box suite with ctest.
#   dev   ASan + UBSan: every server, the kqueue shim's own tests
#   tsan  ThreadSanitizer: 03-threads, the only server with threads
# Usage: scripts/test.sh [extra ctest arguments, e.g. -R 05-poll]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/prereqs.sh
ensure_tools cmake make clang

export CC=${CC:-clang}
ensure_sanitizers "$CC"
jobs=$(nproc 2>/dev/null || echo 2)

echo "== dev build (ASan + UBSan) =="
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$jobs"
ctest --preset dev "$@"

echo "== tsan build (ThreadSanitizer: 03-threads and the kqueue shim) =="
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs"
ctest --preset tsan "$@"

# The workshop's solution and bug patches (docs/workshop/) still apply and do
# what they say. Skipped when arguments narrow the run to some tests.
if [ $# -eq 0 ]; then
    echo "== workshop patches (scripts/check-workshop.sh) =="
    scripts/check-workshop.sh
else
    echo "(workshop patches not checked: run scripts/check-workshop.sh)"
fi
