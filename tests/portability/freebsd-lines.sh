#!/bin/sh
# portability:freebsd-lines - what the walls and the reproduction's report
# say on FreeBSD, on a Linux made to look like one: uname -s says FreeBSD,
# and fakes of sysctl, cpuset and freebsd-version answer as FreeBSD 13.4's
# do. No server is measured: a fake server announces its port, a fake
# loadgen prints a scan's results.
#   - the walls pin with cpuset -l: the server started "pinned" runs under
#     cpuset -l CPU, and so does the scan's loadgen (loadgen --cpu is
#     Linux's); the note says so, never "taskset is Linux-only";
#   - the advice for descriptors and the accept queue says "as root:" (no
#     sudo in FreeBSD's base) and names /etc/login.conf, not
#     /etc/security/limits.conf or launchctl;
#   - scripts/reproduce.sh's machine lines: hw.model (FreeBSD's CPU) once,
#     and the release from freebsd-version; on macOS (sysctl and sw_vers
#     faked as a Mac's) the brand string, then the Mac's model, and macOS's
#     version.
# The walls' library is sourced by sh, as the walls source it, with the
# BWK awk as awk where original-awk is installed.
#
#   tests/portability/freebsd-lines.sh ROOT
set -u
root=${1:?usage: freebsd-lines.sh ROOT}
work=$(mktemp -d "${TMPDIR:-/tmp}/freebsd-lines.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
bin=$work/bin
mkdir -p "$bin" "$work/tree/05-poll" "$work/tree/scripts" || exit 1
cp -R "$root/scripts/lib" "$work/tree/scripts/" || exit 1
if bwk=$(command -v original-awk 2>/dev/null); then
    ln -s "$bwk" "$bin/awk"
    awk_used="original-awk (BWK)"
else
    awk_used="$(command -v awk) (original-awk not installed)"
fi
real_uname=$(command -v uname)

# fake NAME BODY: a script on PATH first.
fake() { printf '#!/bin/sh\n%s\n' "$2" >"$bin/$1" && chmod +x "$bin/$1"; }
fake uname "case \$1 in -s) echo FreeBSD ;; *) exec $real_uname \"\$@\" ;; esac"
# sysctl -n NAME...: the values of $work/sysctl (NAME VALUE lines), exit 1
# on a name it has not got, as sysctl does.
fake sysctl "[ \"\$1\" = -n ] && shift
for n in \"\$@\"; do
    v=\$(awk -v n=\"\$n\" '\$1 == n { sub(/^[^ ]* /, \"\"); print; f = 1 } END { exit !f }' \\
        \"$work/sysctl\") || exit 1
    echo \"\$v\"
done"
# cpuset -g -p PID: FreeBSD's two lines; cpuset -l CPU CMD...: noted, then CMD.
fake cpuset "if [ \"\$1\" = -g ]; then
    echo \"pid \$3 mask: 2, 3\"; echo \"pid \$3 domain policy: first-touch mask: 0\"; exit 0
fi
[ \"\$1\" = -l ] || exit 2
echo \"cpuset -l \$2 \${3##*/}\" >>\"$work/pinned\"
shift 2
exec \"\$@\""
fake freebsd-version 'echo 13.4-RELEASE-p1'
# The server: announces its port, then waits for SIGTERM.
fake server-release 'trap "exit 0" TERM; echo "listening on 127.0.0.1:4321"
while :; do sleep 1; done'
mv "$bin/server-release" "$work/tree/05-poll/server-release"
# loadgen scan: two idle counts' results.
fake loadgen 'for n in 0 100; do
    echo "{\"mode\":\"scan\",\"idle\":$n,\"rtt_p50_us\":2$n.0,\"server_cpu_ms_per_1k\":null}"
done'
cat >"$work/sysctl" <<'EOF'
hw.model Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz
hw.physmem 8589934592
hw.ncpu 4
kern.smp.threads_per_core 1
kern.vm_guest none
kern.timecounter.hardware TSC-low
kern.ipc.soacceptqueue 128
kern.maxfilesperproc 1000
net.inet.ip.portrange.first 10000
net.inet.ip.portrange.last 65535
net.inet.tcp.msl 30000
EOF

: >"$work/pinned"
fails=0
# has WHAT TEXT [FILE]: FILE (default $work/out) holds TEXT, a fixed string.
has() {
    if grep -F -q -e "$2" "${3:-$work/out}"; then
        echo "ok   $1"
    else
        echo "FAIL $1: no line with \"$2\"; saw:"
        sed 's/^/    /' "${3:-$work/out}" | head -n 12
        fails=$((fails + 1))
    fi
}
# lacks WHAT TEXT: $work/out holds no TEXT.
lacks() {
    if grep -F -q -e "$2" "$work/out"; then
        echo "FAIL $1: \"$2\" is there:"
        grep -F -e "$2" "$work/out" | sed 's/^/    /'
        fails=$((fails + 1))
    else
        echo "ok   $1"
    fi
}

# ---- the walls (scripts/lib/wall.sh, sourced in a rung's folder) ------------------
walls() {
    (cd "$work/tree/05-poll" && PATH="$bin:$PATH" LADDER_FORCE_PORTABLE=0 sh -c '
        . ../scripts/lib/wall.sh
        LOADGEN=$1
        echo "PIN=$PIN"
        start_server pinned
        scan 0,100
        stop_server
        accept_queue_note
        (need_fds 2000)
        (ulimit -n 500 2>/dev/null || { echo "no ulimit -n here"; exit 0; }; need_fds 600)
        ' sh "$bin/loadgen") >"$work/out" 2>&1
}
walls
echo "the walls' library on a fake FreeBSD (uname -s, sysctl, cpuset); awk = $awk_used"
has "PIN is cpuset" "PIN=cpuset"
has "the server pinned with cpuset -l" "cpuset -l 2 server-release" "$work/pinned"
has "the scan's loadgen pinned with cpuset -l" "cpuset -l 2 loadgen" "$work/pinned"
has "the scan's command as typed" "\$ cpuset -l 2 loadgen scan -p 4321 --idle 0,100"
has "the note names cpuset -l" "(server and client pinned to CPU 2: cpuset -l)"
lacks "no taskset is Linux-only" "taskset is Linux-only"
lacks "no loadgen --cpu" "--cpu"
has "the scan's line" "100 idle: round trip"
has "the accept queue's advice as root" "as root: sysctl kern.ipc.soacceptqueue=4096"
has "kern.maxfilesperproc's advice as root" \
    "as root: sysctl kern.maxfilesperproc=3000 kern.maxfiles=5000"
if grep -q 'hard limit (ulimit -Hn) is 500' "$work/out"; then
    has "the hard limit's advice names /etc/login.conf" ":openfiles=600: in your login class"
elif grep -q 'no ulimit -n here' "$work/out"; then
    echo "note: this sh cannot lower its limit (ulimit -n): the login.conf advice is not checked"
else
    echo "FAIL the hard limit's advice: need_fds 600 under ulimit -n 500 did not stop; saw:"
    sed 's/^/    /' "$work/out" | tail -n 5
    fails=$((fails + 1))
fi
lacks "no sudo" "sudo"
lacks "no limits.conf" "limits.conf"
lacks "no launchctl" "launchctl"

# ---- the reproduction's machine lines (scripts/reproduce.sh, bash) ---------------
# describe_sysctl, taken out of the script and run alone.
describe() {
    sed -n '/^describe_sysctl() {$/,/^}$/p' "$root/scripts/reproduce.sh" >"$work/describe.sh"
    PATH="$bin:$PATH" PORT_TIME_WAIT_S=60 bash -c '. "$1"; describe_sysctl
        echo "cpu: $M_CPU"; echo "distro: $M_DISTRO"' bash "$work/describe.sh" >"$work/out" 2>&1
}
describe
echo "scripts/reproduce.sh's describe_sysctl, FreeBSD"
has "the CPU once" "cpu: Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz"
lacks "hw.model not twice" "2.40GHz (Intel"
has "the release from freebsd-version" "distro: FreeBSD 13.4-RELEASE-p1"
echo "scripts/reproduce.sh's describe_sysctl, macOS"
rm "$bin/freebsd-version"
fake sw_vers 'echo 14.1'
printf '%s\n' 'machdep.cpu.brand_string Apple M1 Pro' 'hw.model MacBookPro18,1' \
    'hw.memsize 17179869184' >"$work/sysctl"
describe
has "the brand string, then the Mac's model" "cpu: Apple M1 Pro (MacBookPro18,1)"
has "macOS's version" "distro: macOS 14.1"

[ $fails -eq 0 ] || { echo "FAIL: $fails check(s)"; exit 1; }
echo "the walls and the report say what FreeBSD (and macOS) have"
