#!/bin/sh
# doctor.sh - is this machine ready for the I/O ladder class?
#
#   sh scripts/doctor.sh      run it the day before, on every machine
#
# Checks what the class's commands use: a C compiler and make (every `make
# wall`), clang (scripts/test.sh, `lab.sh check` and check-workshop.sh build
# with it), the sanitizer runtimes (`make` builds ./server with ASan +
# UBSan; the tests add TSan), git (the labs), CMake 3.21 or newer
# (CMakePresets.json is version 3; the tests and labs), the tools the
# scripts call (awk, sed, grep, ps, pgrep, mktemp, tar), nc, the open-file
# limits, the accept queue, the ephemeral ports and, on macOS, the thread
# and process caps. Install lines are given for Debian 12, Ubuntu 22.04 and
# 24.04, Fedora, macOS (Homebrew or the Command Line Tools) and FreeBSD;
# limits are only ever advised upwards.
# One line per check: "ok", "warn" (the class runs, one demonstration is
# weaker; the line says which and why) or "MISSING" (with the one command
# that fixes it). Exit status 0 when the class can run here, 1 when not.
#
# POSIX sh (dash, posh, macOS's /bin/sh). It installs nothing itself.
# Environment: CC, the compiler make will use (default cc); DOCTOR_MIN_FDS
# (default 10100: C10K's clients plus a margin).
set -u
# The limits and caps are read as the walls read them: scripts/lib/ladder.sh
# (found from $0 by the shell alone: a PATH without dirname still runs this).
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
. "$here/lib/ladder.sh"
ladder_platform

os=$LADDER_OS
missing=0
warned=0
ok() { printf 'ok       %s\n' "$*"; }
warn() { printf 'warn     %s\n' "$*"; warned=$((warned + 1)); }
# bad WHAT FIX
bad() { printf 'MISSING  %s\n         fix: %s\n' "$1" "$2"; missing=$((missing + 1)); }
have() { command -v "$1" >/dev/null 2>&1; }

# "sudo " unless we are root already (containers often have no sudo).
if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo "; fi

# The one command that installs packages here: install DEBIAN FEDORA BREW FREEBSD.
distro=$(sed -n 's/^ID=//p' /etc/os-release 2>/dev/null | tr -d '"')
distro_version=$(sed -n 's/^VERSION_ID=//p' /etc/os-release 2>/dev/null | tr -d '"')
# clang's sanitizer runtimes, for apt: libclang-rt-dev on Debian 12 and
# Ubuntu 24.04 (only a Recommends of clang there); Ubuntu 22.04 has no such
# package, and its clang-14 brings them (libclang-common-14-dev).
case $distro:$distro_version in
ubuntu:22.04 | ubuntu:20.04) apt_clang="clang" ;;
*) apt_clang="clang libclang-rt-dev" ;;
esac
install() {
    case $os in
    Darwin)
        if [ "$3" = xcode ]; then echo "xcode-select --install"; else echo "brew install $3"; fi ;;
    FreeBSD) echo "${sudo}pkg install -y $4" ;;
    *)
        if have apt-get; then echo "${sudo}apt-get install -y --no-install-recommends $1"
        elif have dnf; then echo "${sudo}dnf install -y $2"
        else echo "install $1 (Debian names) with your package manager"; fi ;;
    esac
}

echo "I/O ladder: checking this machine ($os$([ -n "$distro" ] && echo ", $distro"), $(uname -m))"

# ---- compiler, make, sanitizers ---------------------------------------------------

probe=$(mktemp -d "${TMPDIR:-/tmp}/doctor.XXXXXX") || exit 1
trap 'rm -rf "$probe"' EXIT
trap 'exit 130' INT TERM
printf '#include <stdio.h>\nint main(void) { puts("ok"); return 0; }\n' >"$probe/p.c"

