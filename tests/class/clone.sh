#!/bin/sh
# Sourced by the class tests that play a student on a fresh clone
# (lab_rehearsal.sh, lab_verdicts.sh, student_steps.sh). With NAME:
#   class_clone NAME
# sets src (this repository), tmp (a scratch folder removed on exit) and
# clone ($tmp/io-ladder: the tracked files as they are now, uncommitted
# edits included, as a repository of its own with one commit: what a
# student's fresh clone holds), and cds there; g is git as the student;
# ok and fail print a result line, fail counting it in failures. Exits 2
# when the scratch clone cannot be made.
failures=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
g() { git -c user.name=student -c user.email=student@localhost "$@"; }

class_clone() {
    src=$(cd "$(dirname "$0")/../.." && pwd)
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 2
    trap 'rm -rf "$tmp"' EXIT
    trap 'exit 130' INT TERM
    clone=$tmp/io-ladder
    mkdir -p "$clone"
    if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
        (cd "$src" && git ls-files -z | xargs -0 tar -cf -) | tar -C "$clone" -xf - || exit 2
    else
        (cd "$src" && tar --exclude=./build --exclude=./results -cf - .) |
            tar -C "$clone" -xf - || exit 2
    fi
    cd "$clone" || exit 2
    g init -q && g add -A && g commit -qm "fresh clone" || exit 2
}
