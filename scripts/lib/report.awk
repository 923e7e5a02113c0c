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
    # The thresholds. Each verdict prints the ones it uses. They were set
    # against the spread of repeated runs on a 2-core machine (README.md,
    # "How to read the shapes"): each is several times that spread away
    # from what was measured.
    STALL_BLOCKED = 0.9   # 01-blocking: B waits at least this share of the hold,
    STALL_AFTER_MS = 5    # ... and is answered within this many ms of A closing
                          # (measured 0.1 to 0.4 ms);
    STALL_FREE = 0.1      # every other rung answers within this share of the hold.
    IDLE_MAX_PCT = 1      # "about 0%": at most this much of one core, idle
    BUSY_MIN_PCT = 50     # busy polling: at least this much of one core, idle
    MEM_FACTOR = 4        # fork and threads: at least this many times 07-epoll's
    MEM_FLOOR_KB = 0.1    # ... per-connection memory, taken as at least this
    SCAN_GROWTH = 1.5     # O(n): p50 at the most idle >= this x p50 at 0; O(ready): below.
                          # Measured: 5x and more against 1.1x, run-to-run spread < 10%.
    YARD_TOLERANCE = 15   # 07-epoll's CPU per message <= libuv's + this many
                          # percent, at equal offered load (run-to-run spread
                          # of either: a few per cent)
    LOAD_MAX_PCT = 90     # equal load: every compared server below this much of
                          # its core in every run (loadgen's own bound for "saturated")
    LOAD_KEPT = 0.97      # ... and the rate achieved at least this share of the offered
    LOAD_POLL_FACTOR = 1.5 # ... and 05-poll's CPU per message at least this many times
                          # the O(ready) loops' (measured 2.2x to 3.8x at N = 1000)
    # What counts as the server misbehaving, in any mode. "refused" is the
    # select ceiling's expected outcome there, and a fault everywhere else.
    FAULTS = "connect_failed refused unanswered lost corrupt timed_out duplicated extra_bytes" \
        " unclosed"
    SELECT_FAULTS = "connect_failed unanswered lost corrupt timed_out duplicated extra_bytes" \
        " unclosed"
    # loadgen's "error" words that mean the server's behaviour ended the run.
    SERVER_ERRORS = "|timeout|corrupt|lost|not served|active connection failed|duplicated" \
        "|not closed|"

    out = ENVIRON["REPORT_OUT"]
    rungs = ENVIRON["RUNGS"]; hold = ENVIRON["STALL_HOLD"]; idle_s = ENVIRON["IDLE_SECONDS"]
    mem_rungs = ENVIRON["MEM_RUNGS"]; mem_n = ENVIRON["MEM_NS"]; sub(/.* /, "", mem_n)
    c10k_rungs = ENVIRON["C10K_RUNGS"]; c10k_claim = ENVIRON["C10K_CLAIM"]; c10k_n = ENVIRON["C10K_N"]
    if (c10k_claim == "") c10k_claim = c10k_rungs
    scan_last = ENVIRON["SCAN_IDLE"]; sub(/.*,/, "", scan_last)
    scan_last_select = ENVIRON["SCAN_IDLE_SELECT"]; sub(/.*,/, "", scan_last_select)
    load_rungs = ENVIRON["LOAD_RUNGS"]; load_n = ENVIRON["LOAD_N"]; load_rate = ENVIRON["LOAD_RATE"]
    busy_status = ENVIRON["BUSY_STATUS"]; yard_status = ENVIRON["YARD_STATUS"]
    load_status = ENVIRON["LOAD_STATUS"]
    server_figures = ENVIRON["SERVER_FIGURES"]
    # The rung set beside libuv: 07-epoll, or 06-kqueue where there is no
    # epoll (libuv is a kqueue loop there).
    yard_rung = ENVIRON["YARD_RUNG"]; if (yard_rung == "") yard_rung = "07-epoll"
    # Off Linux: which rungs the platform lacks, and the memory figure it has.
    skip_rungs = ENVIRON["SKIP_RUNGS"]; skip_why = ENVIRON["SKIP_WHY"]
    mem_key = ENVIRON["MEM_KEY"]; if (mem_key == "") mem_key = "server_pss_kb"
    mem_name = (mem_key == "server_pss_kb") ? "PSS" : "footprint"

    # Tables: the tags that make a row, then the columns (median over the
    # row's runs; ":min", ":max", ":ntrue" and ":nsat" as named).
    T["stall"] = "rung|wait_ms wait_ms:min wait_ms:max after_close_ms after_close_ms:min after_close_ms:max stalled:ntrue"
    T["idle_cpu"] = "rung|served idle_s server_cpu_ms server_cpu_pct server_procs server_threads server_rss_kb"
    T["memory"] = "rung n|served server_rss_kb server_pss_kb server_footprint_kb server_procs server_threads setup_us_per_conn"
    T["select"] = "rung|requested served refused failed lost corrupt still_open server_refusal_lines"
    T["scan"] = "rung idle|rtt_p50_us rtt_p50_us:min rtt_p50_us:max rtt_p99_us server_cpu_ms_per_1k round_trips"
    T["c10k"] = "rung n run|requested served " FAULTS " client_errors msgs msgs_per_s window_s" \
        " echoes_per_conn_min echoes_per_conn_p50 echoes_per_conn_max in_flight_at_end rtt_p50_us rtt_p99_us" \
        " connect_ms_max client_cpu_pct server_cpu_pct saturated server_cpu_us_per_msg server_rss_kb server_hwm_kb server_pss_kb server_threads"
    # Equal offered load (open loop): medians with min-max over the runs.
    T["load"] = "rung n|rate_offered rate_achieved server_cpu_pct server_cpu_pct:min server_cpu_pct:max" \
        " server_cpu_us_per_msg server_cpu_us_per_msg:min server_cpu_us_per_msg:max" \
        " rtt_p50_us rtt_p99_us rtt_p99_us:min rtt_p99_us:max rtt_p999_us rtt_p999_us:min rtt_p999_us:max" \
        " client_cpu_pct client_cpu_pct:max saturated:nsat late_sends:max schedule_lag_ms_max:max" \
        " echoes_per_conn_min:min echoes_per_conn_p50 echoes_per_conn_max:max server_hwm_kb"
    # The yardstick: 07-epoll beside libuv, from the equal-load runs.
    T["yardstick"] = "rung n|server_cpu_us_per_msg server_cpu_us_per_msg:min server_cpu_us_per_msg:max" \
        " server_cpu_pct rtt_p99_us server_hwm_kb"
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
    g = ""
    for (i = 1; i <= n; i++) g = g (i > 1 ? "," : "") J[tags[i]]
    if (!((kind, g) in runs)) order[kind, ++rows[kind]] = g
    runs[kind, g]++
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
    what = ""
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
        cfault[kind, g] = J["client_errors"] " client_errors (loadgen's own" (J["stderr"] != "" ? ": " J["stderr"] : "") ")"
}

