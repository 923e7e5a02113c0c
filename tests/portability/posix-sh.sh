#!/bin/sh
# portability:posix-sh - the scripts stay within what macOS's userland runs.
#
#   tests/portability/posix-sh.sh ROOT
#
# 1. Every POSIX sh script (first line #!/bin/sh) parses under dash and
#    posh, strict POSIX shells (posh is Debian's "policy-compliant" sh).
#    Parsing is the floor; portability:wall-posh runs a rung's wall.sh for real.
# 2. Every bash script parses under bash and uses nothing bash 3.2 (macOS's
#    /bin/bash) lacks: associative arrays, mapfile/readarray, case changes
#    (${x,,} ${x^^}), wait -n, |&, coproc, namerefs, [[ -v ]], ${x@Q},
#    negative array indices, EPOCHSECONDS, &>>, globstar/lastpipe.
# 3. The scripts a Mac runs (the rungs' wall.sh, scripts/lib/*.sh, the make
#    fragments, scripts/test.sh, scripts/check-workshop.sh, scripts/doctor.sh,
#    scripts/reproduce.sh) call no GNU-only
#    tool or option: timeout, nproc, taskset, stat -c, date +%N, readlink -f,
#    sed -i without a suffix, grep -P, xargs -r, GNU tar's long options. A
#    line that runs only on Linux says so with a trailing "# linux-only".
# Comment lines are not checked. Exit 77 (skipped) when neither dash nor
# posh is installed.
set -u
root=${1:?usage: posix-sh.sh ROOT}
cd "$root" || exit 1
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

if command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1; then
    files=$(git ls-files | grep -v '^docs/workshop/')
else
    files=$(find . -type f ! -path './build/*' ! -path './.git/*' ! -path './docs/workshop/*' |
        sed 's#^\./##')
fi
posix_scripts=""
bash_scripts=""
for f in $files; do
    [ -f "$f" ] || continue
    case $(head -n 1 "$f" 2>/dev/null) in
    '#!/bin/sh'*) posix_scripts="$posix_scripts $f" ;;
    '#!/usr/bin/env bash'* | '#!/bin/bash'*) bash_scripts="$bash_scripts $f" ;;
    esac
done

shells=""
for s in dash posh; do command -v $s >/dev/null 2>&1 && shells="$shells $s"; done
if [ -z "$shells" ]; then
    echo "skipped: neither dash nor posh is installed (apt-get install dash posh)"
    exit 77
fi

n=0
for f in $posix_scripts; do
    for s in $shells; do
        if out=$($s -n "$f" 2>&1); then
            n=$((n + 1))
        else
            fail "$f does not parse under $s: $out"
        fi
    done
done
echo "POSIX sh:$posix_scripts: $n parses under$shells"

# Lines that are not comments, numbered, for the pattern checks below.
code() {
    awk '{ line = $0; sub(/^[ \t]+/, "", line) }
         line !~ /^#/ { print FILENAME ":" FNR ": " $0 }' "$@"
}
# forbid WHAT ERE FILE...: fail for every code line matching ERE.
forbid() {
    what=$1 ere=$2
    shift 2
    hits=$(code "$@" | grep -E -e "$ere" | grep -v '# linux-only$')
    [ -z "$hits" ] || fail "$what:
$hits"
}

before=$fails
for f in $bash_scripts; do
    out=$(bash -n "$f" 2>&1) || fail "$f does not parse under bash: $out"
done
if [ -n "$bash_scripts" ]; then
    # shellcheck disable=SC2086 # the file lists are words
    bash4='(^|[^[:alnum:]_])(mapfile|readarray|coproc)([^[:alnum:]_]|$)'
    bash4=$bash4'|(declare|local|typeset) +-[a-zA-Z]*[An]'
    bash4=$bash4'|\$\{[[:alnum:]_]+(\[[^]]*\])?(,,?|\^\^?)\}'
    bash4=$bash4'|wait +-n|\|&|\[\[ +-v |\$\{[^}]*@[QEPAa]\}|\[-[0-9]+\]\}|EPOCH(SECONDS|REALTIME)'
    bash4=$bash4'|&>>|shopt +-s +(globstar|lastpipe)'
    forbid "bash 4 only (macOS has bash 3.2)" "$bash4" $bash_scripts
fi
[ $fails -eq $before ] && echo "bash:$bash_scripts: parsed, no bash 4 construct"

before=$fails
mine=""
for f in [0-9][0-9]-*/wall.sh beyond/[0-9][0-9]-*/wall.sh scripts/lib/*.sh common/phase.mk \
    clients/loadgen.mk scripts/test.sh scripts/check-workshop.sh scripts/doctor.sh \
    scripts/reproduce.sh scripts/lab.sh; do
    [ -f "$f" ] && mine="$mine $f"
done
# shellcheck disable=SC2086
gnu='(^|[;&|({]|\$\(|then|do|else) *(timeout|nproc|taskset)([ );|&]|$)|stat +-c|date +[^|;]*%N'
gnu=$gnu'|readlink +-f|sed +-i( |$)|sed +-i -|(^|[^[:alnum:]_])grep +-[a-zA-Z]*P'
gnu=$gnu'|xargs +-[a-zA-Z0-9]*r|--ignore-failed-read|sort +-V'
forbid "GNU-only tool or option (off Linux it is missing)" "$gnu" $mine
[ $fails -eq $before ] && echo "no GNU-only tool in:$mine"
[ $fails -eq 0 ] || { echo "FAIL: $fails problem(s)"; exit 1; }
