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
