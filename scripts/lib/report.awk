# report.awk: from the raw JSON lines of scripts/reproduce.sh (each a
# loadgen result tagged "rung", "run", "n", or a stub of tags and "error"
# when a run gave none) to the CSV tables in `out` and one verdict per claim
# on stdout: claim TAB outcome TAB inputs and thresholds TAB class. The
# outcome is "reproduced", "NOT reproduced" or "not measured"; the class
# says what the script's exit status makes of it: "ok" (reproduced, or the
# numbers contradict the claim: a finding), "server" (the server misbehaved
# in some run of the claim), "failed" (a measurement that should have been
# made was not) or "skipped" (not measured for a reason the platform or an
# optional tool explains, named in the text).
#
# One fault policy for every claim: any fault seen in any run of a claim
# (corrupt, lost, reset or refused, unanswered, timed out, duplicated or
# extra bytes, a connection not closed after the client's half-close, a
# server that did not start or did not exit 0 on SIGTERM)
# makes it NOT reproduced, "the server misbehaved", with the counts and the
# first problem. loadgen's own faults (client_errors: its descriptors, its
# ports, its event loop) are never the server's: they leave the claim not
# measured. A value that is not there (no file, no line, a failed run, a
# null or missing key) is "", never 0: get() notes why in WHY.
#
# Settings come from the environment (ENVIRON, set by scripts/report.sh
# from settings.env): values with newlines cannot go through -v on the BWK
# awk that macOS ships, and ENVIRON has no such limit. Run under
# original-awk, mawk and gawk alike.

BEGIN {
    CONVFMT = "%.10g"     # numbers into text without rounding to 6 digits
    # The thresholds, each explained beside its claim in the claims' table
    # (ENVIRON["CLAIMS"]: scripts/lib/claims.txt, its "judge" lines). Each
    # verdict prints the ones it uses. They were set against the spread of
    # repeated runs on a 2-core machine (README.md, "How to read the
    # shapes"): each is several times that spread away from what was measured.
    judges(ENVIRON["CLAIMS"])
    STALL_BLOCKED = judge("STALL_BLOCKED"); STALL_AFTER_MS = judge("STALL_AFTER_MS")
    STALL_FREE = judge("STALL_FREE"); IDLE_MAX_PCT = judge("IDLE_MAX_PCT")
    BUSY_MIN_PCT = judge("BUSY_MIN_PCT"); IDLE_MAX_WAKEUPS = judge("IDLE_MAX_WAKEUPS")
    MEM_FACTOR = judge("MEM_FACTOR"); MEM_FLOOR_KB = judge("MEM_FLOOR_KB")
    SCAN_GROWTH = judge("SCAN_GROWTH"); YARD_TOLERANCE = judge("YARD_TOLERANCE")
    CURVE_KEPT = judge("CURVE_KEPT"); OBJ_PCT = judge("OBJ_PCT"); OBJ_US = judge("OBJ_US")
    SAT_PCT = judge("SAT_PCT"); C10K_WALL_FACTOR = judge("C10K_WALL_FACTOR")
    C10K_LIGHT_STEPS = judge("C10K_LIGHT_STEPS"); C10K_CPU_FACTOR = judge("C10K_CPU_FACTOR")
    C10K_FLOOR_FACTOR = judge("C10K_FLOOR_FACTOR")
    FD_SETSIZE = judge("FD_SETSIZE"); SELECT_MIN_SERVED = judge("SELECT_MIN_SERVED")
    # The knees' bisection step across a doubling bracket (KNEE_CUTS steps;
    # 4, x1.19, in a settings.env from before it was a setting).
    KNEE_CUTS = ENVIRON["KNEE_CUTS"] + 0; if (KNEE_CUTS < 1) KNEE_CUTS = 4
    BISECT_STEP = 2 ^ (1 / KNEE_CUTS)
    # Headroom: knees under two CPU quotas, scaled to a full core, must
    # agree within one bisection step to give a figure; 1% on top, as the
    # bisection's rates are rounded to whole messages.
    HEADROOM_AGREE = BISECT_STEP * 1.01
    BOOT = 2000             # the yardstick's bootstrap resamples
    # What counts as the server misbehaving, in any mode. "refused" is the
    # select ceiling's expected outcome there, and a fault everywhere else.
    FAULTS = "connect_failed refused unanswered lost corrupt timed_out duplicated extra_bytes" \
        " unclosed"
    SELECT_FAULTS = FAULTS; sub(/ refused/, "", SELECT_FAULTS)
    # loadgen's "error" words that mean the server's behaviour ended the run.
    SERVER_ERRORS = "|timeout|corrupt|lost|not served|active connection failed|duplicated" \
        "|not closed|"

    out = ENVIRON["REPORT_OUT"]
    rungs = ENVIRON["RUNGS"]; hold = ENVIRON["STALL_HOLD"]; idle_s = ENVIRON["IDLE_SECONDS"]
    mem_rungs = ENVIRON["MEM_RUNGS"]; mem_n = ENVIRON["MEM_NS"]; sub(/.* /, "", mem_n)
    c10k_rungs = ENVIRON["C10K_RUNGS"]; c10k_n = ENVIRON["C10K_N"]
    c10k_claim = ENVIRON["C10K_CLAIM"]; if (c10k_claim == "") c10k_claim = c10k_rungs
    scan_last = ENVIRON["SCAN_IDLE"]; sub(/.*,/, "", scan_last)
    scan_last_select = ENVIRON["SCAN_IDLE_SELECT"]; sub(/.*,/, "", scan_last_select)
    curve_ns = ENVIRON["CURVE_NS"]; curve_status = ENVIRON["CURVE_STATUS"]
    curve_n = curve_ns; sub(/.* /, "", curve_n)   # the largest: C10K
    curve_n_select = ENVIRON["CURVE_N_SELECT"]; beyond_status = ENVIRON["BEYOND_STATUS"]
    yard_n = ENVIRON["YARD_N"]; yard_rate = ENVIRON["YARD_RATE"]; yard_pairs = ENVIRON["YARD_PAIRS"]
    busy_status = ENVIRON["BUSY_STATUS"]; yard_status = ENVIRON["YARD_STATUS"]
    server_figures = ENVIRON["SERVER_FIGURES"]
    # 06-kqueue on Linux is the project's epoll-backed shim (PLATFORM is
    # Linux on the forced off-Linux path too).
    kqueue_shim = ENVIRON["PLATFORM"] == "" || ENVIRON["PLATFORM"] == "Linux"
    CK = "curves"                          # the sweeps capacity() reads
    # The rung set beside libuv: 07-epoll, or 06-kqueue where there is no
    # epoll (libuv is a kqueue loop there).
    yard_rung = ENVIRON["YARD_RUNG"]; if (yard_rung == "") yard_rung = "07-epoll"
    # Off Linux: the memory figure the platform has.
    mem_key = ENVIRON["MEM_KEY"]; if (mem_key == "") mem_key = "server_pss_kb"
    mem_name = (mem_key == "server_pss_kb") ? "PSS" : "footprint"

    # Tables: the tags that make a row, then the columns (median over the
    # row's runs; ":min", ":max" and ":ntrue" as named).
    T["stall"] = "rung|wait_ms wait_ms:min wait_ms:max after_close_ms after_close_ms:min " \
        "after_close_ms:max stalled:ntrue"
    T["idle_cpu"] = "rung|served idle_s server_cpu_ms server_cpu_pct server_wakeups_per_s " \
        "server_procs server_threads server_rss_kb"
    T["memory"] = "rung n|served server_rss_kb server_pss_kb server_footprint_kb server_procs " \
        "server_threads setup_us_per_conn kernel_stack_kb kernel_page_tables_kb kernel_slab_kb"
    T["select"] = "rung|requested served refused failed lost corrupt still_open " \
        "server_refusal_lines"
    T["scan"] = "rung idle|rtt_p50_us rtt_p50_us:min rtt_p50_us:max rtt_p99_us " \
        "server_cpu_ms_per_1k round_trips"
    T["c10k"] = "rung n run|requested served " FAULTS " client_errors msgs msgs_per_s window_s" \
        " echoes_per_conn_min echoes_per_conn_p50 echoes_per_conn_max in_flight_at_end rtt_p50_us" \
        " rtt_p99_us connect_ms_max client_cpu_pct server_cpu_pct saturated server_cpu_us_per_msg" \
        " server_rss_kb server_hwm_kb server_pss_kb server_threads"
    # The load curves: one row per rung, N and offered rate (medians over the sweeps).
    T["curves"] = "rung n rate_offered|rate_achieved msgs window_s server_cpu_pct " \
        "server_cpu_us_per_msg server_ctx_switches_per_msg rtt_p50_us rtt_p90_us rtt_p99_us" \
        " rtt_p999_us late_sends schedule_lag_ms_max client_thread_cpu_pct_max client_bound:ntrue" \
        " echoes_per_conn_min:min service_p90_us lag_p90_us lag_p99_us foreign_cpu_pct steal_pct" \
        " server_run_delay_ms client_run_delay_ms slowdown_pct contended:ntrue contended_retries" \
        " saturated"
    curve_cols = substr(T["curves"], index(T["curves"], "|") + 1)
    # The bisection rounds (measure_knees): the same rows, one per repeat.
    T["knees"] = "rung n run rate_offered|" curve_cols
    # One loop per core (measure_cores): 07-epoll and 09-reuseport swept on
    # the same server CPUs, rows as the curves'.
    T["cores"] = T["curves"]
    # The headroom sweeps (reproduce.sh's HEADROOM_RUNGS): rungs swept again
    # with the server held to a CPU quota, each sweep "RUNG@PCT", with its
    # bisection rounds: rows as the curves' and the knees'.
    T["headroom"] = "sweep n rate_offered|" curve_cols
    T["headroom_knees"] = "sweep n run rate_offered|" curve_cols
    KNEES_OF["curves"] = "knees"; KNEES_OF["headroom"] = "headroom_knees"
    # The yardstick's pairs: one row per server and pair.
    T["pairs"] = "rung pair|order server_cpu_us_per_msg server_cpu_pct rtt_p90_us rtt_p99_us " \
        "rate_achieved"
    # System calls per message under strace (scripts/lib/syscalls.sh): one
    # row per server, its own table (syscalls()).
    T["syscalls"] = "rung|requested rate_offered messages syscalls calls"
}

