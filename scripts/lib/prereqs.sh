# Sourced by the scripts (and .ci/run): make sure the tools they call exist.
# As root on Debian or Ubuntu it installs what is missing with apt-get,
# without recommends (gnuplot would otherwise pull ImageMagick and
# Ghostscript), prints one line per package installed, and keeps apt's full
# output in APT_LOG; otherwise it says exactly what to install and stops.

APT_LOG=${APT_LOG:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/results/logs/apt.log}

# The Debian package that provides each command (and libuv, the library).
package_for() {
    case "$1" in
    cc | gcc) echo gcc ;;
    gnuplot) echo gnuplot-nox ;;
    libuv) echo libuv1-dev ;;
    taskset | prlimit) echo util-linux ;;
    pgrep | ps) echo procps ;;
    *) echo "$1" ;;
    esac
}

# What scripts/test.sh needs on a fresh Debian machine (.ci/run installs it):
# the compilers and sanitizer runtimes; prlimit and pgrep for the suite; and
# for the portability checks (tests/portability/), the tools that stand in
# for macOS's userland here: posh and dash (strict POSIX sh), original-awk
# (the BWK awk macOS ships), bmake (BSD make), npm, which installs zig for
# the macOS cross-build, and lld, which links the FreeBSD build (with clang,
# against the sysroot in ../shared/freebsd). Each portability check skips
# itself, saying so, where its tool is missing. libxml2-utils brings
# xmllint, which checks that every committed SVG is well-formed XML
# (docs:svg). npm is asked for only where no npm is on PATH: a Node.js from
# NodeSource carries its own npm, and its nodejs package conflicts with
# Debian's npm, so asking apt for it fails the whole install.
TEST_PACKAGES="cmake make clang libclang-rt-dev gcc util-linux procps git"
TEST_PACKAGES="$TEST_PACKAGES posh dash original-awk bmake libxml2-utils lld"
command -v npm >/dev/null 2>&1 || TEST_PACKAGES="$TEST_PACKAGES npm"

can_apt() { [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; }

# apt_install PACKAGE...: install quietly; 0 if apt-get succeeded. The
# terminal gets one line per package set up (dependencies included).
apt_install() {
    mkdir -p "$(dirname "$APT_LOG")"
    echo "installing with apt-get: $* (log: $APT_LOG)" >&2
    local rc
    {
        echo "== $(date -u '+%F %T') apt-get install $*"
        DEBIAN_FRONTEND=noninteractive apt-get update &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
                -o DPkg::Lock::Timeout=120 "$@"
    } >>"$APT_LOG" 2>&1
    rc=$?
    # "Setting up NAME (VERSION) ..." is apt's line for each package it set up.
    awk '/^== /{ mark = NR } { line[NR] = $0 }
         END { for (i = mark; i <= NR; i++)
                   if (line[i] ~ /^Setting up /) {
                       split(line[i], w, " "); print "  installed " w[3] " " w[4] } }' \
        "$APT_LOG" >&2
    [ "$rc" -eq 0 ] || echo "apt-get failed (exit $rc); see $APT_LOG" >&2
    return "$rc"
}

ensure_tools() {
    local missing=() tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || missing+=("$(package_for "$tool")")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if can_apt; then
        apt_install "${missing[@]}" || exit 1
    else
        echo "missing tools; please install: ${missing[*]}" >&2
        echo "  (Debian/Ubuntu: sudo apt-get install ${missing[*]})" >&2
        exit 1
    fi
}

# compiles CC FLAGS...: 0 if CC links an empty program with FLAGS (one that
# includes the header HEADER names, if set).
compiles() {
    local cc=$1 probe rc
    shift
    probe=$(mktemp -d)
    {
        [ -z "${HEADER:-}" ] || echo "#include <$HEADER>"
        echo "int main(void) { return 0; }"
    } >"$probe/p.c"
    "$cc" "$probe/p.c" -o "$probe/a" "$@" 2>/dev/null
    rc=$?
    rm -rf "$probe"
    return "$rc"
}

# Debian ships clang's sanitizer runtimes in libclang-rt-dev, only a
# "Recommends" of clang: a machine set up without recommends has a clang that
# cannot link -fsanitize=address or thread. Check by linking an empty program.
ensure_sanitizers() {
    local cc=$1
    compiles "$cc" -fsanitize=address,undefined && compiles "$cc" -fsanitize=thread && return 0
    if can_apt; then
        apt_install libclang-rt-dev || exit 1
    else
        echo "$cc cannot link with -fsanitize=address/thread; please install clang's" >&2
        echo "  sanitizer runtimes (Debian/Ubuntu: sudo apt-get install libclang-rt-dev)" >&2
        exit 1
    fi
}

# try_libuv CC: 0 if CC can link against libuv, installing it (libuv1-dev)
# when it can. Optional: the caller says what is not measured without it.
try_libuv() {
    HEADER=uv.h compiles "$1" -luv && return 0
    can_apt || return 1
    apt_install "$(package_for libuv)" && HEADER=uv.h compiles "$1" -luv
}
