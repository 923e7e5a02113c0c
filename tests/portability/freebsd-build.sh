#!/bin/sh
# portability:freebsd-build - the project's CMake build, made for FreeBSD.
#
#   tests/portability/freebsd-build.sh ROOT OUTDIR CMAKE
#
# No FreeBSD machine is needed: FreeBSD's installed headers, start files,
# libc, libm and libthr (a sysroot, sysroot-VERSION-amd64.tgz) and this
# machine's clang and lld compile and link C for FreeBSD/amd64. The build is
# the project's own, configured with tests/portability/freebsd.cmake as its
# toolchain file, so the files compiled, the flags (-std=c11 -Wall -Wextra
# -Werror, the include folders, Release's -O2), the loop and process reader
# clients/choose.sh picks for the target, what FreeBSD leaves out (07, 08,
# 09, tests/fault.c) and the libraries each executable links with are all
# what CMake decides for FreeBSD, listed nowhere else. Every executable is
# then checked to be a FreeBSD ELF executable, and printed with the
# libraries CMake named for it (its File API) and those it needs (readelf).
# Last, each header of common/ is compiled on its own with a rung's
# command line: a header that does not include what it uses fails here even
# when only a rung FreeBSD does not build includes it (reuseport.h, 09's).
#
# The sysroot comes from $LADDER_FREEBSD, a folder holding
# sysroot-*-amd64.tgz, else from ../shared/freebsd beside ROOT; it is
# unpacked into OUTDIR, never into the source tree. Without one, or without
# clang, ld.lld or make, this exits 77 (ctest: skipped) and says why.
# $LADDER_FREEBSD_CC is the clang (default clang). POSIX sh.
set -u
root=${1:?usage: freebsd-build.sh ROOT OUTDIR CMAKE}
out=${2:?usage: freebsd-build.sh ROOT OUTDIR CMAKE}
cmake=${3:?usage: freebsd-build.sh ROOT OUTDIR CMAKE}
root=$(cd "$root" && pwd) && mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
cc=${LADDER_FREEBSD_CC:-clang}

