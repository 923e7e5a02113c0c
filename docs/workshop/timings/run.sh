#!/usr/bin/env bash
# run.sh linux|portable OUT-DIR: time the guide's student commands, in the
# guide's order, on a fresh clone, as a student types them (builds
# included). With LOCK=FILE set (a shared machine), each command runs under
# `flock FILE` and is timed inside the lock, so waiting for other jobs is not
# counted; what other jobs do meanwhile is, which makes every time an upper
# bound. "portable" is the macOS/FreeBSD path on Linux: LADDER_FORCE_PORTABLE=1,
# awk = original-awk and sh = posh first on PATH. Writes OUT-DIR/MODE.tsv
# (command, seconds, exit status) and one log per command in OUT-DIR/logs/.
set -u
mode=${1:?linux or portable} outdir=${2:?output directory}
src=$(cd "$(dirname "$0")/../../.." && pwd)
lock=${LOCK:-}
mkdir -p "$outdir/logs" && outdir=$(cd "$outdir" && pwd)
out=$outdir/$mode.tsv
printf 'command\tseconds\texit\n' >"$out"
clone=$(mktemp -d "${TMPDIR:-/tmp}/class-$mode.XXXXXX")/io-ladder
git clone -q "$src" "$clone" && cd "$clone" || exit 1
if [ "$mode" = portable ]; then
    bin=$(dirname "$clone")/bin; mkdir -p "$bin"
    ln -s "$(command -v original-awk)" "$bin/awk"; ln -s "$(command -v posh)" "$bin/sh"
    export PATH=$bin:$PATH LADDER_FORCE_PORTABLE=1
fi
export LOG OUT=$out
r() { # r LABEL CMD...: one timed command
    LOG=$outdir/logs/$mode-$1.log; local label=$1; shift
    ${lock:+flock "$lock"} bash -c 's=$(date +%s.%N); timeout -k 10 900 "$@" >"$LOG" 2>&1; rc=$?
        e=$(date +%s.%N); printf "%s\t%.1f\t%s\n" "$0" "$(echo "$e - $s" | bc)" "$rc" >>"$OUT"' \
        "$label" "$@"
}
srv() { bash -c "$1 & pid=\$!; sleep 0.5; $2; kill \$pid; wait \$pid"; }  # a server by hand
export -f srv
lg=./build/wall/loadgen
r doctor sh scripts/doctor.sh
r wall-01-fresh make -C 01-blocking wall
# the forced path on Linux builds loadgen over the kqueue shim, under its own name
[ -e $lg ] || ln -s loadgen-shim $lg
r idle-cpu-01 scripts/lab.sh idle-cpu 01-blocking
r busy-poll-cycle bash -c 'git apply docs/workshop/solutions/busy-poll.patch &&
  scripts/lab.sh idle-cpu 01-blocking && make -C 01-blocking wall
  git apply -R docs/workshop/solutions/busy-poll.patch'
r wall-02 make -C 02-fork wall
r wall-03 make -C 03-threads wall
r ex03-hold bash -c "make -C 03-threads server-release &&
  srv './03-threads/server-release -p 9998' \
  '$lg hold -p 9998 -n 2000 --duration 3 --server-pid \$pid'"
r wall-04 make -C 04-select wall
r ex04-scan bash -c "make -C 04-select server-release &&
  srv './04-select/server-release -p 9998 2>select.log' \
  '$lg scan -p 9998 --idle 0,1000 --duration 2'"
r wall-05 make -C 05-poll wall
r wall-06 make -C 06-kqueue wall
r ex06-c10k bash -c "make -C 06-kqueue server-release && srv './06-kqueue/server-release -p 9998' \
  '$lg c10k -p 9998 -n 2000 --duration 3 --server-pid \$pid'"
rung=06-kqueue
if [ "$mode" = linux ]; then
    rung=07-epoll
    r wall-07 make -C 07-epoll wall
    r ex06-strace bash -c "make -C 06-kqueue server-release
      strace -c -f -o strace.txt ./06-kqueue/server-release -p 9998 & sleep 1
      $lg c10k -p 9998 -n 2000 --duration 3; kill \$(pgrep -P \$!); wait; head -20 strace.txt"
fi
r test-first-$rung scripts/test.sh $rung
r test-again-$rung scripts/test.sh $rung
if [ "$mode" = linux ]; then
    r edge-triggered-check bash -c 'git apply docs/workshop/solutions/edge-triggered.patch &&
      scripts/test.sh 07-epoll; rc=$?
      git apply -R docs/workshop/solutions/edge-triggered.patch; exit $rc'
    r framing bash -c "git apply docs/workshop/solutions/framing.patch && make -C 07-epoll &&
      srv './07-epoll/server -v -p 9998' \
        '{ printf \"\\000\\020\\000\\000\"; head -c 1048576 /dev/zero; } |
          nc -N 127.0.0.1 9998 | wc -c'
      git apply -R docs/workshop/solutions/framing.patch"
    r reuseport bash -c "git apply docs/workshop/solutions/reuseport.patch &&
      make -C 07-epoll server-release &&
      srv './07-epoll/server-release -p 9998 -n 1' \
        '$lg c10k -p 9998 -n 2000 --duration 5 --server-pid \$pid' &&
      srv './07-epoll/server-release -p 9998 -n 2' \
        '$lg c10k -p 9998 -n 2000 --duration 5 --server-pid \$pid'
      git apply -R docs/workshop/solutions/reuseport.patch"
    for s in pool patched 07; do
        dir=beyond/08-io_uring; [ $s = 07 ] && dir=07-epoll
        r ex08-hold-$s bash -c "{ [ $s != patched ] ||
            git apply docs/workshop/solutions/buffer-per-connection.patch; } &&
          make -C $dir server-release && srv './$dir/server-release -p 9998' \
            '$lg hold -p 9998 -n 10000 --duration 3 --server-pid \$pid'
          [ $s != patched ] || git apply -R docs/workshop/solutions/buffer-per-connection.patch"
    done
    r wall-08 make -C beyond/08-io_uring wall
    r wall-09 make -C beyond/09-reuseport wall
fi
for L in L1 L2 L3 L4 L5; do  # a lab cycle: plant, check (red), reset, check the code (green)
    r lab-$L-plant scripts/lab.sh plant $L
    r lab-$L-check-red scripts/lab.sh check
    r lab-$L-reset scripts/lab.sh reset
    r lab-$L-check-green scripts/lab.sh check $L
done