# ---- the thresholds ----------------------------------------------------

# judges(TABLE): the table's "judge NAME VALUE" lines into JUDGE[NAME].
function judges(table,    line, w) {
    if (table == "" || (getline line < table) < 0) {
        print "report.awk: no claims table (CLAIMS=" table ")" > "/dev/stderr"
        NO_TABLE = 1; exit 2
    }
    do {
        sub(/[ \t]*#.*/, "", line)
        if (split(line, w, " ") == 3 && w[1] == "judge") JUDGE[w[2]] = w[3] + 0
    } while ((getline line < table) > 0)
    close(table)
}
# judge(NAME): one threshold; a name the table lacks stops the reporter.
function judge(name) {
    if (!(name in JUDGE)) {
        print "report.awk: the claims table has no threshold " name > "/dev/stderr"
        NO_TABLE = 1; exit 2
    }
    return JUDGE[name]
}

# ---- reading ------------------------------------------------------------

# Split one flat JSON object into J[key] = value (strings unquoted, null "").
function parse(line,    kv, k, v, at) {
    split("", J)                          # (empties J)
    while (match(line, /"[A-Za-z_0-9]+":("[^"]*"|[^,}]*)/)) {
        kv = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
        at = index(kv, "\":"); k = substr(kv, 2, at - 2); v = substr(kv, at + 2)
        if (v ~ /^"/) v = substr(v, 2, length(v) - 2)
        J[k] = (v == "null" ? "" : v)
    }
}

function add(kind,    spec, tags, i, n, g, key) {
    split(T[kind], spec, "|")
    n = split(spec[1], tags, " ")
    if (kind ~ /^headroom/) J["sweep"] = J["rung"] "@" J["quota_pct"]
    for (i = 1; i <= n; i++) g = g (i > 1 ? "," : "") J[tags[i]]
    if (!((kind, g) in runs)) order[kind, ++rows[kind]] = g
    runs[kind, g]++
    if (J["asked"] != "") asked[kind, J["rung"], J["asked"]] = J["n"]
    if (J["cause"] == "platform") { plat[kind, g] = J["error"]; err[kind, g] = J["error"]; return }
    if (J["error"] != "" && !((kind, g) in err)) err[kind, g] = J["error"]
    for (key in J)
        if (J[key] != "") val[kind, g, key, ++nval[kind, g, key]] = J[key]
    faults(kind, g)
}

# faults(kind, group): what this run (in J) says about the server and about
# loadgen. nfault[kind, group] counts the group's runs with a server fault,
# sfirst[] describes the first ("run K: N key ..."), cfault[] loadgen's own.
function faults(kind, g,    list, c, nc, i, v, what, e) {
    list = (kind == "select") ? SELECT_FAULTS : FAULTS
    nc = split(list, c, " ")
    for (i = 1; i <= nc; i++) {
        v = J[c[i]] + 0
        if (v > 0) what = what " " v " " c[i]
    }
    e = J["error"]
    # A run that ended on a server error with no counter set (a partial
    # result at loadgen's deadline, say) is still the server's fault.
    if (what == "" && e != "" && index(SERVER_ERRORS, "|" e "|") && J["client_errors"] + 0 == 0)
        what = " error " e
    if (J["cause"] == "server") what = what " " e
    if (J["server_stop"] != "" && J["server_stop"] != "ok") what = what " " J["server_stop"]
    if (what != "") {
        nfault[kind, g]++
        if (!((kind, g) in sfirst))
            sfirst[kind, g] = "run " (J["run"] == "" ? 1 : J["run"]) ":" what \
                (J["stderr"] != "" ? " (first problem: " J["stderr"] ")" : "")
    }
    if (J["client_errors"] + 0 > 0 && !((kind, g) in cfault))
        cfault[kind, g] = J["client_errors"] " client_errors (loadgen's own" (J["stderr"] != "" ? \
            ": " J["stderr"] : "") ")"
}

/^\{/ {
    kind = FILENAME; sub(/.*\//, "", kind); sub(/\.jsonl$/, "", kind)
    if (!(kind in T)) next
    seen[kind] = 1; parse($0); add(kind)
}

# ---- statistics -----------------------------------------------------------

# stat(kind, group, key, what): median ("" too), min, max or ntrue (runs
# with "true") over the runs with a value; "" when none has one. A word
# (loadgen's "saturated": none, client, server) has no median: the runs'
# word where they agree, else "mixed".
function stat(k, g, key, what,    n, i, a, m) {
    n = nval[k, g, key]
    if (n == 0) return ""
    if (what == "ntrue") return count(k, g, key, "true")
    if (n == 1) return num(val[k, g, key, 1])
    if (val[k, g, key, 1] ~ /^[a-z]+$/)
        return count(k, g, key, val[k, g, key, 1]) == n ? val[k, g, key, 1] : "mixed"
    for (i = 1; i <= n; i++) a[i] = val[k, g, key, i] + 0
    m = median_of(a, n)                   # (sorts a)
    return what == "min" ? a[1] : what == "max" ? a[n] : m
}
# med(kind, group, key): the median of key over the group's runs.
function med(k, g, key) { return stat(k, g, key, "median") }

# count(kind, group, key, value): the runs whose key is value.
function count(k, g, key, v,    n, i, m) {
    n = nval[k, g, key]
    for (i = 1; i <= n; i++) m += (val[k, g, key, i] == v)
    return m + 0
}

# step_of(kind, i, rung, n, part): the kind's i-th group, its tags split
# into part, where it is rung's at n connections; "" where it is not.
function step_of(k, i, rung, n, part) {
    split(order[k, i], part, ",")
    return (part[1] == rung && part[2] == n) ? order[k, i] : ""
}

# Numbers as numbers (awk compares a string with a number as strings:
# "999" > 1350 is true); "true", "false" and other text stay text.
function num(v) { return v ~ /^-?[0-9]+\.?[0-9]*([eE][-+]?[0-9]+)?$/ ? v + 0 : v }

# why(s): a reason the claim could not be measured that is a failure of the
# run; skip(s): one the platform or an optional tool explains. Either goes
# into WHY; HARD says whether any was a failure.
function why(s) { skip(s); HARD = 1 }
function skip(s) { if (index(WHY, s) == 0) WHY = join(WHY, "; ", s) }
# join(a, sep, b): a and b, with sep between them where both are there.
function join(a, sep, b) { return a == "" ? b : b == "" ? a : a sep b }

# misbehaved(kind, group, label): note the group's server faults in MIS
# (once per verdict), and loadgen's own in WHY; 1 if the server misbehaved.
function misbehaved(k, g, label) {
    if ((k, g) in cfault) why(label ": " cfault[k, g])
    if (!((k, g) in nfault)) return 0
    if (!((k, g) in mis_seen)) {
        mis_seen[k, g] = 1
        MIS = join(MIS, "; ", label ": faults in " nfault[k, g] " of " runs[k, g] " runs, first " \
            sfirst[k, g])
    }
    return 1
}

# get(kind, group, key): the median of key over the group's runs, or "" with
# the reason noted in WHY. A server fault in the group goes to MIS instead.
function get(k, g, key,    v) {
    if (!(k in seen)) { why("no " k " results (raw/" k ".jsonl missing or empty)"); return "" }
    if (!((k, g) in runs)) { why(g ": not run"); return "" }
    if ((k, g) in plat) { skip(g ": " plat[k, g]); return "" }
    if (misbehaved(k, g, g)) return ""
    if ((k, g) in err) { why(g ": run failed (" err[k, g] ")"); return "" }
    v = med(k, g, key)
    if (v != "") return v
    if (key ~ /^server_/ && server_figures == "0") \
        skip("no server figures on this platform (loadgen --server-pid reads none here)")
    else why(g ": " key " empty" (key == "server_pss_kb" ? " (PSS unreadable)" : ""))
    return v
}

# x with d decimals (1 by default).
function fixed(x, d) { return sprintf("%." (d == "" ? 1 : d) "f", x) }
# A value for the text of a verdict: "?" when it is missing, never 0;
# known_text(x) leaves x as it came.
function known(x, d) { return x == "" ? "?" : fixed(x, d) }
function known_text(x) { return x == "" ? "?" : x }
# A CSV cell for a flag.
function yes(flag) { return flag ? "yes" : "no" }
# A value for a CSV cell: two decimals, or empty when it is missing.
function two_places(x) { return x == "" ? "" : fixed(x, 2) }
# How many times from, to is: two decimals; "" when from is 0 or missing.
function growth(from, to) { return (from + 0 == 0) ? "" : fixed(to / from, 2) }
# "median (min-max)" of a key over a group's runs.
function median_range(k, g, key, d,    a, b, c) {
    a = med(k, g, key); b = stat(k, g, key, "min"); c = stat(k, g, key, "max")
    if (a == "") return "?"
    return (b == c) ? fixed(a, d) : fixed(a, d) " (" fixed(b, d) "-" fixed(c, d) ")"
}
function skipped(rung) { return index(" " ENVIRON["SKIP_RUNGS"] " ", " " rung " ") > 0 }
# A rung this platform does not have: said in the verdict, not held against it.
function not_here(rung) { if (index(NOTE, rung) == 0) NOTE = join(NOTE, ", ", rung) }

# ---- tables ---------------------------------------------------------------

# cell(text): text as one CSV cell: its commas become semicolons (report.sh
# splits a row at every comma).
function cell(s) { gsub(/,/, ";", s); return s }

function write_csv(kind,    spec, cols, file, i, j, c, w, g, col, head) {
    split(T[kind], spec, "|")
    gsub(/ /, ",", spec[1])
    file = out "/" kind ".csv"
    c = split(spec[2], cols, " ")
    head = spec[2]; gsub(/ /, ",", head); gsub(/:/, "_", head)    # wait_ms:min: wait_ms_min
    print spec[1] ",runs," head ",faulty_runs,error" > file
    for (i = 1; i <= rows[kind]; i++) {
        g = order[kind, i]
        printf "%s,%d", g, runs[kind, g] > file
        for (j = 1; j <= c; j++) { split(cols[j], w, ":"); printf ",%s", stat(kind, g, w[1],
            w[2]) > file }
        col = ((kind, g) in err) ? err[kind, g] : ""
        if ((kind, g) in sfirst) col = sfirst[kind, g]
        print "," (((kind, g) in nfault) ? nfault[kind, g] : 0) "," cell(col) > file
    }
    close(file)
}

# Per connection: growth over the 1-connection run, per connection added.
function write_memory_per_conn(    file, i, g, p) {
    file = out "/memory_per_conn.csv"
    print "rung,n,mem_kb_per_conn,rss_kb_per_conn,setup_us_per_conn,figure,kernel_kb_per_conn" > \
        file
    for (i = 1; i <= rows["memory"]; i++) {
        g = order["memory", i]
        split(g, p, ",")
        if (p[2] == 1) continue
        start()
        printf "%s,%s,%s,%s,%s,%s\n", g, two_places(per_conn(p[1], p[2], mem_key)),
            two_places(per_conn(p[1], p[2], "server_rss_kb")),
            med("memory", g, "setup_us_per_conn"), mem_name, two_places(kernel_slope(p[1])) > file
    }
    close(file)
}
# kernel_slope(rung): KiB of kernel memory per connection, the least-squares
# slope of (stacks + page tables + slab growth) against N over the rung's
# memory runs; "" with fewer than two runs that read it (off Linux).
function kernel_slope(rung,    i, g, p, x, y, k, st, pt, n, sx, sy, sxx, sxy) {
    for (i = 1; i <= rows["memory"]; i++) {
        g = order["memory", i]
        split(g, p, ",")
        if (p[1] != rung) continue
        k = med("memory", g, "kernel_slab_kb"); st = med("memory", g, "kernel_stack_kb")
        pt = med("memory", g, "kernel_page_tables_kb")
        if (k == "" || st == "" || pt == "") continue
        x = p[2] + 0; y = k + st + pt
        n++; sx += x; sy += y; sxx += x * x; sxy += x * y
    }
    if (n < 2 || n * sxx - sx * sx == 0) return ""
    return (n * sxy - sx * sy) / (n * sxx - sx * sx)
}
# per_conn(rung, n, key): "" unless both runs gave the value (get() says why).
# ran_n(kind, rung, n): the connections the rung's run for n was made with:
# fewer where it was sized to the room this OS leaves (its line says
# "asked":n beside its own "n", and reproduce.sh's log says so), else n.
# Each row carries its own n, and is read as it ran.
function ran_n(kind, rung, n) { return ((kind, rung, n) in asked) ? asked[kind, rung, n] : n }

function per_conn(rung, n, key,    a, b) {
    a = get("memory", rung ",1", key); b = get("memory", rung "," n, key)
    return (a == "" || b == "") ? "" : (b - a) / (n - 1)
}

# ---- verdicts --------------------------------------------------------------

# One verdict: a row of verdicts.tsv.
function row(claim, outcome, text, class) { printf "%s\t%s\t%s\t%s\n", claim, outcome, text, class }
# The outcome: the server's faults first, then what could not be measured,
# then the numbers; then a clean slate (start()) for the next verdict.
function verdict(claim, ok, text) {
    if (NOTE != "") text = text " (" NOTE " not measured: " ENVIRON["SKIP_WHY"] ")"
    if (MIS != "") row(claim, "NOT reproduced",
        "the server misbehaved: " MIS (text == "" ? "" : " | measured: " text), "server")
    else if (WHY != "") row(claim, "not measured", WHY (text == "" ? "" : " | measured: " text),
        HARD ? "failed" : "skipped")
    else row(claim, ok ? "reproduced" : "NOT reproduced", text, "ok")
    start()
}
function start() { WHY = ""; MIS = ""; NOTE = ""; HARD = 0; split("", mis_seen) }

function verdict_stall(    n, i, rung, w, a, w01, a01, worst, wrung, ok, hold_ms) {
    hold_ms = hold * 1000
    w01 = get("stall", "01-blocking", "wait_ms")
    a01 = get("stall", "01-blocking", "after_close_ms")
    n = split(rungs, R, " ")
    for (i = 2; i <= n; i++) {            # R[1] is 01-blocking
        if (skipped(R[i])) { not_here(R[i]); continue }
        w = get("stall", R[i], "wait_ms")
        if (w != "" && (wrung == "" || w + 0 > worst + 0)) { worst = w; wrung = R[i] }
    }
    ok = (w01 != "" && a01 != "" && w01 >= STALL_BLOCKED * hold_ms && a01 >= 0 && a01 <= \
        STALL_AFTER_MS && worst != "" && worst < STALL_FREE * hold_ms)
    verdict("stall", ok, sprintf("01-blocking: B waited %s ms, median (min-max) of %d runs (need " \
        ">= %s x %s ms) and was answered %s ms after A closed (need 0 to %s ms); 02-07: at most " \
            "%s ms, %s (need < %s x %s ms)",
        median_range("stall", "01-blocking", "wait_ms", 1), runs["stall", "01-blocking"],
        STALL_BLOCKED, hold_ms, median_range("stall", "01-blocking", "after_close_ms", 2),
        STALL_AFTER_MS, known(worst, 2), wrung, STALL_FREE, hold_ms))
}

function verdict_idle(    n, i, p, max, mrung, text, w, wmax, nowake) {
    n = split(rungs, R, " ")
    for (i = 1; i <= n; i++) {
        if (skipped(R[i])) { not_here(R[i]); continue }
        p = get("idle_cpu", R[i], "server_cpu_pct")
        if (p == "") continue
        w = med("idle_cpu", R[i], "server_wakeups_per_s")
        text = text sprintf(", %s %s%% and %s wakeups/s", R[i], fixed(p, 2), known(w, 1))
        if (mrung == "" || p + 0 > max + 0) { max = p; mrung = R[i] }
        if (w != "" && (wmax == "" || w + 0 > wmax + 0)) wmax = w
        if (w == "") nowake = 1
    }
    IDLE_MAX = max                        # the busy-poll verdict, next, compares with it
    verdict("idle", max != "" && max <= IDLE_MAX_PCT && (wmax == "" || wmax <= IDLE_MAX_WAKEUPS),
        sprintf("server CPU and context switches per second over %s s idle (need each <= %s%% of " \
            "one core and <= %s wakeups/s%s):%s",
            idle_s, IDLE_MAX_PCT, IDLE_MAX_WAKEUPS, nowake ? "; wakeups not readable here" : "",
                substr(text, 2)))
}

function verdict_busy(    p) {
    if (busy_status != "") skip("busy-poll: " busy_status)
    else p = get("idle_cpu", "busy-poll", "server_cpu_pct")
    verdict("busy-poll", p != "" && p >= BUSY_MIN_PCT,
        sprintf("busy-poll variant of 01 over %s s idle: %s%% of one core (need >= %s%%), " \
            "against at most %s%% for the rungs",
        idle_s, known(p, 1), BUSY_MIN_PCT, known(IDLE_MAX, 2)))
}

function verdict_memory(    n, i, v, e, text, ok, rn) {
    n = split(mem_rungs, R, " ")
    for (i = 1; i <= n; i++) {
        rn = ran_n("memory", R[i], mem_n)
        v[R[i]] = per_conn(R[i], rn, mem_key)
        text = text sprintf("; %s %s KiB, %s us%s", R[i], known(v[R[i]], 2), known(stat("memory",
            R[i] "," rn, "setup_us_per_conn"), 0), rn == mem_n ? "" : " (at " rn ")")
    }
    e = v[R[n]]                           # the event loop: 07-epoll, or 06-kqueue without epoll
    if (e != "" && e < MEM_FLOOR_KB) e = MEM_FLOOR_KB
    ok = (v["02-fork"] != "" && v["03-threads"] != "" && e != "" && v["02-fork"] >= MEM_FACTOR * e \
        && v["03-threads"] >= MEM_FACTOR * e)
    verdict("memory", ok,
        sprintf("%s growth and setup time per connection at %s connections:%s (need 02 and 03 " \
            "each >= %s x %s's, taken as at least %s KiB)%s",
            mem_name, known_text(mem_n), substr(text, 2), MEM_FACTOR, R[n], MEM_FLOOR_KB,
            mem_name == "PSS" ? "" : "; compared on the footprint (the memory the kernel charges " \
                "the process), as this platform has no PSS"))
}

function verdict_select(    s, rf, q, l, c, o, x, g) {
    g = "04-select"
    q = get("select", g, "requested"); s = get("select", g, "served")
    rf = get("select", g, "refused"); l = get("select", g, "lost")
    c = get("select", g, "corrupt"); o = get("select", g, "still_open")
    x = med("select", g, "server_refusal_lines")
    verdict("select", s != "" && s > SELECT_MIN_SERVED && s < FD_SETSIZE && s + rf == q && \
        l == 0 && c == 0 && o == s,
        sprintf("04-select: %s of %s served, %s refused (server logged %s FD_SETSIZE lines), %s " \
            "lost, %s corrupt, %s still open (need %s < served < %s, served + refused = " \
                "requested, none lost or corrupt, all served still open)",
            known(s, 0), known(q, 0), known(rf, 0), known(x, 0), known(l, 0), known(c, 0),
                known(o, 0), SELECT_MIN_SERVED, FD_SETSIZE))
}

# want "grows" (select, poll) or "flat" (kqueue, epoll). Every idle count
# of every run is part of the claim: a fault at any of them counts.
function verdict_scan(claim, want, list,    n, i, j, last, a, b, x, bad, text, g) {
    n = split(list, R, " ")
    for (i = 1; i <= n; i++) {
        if (skipped(R[i])) { not_here(R[i]); continue }
        for (j = 1; j <= rows["scan"]; j++) {
            g = order["scan", j]
            if (index(g, R[i] ",") == 1) misbehaved("scan", g, g)
        }
        last = (R[i] == "04-select") ? scan_last_select : scan_last
        a = get("scan", R[i] ",0", "rtt_p50_us"); b = get("scan", R[i] "," last, "rtt_p50_us")
        if (a == "" || b == "") continue
        x = growth(a, b)
        if (!shim(R[i]) && (x == "" || (want == "grows") != (x + 0 >= SCAN_GROWTH))) bad = 1
        text = text sprintf("; %s %s -> %s us from 0 to %d idle (%sx; medians of %d runs, at %d " \
            "idle %s)%s", R[i], fixed(a), fixed(b), last,
            known_text(x), runs["scan", R[i] "," last], last, median_range("scan",
                R[i] "," last, "rtt_p50_us", 1), shim(R[i]) ? shim_label() " (not counted)" : "")
    }
    verdict(claim, !bad, substr(text, 3) sprintf(" (need %s %s x)", want == "grows" ? ">=" : "<",
        SCAN_GROWTH))
}

# One rung's closed-loop C10K run: its text; BAD set when the numbers fail
# the claim (not all served, no messages, a connection never echoed in the
# window). For a rung outside the claim (contrast), its faults are shown
# in the text instead of in MIS.
function c10k_run(rung, n, k, contrast,    g, served, cpu, e0, e5, e9, msgs, bad, w, h, sat, \
    prog) {
    g = rung "," n "," k
    w = WHY; h = HARD
    if (contrast && ((("c10k", g) in nfault) || (("c10k", g) in err)))
        return sprintf(", %s run %d: %s", rung, k,
            (("c10k", g) in nfault) ? "faults: " sfirst["c10k", g] : "failed: " err["c10k", g])
    misbehaved("c10k", g, rung " run " k)
    served = get("c10k", g, "served"); msgs = get("c10k", g, "msgs")
    e0 = get("c10k", g, "echoes_per_conn_min")
    e5 = med("c10k", g, "echoes_per_conn_p50"); e9 = med("c10k", g, "echoes_per_conn_max")
    if (contrast) { WHY = w; HARD = h }
    if (served != "" && served != c10k_n) bad = 1    # fewer than C10K_N is not the claim
    # No progress is the server misbehaving too: a server that answers
    # nothing in the window (and all in the drain), or starves some
    # connections, has not served them.
    if (msgs != "" && msgs + 0 <= 0) prog = "no message echoed inside the window"
    else if (e0 != "" && e0 + 0 < 1) prog = \
        "a connection got no echo inside the window (echoes per connection min " e0 ")"
    if (prog != "" && !contrast) MIS = join(MIS, "; ", rung " run " k ": no progress: " prog)
    if (bad && !contrast) BAD = 1
    cpu = med("c10k", g, "server_cpu_us_per_msg"); sat = med("c10k", g, "saturated")
    return sprintf(", %s%s %s/%s served, %s msgs, echoes per connection %s/%s/%s%s%s%s", rung,
        k > 1 ? " run " k : "", known_text(served), n == c10k_n ? n : n " (the room here)",
        known_text(msgs), known_text(e0), known_text(e5), known_text(e9),
        cpu == "" ? "" : " (" fixed(cpu, 2) " us CPU/msg" \
            (sat != "" && sat != "none" ? ", " sat "-saturated" : "") ")",
        (prog != "" && contrast) ? " [no progress: " prog "]" : "", shim(rung) ? shim_label() : "")
}

# The claim is the event loops' (c10k_claim); the other rungs measured
# (c10k_rungs: 02-fork, 03-threads) are shown after it, for contrast: what
# went wrong there is shown but is not the claim's.
function verdict_c10k(    n, i, k, text, other, contrast, rn) {
    BAD = 0
    n = split(c10k_rungs, R, " ")
    for (i = 1; i <= n; i++) {
        if (skipped(R[i])) { not_here(R[i]); continue }
        contrast = index(" " c10k_claim " ", " " R[i] " ") == 0
        rn = ran_n("c10k", R[i], c10k_n)
        if (!contrast && !(("c10k", R[i] "," rn ",1") in runs)) get("c10k",
            R[i] "," rn ",1", "served")
        for (k = 1; (("c10k", R[i] "," rn "," k) in runs); k++)
            if (contrast) other = other c10k_run(R[i], rn, k, 1)
            else text = text c10k_run(R[i], rn, k, 0)
    }
    verdict("c10k", !BAD, sprintf("%d connections at once, closed loop, every echoed byte " \
        "checked (need all served, msgs > 0 and every connection echoed at least once in the " \
        "window, and no fault; echoes per connection min/median/max):%s%s", c10k_n,
        substr(text, 2), other == "" ? "" : "; not part of the claim, for contrast:" \
            substr(other, 2)))
}

# ---- the walls: load curves, capacities, the yardstick -------------------------

# What one step of a load curve says (group g = "rung,n,rate" of the sweeps
# CK: "curves", "knees" ("rung,n,run,rate") or "cores"): "fault" (the
# server misbehaved), "gone" (no result), "contended" (the window's CPUs
# were busy with someone else's work or waited for, even after loadgen ran
# it again: the step is nobody's), "client" (the client was the saturated
# side, the server was not: nobody's either), "slow" (the server did not
# keep up), "late" (it kept up, with a service time above the objective)
# or "ok". BOTH is set when both sides were saturated: the step is the
# server's, and the report says so. A server held to a quota is saturated
# at SAT_PCT of its quota: it can use no more.
function step_kind(g,    offered, got, p, cs, ss, csat, ssat, q) {
    BOTH = 0
    if ((CK, g) in nfault) return "fault"
    if ((CK, g) in err || (CK, g) in plat) return "gone"
    offered = med(CK, g, "rate_offered") + 0
    if (contended(CK, g)) return "contended"
    cs = med(CK, g, "client_thread_cpu_pct_max"); ss = med(CK, g, "server_cpu_pct")
    q = quota_of(g)
    csat = cs != "" && cs + 0 >= SAT_PCT; ssat = ss != "" && ss + 0 >= SAT_PCT * (q ? q : 100) / 100
    if (csat && !ssat) return "client"
    BOTH = csat && ssat
    got = med(CK, g, "rate_achieved")
    if (got == "" || got < CURVE_KEPT * offered) return "slow"
    p = objective_p(g)
    if (p == "" || p > OBJ_US + quota_wait_us(g)) return "late"
    return "ok"
}

# The longest a server held to a quota waits for its next period (the
# headroom sweeps, "RUNG@PCT,...": the period less the quota), which the
# objective allows it on top; 0 without a quota.
function quota_wait_us(g,    q) {
    q = quota_of(g)
    return q > 0 ? ENVIRON["QUOTA_US"] * (100 / q - 1) : 0
}
# quota_of(group): the percent of a core the headroom step's server was held
# to ("RUNG@PCT,..."); 0 for a step without a quota.
function quota_of(g) { return CK ~ /^headroom/ ? substr(g, index(g, "@") + 1) + 0 : 0 }

# The percentile the objective reads: the service time (the round trip less
# the client's own send lag), or the whole round trip where a run has no
# service time (an older loadgen).
function objective_p(g,    p) {
    p = med(CK, g, "service_p" OBJ_PCT "_us")
    return p != "" ? p : med(CK, g, "rtt_p" OBJ_PCT "_us")
}

# capacity(rung, n): the highest offered rate kept up with at the objective,
# below the first step the server failed: the doubling sweep of CK brackets
# the knee, and where it did on the server's side the bisection rounds
# ("knees": the bracket cut at about x1.19, KNEE_REPS repeats interleaved
# with the other rungs) place it: the capacity is then the median over the
# repeats, each repeat's the highest point below its own first failure.
# Contended steps are skipped; a client step ends a sweep without failing
# it. Sets CAP (msgs/s, "" for none), CAP_LO and CAP_HI (its range over the
# repeats), CAP_REPS, CAP_AT_LEAST (1: no failure above it on the server's
# side: the client or the sweep's top stopped it), CAP_WHY, CAP_G (the
# sweep's step at the bracket's foot, for its CPU figures), CAP_FAIL (the
# first failed step), CAP_BOTH (the first step at which both sides were
# saturated), CAP_CONTENDED (contended steps), CAP_EST (the utilization-law
# ceiling where the capacity is a lower bound), CAP_BASE (the bracket's
# foot), CAP_SPREAD (the repeats' range in bisection steps) and FLOOR (the
# lowest objective percentile of the server's steps, us).
function capacity(rung, n,    i, g, part, k, pv, steps, stop, client, fkind, ss) {
    CAP = CAP_LO = CAP_HI = CAP_WHY = CAP_G = CAP_FAIL = CAP_BOTH = CAP_EST = FLOOR = CAP_BASE = ""
    CAP_STOP = ""
    CAP_REPS = CAP_AT_LEAST = CAP_CONTENDED = CAP_SPREAD = 0
    for (i = 1; i <= rows[CK]; i++) {
        if ((g = step_of(CK, i, rung, n, part)) == "") continue
        steps++
        k = step_kind(g)
        pv = objective_p(g)
        if (k != "client" && k != "contended" && pv != "" && (FLOOR == "" || pv + 0 < FLOOR + 0))
            FLOOR = pv
        if (stop) continue
        if (BOTH && CAP_BOTH == "") CAP_BOTH = part[3] + 0
        if (k == "contended") { CAP_CONTENDED++; continue }
        if (k == "ok") { CAP = part[3] + 0; CAP_G = g; continue }
        if (k == "client") { client = part[3] + 0; stop = 1; continue }
        CAP_FAIL = part[3] + 0; fkind = k; stop = 1
    }
    if (steps == 0) { CAP_WHY = "not swept"; CAP_STOP = "unswept"; return }
    if (CAP != "" && CAP_FAIL == "") {
        CAP_AT_LEAST = 1
        CAP_STOP = client != "" ? "client" : CAP_CONTENDED ? "contended" : "top"
        CAP_WHY = CAP_STOP == "top" ? "the top of the sweep" : stopped_by() " above it"
        ss = med(CK, CAP_G, "server_cpu_pct")
        # The utilization law (rate = utilization x service rate): the rate
        # at which its one core would be full, were the cost per message to
        # stay as it was at the highest clean step. On one pinned core only.
        if (ss != "" && ss + 0 > 0 && ss + 0 <= 100 && CK == "curves")
            CAP_EST = int(CAP * 100 / ss + 0.5)
    } else if (CAP == "" && FLOOR != "" && FLOOR + 0 > OBJ_US && CAP_FAIL != "")
        CAP_WHY = "no rate met the objective: its p" OBJ_PCT " floor is " \
            fixed(FLOOR / 1000, 2) " ms"
    else if (CAP == "" && CAP_FAIL != "")
        CAP_WHY = "the lightest step failed (" fkind " at " CAP_FAIL " msgs/s)"
    else if (CAP == "") {
        CAP_STOP = client != "" ? "client" : "contended"
        CAP_WHY = "every step was " stopped_by()
    }
    CAP_LO = CAP_HI = CAP_BASE = CAP
    split("", CAP_EACH)
    if (CAP != "") { CAP_REPS = 1; CAP_EACH[1] = CAP }
    if (CAP != "" && CAP_FAIL != "" && (KNEES_OF[CK] in seen)) knee(rung, n)
}

# unsteady(): 1 when the repeats of a bisected knee lie two bisection steps
# apart or more. Measured on 03-threads at 10 000 connections: at 76 109
# msgs/s a window either kept up (p90 40 us, the server at 83%) or fell
# into a backlog it did not leave (p90 20-40 ms at 100%), in either order,
# so the median of three rounds landed on 64 000 in one run and 90 510 in
# the next. Such a figure is told as a band, not as a point.
# The headroom sweeps pool their rounds across quotas for the same reason
# (headroom()), so only the curves' knees are told so.
function unsteady() { return CK == "curves" && CAP_SPREAD >= 2 }

# knee(rung, n): the bisection rounds of the bracket [CAP, CAP_FAIL].
function knee(rung, n,    i, g, part, r, k, at, stopped, nr, c, base, save) {
    base = CAP; save = CK; CK = KNEES_OF[CK]
    for (i = 1; i <= rows[CK]; i++) {
        if ((g = step_of(CK, i, rung, n, part)) == "") continue
        r = part[3]
        if (!(r in at)) { at[r] = base; nr++ }
        if (r in stopped) continue
        k = step_kind(g)
        if (k == "contended") { CAP_CONTENDED++; continue }
        if (k == "ok") { if (part[4] + 0 > at[r]) at[r] = part[4] + 0; continue }
        stopped[r] = 1
        if (BOTH && (CAP_BOTH == "" || part[4] + 0 < CAP_BOTH)) CAP_BOTH = part[4] + 0
    }
    CK = save
    if (!nr) return
    for (r in at) CAP_EACH[++c] = at[r]
    CAP = median_of(CAP_EACH, c); CAP_LO = CAP_EACH[1]; CAP_HI = CAP_EACH[c]; CAP_REPS = c
    # The bracket is cut in KNEE_CUTS: one step is that root of it.
    CAP_SPREAD = int(KNEE_CUTS * log(CAP_HI / CAP_LO) / log(CAP_FAIL / base) + 0.5)
    # The rounds sweep the bracket's top too: kept up with there, the
    # doubling sweep's failure was its window's, and no wall is shown.
    if (CAP + 0 >= CAP_FAIL + 0) {
        CAP_AT_LEAST = 1; CAP_FAIL = ""; CAP_STOP = "bracket"
        CAP_WHY = "its rounds kept up at the top of its bracket (the doubling sweep failed " \
            "there once)"
    }
}

# "at least 64000 msgs/s (client-bound above it; ...)", "16000 msgs/s", "none (...)"
function capacity_text(rung, n,    t) {
    capacity(rung, n)
    if (CAP == "") return "none (" CAP_WHY ")"
    if (CAP_AT_LEAST) {
        t = "at least " CAP " msgs/s (" CAP_WHY ")"
        if (CAP_EST != "") t = t " [estimate: about " CAP_EST " msgs/s at a full core, by the " \
            "utilization law]"
        return t
    }
    t = CAP " msgs/s"
    if (CAP_REPS > 1) t = t " (median of " CAP_REPS " repeats, range " CAP_LO "-" CAP_HI ")"
    if (unsteady()) t = t " [unsteady: its repeats lie " CAP_SPREAD " bisection steps apart, " \
        "so another run may land anywhere in the range]"
    if (CAP_BOTH != "") t = t " (both saturated at " CAP_BOTH " msgs/s)"
    return t
}

# swept(rung): capacity_text() at curve_n; "" for a rung the curves did not sweep.
function swept(rung,    t) {
    t = capacity_text(rung, curve_n)
    return CAP_STOP == "unswept" ? "" : t
}

function curve_rung_list() { return "04-select " ENVIRON["CURVE_RUNGS"] }

# The connections a rung was swept at, for the curves' n: 04-select's
# below FD_SETSIZE, and a sweep that shrank to the room here at its own n.
function curve_at(rung, n) {
    return ran_n("curves", rung,
        (rung == "04-select" && n + 0 > curve_n_select + 0) ? curve_n_select : n)
}

function write_capacity(    file, n, nn, i, j, rung, nlist, N) {
    file = out "/capacity.csv"
    print "rung,n,capacity_msgs_per_s,capacity_min,capacity_max,repeats,unsteady,at_least," \
        "why,estimate_msgs_per_s,both_saturated_at,contended_steps,floor_p" OBJ_PCT \
        "_us,cpu_us_per_msg,server_cpu_pct,ctx_switches_per_msg" > file
    nn = split(curve_ns, N, " ")
    n = split(curve_rung_list(), R, " ")
    for (i = 1; i <= n; i++)
        for (j = 1; j <= nn; j++) {
            rung = R[i]
            nlist = curve_at(rung, N[j])
            if (rung == "04-select" && j < nn) continue
            capacity(rung, nlist)
            if (CAP_STOP == "unswept") continue
            # The CPU figures at the bracket's foot: none without one (CAP_G "").
            printf("%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", rung, nlist, CAP,
                CAP_LO, CAP_HI, CAP_REPS, yes(unsteady()), yes(CAP_AT_LEAST), cell(CAP_WHY),
                CAP_EST, CAP_BOTH, CAP_CONTENDED, FLOOR,
                med("curves", CAP_G, "server_cpu_us_per_msg"),
                med("curves", CAP_G, "server_cpu_pct"),
                med("curves", CAP_G, "server_ctx_switches_per_msg")) > file
        }
    close(file)
}

# The brackets the bisection rounds cut (reproduce.sh asks for them after
# the doubling sweeps): one line "rung n low high" per rung whose knee the
# sweep bracketed on the server's side; with only_unsteady, per rung whose
# rounds so far are unsteady (reproduce.sh's extra rounds).
function write_brackets(only_unsteady,    n, i) {
    n = split(curve_rung_list(), R, " ")
    for (i = 1; i <= n; i++) bracket(R[i], curve_at(R[i], curve_n), only_unsteady)
    if (only_unsteady) return
    CK = "headroom"
    n = split(ENVIRON["HEADROOM_SWEEPS"], R, " ")
    for (i = 1; i <= n; i++) bracket(R[i], curve_n, 0)
    CK = "curves"
}
# bracket(rung, n, only_unsteady): the rung's line, if its knee is bracketed.
function bracket(rung, n, only_unsteady) {
    capacity(rung, n)
    if (CAP != "" && CAP_FAIL != "" && (!only_unsteady || unsteady()))
        print rung, n, CAP_BASE, CAP_FAIL
}

# curve_faults(rung, n): note the sweep's faults (MIS) and missing steps (WHY); 1 if any.
function curve_faults(rung, n,    i, g, part, bad, any, k, K) {
    for (k = 1; k <= 2; k++) {
        K = k == 1 ? "curves" : "knees"
        for (i = 1; i <= rows[K]; i++) {
            if ((g = step_of(K, i, rung, n, part)) == "") continue
            if (k == 1) any = 1
            if (misbehaved(K, g, rung " at " n " connections")) bad = 1
            else if ((K, g) in plat) skip(rung ": " plat[K, g])
            else if ((K, g) in err) { why(rung " at " n ": " err[K, g]); bad = 1 }
        }
    }
    if (!any) { why(rung " at " n " connections: no curve"); bad = 1 }
    return bad
}

# shim(rung): 06-kqueue where it runs on the project's epoll-backed shim
# (Linux): its figures are epoll's, shown, and confirm nothing of kqueue.
function shim(rung) { return rung == "06-kqueue" && kqueue_shim }
function shim_label() { return " [through the shim: epoll's figure]" }

# Every rung meets a wall: its curve was measured without a fault, and its
# wall shows on the server's side: a knee bracketed by a step the server
# failed (too slow, or over the objective) while the client had headroom,
# or no rate met at all (05-poll at C10K). A rung the client (or the
# host) stopped first, or whose sweep ended below its wall, is "not
# measured" for that rung, never counted for the claim. The walls must
# stand in the ladder's order: the O(ready) loop (07-epoll, or 06-kqueue
# where it is native) holds at least the capacity of each rung below it at
# the same connections (02, 03, 05); a rung above it is NOT reproduced.
function verdict_walls(    n, i, cn, text, shown_n, unmeasured, bad, t, top, topc, topl, c, \
    order_text, topw, stop, stops) {
    if (curve_status != "") { skip(curve_status); verdict("walls", 0, ""); return }
    if (!("curves" in seen)) why("no curves results (raw/curves.jsonl missing or empty)")
    top = skipped("07-epoll") ? "06-kqueue" : "07-epoll"
    capacity(top, curve_n); topc = CAP; topl = CAP_AT_LEAST
    topw = stopped_by("the top of its sweep")
    n = split(curve_rung_list(), R, " ")
    for (i = 1; i <= n; i++) {
        if (skipped(R[i])) { not_here(R[i]); continue }
        cn = curve_at(R[i], curve_n)
        if (curve_faults(R[i], cn)) continue
        t = capacity_text(R[i], cn)
        c = CAP
        if (CAP_FAIL != "") {
            shown_n++
            t = t ", its wall at " CAP_FAIL " msgs/s"
        } else {
            unmeasured = unmeasured ", " R[i]
            stop = stopped_by("the sweep ended")
            stops[stop] = 1
            t = t ": not measured: " stop " before the wall"
        }
        if (R[i] ~ /^0[235]-/ && CAP_FAIL != "" && topc != "" && c != "" && c + 0 > topc + 0) {
            order_text = order_text walls_order(top, topc, topl, topw, R[i], c)
            bad = bad || ORDER_BAD
        }
        text = text sprintf("; %s at %s: %s", R[i], cn, t)
        if (CAP_G != "") text = text sprintf(", %s us CPU/msg at %s%% of its core",
            known(med("curves", CAP_G, "server_cpu_us_per_msg"), 1),
                known(med("curves", CAP_G, "server_cpu_pct"), 0))
        if (shim(R[i])) text = text shim_label()
    }
    # Nothing shown at all: a host too busy is a measurement not made (see
    # the report's contention line); a client or a sweep too short, a skip.
    if (!shown_n && WHY == "" && MIS == "") {
        t = "no rung's wall showed on the server's side (" substr(unmeasured, 3) ": "
        if ("contended" in stops) why(t "contended before it)")
        else if ("client-bound" in stops) skip(t "client-bound before it)")
        else skip(t "every sweep ended before its wall)")
    }
    verdict("walls", !bad, sprintf("capacity = the highest offered rate kept up with (>= %s of " \
        "it achieved) with a p%s service time <= %s us, below the first step the server failed; " \
        "a wall shows where the server failed a step while the client had headroom (a side is " \
        "saturated at %s%% of its core; contended steps, > %s%% of the CPUs' time neither " \
        "side's or waited for, or the CPUs > %s%% slower than their best at a fixed probe, are " \
        "run again and then count for nobody); need the walls that show to stand " \
        "in the ladder's order, %s holding at least what 02, 03 and 05 hold%s:%s%s",
        CURVE_KEPT, OBJ_PCT, OBJ_US, SAT_PCT, contended_bound("contended_bound_pct"),
        contended_bound("slowed_bound_pct"), top,
        unmeasured == "" ? "" : "; not measured:" substr(unmeasured, 2), substr(text, 2),
        order_text == "" ? "" : (bad ? " | out of order:" : " | the order:") substr(order_text, 2)))
}

# What stopped the sweep capacity() just read short of its knee.
function stopped_by(otherwise) {
    return CAP_STOP == "client" ? "client-bound" : CAP_STOP == "contended" ? "contended" : otherwise
}

# A lower rung's capacity c above the top loop's topc: out of order
# (ORDER_BAD) when topc is its figure on its full core. Where the top loop
# stopped short of its knee there (the client, say: topw, and topl set), the
# order is read at its figure held by a quota and scaled (the headroom
# sweep, where the client has room). Not there, or a lower bound below c:
# not measured. Below c: ORDER_BAD, as on a full core.
function walls_order(top, topc, topl, topw, rung, c,    e, t) {
    e = HR_EST_OF[top]; ORDER_BAD = !topl
    if (!topl) return sprintf("; %s holds more than %s (%s against %s msgs/s)", rung, top, c, topc)
    t = sprintf("; against %s at %s msgs/s: %s at least %s on its full core (%s)",
        rung, c, top, topc, topw)
    if (e == "" || (HR_LB_OF[top] && e + 0 < c + 0)) {
        skip(sprintf("the walls' order: %s at least %s msgs/s (%s), below %s at %s, and " \
            "no figure held by a quota%s", top, topc, topw, rung, c, e == "" ? "" : " above it"))
        return t ": not decided"
    }
    if (e + 0 < c + 0) {
        ORDER_BAD = 1
        return sprintf("; %s holds more than %s (%s against about %s msgs/s at a full core, " \
            "scaled from its quotas)", rung, top, c, e)
    }
    if (HR_LB_OF[top])
        return t sprintf(", and held by a quota and scaled at least %s msgs/s at a full core " \
            "(a lower bound): it holds at least as much", e)
    return t sprintf(", and held by a quota and scaled about %s msgs/s at a full core (range " \
        "%s-%s): it holds at least as much", e, HR_LO_OF[top], HR_HI_OF[top])
}

# A bound loadgen judged contention by ("contended_bound_pct" or "slowed_bound_pct").
function contended_bound(key,    i, g) {
    for (i = 1; i <= rows["curves"]; i++) {
        g = order["curves", i]
        if (nval["curves", g, key]) return med("curves", g, key) + 0
    }
    return "?"
}

# contended(kind, group): most of the step's runs were contended (nobody's).
function contended(k, g,    n) {
    n = nval[k, g, "contended"]
    return n > 0 && 2 * stat(k, g, "contended", "ntrue") > n
}

# light_steps(rung, n, want): of the lightest `want` offered rates of
# rung's sweep at n, those at which neither rung nor 05-poll was contended
# ("r1 r2 ..."); LIGHT_CONTENDED lists the others. A contended light step is
# left out, not replaced by a heavier one: above the light rates poll's
# wakeups batch too, and the contrast is no longer the one claimed.
function light_steps(rung, n, want,    i, g, part, list, got, p) {
    LIGHT_CONTENDED = ""
    for (i = 1; i <= rows["curves"] && got < want; i++) {
        if ((g = step_of("curves", i, rung, n, part)) == "") continue
        if (med("curves", g, "server_cpu_us_per_msg") == "") continue
        got++
        p = "05-poll," n "," part[3]
        if (contended("curves", g) || contended("curves", p))
            LIGHT_CONTENDED = join(LIGHT_CONTENDED, ", ", part[3] + 0)
        else list = list " " part[3]
    }
    return substr(list, 2)
}

# The C10K wall: at C10K, the O(ready) loop keeps up where poll cannot, in
# three contrasts that do not depend on the client's headroom: CPU per
# message at the lightest rates (poll walks every fd at every wakeup), the
# p90 floor (poll's is above the objective), and capacity. 06-kqueue is
# its own confirmation only where kqueue is native; on Linux it is the
# shim over epoll, shown and not counted.
function verdict_c10k_wall(    poll, n, i, bad, text, c, loops, rung, ns, S, j, a, b, f5, f7, \
    ratio, nr, r) {
    if (curve_status != "") { skip(curve_status); verdict("c10k wall", 0, ""); return }
    if (curve_faults("05-poll", curve_n)) bad = 1
    text = sprintf("at %s connections, open loop: 05-poll %s", curve_n, capacity_text("05-poll",
        curve_n))
    poll = CAP + 0; f5 = FLOOR
    n = split("06-kqueue 07-epoll", R, " ")
    for (i = 1; i <= n; i++) {
        rung = R[i]
        if (skipped(rung)) { not_here(rung); continue }
        if (curve_faults(rung, curve_n)) { bad = 1; continue }
        text = text sprintf(", %s %s", rung, capacity_text(rung, curve_n))
        if (shim(rung)) { text = text shim_label(); continue }
        c = CAP; f7 = FLOOR
        if ((CAP == "" && CAP_STOP == "contended") || f5 == "") {
            why(rung " or 05-poll: no step free of contention (the host was busy: the report's " \
                "contention line)")
            continue
        }
        loops++
        if (c == "" || c + 0 < C10K_WALL_FACTOR * poll || c + 0 == 0) bad = 1
        # CPU per message at the lightest rates, where neither side was
        # contended: their median ratio, as one 1-second window at a few
        # percent of a core can double the loop's figure on a shared host
        # (measured: 07-epoll 51.3 us at 2000 msgs/s between 57.5 at 500 and
        # 28.8 at 1000, its usual 27 to 35 there).
        ns = split(light_steps(rung, curve_n, C10K_LIGHT_STEPS), S, " ")
        text = text sprintf("; CPU per message, 05-poll against %s:", rung)
        split("", ratio); nr = 0
        for (j = 1; j <= ns; j++) {
            a = med("curves", "05-poll," curve_n "," S[j], "server_cpu_us_per_msg")
            b = med("curves", rung "," curve_n "," S[j], "server_cpu_us_per_msg")
            text = text sprintf(" %s us against %s at %s msgs/s%s", known(a, 1), known(b, 1),
                S[j] + 0, j < ns ? "," : "")
            if (a == "" || b == "" || b + 0 <= 0) bad = 1
            else ratio[++nr] = a / b
        }
        if (nr) {
            r = median_of(ratio, nr)
            text = text sprintf(" (median x%s)", fixed(r, 1))
            if (r < C10K_CPU_FACTOR) bad = 1
        }
        if (LIGHT_CONTENDED != "") text = text sprintf("%s %s msgs/s contended", ns ? ";" : "",
            LIGHT_CONTENDED)
        # Where loadgen reads no server CPU here, that contrast is left out
        # (said so) and the other two decide.
        if (ns == 0 && server_figures == "0") text = text " not measured here (no server figures)"
        else if (ns == 0 && LIGHT_CONTENDED != "")
            why(rung " and 05-poll: every light step was contended (the report's contention line)")
        else if (ns == 0) { bad = 1; text = text " (no light steps)" }
        text = text sprintf("; p%s floors %s against %s us", OBJ_PCT, known(f5, 1), known(f7, 1))
        if (f5 == "" || f7 == "" || f5 + 0 < C10K_FLOOR_FACTOR * f7 || f5 + 0 <= OBJ_US) bad = 1
    }
    if (!loops) bad = 1
    verdict("c10k wall", !bad,
        text sprintf(" (need the O(ready) loop's capacity >= %s x poll's, none counting as 0; " \
            "poll's CPU per message >= %s x the loop's in the median over the %d lightest " \
            "rates, contended ones left out, at least one left; poll's p%s floor >= %s x the " \
            "loop's and above %s us)",
            C10K_WALL_FACTOR, C10K_CPU_FACTOR, C10K_LIGHT_STEPS, OBJ_PCT, C10K_FLOOR_FACTOR,
            OBJ_US))
}

# The median of a[1..n] (a is sorted in place).
function median_of(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) {
        t = a[i]
        for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
        a[j + 1] = t
    }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# The yardstick: YARD_RUNG's CPU per message over libuv's, pair by pair; the
# median ratio and its 95% bootstrap interval (BOOT resamples drawn by
# draw(): the report is the same each time it is made from the same raw
# results, under any awk).
function verdict_yardstick(    p, e, u, n, ratios, i, b, s, m, lo, hi, mid) {
    if (yard_status != "") skip("uv-echo: " yard_status)
    if (curve_status != "") skip(curve_status)
    if (WHY != "") { verdict("yardstick", 0, ""); return }
    for (p = 1; p <= yard_pairs; p++) {
        e = get("pairs", yard_rung "," p, "server_cpu_us_per_msg")
        u = get("pairs", "uv-echo," p, "server_cpu_us_per_msg")
        if (e == "" || u == "" || u + 0 == 0) continue
        ratios[++n] = e / u
    }
    if (n < 2) {
        if (WHY == "") why("fewer than 2 complete pairs")
        verdict("yardstick", 0, "")
        return
    }
    DRAW = 12345
    for (b = 1; b <= BOOT; b++) {
        for (i = 1; i <= n; i++) s[i] = ratios[draw(n)]
        m[b] = median_of(s, n)
    }
    median_of(m, BOOT)
    lo = m[int(BOOT * 0.025)]; hi = m[int(BOOT * 0.975) + 1]
    mid = median_of(ratios, n)            # (sorts the ratios: after the draws, which read them)
    verdict("yardstick", hi <= 1 + YARD_TOLERANCE / 100, sprintf("%d pairs in random order at " \
        "%s connections and %s msgs/s: %s's CPU per message over libuv's, median %s, 95%% " \
        "bootstrap interval %s-%s; capacity at %s connections on one core: %s %s, libuv %s " \
        "(need the interval's upper end <= %s)", n, yard_n, yard_rate, yard_rung, fixed(mid, 3),
        fixed(lo, 3), fixed(hi, 3), curve_n, yard_rung, capacity_text(yard_rung, curve_n),
        capacity_text("uv-echo", curve_n), 1 + YARD_TOLERANCE / 100))
}

# draw(n): 1 to n, the next of the Lehmer generator x = 16807 x mod (2^31 - 1),
# whose products stay exact in a double: awks' rand() differ from one
# another, so srand(1) alone would give gawk's, mawk's and bwk's intervals.
function draw(n) {
    DRAW = (DRAW * 16807) % 2147483647
    return int(DRAW / 2147483647 * n) + 1
}

# ---- findings: figures stated as they came, with no threshold ------------

# A line of findings.tsv, for report.sh: KEY TAB TEXT.
function finding(key, text) { printf "%s\t%s\n", key, text > (out "/findings.tsv") }

# syscall_state(rung): "" when the rung's traced run gave its figures, else
# what happened instead: "not measured (why)" or the server's faults.
function syscall_state(rung,    k) {
    k = "syscalls"
    if (!((k, rung) in runs)) return "not measured (no line in raw/syscalls.jsonl)"
    if ((k, rung) in nfault) return "the server misbehaved under strace: " sfirst[k, rung]
    if ((k, rung) in err) return "not measured (" err[k, rung] ")"
    if (med(k, rung, "syscalls") == "" || med(k, rung, "messages") + 0 <= 0)
        return "not measured (no system call or message count)"
    return ""
}

# per_message_calls(rung, top): the top most frequent calls of the rung's
# traced run, each per message: "read 1.09; write 1.00; epoll_wait 0.80".
function per_message_calls(rung, top,    list, n, i, at, msgs, text) {
    n = split(med("syscalls", rung, "calls"), list, " ")
    msgs = med("syscalls", rung, "messages")
    for (i = 1; i <= n && i <= top; i++) {
        at = index(list[i], "=")
        text = text (i > 1 ? "; " : "") substr(list[i], 1, at - 1) " " \
            fixed(substr(list[i], at + 1) / msgs, 2)
    }
    return text
}

# syscalls.csv, one row per traced server: per-message figures, and every
# call's count as strace gave it (all_calls: the reference run keeps the
# CSVs); and the finding: each server's system calls per message and its
# top calls, then 08-io_uring against 07-epoll, whichever way it went.
function syscalls(    file, i, g, state, text, per, msgs, calls, n, rate, e, u) {
    if (!("syscalls" in seen)) {
        finding("syscalls", "not measured: raw/syscalls.jsonl missing or empty")
        return
    }
    file = out "/syscalls.csv"
    print "rung,n,rate_offered,messages,syscalls,syscalls_per_msg,top_calls_per_msg,status," \
        "all_calls" > file
    for (i = 1; i <= rows["syscalls"]; i++) {
        g = order["syscalls", i]
        state = syscall_state(g)
        if (state != "") {
            printf("%s,%s,%s,,,,,%s,\n", g, med("syscalls", g, "requested"),
                med("syscalls", g, "rate_offered"), cell(state)) > file
            text = text "; " g ": " state
            continue
        }
        msgs = med("syscalls", g, "messages"); calls = med("syscalls", g, "syscalls")
        per[g] = calls / msgs
        n = med("syscalls", g, "requested"); rate = med("syscalls", g, "rate_offered")
        printf("%s,%s,%s,%s,%s,%s,%s,,%s\n", g, n, rate, msgs, calls, fixed(per[g], 2),
            per_message_calls(g, 4), med("syscalls", g, "calls")) > file
        text = text sprintf("; %s: %s system calls per message (%s calls for %s echoes; %s)",
            g, fixed(per[g], 2), calls, msgs, per_message_calls(g, 3))
    }
    close(file)
    text = substr(text, 3)
    if (n != "") text = sprintf("strace -c -f on the server, %s connections opened and closed, " \
        "%s msgs/s offered (open loop), counts per message echoed: %s", n, rate, text)
    if (("07-epoll" in per) && ("08-io_uring" in per)) {
        e = per["07-epoll"]; u = per["08-io_uring"]
        text = text ". 08-io_uring made " (u < e ? fixed(e / u, 2) " x fewer" : "no fewer") \
            " system calls per message than 07-epoll" \
            (u < e ? "" : " (" fixed(u, 2) " against " fixed(e, 2) ")")
    }
    finding("syscalls", text)
}

# common_step(list, n): the highest offered rate at which every rung of
# list kept up and met the objective at n connections ("" if none).
function common_step(list, n,    r, nr, i, j, g, part, rate, ok, best) {
    nr = split(list, r, " ")
    for (i = 1; i <= rows["curves"]; i++) {
        if ((g = step_of("curves", i, r[1], n, part)) == "") continue
        rate = part[3]
        ok = 1
        for (j = 1; j <= nr; j++)
            if (!(("curves", r[j] "," n "," rate) in runs) || step_kind(r[j] "," n "," rate) != \
                "ok") ok = 0
        if (ok && (best == "" || rate + 0 > best + 0)) best = rate
    }
    return best
}

# The servers past the ladder on the same curve as 07-epoll: capacity, and
# CPU and context switches per message at one step all of them kept up with.
function finding_beyond(    list, r, nr, i, text, absent, step, g, t) {
    if (curve_status != "") { finding("beyond", "not measured: " curve_status); return }
    nr = split("07-epoll 08-io_uring 09-reuseport", r, " ")
    for (i = 1; i <= nr; i++) {
        t = swept(r[i])
        if (t == "") { absent = absent ", " r[i]; continue }
        list = list " " r[i]
        text = text sprintf("; %s %s", r[i], t)
    }
    text = "capacity at " curve_n " connections: " substr(text, 3)
    if (absent != "") text = text "; not on the curves: " substr(absent, 3) \
        (beyond_status != "" ? " (" beyond_status ")" : " (not swept in this run)")
    step = common_step(substr(list, 2), curve_n)
    if (step == "") text = text "; no step that every one of them kept up with"
    else {
        text = text "; at " (step + 0) " msgs/s, which all of them kept up with:"
        nr = split(substr(list, 2), r, " ")
        for (i = 1; i <= nr; i++) {
            g = r[i] "," curve_n "," step
            text = text sprintf("%s %s %s us CPU and %s context switches per message",
                i > 1 ? ";" : "",
                r[i], known(med("curves", g, "server_cpu_us_per_msg"), 2),
                known(med("curves", g, "server_ctx_switches_per_msg"), 2))
        }
    }
    finding("beyond", text)
}

# 09-reuseport against 07-epoll: whether this run could show a gain. 09
# runs one loop per online CPU; a gain needs those loops on more than one
# CPU that loadgen's threads leave free. The curves pin the server to one
# CPU (C10K_SERVER_CPU) where the platform pins: then its loops share it.
function finding_reuseport(    cpus, ncpu, threads, server_cpu, loops, free, text, c7, c9) {
    # A settings.env without these (an older run) says "?", not 0.
    ncpu = ENVIRON["ALLOWED_CPUS"] == "" ? "" : split(ENVIRON["ALLOWED_CPUS"], cpus, ",")
    threads = ENVIRON["CLIENT_THREADS"]
    server_cpu = ENVIRON["C10K_SERVER_CPU"]; loops = ENVIRON["M_CORES"]
    free = (ncpu == "" || threads == "") ? "" : ncpu - threads
    text = sprintf("%s allowed CPU(s), loadgen on %s thread(s) (CPU(s) %s), ", known_text(ncpu),
        known_text(threads), known_text(ENVIRON["CURVE_CLIENT_CPUS"]))
    if (server_cpu != "")
        text = text sprintf("the server pinned to CPU %s: 09-reuseport's %s loops share that one " \
            "CPU, as 07-epoll's one loop does, so no gain can show in these curves", server_cpu,
            loops == "" ? "N" : loops)
    else if (free == "")
        text = text "nothing pinned, and the CPUs loadgen leaves are not known"
    else if (free >= 2)
        text = text sprintf("nothing pinned: 09-reuseport's loops can spread over the %d CPUs " \
            "loadgen leaves, so it could show a gain over 07-epoll", free)
    else
        text = text "nothing pinned: the client and the server share the CPUs, so 09-reuseport's " \
            "loops compete with loadgen's threads and no gain can show"
    if (ncpu == 2) text = text "; on 2 CPUs there is none to spare: loadgen needs the other one, " \
        "and an unpinned second loop would compete with it"
    c7 = swept("07-epoll"); c9 = swept("09-reuseport")
    if (c7 != "" && c9 != "") text = text "; measured: 09-reuseport " c9 " against 07-epoll " c7
    else text = text "; 09-reuseport was not on the curves of this run"
    finding("reuseport", text)
}

# One loop per core against one, on cores of their own (measure_cores): 07
# and 09 swept on the same S server CPUs with loadgen's threads on the rest.
function finding_cores(    st, c7, c9, k7, k9, l7, l9, text) {
    st = ENVIRON["CORES_STATUS"]
    if (st != "") { finding("cores", "not measured: " st); return }
    if (!("cores" in seen)) { finding("cores", "not measured: no raw/cores.jsonl"); return }
    CK = "cores"
    c7 = capacity_text("07-epoll", curve_n); k7 = CAP; l7 = CAP_AT_LEAST
    c9 = capacity_text("09-reuseport", curve_n); k9 = CAP; l9 = CAP_AT_LEAST
    CK = "curves"
    text = sprintf("server on CPUs %s, loadgen on %s thread(s), %s connections: " \
        "09-reuseport (a loop per server CPU) %s against 07-epoll %s",
        known_text(ENVIRON["CORES_SERVER_CPUS"]), known_text(ENVIRON["CORES_CLIENT_THREADS"]),
        curve_n, c9, c7)
    # A capacity the client or the sweep's top held back is a lower bound,
    # and so is the ratio it stands over (or an upper one, under it).
    if (k7 != "" && k9 != "" && l7 && l9)
        text = text "; both were held back before their walls, so no ratio"
    else if (k7 != "" && k9 != "")
        text = text sprintf("; 09 reached %s%s x 07's capacity", l9 ? "at least " : \
            l7 ? "at most " : "", fixed(k9 / k7, 2))
    else if (k7 == "" && k9 != "") text = text "; 09 met the objective where 07 met it at no rate"
    finding("cores", text)
}

# ---- headroom: knees under a CPU quota, scaled to a full core ------------------

# On two cores loadgen costs about what an O(ready) server does per
# message, so their knees lie beyond the client. The headroom sweeps hold
# the server to a share of its CPU (a cgroup bandwidth quota) so that its
# knee falls where the client has room. A knee at q% of a core is 100 / q
# times that at a full core only if the cost per message does not change
# with the rate, and that is checked, not assumed, on the knees at the two
# highest quotas, scaled: within one bisection step of each other
# (HEADROOM_AGREE), the median of both quotas' repeats, scaled, is the
# figure at a full core; the higher quota's above by more (the cost per
# message fell as the rate rose, as it does where wakeups batch), it is a
# lower bound; below by more, no
# figure. headroom(rung): its text, one headroom_capacity.csv row per
# quota, and HR_EST, HR_LO, HR_HI (the scaled median and range; "" when
# none, and no range for a lower bound), HR_AT_LEAST (1: HR_EST is a lower
# bound).
function headroom(rung,    nq, Q, i, q, sw, text, s, lo, hi, got, r, fault, j, g, pool, np, k, K,
    E, EQ) {
    HR_EST = HR_LO = HR_HI = ""; HR_AT_LEAST = 0
    nq = split(ENVIRON["HEADROOM_QUOTAS"], Q, " ")   # the highest first
    CK = "headroom"
    for (i = 1; i <= nq; i++) {
        q = Q[i] + 0; sw = rung "@" q
        fault = ""    # the first the server made, in the sweep or its bisection rounds
        for (k = 1; k <= 2 && fault == ""; k++) {
            K = k == 1 ? "headroom" : "headroom_knees"
            for (j = 1; j <= rows[K] && fault == ""; j++) {
                g = order[K, j]
                if (index(g, sw ",") == 1 && ((K, g) in nfault)) fault = sfirst[K, g]
            }
        }
        capacity(sw, curve_n)
        if (CAP_STOP == "unswept") continue
        text = text sprintf("; held to %d%% of a core, %s", q, capacity_text(sw, curve_n))
        s = lo = hi = ""
        if (CAP != "" && !CAP_AT_LEAST && fault == "") {
            s = per_core(CAP, q); lo = per_core(CAP_LO, q); hi = per_core(CAP_HI, q)
            text = text sprintf(", %s per full core", s)
            if (++got <= 2) {
                E[got] = s; EQ[got] = q
                for (j = 1; j <= CAP_REPS; j++) pool[++np] = per_core(CAP_EACH[j], q)
            }
        } else if (fault != "") text = text " (the server misbehaved: " fault ")"
        printf("%s,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", rung, q, curve_n, CAP, CAP_LO, CAP_HI,
            CAP_REPS, yes(CAP_AT_LEAST), cell(CAP_WHY), s, lo, hi) > HR_FILE
    }
    CK = "curves"
    if (text == "") return ""
    text = rung " at " curve_n " connections:" substr(text, 2)
    if (got < 2) return text "; fewer than two quotas placed a knee, so the scaling is not " \
        "checked and no figure is given at a full core"
    r = E[1] / E[2]
    if (r < 1 / HEADROOM_AGREE)
        return text sprintf("; scaled, the knee at %d%% is x%s below the one at %d%%, more than " \
            "one bisection step: the cost per message rose with the rate, so no figure is given " \
            "at a full core", EQ[1], fixed(1 / r, 2), EQ[2])
    HR_EST = E[1]; HR_AT_LEAST = r > HEADROOM_AGREE
    if (HR_AT_LEAST)
        return text sprintf("; scaled, the knee at %d%% is x%s above the one at %d%%, more than " \
            "one bisection step: the cost per message fell as the rate rose (wakeups batch " \
            "more), so a full core does at least as well: at least %s msgs/s at a full core " \
            "(a lower bound, scaled from %d%%)", EQ[1], fixed(r, 2), EQ[2], HR_EST, EQ[1])
    # Agreeing, both quotas measure the same figure: their repeats are
    # pooled. One quota's knee alone moves by two bisection steps from one
    # run to the next where its cost per message falls as fast as the rate
    # rises (measured at 50%: the server's CPU at its quota from 76 000 to
    # 108 000 msgs/s, and the knee wherever its latency happened to tip).
    HR_EST = int(median_of(pool, np) + 0.5); HR_LO = pool[1]; HR_HI = pool[np]
    return text sprintf("; scaled, the knees at %d%% and %d%% agree within x%s (one bisection " \
        "step: x%s): about %s msgs/s at a full core (range %s-%s), the median of the %d " \
        "repeats at both quotas, scaled", EQ[1], EQ[2], fixed(r > 1 ? r : 1 / r, 2),
        fixed(BISECT_STEP, 2), HR_EST, HR_LO, HR_HI, np)
}

# per_core(x, q): a rate measured at q% of a core, scaled to a full core.
function per_core(x, q) { return int(x * 100 / q + 0.5) }

# Every headroom rung's knees under a quota, before the verdicts (the walls'
# order reads them): headroom_capacity.csv, HR_TEXT, and per rung HR_EST_OF,
# HR_LO_OF, HR_HI_OF, HR_LB_OF (headroom()'s figures); HR_STATUS, why none.
function headroom_figures(    n, R, i, t) {
    HR_FILE = out "/headroom_capacity.csv"
    print "rung,quota_pct,n,capacity_msgs_per_s,capacity_min,capacity_max,repeats,at_least," \
        "why,per_core_msgs_per_s,per_core_min,per_core_max" > HR_FILE
    HR_TEXT = HR_STATUS = ""
    if (curve_status != "") { HR_STATUS = curve_status; return }
    if (ENVIRON["HEADROOM_STATUS"] != "") { HR_STATUS = ENVIRON["HEADROOM_STATUS"]; return }
    if (!("headroom" in seen)) { HR_STATUS = "no raw/headroom.jsonl"; return }
    n = split(ENVIRON["HEADROOM_RUNGS"], R, " ")
    for (i = 1; i <= n; i++) {
        t = headroom(R[i])
        if (t == "") continue
        HR_TEXT = HR_TEXT " | " t
        HR_EST_OF[R[i]] = HR_EST; HR_LO_OF[R[i]] = HR_LO; HR_HI_OF[R[i]] = HR_HI
        HR_LB_OF[R[i]] = HR_AT_LEAST
    }
    close(HR_FILE)
    if (HR_TEXT == "") HR_STATUS = "no headroom sweep has a result"
}

# The headroom finding: every headroom rung's knees under a quota, and
# 08-io_uring against 07-epoll at the knee where both have a figure.
function finding_headroom(    text, e7, l7, h7, b7, e8, l8, h8, b8, what) {
    if (HR_STATUS != "") { finding("headroom", "not measured: " HR_STATUS); return }
    text = HR_TEXT
    # A lower bound reaches from its figure up: it is told apart from a
    # figure with a range only when it lies above that range.
    e7 = HR_EST_OF["07-epoll"]; b7 = HR_LB_OF["07-epoll"]
    l7 = b7 ? e7 : HR_LO_OF["07-epoll"]; h7 = b7 ? "" : HR_HI_OF["07-epoll"]
    e8 = HR_EST_OF["08-io_uring"]; b8 = HR_LB_OF["08-io_uring"]
    l8 = b8 ? e8 : HR_LO_OF["08-io_uring"]; h8 = b8 ? "" : HR_HI_OF["08-io_uring"]
    what = sprintf("08-io_uring %s%s, 07-epoll %s%s msgs/s at a full core", b8 ? "at least " : \
        "about ", e8, b7 ? "at least " : "about ", e7)
    if (e7 == "" || e8 == "") what = ""
    else if (b7 && b8) text = text " | at the knee, " what ": both lower bounds, no comparison"
    else if (h7 != "" && l8 + 0 > h7 + 0)
        text = text sprintf(" | at the knee, 08-io_uring holds %s%s x what 07-epoll does (%s; " \
            "apart)", b8 ? "at least " : "", fixed(e8 / e7, 2), what)
    else if (h8 != "" && l7 + 0 > h8 + 0)
        text = text sprintf(" | at the knee, 07-epoll holds %s%s x what 08-io_uring does (%s; " \
            "apart): io_uring's batching does not pay there", b7 ? "at least " : "",
            fixed(e7 / e8, 2), what)
    else
        text = text " | at the knee, 08-io_uring and 07-epoll are not told apart (" what \
            "; their ranges overlap)"
    finding("headroom", substr(text, 4))
}

END {
    if (NO_TABLE) exit 2
    if (ENVIRON["REPORT_MODE"] == "brackets") { write_brackets(0); exit }
    if (ENVIRON["REPORT_MODE"] == "unsteady") { write_brackets(1); exit }
    headroom_figures()
    for (kind in T) if ((kind in seen) && kind != "syscalls") write_csv(kind)
    write_memory_per_conn()
    start()
    verdict_stall()
    verdict_idle()
    verdict_busy()
    verdict_memory()
    verdict_select()
    verdict_scan("O(n)", "grows", "04-select 05-poll")
    verdict_scan("O(ready)", "flat", "06-kqueue 07-epoll")
    verdict_c10k()
    if ("curves" in seen) write_capacity()
    verdict_walls()
    verdict_c10k_wall()
    verdict_yardstick()
    printf "" > (out "/findings.tsv")
    syscalls()
    finding_beyond()
    finding_reuseport()
    finding_cores()
    finding_headroom()
}
