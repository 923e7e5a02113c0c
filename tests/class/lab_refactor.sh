#!/bin/sh
# lab_refactor.sh: the labs and solutions survive a refactor of the code
# around them. A scratch copy of the tracked files is refactored the way a
# maintainer might, in every file an edit changes: a comment block on top,
# a banner comment above every function, and two neighbouring functions
# that no edit names and that do not name each other swapped. Then:
#   - the control: the line patches the edits make of the tree as it was
#     (what docs/workshop/bugs/*.patch held before the edits form) must not
#     all apply to the refactored copy (git apply --check), else the
#     refactor tests nothing;
#   - every lab's and solution's edits must find their place in the
#     refactored copy (scripts/lib/labpatch.sh), and every rung they change
#     (every rung, for common/) must compile there, warnings as errors, as
#     it compiles unrefactored (a rung this system does not build is left
#     out, and said so).
# Nothing is started; the compiles are syntax checks (make SAN=
# CFLAGS=-fsyntax-only server). POSIX sh and awk (BWK awk runs it).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lab-refactor.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
LAB_ROOT=$src
. "$src/scripts/lib/labpatch.sh"
failures=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

copy() { # DIR: the tracked files as they are now
    mkdir -p "$1"
    if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
        (cd "$src" && git ls-files | while IFS= read -r f; do [ -e "$f" ] && echo "$f"; done |
            tar -cf - -T -) | tar -C "$1" -xf -
    else
        (cd "$src" && tar --exclude=./build --exclude=./results -cf - .) | tar -C "$1" -xf -
    fi
}
copy "$tmp/before" && copy "$tmp/after" || exit 2
all_edits=$(ls "$src"/docs/workshop/bugs/*.edits "$src"/docs/workshop/solutions/*.edits)
[ -n "$all_edits" ] || { echo "FAIL no edits under docs/workshop"; exit 1; }

# The names the edits give (never moved) and the files they change.
for e in $all_edits; do lab_edits_plain "$e" | sed -n 's/^@@ [a-z]* [^ ]* \(.*\)()$/\1/p'; done |
    sort -u >"$tmp/named"
for e in $all_edits; do lab_edits_files "$e"; done | sort -u >"$tmp/files"

# refactor FILE: the comment on top, the banners, one swap (awk reads the
# named functions first).
refactor() {
    awk -v named="$tmp/named" '
        BEGIN { while ((getline l < named) > 0) keep[l] = 1 }
        { L[++n] = $0 }
        function names(text, name) { return text ~ ("(^|[^A-Za-z0-9_])" name "([^A-Za-z0-9_]|$)") }
        function name_of(s,    t) {
            t = s; sub(/\(.*/, "", t); sub(/.*[^A-Za-z0-9_]/, "", t); return t
        }
        END {
            # The definitions: first comment line, signature, closing brace.
            for (i = 1; i <= n; i++) {
                if (L[i] !~ /^[A-Za-z_].*\(/ || L[i] ~ /;[ \t]*$/) continue
                for (j = i; j <= n && L[j] !~ /^\{/ && L[j] !~ /;[ \t]*$/; j++) ;
                if (j > n || L[j] !~ /^\{/) continue
                for (k = j; k <= n && L[k] !~ /^\}/; k++) ;
                if (k > n) continue
                for (t = i; t > 1 && L[t - 1] ~ /^(\/\*|\/\/| \*)/; t--) ;
                d++; T[d] = t; S[d] = i; E[d] = k; N[d] = name_of(L[i])
                i = k
            }
            # The first two neighbours (a blank line apart) free to swap.
            for (x = 1; x < d && !sw; x++) {
                y = x + 1
                if ((N[x] in keep) || (N[y] in keep) || T[y] != E[x] + 2 || L[E[x] + 1] != "")
                    continue
                body_x = body_y = ""
                for (i = T[x]; i <= E[x]; i++) body_x = body_x L[i] "\n"
                for (i = T[y]; i <= E[y]; i++) body_y = body_y L[i] "\n"
                if (names(body_x, N[y]) || names(body_y, N[x])) continue
                sw = x
            }
            print "/*"
            print " * A refactor moved every line below this comment down, put a"
            print " * banner above each function and swapped two of them."
            print " */"
            print ""
            for (i = 1; i <= n; i++) {
                for (x = 1; x <= d; x++)
                    if (T[x] == i) { print "/* ---- " N[x] " ---- */"; print "" }
                if (sw && i == T[sw]) {
                    for (j = T[sw + 1]; j <= E[sw + 1]; j++) print L[j]
                    print ""
                    for (j = T[sw]; j <= E[sw]; j++) print L[j]
                    i = E[sw + 1]
                    continue
                }
                print L[i]
            }
            if (sw) printf "swapped %s() and %s()\n", N[sw], N[sw + 1] >"/dev/stderr"
        }' "$1"
}

echo "== the refactor, in a scratch copy"
while IFS= read -r f; do
    case $f in *.c | *.h) ;; *) continue ;; esac
    [ -f "$tmp/after/$f" ] || continue
    refactor "$tmp/before/$f" >"$tmp/after/$f" 2>"$tmp/swap" || { fail "refactor $f"; continue; }
    echo "     $f: a comment on top, banners$(sed 's/^/, /' "$tmp/swap")"