# links CC ["FLAGS"]: the compiler builds and runs a tiny program with FLAGS
# (one word list: posh rejects "$@" and "$*" with no arguments under set -u).
links() {
    c=$1
    flags=${2:-}
    # shellcheck disable=SC2086 # a list of flags, none with spaces
    "$c" -std=c11 $flags -o "$probe/a.out" "$probe/p.c" >"$probe/log" 2>&1 &&
        "$probe/a.out" >/dev/null 2>&1
}

CC=${CC:-cc}
if ! have "$CC"; then
    for c in cc clang gcc; do have "$c" && { CC=$c; break; }; done
fi
cc_fix=$(install "build-essential clang" "gcc clang make" xcode "gcc clang gmake")
if ! have "$CC" || ! links "$CC"; then
    bad "a C compiler (cc, clang or gcc) that builds a C11 program" "$cc_fix"
    CC=""
else
    ok "C compiler: $CC ($("$CC" --version 2>/dev/null | sed -n 1p))"
fi
if have make; then ok "make: $(command -v make)"; else bad "make" "$cc_fix"; fi
# scripts/test.sh, lab.sh check and check-workshop.sh compile with clang
# (CC=clang), whatever make's compiler is; the tests and labs run on Linux.
clang_fix=$(install "$apt_clang" "clang compiler-rt" xcode "llvm")
if have clang; then
    ok "clang: $(clang --version 2>/dev/null | sed -n 1p)"
elif [ "$os" = Linux ]; then
    bad "clang (scripts/test.sh and lab.sh check build the tests with it)" "$clang_fix"
else
    warn "no clang: make wall runs with $CC; the tests and labs (Linux) need clang: $clang_fix"
fi

# The tools the scripts and make wall call.
for t in awk sed grep ps pgrep mktemp tar; do
    have "$t" && continue
    case $t in
    ps | pgrep) pkgs="procps procps-ng" ;;
    awk) pkgs="mawk gawk" ;;
    *) pkgs="$t $t" ;;
    esac
    bad "$t (the scripts and make wall call it)" "$(install "${pkgs% *}" "${pkgs#* }" xcode "$t")"
done

asan_fix() {
    case $os in
    Darwin) echo "xcode-select --install   (Apple clang ships the sanitizers)" ;;
    *) install "$apt_clang" "clang compiler-rt libasan libubsan libtsan" x llvm ;;
    esac
}
# make's compiler (./server), and clang if present (the CMake builds use it).
for c in $CC $( [ "$CC" != clang ] && have clang && echo clang); do
    if links "$c" "-fsanitize=address,undefined -fno-sanitize-recover=all"; then
        ok "$c links AddressSanitizer + UBSan programs"
    else
        why="make's ./server and the tests need it"
        bad "$c cannot link -fsanitize=address,undefined ($why): $(sed -n 1p "$probe/log")" \
            "$(asan_fix)"
    fi
    if [ "$os" = Linux ]; then
        if links "$c" "-fsanitize=thread"; then
            ok "$c links ThreadSanitizer programs (the tsan tests)"
        else
            bad "$c cannot link -fsanitize=thread (scripts/test.sh's tsan build)" "$(asan_fix)"
        fi
    fi
done

# ---- git, cmake, nc -------------------------------------------------------------------

if have git; then
    ok "git: $(git --version)"
else
    bad "git (the labs plant and reset bugs with it)" "$(install git git xcode git)"
fi

