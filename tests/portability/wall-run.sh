#!/bin/sh
# portability:wall-posh, portability:wall-forced - one real `make wall`, run
# the way a Mac would run it as far as Linux can.
#
#   tests/portability/wall-run.sh ROOT SHELL RUNG [forced]
#
# In a copy of what `make wall` reads (the rung and its wall.sh, common/,
# clients/, platform/, scripts/lib/), with a PATH that holds only tools macOS has as well:
#   sh and the shell running wall.sh   SHELL (posh or dash: strict POSIX sh;
#                                      macOS's sh is bash 3.2)
#   awk                                original-awk, the BWK awk of macOS,
#                                      when installed
#   sed                                GNU sed --posix (GNU extensions off)
# and no timeout, nproc, stat, readlink, taskset (unless on Linux's own
# path), so a script that needs a GNU-only tool stops here.
# "forced" sets LADDER_FORCE_PORTABLE=1 and uses BSD make (bmake) when it is
# installed: the off-Linux path, loadgen on its kqueue loop through the shim,
# no taskset and no /proc figure.
# It passes when make wall exits 0 and printed the rung's figure, and (forced)
# when that path was the one taken; and fails on any line that shows a
# figure gone wrong: an awk error (BWK awk's "division by zero" when a
# figure is missing), a JSON "null" printed as a figure, a negative wait
# ("-1500.0 ms"). A figure the path cannot measure must read "not measured
# here". Forced, 03-threads takes macOS's branch (its figures from loadgen
# --server-pid, none on this path) and must print macOS's expect line, with
# a thread for each client served and one for main. Each failure quotes the
# lines it saw. Exit 77 (skipped) without SHELL.
set -u
root=${1:?usage: wall-run.sh ROOT SHELL RUNG [forced]}
shell=${2:?usage}
rung=${3:?usage}
mode=${4:-}
shell_path=$(command -v "$shell" 2>/dev/null) || {
    echo "skipped: $shell is not installed (apt-get install $shell)"
    exit 77
}
work=$(mktemp -d "${TMPDIR:-/tmp}/wall-run.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

tree=$work/tree
mkdir -p "$tree/06-kqueue" "$tree/build" "$tree/scripts" "$tree/$(dirname "$rung")" || exit 1
cp -R "$root/common" "$root/clients" "$root/platform" "$tree/" &&
    cp -R "$root/$rung" "$tree/$(dirname "$rung")/" &&
    cp -R "$root/scripts/lib" "$tree/scripts/" || exit 1
rm -f "$tree/$rung/server" "$tree/$rung/server-release"

bin=$work/bin
mkdir "$bin" || exit 1
tools="make cc clang gcc ld as basename dirname mktemp rm mkdir cat cp mv ls ln kill sleep
       pgrep ps find uname grep tr wc head tail cut sort printf echo env id date expr test
       true false bash sysctl od"
[ "$mode" = forced ] || tools="$tools taskset"
# The programs themselves, not this shell's builtins of the same name (posh
# has no printf builtin, for one).
for t in $tools; do
    for d in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
        if [ -x "$d/$t" ]; then ln -s "$d/$t" "$bin/$t"; break; fi
    done
done
ln -sf "$shell_path" "$bin/sh"
ln -sf "$shell_path" "$bin/$shell"
if bwk=$(command -v original-awk 2>/dev/null); then
    ln -s "$bwk" "$bin/awk"
    awk_used="original-awk (BWK)"
else
    ln -s "$(command -v awk)" "$bin/awk"
    awk_used="$(command -v awk) (original-awk not installed)"
fi
gnu_sed=$(command -v sed)
if "$gnu_sed" --posix -n p </dev/null >/dev/null 2>&1; then
    printf '#!%s\nexec %s --posix "$@"\n' "$shell_path" "$gnu_sed" >"$bin/sed"
    chmod +x "$bin/sed"
    sed_used="sed --posix"
else
    ln -s "$gnu_sed" "$bin/sed"
    sed_used="$gnu_sed"
fi
make_cmd=make
[ "$mode" = forced ] && [ -x "$(command -v bmake 2>/dev/null)" ] && {
    ln -s "$(command -v bmake)" "$bin/bmake"
    make_cmd=bmake
}

if [ "$mode" = forced ]; then
    LADDER_FORCE_PORTABLE=1
    # The path plans its client ports as on macOS, where they stay in
    # TIME_WAIT for 2 x MSL = 30 s: 03's second hold and 06's and 07's C10K
    # after the scan wait for the first run's. Those waits are the path's own
    # (Linux gives each destination its ports), so a 1 s MSL takes and says
    # the same waits, 3 s each instead of 31.
    LADDER_FORCED_MSL_MS=1000
    export LADDER_FORCE_PORTABLE LADDER_FORCED_MSL_MS
fi
echo "make wall in $rung: $make_cmd, wall.sh under $shell_path, awk = $awk_used, $sed_used," \
    "LADDER_FORCE_PORTABLE=${LADDER_FORCE_PORTABLE:-unset};" \
    "PATH holds only: $(ls "$bin" | tr '\n' ' ')"
(cd "$tree/$rung" && PATH=$bin "$make_cmd" wall WALL_SH="$shell_path" CC="${CC:-cc}") \
    >"$work/out" 2>&1
rc=$?
cat "$work/out"
fails=0
check() { # what grep-pattern
    if grep -q "$2" "$work/out"; then
        echo "ok   $1"
    else
        echo "FAIL $1 (no line matching: $2); the run's last lines:"
        tail -5 "$work/out" | sed 's/^/    /'
        fails=$((fails + 1))
    fi
}
if [ $rc -eq 0 ]; then
    echo "ok   make wall exited 0"
else
    echo "FAIL make wall exited $rc"
    fails=$((fails + 1))
fi
if grep -q 'could not measure\|not found\|parameter not set\|unbound variable' "$work/out"; then
    echo "FAIL the run reported an error (above)"
    fails=$((fails + 1))
fi
# bad WHAT PATTERN: fail, quoting them, if lines match the extended regex.
bad() {
    if grep -Eq "$2" "$work/out"; then
        echo "FAIL $1; saw:"
        grep -E "$2" "$work/out" | head -5 | sed 's/^/    /'
        fails=$((fails + 1))
    else
        echo "ok   no $1"
    fi
}
bad "awk error" '(^|[^a-z])awk: |division by zero|syntax error'
bad "JSON null printed as a figure" '(^|[^a-z_])null([^a-z_]|$)'
bad "negative time" '(^|[ (])-[0-9][0-9.]* *(ms|µs|us|s)([^a-z]|$)'
case $rung in
01-*) check "the stall measured" 'B waited [0-9][0-9.]* ms for its echo' ;;
02-*) check "the children counted" 'served [0-9][0-9]* clients' ;;
03-*) check "the threads held" 'stacks: *served [0-9]' ;;
*) check "a round trip measured" 'idle: round trip' ;;
esac
# 02 to 05 name their wall beside other kernels' (and, forced, the path).
case $rung in
0[2-5]-*) check "the wall named beside other kernels'" 'the wall is a number your kernel chose' ;;
esac
if [ "$mode" = forced ]; then
    check "loadgen on its kqueue loop through the shim" 'kqueue event loop, through the kqueue shim'
    case $rung in
    0[2-5]-*) check "the off-Linux path named" 'Here (Linux, on the off-Linux path' ;;
    esac
    case $rung in
    01-*) ;;
    0[2367]-*) check "no /proc figure" 'read from /proc, which the off-Linux path leaves out' ;;
    *) check "not pinned" 'not pinned: the off-Linux path pins nothing' ;;
    esac
    # 03 takes macOS's branch there: its figures from loadgen --server-pid,
    # and macOS's expect line, a thread for each client served and main's.
    case $rung in
    03-*)
        check "macOS's branch: the thread count from loadgen" \
            'stacks: *served [0-9]*; while held: threads [n0-9][^,]*,$'
        check "macOS's branch: the footprint" '^ *footprint (phys_footprint) '
        served=$(sed -n 's/.*default stacks: *served \([0-9][0-9]*\);.*/\1/p' "$work/out" | sed 1q)
        check "macOS's expect line, $served clients + 1" \
            "expect: $((${served:-0} + 1)) threads, and a footprint of tens of KiB per client"
        ;;
    esac
    if grep -q 'pinned to CPU\|PSS over' "$work/out"; then
        echo "FAIL a Linux-only figure (pinning, PSS) on the off-Linux path"
        fails=$((fails + 1))
    fi
fi
[ $fails -eq 0 ] || { echo "FAIL: $fails check(s) failed"; exit 1; }
echo "make wall in $rung passed under $shell${mode:+ ($mode)}"