done <"$tmp/files"

# rungs FILE...: the rung folders these files are in; common/ is every rung.
rungs() {
    for f in "$@"; do
        case $f in
        common/*) (cd "$tmp/before" && ls -d [0-9][0-9]-*/ beyond/[0-9][0-9]-*/) ;;
        [0-9][0-9]-*/*) echo "${f%%/*}" ;;
        beyond/[0-9][0-9]-*/*) f=${f#beyond/}; echo "beyond/${f%%/*}" ;;
        esac
    done | sed 's#/$##' | sort -u
}
compiles() { # TREE RUNG
    make -s -C "$1/$2" SAN= CFLAGS=-fsyntax-only server >"$tmp/make.log" 2>&1
}

echo
echo "== the control: the line patches of the tree as it was, on the refactored copy"
stale=0
for e in $all_edits; do
    lab_patch "$e" "$tmp/before" >"$tmp/line.patch" 2>"$tmp/why" ||
        { fail "$(basename "$e"): no place in the unrefactored tree: $(cat "$tmp/why")"; continue; }
    (cd "$tmp/after" && git apply --check "$tmp/line.patch" >/dev/null 2>&1) && continue
    stale=$((stale + 1))
    echo "     $(basename "$e" .edits): its line patch does not apply"
done
if [ $stale -ge 3 ]; then
    ok "$stale line patches of $(echo "$all_edits" | wc -l | tr -d ' ') do not apply" \
        "after the refactor"
else
    fail "only $stale line patches fail after the refactor: it tests too little"
fi

echo
echo "== the edits, on the refactored copy"
# shellcheck disable=SC2046 # the files, none with a space
for rung in $(rungs $(cat "$tmp/files")); do
    compiles "$tmp/before" "$rung" || continue
    echo "$rung" >>"$tmp/builds"
    compiles "$tmp/after" "$rung" ||
        fail "the refactor itself breaks $rung: $(head -3 "$tmp/make.log")"
done
for e in $all_edits; do
    name=$(basename "$(dirname "$e")")/$(basename "$e" .edits)
    rm -rf "$tmp/try" && cp -R "$tmp/after" "$tmp/try" || exit 2
    if ! lab_edits_apply "$e" "$tmp/try" 2>"$tmp/why"; then
        fail "$name: does not apply after the refactor: $(cat "$tmp/why")"
        continue
    fi
    built="" left=""
    # shellcheck disable=SC2046 # the files, none with a space
    for rung in $(rungs $(lab_edits_files "$e")); do
        if ! grep -qx -- "$rung" "$tmp/builds" 2>/dev/null; then
            left="$left $rung"
        elif compiles "$tmp/try" "$rung"; then
            built="$built $rung"
        else
            fail "$name: $rung does not compile after the refactor: $(head -3 "$tmp/make.log")"
            built=""
            break
        fi
    done
    if [ -n "$built" ]; then
        ok "$name: applies, and compiles:$built${left:+ (not built here:$left)}"
    elif [ -n "$left" ]; then
        ok "$name: applies (its rungs are not built here:$left)"
    fi
done

echo
if [ $failures -eq 0 ]; then echo "lab refactor: passed"; exit 0; fi
echo "lab refactor: $failures failed"
exit 1