if have cmake; then
    v=$(cmake --version | sed -n '1s/[^0-9]*\([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p')
    major=${v% *}; minor=${v#* }
    if [ -n "$v" ] && [ $((major * 1000 + minor)) -ge 3021 ]; then
        ok "cmake $major.$minor (presets need 3.21)"
    else
        why="CMakePresets.json version 3; the tests and labs"
        bad "cmake $major.$minor is older than 3.21 ($why)" \
            "$(install cmake cmake cmake cmake), or a newer one from https://cmake.org/download/"
    fi
else
    bad "cmake (the tests and the break-it labs; make wall needs none)" \
        "$(install cmake cmake cmake cmake)"
fi

# Which nc: the guide's framing try-out needs one that half-closes after its
# input and still reads the answer.
if [ "$os" = Darwin ]; then
    nc_fix="brew install nmap, then type ncat where the guide says nc (Ncat half-closes by itself)"
else
    nc_fix=$(install netcat-openbsd nmap-ncat x netcat)
fi
if have nc; then
    help=$(nc -h 2>&1; nc --version 2>&1)
    case $help in
    *OpenBSD*) ok "nc is OpenBSD netcat: use nc -N" ;;
    *Ncat*) ok "nc is Ncat (nmap): it half-closes after its input by itself; use nc without -N" ;;
    *) warn "nc is neither OpenBSD netcat nor Ncat; for the framing try-out: $nc_fix" ;;
    esac
else
    warn "no nc (used to poke servers by hand): $nc_fix"
fi
if [ "$os" = Linux ] && ! have strace; then
    warn "no strace (the optional syscall-counting exercise): $(install strace strace x x)"
fi

# ---- limits -----------------------------------------------------------------------------

min_fds=${DOCTOR_MIN_FDS:-10100}
# The sysctl line that raises the kernel's file caps to 65536, naming only
# those below it: macOS sizes kern.maxfiles by memory (245 760 on a 16 GB
# Mac), and setting it to 65536 there would lower it. When neither is
# low, the hard ulimit is what stops C10K.
raise_fd_sysctls() {
    set_=""
    for k in kern.maxfiles kern.maxfilesperproc; do
        v=$(kern "$k")
        [ -n "$v" ] && [ "$v" -lt 65536 ] && set_="$set_ $k=65536"
    done
    if [ -n "$set_" ]; then
        w=-w; [ "$os" = FreeBSD ] && w=""
        echo "${sudo}sysctl $w$set_, then a new terminal"
    elif [ "$os" = FreeBSD ]; then
        echo "raise openfiles in /etc/login.conf (then cap_mkdb /etc/login.conf and log in again)"
    else
        echo "ulimit -Hn 65536 in the class shell (as root), or a launchd maxfiles limit"
    fi
}

soft=$(limit -n); hard=$(limit -Hn)
cap=$hard
if [ "$os" = Darwin ] || [ "$os" = FreeBSD ]; then
    cap=$(lower "$hard" "$(kern kern.maxfilesperproc)")
fi
if [ -z "$cap" ]; then
    warn "cannot read the open-file limit here"
elif [ "$cap" = unlimited ] || [ "$cap" -ge "$min_fds" ]; then
    kernel_cap=""
    [ "$cap" != "$hard" ] && kernel_cap=", kernel cap $cap"
    ok "open files: soft $soft, hard $hard$kernel_cap (C10K needs $min_fds;" \
        "the programs raise their soft limit themselves)"
else
    case $os in
    Darwin | FreeBSD) fix=$(raise_fd_sysctls) ;;
    *)
        fix="as root: ulimit -Hn 65536 in the class shell, or '*  hard  nofile  65536' in"
        fix="$fix /etc/security/limits.conf and log in again"
        fix="$fix (a container: docker run --ulimit nofile=65536:65536)" ;;
    esac
    walls="the walls of 03, 05, 06 and 07 (10 000 clients) stop with a message"
    bad "open files: hard limit $cap, below $min_fds: $walls" "$fix"
fi

# Processes and threads per user: 02 holds 1000 children, 03 10 000 threads.
if [ "$os" = Linux ]; then
    nproc_hard=$(limit -u)
    if [ -n "$nproc_hard" ] && [ "$nproc_hard" != unlimited ] && [ "$nproc_hard" -lt 11000 ]; then
        warn "processes per user (ulimit -u) $nproc_hard: 03-threads' 10 000 threads count" \
            "against it and its wall will stop early"
    else
        ok "processes per user: ${nproc_hard:-?} (03 needs 10 001 threads)"
    fi
