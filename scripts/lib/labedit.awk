# labedit.awk - make a workshop lab's or solution's edits (the format:
# scripts/lib/labpatch.sh) on the files of a tree, all or none.
#
#   awk -v root=TREE -v out=DIR -v src=NAME -f labedit.awk EDITS
#
# (NAME: the edits' file as the messages call it.)
# EDITS is plain (decoded). Each file an edit names is read from TREE and
# edited in memory, one edit after the other; when every edit has found its
# place, each edited file is written to DIR/N and "N FILE" to DIR/list (the
# caller copies them into TREE). An edit that does not find its place is an
# error naming the edit's line, the file and the function: exit 1, nothing
# written. A function's definition, in the rungs' style: a line from column
# 0 that names it before a "(", the lines up to a "{" in column 0 with no
# ";" at the end of one (a prototype), and the body up to a "}" in column 0.
# The comment right above it (lines from column 0 opening "/*" or "//", or
# " *" lines) is its comment. BWK awk runs it.

function fail(msg) {
    if (!bad)
        printf "labedit: %s line %d: %s\n", src, at, msg >"/dev/stderr"
    bad = 1
}

# load(F): F's lines in L[F, 1..N[F]], read once.
function load(f,    path, line, r, n) {
    if (f in N)
        return 1
    path = root "/" f
    n = 0
    while ((r = (getline line < path)) > 0)
        L[f, ++n] = line
    close(path)
    if (r < 0 && n == 0) {
        fail(f ": no such file in " root)
        return 0
    }
    N[f] = n
    order[++files] = f
    return 1
}

# defn(F, NAME): how many definitions of NAME F has; of the last, S is its
# first line, E its closing brace, T the first line of its comment.
function defn(f, name,    re, i, j, k, c) {
    re = "(^|[^A-Za-z0-9_])" name "\\("
    c = 0
    for (i = 1; i <= N[f]; i++) {
        if (L[f, i] !~ /^[A-Za-z_]/ || L[f, i] !~ re)
            continue
        for (j = i; j <= N[f] && L[f, j] !~ /^\{/ && L[f, j] !~ /;[ \t]*$/; j++)
            ;
        if (j > N[f] || L[f, j] !~ /^\{/)
            continue
        for (k = j + 1; k <= N[f] && L[f, k] !~ /^\}/; k++)
            ;
        if (k > N[f])
            continue
        c++
        S = i; E = k
    }
    if (c == 1)
        for (T = S; T > 1 && L[f, T - 1] ~ /^(\/\*|\/\/| \*)/; T--)
            ;
    return c
}

# splice(F, P, K): lines P .. P+K-1 of F replaced by NEW[1..nn].
function splice(f, p, k,    i, n, d) {
    n = N[f]
    d = nn - k
    if (d > 0)
        for (i = n; i >= p + k; i--)
            L[f, i + d] = L[f, i]
    else if (d < 0)
        for (i = p + k; i <= n; i++)
            L[f, i + d] = L[f, i]
    for (i = 1; i <= nn; i++)
        L[f, p + i - 1] = NEW[i]
    N[f] = n + d
}

# place(F, LO, HI, WHERE): the one run of OLD[1..no] within lines LO..HI.
function place(f, lo, hi, where,    p, i, c, at1) {
    if (no == 0) {
        fail("an edit needs a line to find (' ' or '-')")
        return 0
    }
    c = 0
    for (p = lo; p + no - 1 <= hi; p++) {
        for (i = 1; i <= no && L[f, p + i - 1] == OLD[i]; i++)
            ;
        if (i > no) { c++; at1 = p }
    }
    if (c != 1) {
        fail(where ": the edit's " no " line(s) to find (' ' and '-') are there " c \
            " times, not once")
        return 0
    }
    return at1
}

# named(F, NAME): the one definition of NAME in F (S, E, T set), or fail.
function named(f, name,    c) {
    c = defn(f, name)
    if (c == 1)
        return 1
    if (c == 0)
        fail(f ": no definition of function " name "() (signature from column 0, " \
            "{ and } in column 0)")
    else
        fail(f ": " c " definitions of function " name "()")
    return 0
}

# The edit read so far, made.
function finish(    p, i) {
    if (kind == "" || bad)
        return
    if (kind == "create") {
        if (no > 0) { fail("a new file's lines all start with '+'"); return }
        if ((getline p < (root "/" file)) >= 0) { fail(file ": exists already"); return }
        N[file] = 0
        order[++files] = file
        splice(file, 1, 0)
        return
    }
    if (!load(file) || (name != "" && !named(file, name)))
        return
    if (kind == "edit") { # with no function named, anywhere in the file
        if (name == "") { S = 1; E = N[file] }
        if ((p = place(file, S, E, file (name == "" ? "" : ", in " name "()"))))
            splice(file, p, no)
    } else if (no > 0 && kind != "delete") {
        fail("the lines of " kind " all start with '+'")
    } else if (kind == "replace") {
        splice(file, S, E - S + 1)
    } else if (kind == "after") {
        splice(file, E + 1, 0)
    } else if (kind == "before") {
        splice(file, T, 0)
    } else if (kind == "delete") {
        if (nn > 0 || no > 0) { fail("delete takes no lines"); return }
        splice(file, T, E - T + 1 + (E < N[file] && L[file, E + 1] == ""))
    }
}

/^@@ / {
    finish()
    at = FNR
    kind = $2; file = $3; name = $4
    sub(/\(\)$/, "", name)
    no = nn = 0
    if (kind !~ /^(edit|replace|after|before|delete|create)$/ || file == "" ||
        (kind != "edit" && kind != "create" && name == "") || NF > 4)
        fail("not an edit: " $0)
    if (name != "" && name !~ /^[A-Za-z_][A-Za-z0-9_]*$/)
        fail("not a function's name: " name)
    next
}
kind == "" || /^$/ || /^\\/ { next }
/^ / { OLD[++no] = NEW[++nn] = substr($0, 2); next }
/^-/ { OLD[++no] = substr($0, 2); next }
/^\+/ { NEW[++nn] = substr($0, 2); next }
{ at = FNR; fail("an edit's lines start with ' ', '-' or '+': " $0) }

END {
    finish()
    if (kind == "" && !bad) { at = 0; fail("no edit in it") }
    if (bad)
        exit 1
    for (i = 1; i <= files; i++) {
        f = order[i]
        printf "" >(out "/" i) # made, also for an empty file
        for (j = 1; j <= N[f]; j++)
            print L[f, j] >(out "/" i)
        close(out "/" i)
        print i, f >(out "/list")
    }
    close(out "/list")
}
