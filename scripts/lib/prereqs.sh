# Sourced by the scripts: make sure the tools they call exist. As root on
# Debian or Ubuntu it installs what is missing with apt-get; otherwise it
# says exactly what to install and stops.

# The Debian package that provides each command.
package_for() {
    case "$1" in
    clang) echo clang ;;
    cc | gcc) echo gcc ;;
    gnuplot) echo gnuplot-nox ;;
    taskset) echo util-linux ;;
    *) echo "$1" ;;
    esac
}

ensure_tools() {
    local missing=() tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || missing+=("$(package_for "$tool")")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing: ${missing[*]}" >&2
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
    else
        echo "missing tools; please install: ${missing[*]}" >&2
        echo "  (Debian/Ubuntu: sudo apt-get install ${missing[*]})" >&2
        exit 1
    fi
}

# Debian ships clang's sanitizer runtimes in libclang-rt-dev, only a
# "Recommends" of clang: a machine set up without recommends has a clang that
# cannot link -fsanitize=address or thread. Check by linking an empty program.
ensure_sanitizers() {
    local cc=$1 probe
    probe=$(mktemp -d)
    echo 'int main(void) { return 0; }' >"$probe/p.c"
    if "$cc" -fsanitize=address,undefined "$probe/p.c" -o "$probe/a" 2>/dev/null &&
        "$cc" -fsanitize=thread "$probe/p.c" -o "$probe/t" 2>/dev/null; then
        rm -rf "$probe"
        return 0
    fi
    rm -rf "$probe"
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing: libclang-rt-dev (clang's sanitizer runtimes)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libclang-rt-dev >&2
    else
        echo "$cc cannot link with -fsanitize=address/thread; please install clang's" >&2
        echo "  sanitizer runtimes (Debian/Ubuntu: sudo apt-get install libclang-rt-dev)" >&2
        exit 1
    fi
}