/^\{/ {
    kind = FILENAME; sub(/.*\//, "", kind); sub(/\.jsonl$/, "", kind)
    if (!(kind in T)) next
    seen[kind] = 1; parse($0); add(kind)
    if (kind == "load" && (J["rung"] == yard_rung || J["rung"] == "uv-echo")) { seen["yardstick"] = 1; add("yardstick") }
}

# ---- statistics -----------------------------------------------------------

# stat(kind, group, key, what): median, min, max, ntrue (runs with "true")
# or nsat (runs saturated on either side) over the runs with a value; ""
# when none has one.
function stat(k, g, key, what,    n, i, j, t, a, m) {
    n = nval[k, g, key]
    if (n == 0) return ""
    if (what == "ntrue") { for (i = 1; i <= n; i++) m += (val[k, g, key, i] == "true"); return m + 0 }
    if (what == "nsat") { for (i = 1; i <= n; i++) m += (val[k, g, key, i] != "none"); return m + 0 }
    if (n == 1) return num(val[k, g, key, 1])
    for (i = 1; i <= n; i++) {            # insertion sort: a handful of runs
        t = val[k, g, key, i] + 0
        for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
        a[j + 1] = t
    }
    if (what == "min") return a[1]
    if (what == "max") return a[n]
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# count(kind, group, key, value): the runs whose key is value.
function count(k, g, key, v,    n, i, m) {
    n = nval[k, g, key]
    for (i = 1; i <= n; i++) m += (val[k, g, key, i] == v)
    return m + 0
}

# Numbers as numbers (awk compares a string with a number as strings:
# "999" > 1350 is true); "true", "false" and other text stay text.
function num(v) { return v ~ /^-?[0-9]+\.?[0-9]*([eE][-+]?[0-9]+)?$/ ? v + 0 : v }

# why(s): a reason the claim could not be measured that is a failure of the
# run; skip(s): one the platform or an optional tool explains. Either goes
# into WHY; HARD says whether any was a failure.
function why(s) { if (index(WHY, s) == 0) WHY = WHY (WHY == "" ? "" : "; ") s; HARD = 1 }
function skip(s) { if (index(WHY, s) == 0) WHY = WHY (WHY == "" ? "" : "; ") s }

# misbehaved(kind, group, label): note the group's server faults in MIS
# (once per verdict), and loadgen's own in WHY; 1 if the server misbehaved.
function misbehaved(k, g, label) {
    if (label == "") label = g
    if ((k, g) in cfault) why(label ": " cfault[k, g])
    if (!((k, g) in nfault)) return 0
    if (!((k, g) in mis_seen)) {
        mis_seen[k, g] = 1
        MIS = MIS (MIS == "" ? "" : "; ") label ": faults in " nfault[k, g] " of " runs[k, g] " runs, first " sfirst[k, g]
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
    v = stat(k, g, key, "median")
    if (v != "") return v
    if (key ~ /^server_/ && server_figures == "0") skip("no server figures on this platform (loadgen --server-pid reads none here)")
    else why(g ": " key " empty" (key == "server_pss_kb" ? " (PSS unreadable)" : ""))
    return v
}

function r(x, d) { return sprintf("%." (d == "" ? 1 : d) "f", x) }
# A value for the text of a verdict: "?" when it is missing, never 0.
function f(x, d) { return x == "" ? "?" : r(x, d) }
function r2(x) { return x == "" ? "" : r(x, 2) }
function ratio(a, b) { return (a + 0 == 0) ? "" : r(b / a, 2) }
# "median (min-max)" of a key over a group's runs.
function mmm(k, g, key, d,    a, b, c) {
    a = stat(k, g, key, "median"); b = stat(k, g, key, "min"); c = stat(k, g, key, "max")
    if (a == "") return "?"
    return (b == c) ? r(a, d) : r(a, d) " (" r(b, d) "-" r(c, d) ")"
}
function skipped(rung) { return index(" " skip_rungs " ", " " rung " ") > 0 }
# A rung this platform does not have: said in the verdict, not held against it.
function note(rung) { if (index(NOTE, rung) == 0) NOTE = NOTE (NOTE == "" ? "" : ", ") rung }

# ---- tables ---------------------------------------------------------------

function write_csv(kind,    spec, cols, file, i, j, c, w, g, col) {
    split(T[kind], spec, "|")
    gsub(/ /, ",", spec[1])
    file = out "/" kind ".csv"
    c = split(spec[2], cols, " ")
    printf "%s,runs", spec[1] > file
    for (j = 1; j <= c; j++) { split(cols[j], w, ":"); printf ",%s", w[1] (w[2] == "" ? "" : "_" w[2]) > file }
    print ",faulty_runs,error" > file
    for (i = 1; i <= rows[kind]; i++) {
        g = order[kind, i]
        printf "%s,%d", g, runs[kind, g] > file
        for (j = 1; j <= c; j++) { split(cols[j], w, ":"); printf ",%s", stat(kind, g, w[1], w[2] == "" ? "median" : w[2]) > file }
        col = ((kind, g) in err) ? err[kind, g] : ""
        if ((kind, g) in sfirst) col = sfirst[kind, g]
        gsub(/,/, ";", col)
        print "," (((kind, g) in nfault) ? nfault[kind, g] : 0) "," col > file
    }
    close(file)
}

# Per connection: growth over the 1-connection run, per connection added.
function write_memory_per_conn(    file, i, g, p) {
    file = out "/memory_per_conn.csv"
    print "rung,n,mem_kb_per_conn,rss_kb_per_conn,setup_us_per_conn,figure" > file
    for (i = 1; i <= rows["memory"]; i++) {
        g = order["memory", i]
        split(g, p, ",")
        if (p[2] == 1) continue
        start()
        printf "%s,%s,%s,%s,%s\n", g, r2(per_conn(p[1], p[2], mem_key)), r2(per_conn(p[1], p[2], "server_rss_kb")),
            stat("memory", g, "setup_us_per_conn"), mem_name > file
    }
    close(file)
}
# per_conn(rung, n, key): "" unless both runs gave the value (get() says why).
function per_conn(rung, n, key,    a, b) {
    a = get("memory", rung ",1", key); b = get("memory", rung "," n, key)
    return (a == "" || b == "") ? "" : (b - a) / (n - 1)
}

# ---- verdicts --------------------------------------------------------------

function say(claim, outcome, text, class) { printf "%s\t%s\t%s\t%s\n", claim, outcome, text, class }
# The outcome: the server's faults first, then what could not be measured,
# then the numbers.
function verdict(claim, ok, text) {
    if (NOTE != "") text = text " (" NOTE " not measured: " skip_why ")"
    if (MIS != "") say(claim, "NOT reproduced", "the server misbehaved: " MIS (text == "" ? "" : " | measured: " text), "server")
    else if (WHY != "") say(claim, "not measured", WHY (text == "" ? "" : " | measured: " text), HARD ? "failed" : "skipped")
    else say(claim, ok ? "reproduced" : "NOT reproduced", text, "ok")
}
function start() { WHY = ""; MIS = ""; NOTE = ""; HARD = 0; split("", mis_seen) }

function verdict_stall(    n, i, rung, w, a, w01, a01, worst, wrung, ok, hold_ms) {
    start()
    hold_ms = hold * 1000
    w01 = get("stall", "01-blocking", "wait_ms")
    a01 = get("stall", "01-blocking", "after_close_ms")
    n = split(rungs, R, " ")
    for (i = 2; i <= n; i++) {
        if (skipped(R[i])) { note(R[i]); continue }
        w = get("stall", R[i], "wait_ms")
        if (w != "" && (wrung == "" || w + 0 > worst + 0)) { worst = w; wrung = R[i] }
    }
    ok = (w01 != "" && a01 != "" && w01 >= STALL_BLOCKED * hold_ms && a01 >= 0 && a01 <= STALL_AFTER_MS && worst < STALL_FREE * hold_ms)
    verdict("stall", ok, sprintf("01-blocking: B waited %s ms, median (min-max) of %d runs (need >= %s x %s ms) and was answered %s ms after A closed (need 0 to %s ms); 02-07: at most %s ms, %s (need < %s x %s ms)",
        mmm("stall", "01-blocking", "wait_ms", 1), runs["stall", "01-blocking"], STALL_BLOCKED, hold_ms,
        mmm("stall", "01-blocking", "after_close_ms", 2), STALL_AFTER_MS, f(worst, 2), wrung, STALL_FREE, hold_ms))
}

function verdict_idle(    n, i, p, max, mrung, text) {
    start()
    n = split(rungs, R, " ")
    for (i = 1; i <= n; i++) {
        if (skipped(R[i])) { note(R[i]); continue }
        p = get("idle_cpu", R[i], "server_cpu_pct")
        if (p == "") continue
        text = text sprintf(", %s %s%%", R[i], r(p, 2))
        if (mrung == "" || p + 0 > max + 0) { max = p; mrung = R[i] }
    }
    IDLE_MAX = max
    verdict("idle", max != "" && max <= IDLE_MAX_PCT, sprintf("server CPU over %s s idle (need each <= %s%% of one core):%s", idle_s, IDLE_MAX_PCT, substr(text, 2)))
}

function verdict_busy(    p) {
    start()
    if (busy_status != "") skip("busy-poll: " busy_status)
    else p = get("idle_cpu", "busy-poll", "server_cpu_pct")
    verdict("busy-poll", p != "" && p >= BUSY_MIN_PCT, sprintf("busy-poll variant of 01 over %s s idle: %s%% of one core (need >= %s%%), against at most %s%% for the rungs",
        idle_s, f(p, 1), BUSY_MIN_PCT, f(IDLE_MAX, 2)))
}

function verdict_memory(    n, i, v, e, text, ok) {
    start()
    n = split(mem_rungs, R, " ")
    for (i = 1; i <= n; i++) {
        v[R[i]] = per_conn(R[i], mem_n, mem_key)
        text = text sprintf("; %s %s KiB, %s us", R[i], f(v[R[i]], 2), f(stat("memory", R[i] "," mem_n, "setup_us_per_conn"), 0))
    }
    e = v[R[n]]                           # the event loop: 07-epoll, or 06-kqueue without epoll
    if (e != "" && e < MEM_FLOOR_KB) e = MEM_FLOOR_KB
    ok = (v["02-fork"] != "" && v["03-threads"] != "" && e != "" && v["02-fork"] >= MEM_FACTOR * e && v["03-threads"] >= MEM_FACTOR * e)
    verdict("memory", ok,
        sprintf("%s growth and setup time per connection at %d connections:%s (need 02 and 03 each >= %s x %s's, taken as at least %s KiB)%s",
            mem_name, mem_n, substr(text, 2), MEM_FACTOR, R[n], MEM_FLOOR_KB,
            mem_name == "PSS" ? "" : "; compared on the footprint (the memory the kernel charges the process), as this platform has no PSS"))
}

function verdict_select(    s, rf, q, l, c, o, x, g) {
    start()
    g = "04-select"
    q = get("select", g, "requested"); s = get("select", g, "served")
    rf = get("select", g, "refused"); l = get("select", g, "lost")
    c = get("select", g, "corrupt"); o = get("select", g, "still_open")
    x = stat("select", g, "server_refusal_lines")
    verdict("select", s > 900 && s < 1024 && s + rf == q && l == 0 && c == 0 && o == s,
        sprintf("04-select: %s of %s served, %s refused (server logged %s FD_SETSIZE lines), %s lost, %s corrupt, %s still open (need 900 < served < 1024, served + refused = requested, none lost or corrupt, all served still open)",
            f(s, 0), f(q, 0), f(rf, 0), f(x, 0), f(l, 0), f(c, 0), f(o, 0)))
}

# want "grows" (select, poll) or "flat" (kqueue, epoll). Every idle count
# of every run is part of the claim: a fault at any of them counts.
function verdict_scan(claim, want, list,    n, i, j, last, a, b, x, bad, text, g) {
    start()
    n = split(list, R, " ")
    for (i = 1; i <= n; i++) {
        if (skipped(R[i])) { note(R[i]); continue }
        for (j = 1; j <= rows["scan"]; j++) {
            g = order["scan", j]
            if (index(g, R[i] ",") == 1) misbehaved("scan", g, g)
        }
        last = (R[i] == "04-select") ? scan_last_select : scan_last
        a = get("scan", R[i] ",0", "rtt_p50_us"); b = get("scan", R[i] "," last, "rtt_p50_us")
        if (a == "" || b == "") continue
        x = ratio(a, b)
        if (x == "" || (want == "grows") != (x + 0 >= SCAN_GROWTH)) bad = 1
        text = text sprintf("; %s %s -> %s us from 0 to %d idle (%sx; medians of %d runs, at %d idle %s)", R[i], r(a), r(b), last,
            x == "" ? "?" : x, runs["scan", R[i] "," last], last, mmm("scan", R[i] "," last, "rtt_p50_us", 1))
    }
    verdict(claim, !bad, substr(text, 3) sprintf(" (need %s %s x)", want == "grows" ? ">=" : "<", SCAN_GROWTH))
}

# One rung's closed-loop C10K run: its text; BAD set when the numbers fail
# the claim (not all served, no messages, a connection never echoed in the
# window). For a rung outside the claim (contrast), its faults are shown
# in the text instead of in MIS.
function c10k_run(rung, k, contrast,    g, served, cpu, e0, e5, e9, msgs, bad, w, h, sat, prog) {
    g = rung "," c10k_n "," k
    w = WHY; h = HARD
    if (contrast && ((("c10k", g) in nfault) || (("c10k", g) in err)))
        return sprintf(", %s run %d: %s", rung, k, (("c10k", g) in nfault) ? "faults: " sfirst["c10k", g] : "failed: " err["c10k", g])
    misbehaved("c10k", g, rung " run " k)
    served = get("c10k", g, "served")
    msgs = get("c10k", g, "msgs")
    e0 = get("c10k", g, "echoes_per_conn_min")
    e5 = stat("c10k", g, "echoes_per_conn_p50"); e9 = stat("c10k", g, "echoes_per_conn_max")
    if (contrast) { WHY = w; HARD = h }
    if (served != "" && served != c10k_n) bad = 1
    # No progress is the server misbehaving too: a server that answers
    # nothing in the window (and all in the drain), or starves some
    # connections, has not served them.
    prog = ""
    if (msgs != "" && msgs + 0 <= 0) prog = "no message echoed inside the window"
    else if (e0 != "" && e0 + 0 < 1) prog = "a connection got no echo inside the window (echoes per connection min " e0 ")"
    if (prog != "" && !contrast) MIS = MIS (MIS == "" ? "" : "; ") rung " run " k ": no progress: " prog
    if (bad && !contrast) BAD = 1
    cpu = stat("c10k", g, "server_cpu_us_per_msg")
    sat = stat("c10k", g, "saturated")
    return sprintf(", %s%s %s/%s served, %s msgs, echoes per connection %s/%s/%s%s%s", rung, k > 1 ? " run " k : "",
        served == "" ? "?" : served, c10k_n, msgs == "" ? "?" : msgs, e0 == "" ? "?" : e0, e5 == "" ? "?" : e5, e9 == "" ? "?" : e9,
        cpu == "" ? "" : " (" r(cpu, 2) " us CPU/msg" (sat != "" && sat != "none" ? ", " sat "-saturated" : "") ")",
        (prog != "" && contrast) ? " [no progress: " prog "]" : "")
}

# The claim is the event loops' (c10k_claim); the other rungs measured
# (c10k_rungs: 02-fork, 03-threads) are shown after it, for contrast: what
# went wrong there is shown but is not the claim's.
function verdict_c10k(    n, i, k, text, other, contrast) {
    start()
    BAD = 0
    n = split(c10k_rungs, R, " ")
    for (i = 1; i <= n; i++) {
        if (skipped(R[i])) { note(R[i]); continue }
        contrast = index(" " c10k_claim " ", " " R[i] " ") == 0
        if (!contrast && !(("c10k", R[i] "," c10k_n ",1") in runs)) get("c10k", R[i] "," c10k_n ",1", "served")
        for (k = 1; (("c10k", R[i] "," c10k_n "," k) in runs); k++)
            if (contrast) other = other c10k_run(R[i], k, 1)
            else text = text c10k_run(R[i], k, 0)
    }
    text = sprintf("%d connections at once, closed loop, every echoed byte checked (need all served, msgs > 0 and every connection echoed at least once in the window, and no fault; echoes per connection min/median/max):%s%s",
        c10k_n, substr(text, 2), other == "" ? "" : "; not part of the claim, for contrast:" substr(other, 2))
    verdict("c10k", !BAD, text)
}

# Equal offered load: every compared server at the same N and the same
# open-loop rate. The comparison holds only if the client kept the
# schedule and no server was saturated. Its figure is server CPU per
# message; below saturation each message costs about one wakeup for every
# model, so the claim it checks is the one equal load makes visible: poll
# pays O(n) per wakeup, an O(ready) loop does not (06 and 07's worst run
# against 05-poll's best, times LOAD_POLL_FACTOR).
function verdict_load(    n, i, g, c, p, sat, kept, text, bad, loops, poll, e0, retry) {
    start()
    if (load_status != "") { skip(load_status); verdict("equal load", 0, ""); return }
    n = split(load_rungs, R, " ")
    if (n == 0) why("no equal-load runs in the settings (LOAD_RUNGS)")
    for (i = 1; i <= n; i++) {
        if (skipped(R[i])) { note(R[i]); continue }
        g = R[i] "," load_n
        c = get("load", g, "server_cpu_us_per_msg")
        p = get("load", g, "server_cpu_pct")
        e0 = stat("load", g, "echoes_per_conn_min", "min")
        kept = stat("load", g, "rate_achieved", "min")
        if (c == "" || p == "") continue
        sat = stat("load", g, "saturated", "nsat")
        if (count("load", g, "saturated", "client") > 0)
            why(R[i] ": the client was saturated in " count("load", g, "saturated", "client") " runs (loadgen, not the server, set the pace: lower LOAD_RATE)")
        if (stat("load", g, "server_cpu_pct", "max") + 0 >= LOAD_MAX_PCT || (kept != "" && kept < LOAD_KEPT * load_rate) || (e0 != "" && e0 + 0 < 1)) bad = 1
        text = text sprintf("; %s %s us CPU/msg at %s%% of its core, p99 %s us, p99.9 %s us%s", R[i], mmm("load", g, "server_cpu_us_per_msg", 2),
            mmm("load", g, "server_cpu_pct", 1), mmm("load", g, "rtt_p99_us", 0), mmm("load", g, "rtt_p999_us", 0),
            (sat + 0 > 0 ? " [saturated in " sat " runs]" : "") (kept != "" && kept < LOAD_KEPT * load_rate ? " [kept only " r(kept, 0) "/s]" : "") \
            (e0 != "" && e0 + 0 < 1 ? " [a connection got no echo]" : ""))
        if (R[i] == "06-kqueue" || R[i] == "07-epoll") { if (loops == "" || stat("load", g, "server_cpu_us_per_msg", "max") > loops) loops = stat("load", g, "server_cpu_us_per_msg", "max") }
        if (R[i] == "05-poll") poll = stat("load", g, "server_cpu_us_per_msg", "min")
    }
    if (loops == "" || poll == "" || poll + 0 < LOAD_POLL_FACTOR * loops) bad = 1
    retry = ENVIRON["LOAD_RETRY"]
    verdict("equal load", !bad, sprintf("%d connections, %d msgs/s offered%s (open loop, latency from the intended send), median (min-max) of the runs:%s (need every run below %s%% of a core, at least %s x the offered rate achieved, every connection echoed; 05-poll's best run >= %s x the O(ready) loops' worst: %s against %s us)",
        load_n, load_rate, (retry == "" ? "" : " (given up, a server saturated: " retry ")"), substr(text, 2), LOAD_MAX_PCT, LOAD_KEPT, LOAD_POLL_FACTOR, f(poll, 2), f(loops, 2)))
}

function verdict_yardstick(    e, u, text, bad) {
    start()
    if (yard_status != "") skip("uv-echo: " yard_status)
    if (load_status != "") skip(load_status)
    if (WHY == "") {
        e = get("yardstick", yard_rung "," load_n, "server_cpu_us_per_msg")
        u = get("yardstick", "uv-echo," load_n, "server_cpu_us_per_msg")
        if (e != "" && u != "" && e > u * (1 + YARD_TOLERANCE / 100)) bad = 1
    }
    text = sprintf("at equal offered load (%s connections, %s msgs/s): server CPU per message %s %s us, libuv %s us (median (min-max) of the runs); peak RSS at %s connections (closed loop) %s / %s KiB",
        load_n, load_rate, yard_rung, mmm("yardstick", yard_rung "," load_n, "server_cpu_us_per_msg", 2), mmm("yardstick", "uv-echo," load_n, "server_cpu_us_per_msg", 2),
        c10k_n, f(stat("c10k", yard_rung "," c10k_n ",1", "server_hwm_kb"), 0), f(stat("c10k", "uv-echo," c10k_n ",1", "server_hwm_kb"), 0))
    verdict("yardstick", !bad, text sprintf(" (need %s <= libuv + %s%%)", yard_rung, YARD_TOLERANCE))
}

END {
    for (kind in T) if (kind in seen) write_csv(kind)
    write_memory_per_conn()
    verdict_stall()
    verdict_idle()
    verdict_busy()
    verdict_memory()
    verdict_select()
    verdict_scan("O(n)", "grows", "04-select 05-poll")
    verdict_scan("O(ready)", "flat", "06-kqueue 07-epoll")
    verdict_c10k()
    verdict_load()
    verdict_yardstick()
}
