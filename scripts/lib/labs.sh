#!/bin/sh
# Sourced by scripts/lab.sh and scripts/doctor.sh: which break-it labs this
# system can check, read from the one per-platform list,
# docs/workshop/bugs/labs.txt (its header says the format). Needs LAB_ROOT
# (the repository's top folder) and scripts/lib/ladder.sh sourced, with
# ladder_platform run.
#
#   labs_platform            LAB_PLATFORM: linux, macos or freebsd
#   lab_codes                the codes in order (L1 ... L16)
#   lab_rung CODE            the rung as the lab sheet names it
#   lab_tests CODE [PLAT]    the tests its check runs on PLAT (default: here),
#                            one a line: the rungs PLAT does not build left out
#   lab_offered CODE [PLAT]  true when PLAT can check it; else LAB_WHY says why
#   lab_ready CODE           lab_offered here, and this machine has what the
#                            check needs (LeakSanitizer, processes, threads)
# POSIX sh and awk (BWK awk runs it).

LAB_LIST=$LAB_ROOT/docs/workshop/bugs/labs.txt
LAB_WHY=""

# The platform's column: the forced off-Linux path reads as macOS.
labs_platform() {
    case $LADDER_OS:$LADDER_FORCED in
    Linux:0) LAB_PLATFORM=linux ;;
    FreeBSD:*) LAB_PLATFORM=freebsd ;;
    *) LAB_PLATFORM=macos ;;
    esac
}

lab_platform_name() {
    case $1 in
    linux) echo Linux ;; macos) echo macOS ;; freebsd) echo FreeBSD ;; *) echo "$1" ;;
    esac
}

# lab_field CODE N: field N of the lab's line (2 code, 3 rung, 4 tests, 5 needs).
lab_field() {
    awk -v c="$1" -v n="$2" '$1 == "lab" && $2 == c { print $n; exit }' "$LAB_LIST"
}
lab_codes() { awk '$1 == "lab" { print $2 }' "$LAB_LIST"; }
lab_known() { [ -n "$1" ] && [ -n "$(lab_field "$1" 2)" ]; }
lab_rung() { lab_field "$1" 3; }
lab_builds() { awk -v p="$1" '$1 == "builds" && $2 == p { for (i = 3; i <= NF; i++) print $i }' \
    "$LAB_LIST"; }
lab_suggested() { awk -v p="$1" '$1 == "suggest" && $2 == p { $1 = ""; $2 = ""; print }' \
    "$LAB_LIST" | sed 's/^ *//'; }

# lab_tests CODE [PLATFORM]: *:TEST expanded over the rungs PLATFORM builds,
# and every test on a rung it does not build left out.
lab_tests() {
    _lp=${2:-$LAB_PLATFORM}
    lab_field "$1" 4 | tr ',' '\n' | awk -v built="$(lab_builds "$_lp" | tr '\n' ' ')" '
        BEGIN { n = split(built, b, " "); for (i = 1; i <= n; i++) has[b[i]] = 1 }
        /^\*:/ { t = substr($0, 3); for (i = 1; i <= n; i++) print b[i] ":" t; next }
        { r = $0; sub(/:.*/, "", r); if (r in has) print }'
}

# lab_offered CODE [PLATFORM]: its own rung built there (when it names one),
# a test to run, and nothing it needs that the platform lacks.
lab_offered() {
    _lp=${2:-$LAB_PLATFORM}
    LAB_WHY=""
    _lr=$(lab_rung "$1")
    case $_lr in
    [0-9][0-9]-*)
        if ! lab_builds "$_lp" | grep -qx -- "$_lr"; then
            LAB_WHY="its rung, $_lr, is not built on $(lab_platform_name "$_lp")"
            [ "$_lr" != 07-epoll ] ||
                LAB_WHY="$LAB_WHY: epoll is Linux's, and 06-kqueue is the rung there"
            return 1
        fi ;;
    esac
    if [ -z "$(lab_tests "$1" "$_lp")" ]; then
        LAB_WHY="none of the tests that catch it runs on $(lab_platform_name "$_lp")"
        return 1
    fi
    for _ln in $(lab_field "$1" 5 | tr ',' ' '); do
        _lw=$(awk -v p="$_lp" -v n="${_ln%%=*}" '$1 == "lacks" && $2 == p && $3 == n {
            $1 = ""; $2 = ""; $3 = ""; sub(/^ +/, ""); print; exit }' "$LAB_LIST")
        if [ -n "$_lw" ]; then
            LAB_WHY="its check needs LeakSanitizer, and $_lw"
            [ "${_ln%%=*}" = lsan ] || LAB_WHY="its check needs ${_ln%%=*}: $_lw"
            return 1
        fi
    done
    return 0
}

# lab_has_lsan: a leaking program built with -fsanitize=address is caught
# by LeakSanitizer at exit (Apple clang builds it, and says nothing).
lab_has_lsan() {
    _lt=$(mktemp -d "${TMPDIR:-/tmp}/lab-lsan.XXXXXX") || return 1
    printf '#include <stdlib.h>\nvoid *p;\nint main(void) { p = malloc(7); p = 0; return 0; }\n' \
        >"$_lt/leak.c"
    _lok=1
    if ${CC:-cc} -fsanitize=address -g -o "$_lt/leak" "$_lt/leak.c" >/dev/null 2>&1; then
        ASAN_OPTIONS=detect_leaks=1 "$_lt/leak" >"$_lt/out" 2>&1
        grep -q LeakSanitizer "$_lt/out" && _lok=0
    fi
    rm -rf "$_lt"
    return $_lok
}

# lab_room NEED ROOM WHAT LIMITS: ROOM (empty: no cap) is at least NEED;
# else LAB_WHY reads "its check needs NEED WHAT ROOM LIMITS".
lab_room() {
    { [ -z "$2" ] || [ "$2" -ge "$1" ]; } && return 0
    LAB_WHY="its check needs $1 $3 $2 $4"
    return 1
}

# lab_ready CODE: offered here, and the machine has what the check needs.
lab_ready() {
    lab_offered "$1" || return 1
    for _ln in $(lab_field "$1" 5 | tr ',' ' '); do
        case $_ln in
        lsan)
            lab_has_lsan && continue
            LAB_WHY="its check needs LeakSanitizer, and ${CC:-cc} here builds no leak checker"
            return 1 ;;
        procs=*)
            lab_room "${_ln#*=}" "$(children_room)" "more processes, and this user may start" \
                "more (ulimit -u, kern.maxprocperuid, less those running)" || return 1 ;;
        threads=*)
            lab_room "${_ln#*=}" "$(threads_room)" "threads in one process, and there is room for" \
                "(kern.num_taskthreads or the task limits)" || return 1 ;;
        esac
    done
    return 0
}
