#!/bin/sh
# doctor_check.sh CASE: scripts/doctor.sh on this machine, as it is (ready)
# and made to lack something (no-compiler, no-clang, old-cmake, low-fds). Each case
# checks the exit status and the line that names the problem.
set -u
cd "$(dirname "$0")/../.." || exit 2
doctor=scripts/doctor.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doctor-check.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

run() { # expected-status pattern [env assignments...]
    want=$1 pattern=$2
    shift 2
    env "$@" sh "$doctor" >"$tmp/out" 2>&1
    rc=$?
    cat "$tmp/out"
    if [ $rc -ne "$want" ]; then echo "FAIL: doctor.sh exited $rc, want $want"; exit 1; fi
    if ! grep -q "$pattern" "$tmp/out"; then echo "FAIL: no line matching '$pattern'"; exit 1; fi
    echo "ok: exit $rc and a line matching '$pattern'"
}

case ${1:-} in
ready)
    # The machine that runs this suite runs the class (it runs harder tests).
    run 0 '^ready for the class' ;;
no-compiler)
    # A PATH with the tools doctor.sh itself uses, but no cc, gcc or clang.
    mkdir "$tmp/bin"
    for t in sh uname sed awk grep ps pgrep tar id cat mktemp rm tr printf git make cmake \
        sysctl nc apt-get dnf; do
        p=$(command -v "$t" 2>/dev/null) && ln -s "$p" "$tmp/bin/$t"
    done
    run 1 '^MISSING  a C compiler' PATH="$tmp/bin" CC=cc ;;
no-clang)
    # Every command of this machine's PATH but clang (cc stays): make wall
    # would run, scripts/test.sh and lab.sh check would not, so on Linux
    # the class cannot.
    [ "$(uname -s)" = Linux ] ||
        { echo "skipped: off Linux a missing clang is a warning"; exit 77; }
    mkdir "$tmp/bin"
    IFS=:
    for d in $PATH; do
        for p in "$d"/*; do
            t=${p##*/}
            case $t in clang | clang-[0-9]* | clang++*) continue ;; esac
            [ -x "$p" ] && [ ! -e "$tmp/bin/$t" ] && ln -s "$p" "$tmp/bin/$t"
        done
    done
    unset IFS
    command -v cc >/dev/null 2>&1 || { echo "skipped: no cc here besides clang"; exit 77; }
    run 1 '^MISSING  clang' PATH="$tmp/bin" CC=cc ;;
old-cmake)
    # A cmake too old for the presets: its line names the problem, and its
    # fix line says how to install a newer one.
    mkdir "$tmp/bin"
    printf '#!/bin/sh\necho "cmake version 3.16.3"\n' >"$tmp/bin/cmake"
    chmod +x "$tmp/bin/cmake"
    run 1 '^MISSING  cmake 3.16 is older than 3.21 (.*labs)$' PATH="$tmp/bin:$PATH"
    grep -A1 '^MISSING  cmake 3.16' "$tmp/out" | grep -q '^ *fix: .*cmake.org/download' ||
        { echo "FAIL: the old cmake's fix line does not say how to get a newer one"; exit 1; }
    echo "ok: the fix line names a newer cmake" ;;
low-fds)
    # More descriptors than any machine allows: the open-file check must fail.
    run 1 '^MISSING  open files: hard limit' DOCTOR_MIN_FDS=1000000000 ;;
*) echo "usage: doctor_check.sh ready|no-compiler|no-clang|old-cmake|low-fds" >&2; exit 2 ;;
esac
