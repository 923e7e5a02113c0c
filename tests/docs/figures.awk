# figures.awk - the measured figures a document quotes, each looked up in
# the committed sources of figures. Run by tests/docs/figures.sh:
#
#   awk -f figures.awk SOURCES ALLOW mode=md DOC.md ... mode=wall WALL.sh ...
#
# SOURCES: one number a line (every number of docs/reference/ and of the
# class's dry-run timings). ALLOW: tests/docs/figures.allow. Prints one
# "FAIL: FILE:LINE quotes FIGURE ..." line per figure found in neither, then
# "figures: N checked, M missing"; exits 1 when M > 0 or N == 0.
#
# A measured figure is a decimal number (1500.6, 0.962, 7.52x) or a whole
# number with a unit of measure or a count (782 KiB, 130 ms, 99 %, 19x,
# 1016 served). Not figures: code spans and fenced blocks (commands and
# options), link targets, versions (a number after the name of a program or
# system: CMake 3.21, Linux 5.19) and parts of names (127.0.0.1, L16,
# x86_64). In a wall script only the text of an "expect:" statement counts
# (one that prints "$expect" too).
# A figure is looked up among all the sources' numbers, not in its own
# cell: small whole numbers (8 MiB, 16 KiB) are in any table, and a wrong
# figure that equals some other figure of the run passes. The check is
# strong on decimals and large counts, as typed by hand or left stale.

# "10 000" -> "10000": a space between a digit and three digits ending a number.
function norm(s,   out) {
    out = ""
    while (match(s, /[0-9] [0-9][0-9][0-9]([^0-9]|$)/)) {
        out = out substr(s, 1, RSTART)
        s = substr(s, RSTART + 2)
    }
    return out s
}

function scan(s, carry,   pre, fig, rest, unit) {
    s = norm(s)
    while (match(s, /[0-9]+(\.[0-9]+)?/)) {
        pre = substr(s, 1, RSTART - 1)
        fig = substr(s, RSTART, RLENGTH)
        rest = substr(s, RSTART + RLENGTH)
        s = rest
        if (pre ~ /^[ \t>|*(]*$/)
            pre = carry " " pre       # the word ending the line before
        # part of a name: 127.0.0.1, 1.44.2, L16, x86_64, 2026-12-01
        if (pre ~ /[A-Za-z_.\/]$/ || pre ~ /[A-Za-z_]-$/ || rest ~ /^\.[0-9]/ ||
            rest ~ /^[A-Za-z_]/ && rest !~ /^(x|s|ms|us|µs|KiB|MiB|GiB|MB|GB|KB)([^A-Za-z]|$)/) {
            while (match(s, /^[-.0-9A-Za-z_]+/))
                s = substr(s, RLENGTH + 1)
            continue
        }
        # a version: after the name of a program or system
        if (pre ~ /(Linux|CMake|cmake|zig|bash|Ubuntu|Debian|libuv|clang|gcc|glibc)[ ]*$/ ||
            pre ~ /(macOS|FreeBSD|WSL|RFC|version|make|awk|Fedora|kernel|GNU|PITFALLS|#)[ ]*$/)
            continue
        unit = ""
        if (match(rest, /^ ?(µs|us|ms|s|min|KiB|MiB|GiB|MB|GB|KB|kB|%|x)([^A-Za-z0-9]|$)/) ||
            match(rest, /^ ?(msgs\/s|msg\/s)([^A-Za-z0-9]|$)/) ||
            match(rest, /^ (served|refused|msgs|echoes per second)([^A-Za-z0-9]|$)/)) {
            unit = substr(rest, RSTART, RLENGTH)
            sub(/[^A-Za-z0-9%\/µ]$/, "", unit)
            sub(/^ /, "", unit)
        }
        if (fig ~ /\./ || unit != "") {
            nf++
            fwhere[nf] = FILENAME ":" FNR
            fnum[nf] = fig
            ffig[nf] = fig (unit != "" ? " " unit : "")
        }
    }
}

# The figures of one paragraph (or one expect statement), with its text,
# which an allow-list entry's source word must be found in.
function flush(   i, ok, k) {
    for (i = 1; i <= nf; i++) {
        checked++
        ok = (fnum[i] in src) || ((fnum[i] ".0") in src)
        for (k = 1; !ok && k <= na; k++)
            ok = (ffig[i] == afig[k] && index(ptext, aword[k]) > 0)
        if (!ok) {
            missing++
            printf "FAIL: %s quotes %s, which neither docs/reference/ nor the class timings hold\n",
                fwhere[i], ffig[i]
        }
    }
    nf = 0
    ptext = ""
}

FILENAME == ARGV[1] { src[$0] = 1; next }
FILENAME == ARGV[2] {
    if ($0 ~ /^#/ || $0 ~ /^[ \t]*$/) next
    split($0, a, "\t")
    na++
    afig[na] = a[1]
    aword[na] = a[2]
    next
}
FNR == 1 { flush(); fence = 0; stmt = 0; carry = "" }
mode == "wall" {
    # An expect statement names "expect:" itself, or prints a variable that holds it.
    if (!stmt && $0 !~ /expect:|\$expect[^A-Za-z_]/) next
    if (!stmt) flush()
    stmt = ($0 ~ /\\$/)
    line = $0
    lits = ""
    while (match(line, /"[^"]*"/)) {
        lits = lits " " substr(line, RSTART + 1, RLENGTH - 2)
        line = substr(line, RSTART + RLENGTH)
    }
    gsub(/\$\(\([^)]*\)\)|\$[A-Za-z_]+|\$\{[^}]*\}/, " ", lits)
    ptext = ptext " " lits
    scan(lits, "")
    next
}
/^[ \t]*```/ { fence = !fence; next }
fence { next }
/^[ \t]*$/ { flush(); carry = ""; next }
{
    line = $0
    gsub(/`[^`]*`/, " ", line)
    gsub(/\]\([^)]*\)/, "]", line)
    gsub(/<!--[^>]*-->/, " ", line)
    ptext = ptext " " $0
    scan(line, carry)
    carry = line
    sub(/.*[ \t]/, "", carry)
}
END {
    flush()
    printf "figures: %d checked, %d missing\n", checked, missing
    exit (missing > 0 || checked == 0)
}