skip() { echo "skipped: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# ---- the sysroot and the tools ------------------------------------------------

if [ -n "${LADDER_FREEBSD:-}" ]; then
    from=$LADDER_FREEBSD
    tgz=$(ls "$from"/sysroot-*-amd64.tgz 2>/dev/null | sort | tail -n 1)
    [ -n "$tgz" ] || fail "LADDER_FREEBSD=$from holds no sysroot-*-amd64.tgz"
else
    from=$root/../shared/freebsd
    tgz=$(ls "$from"/sysroot-*-amd64.tgz 2>/dev/null | sort | tail -n 1)
    [ -n "$tgz" ] || skip "no FreeBSD sysroot here: set LADDER_FREEBSD to a folder holding" \
        "sysroot-VERSION-amd64.tgz (none in $from either)"
fi
command -v "$cc" >/dev/null 2>&1 || skip "no $cc (set LADDER_FREEBSD_CC to a clang)"
command -v ld.lld >/dev/null 2>&1 || skip "no ld.lld (apt-get install lld)"
command -v make >/dev/null 2>&1 || skip "no make"
version=$(basename "$tgz" | sed 's/^sysroot-//; s/-amd64\.tgz$//')
target=x86_64-unknown-freebsd$version
sysroot=$out/sysroot-$version
if ! [ -f "$sysroot/usr/include/sys/param.h" ]; then
    tar -C "$out" -xzf "$tgz" || fail "could not unpack $tgz into $out"
    [ -f "$sysroot/usr/include/sys/param.h" ] ||
        fail "$tgz did not unpack to $sysroot/usr/include"
fi
echo "FreeBSD $version sysroot from $tgz, in $sysroot; $("$cc" --version | head -n 1)"

# ---- configure and build, as CMake does for FreeBSD -------------------------------

build=$out/build
mkdir -p "$build/.cmake/api/v1/query" && : >"$build/.cmake/api/v1/query/codemodel-v2" || exit 1
# Nothing from this shell's environment goes into the flags.
unset CFLAGS CPPFLAGS LDFLAGS
if ! "$cmake" -S "$root" -B "$build" -G "Unix Makefiles" \
    -DCMAKE_TOOLCHAIN_FILE="$root/tests/portability/freebsd.cmake" \
    -DLADDER_FREEBSD_SYSROOT="$sysroot" -DLADDER_FREEBSD_TARGET="$target" \
    -DLADDER_FREEBSD_CC="$cc" -DCMAKE_BUILD_TYPE=Release -DLADDER_SANITIZE=none \
    -DLADDER_FORCE_PORTABLE=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$out/configure.log" 2>&1
then
    tail -n 20 "$out/configure.log" | sed 's/^/    /'
    fail "CMake could not configure the tree for $target (log: $out/configure.log)"
fi
sed -n 's/^-- \(loadgen: .*\)/\1/p; s/^-- \(io_ladder on .*\)/\1/p' "$out/configure.log"
grep -q '^HAVE_SYS_EVENT_H:INTERNAL=1$' "$build/CMakeCache.txt" ||
    fail "CMake found no <sys/event.h> in the sysroot (a FreeBSD without kqueue?)"

# The loop and reader CMake built loadgen with are the ones clients/choose.sh
# gives for this compiler and target.
choice=$(sh "$root/clients/choose.sh" "$cc" --target="$target" --sysroot="$sysroot") ||
    fail "clients/choose.sh failed for $target"
loop=${choice% *} reader=${choice#* }
if grep -q "^-- loadgen: $loop event loop, platform/proc_$reader.c$" "$out/configure.log"; then
    echo "ok   loadgen: the $loop loop and proc_$reader.c, as clients/choose.sh picks for $target"
else
    fail "clients/choose.sh picks '$choice' for $target; CMake built:" \
        "$(grep '^-- loadgen:' "$out/configure.log")"
fi

# One compiler process at a time, under nice: other tests share the machine.
if ! nice "$cmake" --build "$build" --parallel 1 >"$out/build.log" 2>&1; then
    grep -E 'error|warning|undefined' "$out/build.log" | head -n 20 | sed 's/^/    /'
    fail "the FreeBSD build failed (log: $out/build.log)"
fi
files=$(sed -n 's/^ *"file": "\(.*\)",*$/\1/p' "$build/compile_commands.json")
compiles=$(printf '%s\n' "$files" | grep -c .)
distinct=$(printf '%s\n' "$files" | sort -u | grep -c .)
echo "ok   $compiles compilations of $distinct files, as CMake lists them:" \
    "$(printf '%s\n' "$files" | sed "s|^$root/||" | sort -u | tr '\n' ' ')"

# ---- every executable CMake makes: a FreeBSD ELF executable ----------------------

# CMake's File API (codemodel-v2), one file per target, written one key a
# line: the top-level keys at one tab, the artifact's path, and each link
# fragment with its role ("libraries": what CMake names for the link).
exes=0 bad=0
for t in "$build"/.cmake/api/v1/reply/target-*.json; do
    info=$(awk '
        /^\t"type" : / { type = $3 }
        /^\t"nameOnDisk" : / { name = $3 }
        /^\t"artifacts" : / { in_art = 1 }
        in_art && /"path" : / { path = $3; in_art = 0 }
        /"fragment" : / { frag = $0; sub(/^[^:]*: "/, "", frag); sub(/",?$/, "", frag) }
        /"role" : "libraries"/ { libs = libs " " frag }
        END { gsub(/[",]/, "", type); gsub(/[",]/, "", name); gsub(/[",]/, "", path)
              if (type == "EXECUTABLE") printf "%s %s%s\n", name, path, libs }' "$t")
    [ -n "$info" ] || continue
    set -- $info
    name=$1 path=$build/$2
    shift 2
    exes=$((exes + 1))
    # ELF magic, 64-bit, little-endian, ELF version 1, OS/ABI 9 (FreeBSD).
    head=$(od -An -tx1 -N8 "$path" 2>/dev/null | tr -d ' \n')
    if [ "$head" != 7f454c4602010109 ]; then
        echo "FAIL $name: $path is not a FreeBSD ELF file (starts ${head:-nothing})"
        bad=$((bad + 1))
        continue
    fi
    needed="(no readelf)"
    if command -v readelf >/dev/null 2>&1; then
        needed=$(readelf -d "$path" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    fi
    printf 'ok   %-14s CMake names %-26s it needs %s\n' "$name" "${*:-(none)};" "${needed% }"
done
[ "$exes" -gt 0 ] || fail "CMake's File API lists no executable (no reply in $build/.cmake?)"
[ "$bad" -eq 0 ] || fail "$bad of $exes executables are not FreeBSD's"

# ---- each header of common/ on its own -------------------------------------------

# 01-blocking's command line (its flags and include folder), compiling a
# file that includes one header and nothing else.
line=$(sed -n 's/^ *"command": "\(.*\) -o [^ ]* -c [^ ]*\/01-blocking\/main\.c",*$/\1/p' \
    "$build/compile_commands.json" | head -n 1)
[ -n "$line" ] || fail "no compile command for 01-blocking/main.c in compile_commands.json"
hok=0 hall=0
for h in "$root"/common/*.h; do
    hall=$((hall + 1))
    # shellcheck disable=SC2086 # the command line, split into its words
    if err=$(printf '#include "%s"\n' "${h##*/}" | $line -fsyntax-only -x c - 2>&1); then
        hok=$((hok + 1))
    else
        echo "FAIL common/${h##*/} does not compile on its own for $target:"
        printf '%s\n' "$err" | grep 'error' | head -n 5 | sed "s|$root/||; s/^/    /"
    fi
done
[ "$hok" -eq "$hall" ] || fail "$((hall - hok)) of $hall headers of common/ need another first"
echo "ok   $hall headers of common/ compile on their own"
echo "the FreeBSD $version build: $distinct files compile, $exes executables link"