elif [ "$os" = Darwin ]; then
    t=$(thread_cap); p=$(kern kern.maxprocperuid)
    if [ -n "$t" ] && [ "$t" -lt 10001 ]; then
        warn "kern.num_taskthreads = $t threads per process: 03-threads meets it before" \
            "10 000 clients (a fixed cap of XNU's: the wall, measured on macOS)"
    else
        ok "threads per process: ${t:-?}"
    fi
    if [ -n "$p" ] && [ "$p" -lt 1200 ]; then
        warn "kern.maxprocperuid = $p: 02-fork's 1000 children plus your other processes may" \
            "meet it; ${sudo}sysctl -w kern.maxprocperuid=2500 (kern.maxproc bounds it)"
    else
        ok "processes per user: ${p:-?} (02 needs about 1000 more than you run now)"
    fi
fi

# The accept queue: a burst of connects past it turns into SYN retries of
# 1 s, 2 s, ..., which every connect-time figure then carries.
accept_queue
q=$ACCEPT_QUEUE qname=$ACCEPT_QUEUE_NAME
if [ -z "$q" ]; then
    warn "cannot read the accept-queue limit ($qname)"
elif [ "$q" -lt 1024 ]; then
    warn "$qname = $q: bursts of connects wait for SYN retries (1 s and more);" \
        "${sudo}sysctl -w $qname=4096"
else
    ok "$qname = $q"
fi

# Ephemeral ports: C10K opens 10 000 connections from loopback at once.
case $os in
Linux)
    # shellcheck disable=SC2046 # two numbers, split on purpose
    set -- $(cat /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
    lo=${1:-}; hi=${2:-}
    pfix="${sudo}sysctl -w net.ipv4.ip_local_port_range=\"15000 64999\"" ;;
*)
    lo=$(kern net.inet.ip.portrange.first); hi=$(kern net.inet.ip.portrange.last)
    pfix="${sudo}sysctl -w net.inet.ip.portrange.first=32768" ;;
esac
if [ -z "$lo" ] || [ -z "$hi" ]; then
    warn "cannot read the ephemeral port range"
else
    ports=$((hi - lo + 1))
    if [ $ports -lt 10100 ]; then
        bad "ephemeral ports $lo-$hi ($ports): fewer than C10K's 10 000 connections" "$pfix"
    elif [ $ports -lt 20000 ]; then
        warn "ephemeral ports $lo-$hi ($ports): one C10K run fits, a second within TIME_WAIT" \
            "(30-60 s) may not; wait a minute between them, or $pfix"
    else
        ok "ephemeral ports $lo-$hi ($ports)"
    fi
fi

# ---- the break-it labs ------------------------------------------------------------

# Which labs this machine can check: the one per-platform list
# (docs/workshop/bugs/labs.txt), with what lab.sh measures here (LeakSanitizer,
# the room for processes and threads).
# shellcheck disable=SC2034 # read by scripts/lib/labs.sh
LAB_ROOT=$here/..
. "$here/lib/labs.sh"
labs_platform
can="" cannot=""
for code in $(lab_codes); do
    if lab_ready "$code"; then can="$can $code"; else cannot="$cannot$code: $LAB_WHY
"; fi
done
ok "break-it labs this machine can check:${can:- none} (docs/workshop/bugs/labs.txt)"
printf '%s' "$cannot" | sed 's/^/         not here: /'
for code in $(lab_suggested "$LAB_PLATFORM"); do
    lab_ready "$code" ||
        warn "lab $code, suggested for $(lab_platform_name "$LAB_PLATFORM"), cannot be" \
            "checked on this machine: $LAB_WHY; give its pair another code"
done

echo
if [ $missing -eq 0 ]; then
    echo "ready for the class ($warned warning(s) above, each says what it costs)."
    [ "$os" = Linux ] ||
        echo "(Not Linux: 07-epoll is not built here; make wall, the tests and the labs" \
            "listed above run here.)"
    exit 0
fi
echo "NOT ready: $missing thing(s) missing; run the fix line under each MISSING above," \
    "then this again."
exit 1
