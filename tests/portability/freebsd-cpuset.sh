#!/bin/sh
# portability:freebsd-cpuset - scripts/lib/ladder.sh's allowed_cpus reads
# FreeBSD's `cpuset -g -p PID`, which prints two lines:
#   pid 1234 mask: 0, 1
#   pid 1234 domain policy: first-touch mask: 0
# The CPUs are the first line's; the second is the memory domains. A fake
# cpuset on PATH prints that output (and other masks), with the BWK awk as
# awk where original-awk is installed (it refuses a newline in a -v value,
# which is how two lines once left no CPU at all). The library is sourced
# by sh, as the walls source it, and by bash in the reproduction.
#
#   tests/portability/freebsd-cpuset.sh ROOT
set -u
root=${1:?usage: freebsd-cpuset.sh ROOT}
bin=$(mktemp -d "${TMPDIR:-/tmp}/freebsd-cpuset.XXXXXX") || exit 1
trap 'rm -rf "$bin"' EXIT INT TERM
if bwk=$(command -v original-awk 2>/dev/null); then
    ln -s "$bwk" "$bin/awk"
    awk_used="original-awk (BWK)"
else
    awk_used="$(command -v awk) (original-awk not installed)"
fi
fails=0
# expect MASK DOMAINS WANT: the fake prints MASK and DOMAINS as FreeBSD does.
expect() {
    {
        echo '#!/bin/sh'
        echo "echo 'pid 1234 mask: $1'"
        echo "echo 'pid 1234 domain policy: first-touch mask: $2'"
    } >"$bin/cpuset"
    chmod +x "$bin/cpuset"
    got=$(PATH="$bin:$PATH" sh -c '. "$1/scripts/lib/ladder.sh"; PIN=cpuset; allowed_cpus' \
        sh "$root" 2>&1)
    if [ "$got" = "$3" ]; then
        echo "ok   mask \"$1\", domains \"$2\": CPUs $got"
    else
        echo "FAIL mask \"$1\", domains \"$2\": want CPUs \"$3\", got \"$got\""
        fails=$((fails + 1))
    fi
}
echo "allowed_cpus with a fake cpuset(1); awk = $awk_used"
# (Not "0 1": that is what allowed_cpus falls back to on a 2-CPU machine.)
expect "0, 1, 2, 3" "0" "0 1 2 3"
expect "2" "0" "2"
expect "0, 2, 5, 6, 7" "0, 1" "0 2 5 6 7"
[ $fails -eq 0 ] || { echo "FAIL: $fails case(s)"; exit 1; }
echo "allowed_cpus reads FreeBSD's cpuset output"
