# report.awk: from the raw JSON lines of scripts/reproduce.sh (each a
# loadgen result tagged "rung", "run", "n", or a stub of tags and "error"
# when a run gave none) to the CSV tables in `out` and one verdict per claim
# on stdout: claim TAB outcome TAB inputs and thresholds. The outcome is
# "reproduced", "NOT reproduced" or "not measured". A value that is not
# there (no file, no line, a failed run, a null or missing key) is "", and
# no verdict computes with it: get() notes why it is missing in WHY, and a
# verdict with a WHY says not measured. Run by scripts/report.sh.

BEGIN {
    CONVFMT = "%.10g"     # numbers into text without rounding to 6 digits
    # The thresholds. Each verdict prints the ones it uses.
    STALL_BLOCKED = 0.9   # 01-blocking: B waits at least this share of the hold,
    STALL_AFTER_MS = 5    # ... and is answered within this many ms of A closing;
    STALL_FREE = 0.1      # every other rung answers within this share of the hold.
    IDLE_MAX_PCT = 1      # "about 0%": at most this much of one core, idle
    BUSY_MIN_PCT = 50     # busy polling: at least this much of one core, idle
    MEM_FACTOR = 4        # fork and threads: at least this many times 07-epoll's
    MEM_FLOOR_KB = 0.1    # ... per-connection memory, taken as at least this
    SCAN_GROWTH = 1.5     # O(n): p50 at the most idle >= this x p50 at 0; O(ready): below
    YARD_TOLERANCE = 10   # 07-epoll's CPU per message <= libuv's + this many percent
    COUNTERS = "failed refused connect_failed unanswered lost corrupt"
    WRONG = COUNTERS " timed_out" # timed_out: counted by newer loadgens only

    # Tables: the tags that make a row, then the columns (median over the
    # row's runs; ":min", ":max" and ":ntrue" as named).
    T["stall"] = "rung|wait_ms wait_ms:min wait_ms:max after_close_ms stalled:ntrue"
    T["idle_cpu"] = "rung|served idle_s server_cpu_ms server_cpu_pct server_procs server_threads server_rss_kb"
    T["memory"] = "rung n|served server_rss_kb server_pss_kb server_procs server_threads setup_us_per_conn"
    T["select"] = "rung|requested served refused failed lost corrupt still_open server_refusal_lines"
    T["scan"] = "rung idle|rtt_p50_us rtt_p50_us:min rtt_p50_us:max rtt_p99_us server_cpu_ms_per_1k round_trips"
    T["c10k"] = "rung n run|requested served " COUNTERS " msgs_per_s window_s rtt_p50_us rtt_p99_us" \
        " connect_ms_max client_cpu_pct client_bound server_cpu_us_per_msg server_rss_kb server_hwm_kb server_pss_kb server_threads"
    # The yardstick's comparison: 07-epoll and libuv, medians over runs.
    T["yardstick"] = "rung n|msgs_per_s server_cpu_us_per_msg client_cpu_pct client_bound:ntrue server_rss_kb server_hwm_kb"
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

function add(kind,    spec, tags, i, n, g, cols, key) {
    split(T[kind], spec, "|")
    n = split(spec[1], tags, " ")
    for (i = 1; i <= n; i++) g = g (i > 1 ? "," : "") J[tags[i]]
    if (!((kind, g) in runs)) order[kind, ++rows[kind]] = g
    runs[kind, g]++
    if (J["error"] != "") err[kind, g] = J["error"]
    for (key in J)
        if (J[key] != "") val[kind, g, key, ++nval[kind, g, key]] = J[key]
}

/^\{/ {
    kind = FILENAME; sub(/.*\//, "", kind); sub(/\.jsonl$/, "", kind)
    if (!(kind in T)) next
    seen[kind] = 1; parse($0); add(kind)
    if (kind == "c10k" && (J["rung"] == "07-epoll" || J["rung"] == "uv-echo")) { seen["yardstick"] = 1; add("yardstick") }
}

# ---- statistics -----------------------------------------------------------

# stat(kind, group, key, what): median, min, max or ntrue over the runs with
# a value; "" when none has one.
function stat(k, g, key, what,    n, i, j, t, a, m) {
    n = nval[k, g, key]
    if (n == 0) return ""
    if (what == "ntrue") { for (i = 1; i <= n; i++) m += (val[k, g, key, i] == "true"); return m + 0 }
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

# Numbers as numbers (awk compares a string with a number as strings:
# "999" > 1350 is true); "true", "false" and other text stay text.
function num(v) { return v ~ /^-?[0-9]+\.?[0-9]*([eE][-+]?[0-9]+)?$/ ? v + 0 : v }

function why(s) { if (index(WHY, s) == 0) WHY = WHY (WHY == "" ? "" : "; ") s }

# get(kind, group, key): the median of key over the group's runs, or "" with
# the reason noted in WHY.
function get(k, g, key,    v) {
    if (!(k in seen)) { why("no " k " results (raw/" k ".jsonl missing or empty)"); return "" }
    if (!((k, g) in runs)) { why(g ": not run"); return "" }
    if ((k, g) in err) { why(g ": run failed (" err[k, g] ")"); return "" }
    v = stat(k, g, key, "median")
    if (v == "") why(g ": " key " empty" (key ~ /pss/ ? " (PSS unreadable)" : ""))
    return v
}

function r(x, d) { return sprintf("%." (d == "" ? 1 : d) "f", x) }
# A value for the text of a verdict: "?" when it is missing, never 0.
function f(x, d) { return x == "" ? "?" : r(x, d) }
function r2(x) { return x == "" ? "" : r(x, 2) }
function ratio(a, b) { return (a + 0 == 0) ? "" : r(b / a, 2) }

# ---- tables ---------------------------------------------------------------

function write_csv(kind,    spec, tags, cols, file, i, j, c, w, g, col) {
    split(T[kind], spec, "|")
    gsub(/ /, ",", spec[1])
    file = out "/" kind ".csv"
    c = split(spec[2], cols, " ")
    printf "%s,runs", spec[1] > file
    for (j = 1; j <= c; j++) { split(cols[j], w, ":"); printf ",%s", w[1] (w[2] == "" ? "" : "_" w[2]) > file }
    print ",error" > file
    for (i = 1; i <= rows[kind]; i++) {
        g = order[kind, i]
        printf "%s,%d", g, runs[kind, g] > file
        for (j = 1; j <= c; j++) { split(cols[j], w, ":"); printf ",%s", stat(kind, g, w[1], w[2] == "" ? "median" : w[2]) > file }
        col = ((kind, g) in err) ? err[kind, g] : ""
        gsub(/,/, ";", col)
        print "," col > file
    }
    close(file)
}

# Per connection: growth over the 1-connection run, per connection added.
function write_memory_per_conn(    file, i, g, p) {
    file = out "/memory_per_conn.csv"
    print "rung,n,pss_kb_per_conn,rss_kb_per_conn,setup_us_per_conn" > file
    for (i = 1; i <= rows["memory"]; i++) {
        g = order["memory", i]
        split(g, p, ",")
        if (p[2] != 1)
            printf "%s,%s,%s,%s\n", g, r2(per_conn(p[1], p[2], "server_pss_kb")), r2(per_conn(p[1], p[2], "server_rss_kb")),
                stat("memory", g, "setup_us_per_conn") > file
    }
    close(file)
}
# per_conn(rung, n, key): "" unless both runs gave the value (get() says why).
function per_conn(rung, n, key,    a, b) {
    a = get("memory", rung ",1", key); b = get("memory", rung "," n, key)
    return (a == "" || b == "") ? "" : (b - a) / (n - 1)
}

# ---- verdicts --------------------------------------------------------------

function say(claim, outcome, text) { printf "%s\t%s\t%s\n", claim, outcome, text }
function verdict(claim, ok, text) {
    if (WHY != "") say(claim, "not measured", WHY (text == "" ? "" : " | measured: " text))
    else say(claim, ok ? "reproduced" : "NOT reproduced", text)
}

function verdict_stall(    n, i, rung, w, a, w01, a01, worst, wrung, ok, hold_ms) {
    WHY = ""
    hold_ms = hold * 1000
    w01 = get("stall", "01-blocking", "wait_ms")
    a01 = get("stall", "01-blocking", "after_close_ms")
    n = split(rungs, R, " ")
    for (i = 2; i <= n; i++) {
        w = get("stall", R[i], "wait_ms")
        if (w != "" && (wrung == "" || w + 0 > worst + 0)) { worst = w; wrung = R[i] }
    }
    ok = (w01 != "" && a01 != "" && w01 >= STALL_BLOCKED * hold_ms && a01 >= 0 && a01 <= STALL_AFTER_MS && worst < STALL_FREE * hold_ms)
    verdict("stall", ok, sprintf("01-blocking: B waited %s ms (need >= %s x %s ms) and was answered %s ms after A closed (need 0 to %s ms); 02-07: at most %s ms, %s (need < %s x %s ms)",
        f(w01, 0), STALL_BLOCKED, hold_ms, f(a01, 2), STALL_AFTER_MS, f(worst, 2), wrung, STALL_FREE, hold_ms))
}

function verdict_idle(    n, i, p, max, mrung, text) {
    WHY = ""
    n = split(rungs, R, " ")
    for (i = 1; i <= n; i++) {
        p = get("idle_cpu", R[i], "server_cpu_pct")
        if (p == "") continue
        text = text sprintf(", %s %s%%", R[i], r(p, 2))
        if (mrung == "" || p + 0 > max + 0) { max = p; mrung = R[i] }
    }
    IDLE_MAX = max
    verdict("idle", max != "" && max <= IDLE_MAX_PCT, sprintf("server CPU over %s s idle (need each <= %s%% of one core):%s", idle_s, IDLE_MAX_PCT, substr(text, 2)))
}

function verdict_busy(    p) {
    WHY = ""
    if (busy_status != "") why("busy-poll: " busy_status)
    else p = get("idle_cpu", "busy-poll", "server_cpu_pct")
    verdict("busy-poll", p != "" && p >= BUSY_MIN_PCT, sprintf("busy-poll variant of 01 over %s s idle: %s%% of one core (need >= %s%%), against at most %s%% for the seven rungs",
        idle_s, f(p, 1), BUSY_MIN_PCT, f(IDLE_MAX, 2)))
}

function verdict_memory(    n, i, v, e, text) {
    WHY = ""
    n = split(mem_rungs, R, " ")
    for (i = 1; i <= n; i++) {
        v[R[i]] = per_conn(R[i], mem_n, "server_pss_kb")
        text = text sprintf("; %s %s KiB, %s us", R[i], f(v[R[i]], 2), f(stat("memory", R[i] "," mem_n, "setup_us_per_conn"), 0))
    }
    e = v["07-epoll"]
    if (e != "" && e < MEM_FLOOR_KB) e = MEM_FLOOR_KB
    verdict("memory", WHY == "" && v["02-fork"] >= MEM_FACTOR * e && v["03-threads"] >= MEM_FACTOR * e,
        sprintf("PSS growth and setup time per connection at %d connections:%s (need 02 and 03 each >= %s x 07's, taken as at least %s KiB)", mem_n, substr(text, 2), MEM_FACTOR, MEM_FLOOR_KB))
}

function verdict_select(    s, rf, q, l, c, o, x) {
    WHY = ""
    q = get("select", "04-select", "requested"); s = get("select", "04-select", "served")
    rf = get("select", "04-select", "refused"); l = get("select", "04-select", "lost")
    c = get("select", "04-select", "corrupt"); o = get("select", "04-select", "still_open")
    x = stat("select", "04-select", "server_refusal_lines")
    verdict("select", s > 900 && s < 1024 && s + rf == q && l == 0 && c == 0 && o == s,
        sprintf("04-select: %s of %s served, %s refused (server logged %s FD_SETSIZE lines), %s lost, %s corrupt, %s still open (need 900 < served < 1024, served + refused = requested, none lost or corrupt, all served still open)",
            f(s, 0), f(q, 0), f(rf, 0), f(x, 0), f(l, 0), f(c, 0), f(o, 0)))
}

# want "grows" (select, poll) or "flat" (kqueue, epoll).
function verdict_scan(claim, want, list,    n, i, last, a, b, x, bad, text) {
    WHY = ""
    n = split(list, R, " ")
    for (i = 1; i <= n; i++) {
        last = (R[i] == "04-select") ? scan_last_select : scan_last
        a = get("scan", R[i] ",0", "rtt_p50_us"); b = get("scan", R[i] "," last, "rtt_p50_us")
        if (a == "" || b == "") continue
        x = ratio(a, b)
        if (x == "" || (want == "grows") != (x + 0 >= SCAN_GROWTH)) bad = 1
        text = text sprintf("; %s %s -> %s us from 0 to %d idle (%sx)", R[i], r(a), r(b), last, x == "" ? "?" : x)
    }
    verdict(claim, !bad, substr(text, 3) sprintf(" (need %s %s x)", want == "grows" ? ">=" : "<", SCAN_GROWTH))
}

# One rung's C10K run: its text, and BAD set when anything went wrong.
function c10k_run(rung, k,    g, c, nc, b, wrong, served, cpu) {
    g = rung "," c10k_n "," k
    # Anything counted as going wrong is a finding, even in a run that also
    # failed (loadgen's partial result at its deadline).
    nc = split(WRONG, c, " ")
    for (b = 1; b <= nc; b++)
        if (stat("c10k", g, c[b]) + 0 > 0) wrong = wrong sprintf(" %s %s", stat("c10k", g, c[b]), c[b])
    if (wrong != "") { BAD = 1; return sprintf(", %s run %d:%s", rung, k, wrong) }
    served = get("c10k", g, "served")
    nc = split(COUNTERS, c, " ")
    for (b = 1; b <= nc; b++) get("c10k", g, c[b])
    if (served != "" && served != c10k_n) BAD = 1
    cpu = stat("c10k", g, "server_cpu_us_per_msg")
    return sprintf(", %s%s %s/%s%s", rung, k > 1 ? " run " k : "", served == "" ? "?" : served, c10k_n,
        cpu == "" ? "" : " (" r(cpu, 2) " us CPU/msg" (stat("c10k", g, "client_bound") == "true" ? ", client-bound" : "") ")")
}

# The claim is the event loops' (c10k_claim); the other rungs measured
# (c10k_rungs: 02-fork, 03-threads) are shown after it, for contrast.
function verdict_c10k(    n, i, k, text, other, bad, w) {
    WHY = ""
    n = split(c10k_rungs, R, " ")
    for (i = 1; i <= n; i++) {
        BAD = 0
        if (index(" " c10k_claim " ", " " R[i] " ") == 0) {
            w = WHY     # what went wrong there is shown, but is not the claim's
            for (k = 1; (("c10k", R[i] "," c10k_n "," k) in runs); k++) other = other c10k_run(R[i], k)
            WHY = w
            continue
        }
        if (!(("c10k", R[i] "," c10k_n ",1") in runs)) get("c10k", R[i] "," c10k_n ",1", "served")
        for (k = 1; (("c10k", R[i] "," c10k_n "," k) in runs); k++) text = text c10k_run(R[i], k)
        bad = bad || BAD
    }
    text = sprintf("%d connections at once, every echoed byte checked (need all served, and 0 %s):%s%s", c10k_n, COUNTERS,
        substr(text, 2), other == "" ? "" : "; not part of the claim, for contrast:" substr(other, 2))
    WHY = bad ? "" : WHY
    verdict("c10k", !bad, text)
}

function verdict_yardstick(    n, i, e, u, he, hu, text, bad) {
    WHY = ""
    if (yard_status != "") why("uv-echo: " yard_status)
    n = split(yard_ns, N, " ")
    for (i = 1; i <= n; i++) {
        e = get("yardstick", "07-epoll," N[i], "server_cpu_us_per_msg")
        u = (yard_status != "") ? "" : get("yardstick", "uv-echo," N[i], "server_cpu_us_per_msg")
        he = stat("yardstick", "07-epoll," N[i], "server_hwm_kb"); hu = stat("yardstick", "uv-echo," N[i], "server_hwm_kb")
        if (e != "" && u != "" && e > u * (1 + YARD_TOLERANCE / 100)) bad = 1
        text = text sprintf("; %d connections: 07-epoll %s us, libuv %s us server CPU per message, peak RSS %s / %s KiB",
            N[i], f(e, 2), f(u, 2), f(he, 0), f(hu, 0))
    }
    verdict("yardstick", !bad, substr(text, 3) sprintf(" (need 07-epoll <= libuv + %s%%)", YARD_TOLERANCE))
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
    verdict_yardstick()
}
