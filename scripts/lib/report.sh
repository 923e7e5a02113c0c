# Sourced by scripts/reproduce.sh: from the raw JSON lines to the CSV
# tables, the verdicts, the plots and report.md.
#
# Every verdict is computed here from the measured numbers. The thresholds
# that decide "reproduced" are the named constants below; the report prints
# them next to the verdicts, so a reader can disagree with a threshold
# without having to trust the wording.
#
# Expects: RESULTS, RAW, LOGS, TMP, BIN, BUILD_DIR, the settings of
# reproduce.sh, and AWK_JSON (bench.sh).

# Stall: 01-blocking's B must wait at least this share of the hold ...
STALL_BLOCKED_SHARE=0.9
# ... and every other rung must answer B within this share of it.
STALL_FREE_SHARE=0.1
# Idle CPU: "about 0%" means at most this many percent of one core.
IDLE_CPU_MAX_PCT=1
# Memory: fork and threads "spend memory" if each costs at least this many
# times 07-epoll's memory per connection.
MEM_FACTOR=4
# Scan: a round trip "grows" if its median at the largest idle count is at
# least this many times the one at 0 idle, and is "flat" below it.
SCAN_GROWTH=1.5

# ---- arithmetic, formatting and CSV look-ups -----------------------------

# Time since the script started, as "4m 12s".
elapsed_text() {
    awk -v a="$START_TIME" -v b="$EPOCHREALTIME" \
        'BEGIN { s = int(b - a + 0.5); printf "%dm %02ds", s / 60, s % 60 }'
}

# csv_get FILE COLUMN [KEYCOLUMN=VALUE ...]: the first matching row's value.
csv_get() {
    local file=$1 col=$2
    shift 2
    [ -s "$file" ] || return 0
    awk -F, -v col="$col" -v conds="$*" '
        NR == 1 {
            for (i = 1; i <= NF; i++) idx[$i] = i
            nc = split(conds, c, " ")
            next
        }
        {
            ok = 1
            for (j = 1; j <= nc; j++) {
                split(c[j], kv, "=")
                if ($(idx[kv[1]]) != kv[2]) ok = 0
            }
            if (ok) { print $(idx[col]); exit }
        }' "$file"
}

# Arithmetic and formatting in awk (bash has integers only).
calc() { awk "BEGIN { printf \"%s\", $* }"; }
# fmt VALUE DECIMALS: a number rounded, or "n/a" if there is none.
fmt() {
    awk -v v="$1" -v d="${2:-1}" 'BEGIN {
        if (v == "" || v == "null" || v == "nan") { printf "n/a"; exit }
        printf "%.*f", d, v }'
}
# A ratio b/a, as "7.9", or "" if either is missing or a is 0.
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        if (a == "" || b == "" || a == "null" || b == "null" || a + 0 == 0) exit
        r = b / a; printf (r < 10 ? "%.2f" : "%.1f"), r }'
}
# 10000 -> "10 000" (the thousands separator the project's prose uses).
thousands() {
    awk -v n="$1" 'BEGIN {
        s = sprintf("%d", n); out = ""
        while (length(s) > 3) { out = " " substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
        printf "%s%s", s, out }'
}
# is TRUE-ish awk condition
holds() { [ "$(awk "BEGIN { print ($*) ? 1 : 0 }")" = 1 ]; }

# jsonl_table FILE GROUPS COLUMNS: one CSV row per distinct GROUPS (comma
# separated keys, first-seen order) with a "runs" count, then one column
# per COLUMNS entry "key" (median over the runs), "key:min", "key:max" or
# "key:ntrue" (runs where it is true). null values are left out.
jsonl_table() {
    local file=$1 groups=$2 columns=$3
    [ -s "$file" ] || return 0
    awk -v groups="$groups" -v columns="$columns" "$AWK_JSON"'
        function stat(key, j, what,    n, i, k, t, a, m) {
            n = vc[key, j]
            if (n == 0) return ""
            for (i = 1; i <= n; i++) a[i] = val[key, j, i]
            if (what == "ntrue") { m = 0; for (i = 1; i <= n; i++) m += (a[i] == "true"); return m }
            for (i = 2; i <= n; i++) {          # insertion sort: a handful of runs
                t = a[i] + 0
                for (k = i - 1; k >= 1 && a[k] + 0 > t; k--) a[k + 1] = a[k]
                a[k + 1] = t
            }
            if (what == "min") return a[1] + 0
            if (what == "max") return a[n] + 0
            if (n % 2) return a[(n + 1) / 2] + 0
            return (a[n / 2] + a[n / 2 + 1]) / 2
        }
        BEGIN {
            ng = split(groups, G, ",")
            nc = split(columns, C, ",")
            for (j = 1; j <= nc; j++) {
                split(C[j], p, ":")
                K[j] = p[1]; S[j] = (p[2] == "" ? "median" : p[2])
                H[j] = (S[j] == "median" ? K[j] : K[j] "_" S[j])
            }
        }
        /^\{/ {
            key = ""
            for (i = 1; i <= ng; i++) key = key (i > 1 ? "," : "") jget($0, G[i])
            if (!(key in runs)) order[++nk] = key
            runs[key]++
            for (j = 1; j <= nc; j++) {
                v = jget($0, K[j])
                if (v != "" && v != "null") val[key, j, ++vc[key, j]] = v
            }
        }
        END {
            printf "%s,runs", groups
            for (j = 1; j <= nc; j++) printf ",%s", H[j]
            printf "\n"
            for (r = 1; r <= nk; r++) {
                key = order[r]
                printf "%s,%d", key, runs[key]
                for (j = 1; j <= nc; j++) printf ",%s", stat(key, j, S[j])
                printf "\n"
            }
        }' "$file"
}

# csv_to_md FILE "col,col,..." "Header|Header|...": a Markdown table.
csv_to_md() {
    local file=$1 cols=$2 heads=$3
    [ -s "$file" ] || { echo "(no data)"; return 0; }
    awk -F, -v cols="$cols" -v heads="$heads" '
        NR == 1 {
            for (i = 1; i <= NF; i++) idx[$i] = i
            n = split(cols, c, ","); split(heads, h, "|")
            line = "|"; sep = "|"
            for (j = 1; j <= n; j++) { line = line " " h[j] " |"; sep = sep (j == 1 ? "---|" : "--:|") }
            print line; print sep
            next
        }
        {
            line = "|"
            for (j = 1; j <= n; j++) {
                v = (c[j] in idx) ? $(idx[c[j]]) : ""
                line = line " " (v == "" ? "n/a" : v) " |"
            }
            print line
        }' "$file"
}

# ---- the machine ----------------------------------------------------------

sysctl_value() {
    local v
    v=$(tr '\t' ' ' <"/proc/sys/$1" 2>/dev/null) || v="n/a"
    printf '%s' "${v:-n/a}"
}

collect_machine_info() {
    M_CPU=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
    [ -n "$M_CPU" ] || M_CPU=$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ { print $2; exit }')
    M_CORES=$(nproc 2>/dev/null || echo "?")
    M_MEM=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
    M_KERNEL=$(uname -sr)
    M_DISTRO=$( (. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}") || true)
    local cc
    cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null)
    M_COMPILER=$("${cc:-${CC:-cc}}" --version 2>/dev/null | head -n 1)
    M_BUILD=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null)
    M_SANITIZE=$(sed -n 's/^LADDER_SANITIZE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null)
    M_GNUPLOT=$(gnuplot --version 2>/dev/null)
    M_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
    M_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
    M_NOFILE="soft $(ulimit -Sn), hard $(ulimit -Hn)"
    M_NR_OPEN=$(sysctl_value fs/nr_open)
    M_FILE_MAX=$(sysctl_value fs/file-max)
    M_SOMAXCONN=$(sysctl_value net/core/somaxconn)
    M_SYN_BACKLOG=$(sysctl_value net/ipv4/tcp_max_syn_backlog)
    M_ABORT_OVERFLOW=$(sysctl_value net/ipv4/tcp_abort_on_overflow)
    M_PORTS=$(sysctl_value net/ipv4/ip_local_port_range)
    M_TW_REUSE=$(sysctl_value net/ipv4/tcp_tw_reuse)
    M_PID_MAX=$(sysctl_value kernel/pid_max)
    M_THREADS_MAX=$(sysctl_value kernel/threads-max)
    M_MAP_COUNT=$(sysctl_value vm/max_map_count)
    M_STACK="$(ulimit -s) KiB"
    log "machine: $M_CPU, $M_CORES CPUs, $M_MEM, $M_KERNEL; somaxconn $M_SOMAXCONN; open files $M_NOFILE"
}

# The listen-queue counters (ListenOverflows, ListenDrops) as "Name value" lines. They count
# for the whole network namespace: other activity on the machine adds to them.
listen_counters() {
    awk '$1 == "TcpExt:" {
            if (!seen++) { for (i = 2; i <= NF; i++) name[i] = $i; next }
            for (i = 2; i <= NF; i++)
                if (name[i] == "ListenOverflows" || name[i] == "ListenDrops") print name[i], $i
        }' /proc/net/netstat 2>/dev/null
    echo "somaxconn $(sysctl_value net/core/somaxconn)"
}

counter() { awk -v k="$1" '$1 == k { print $2 }' <<<"$2"; }

# ---- tables ---------------------------------------------------------------

write_csvs() {
    jsonl_table "$RAW/stall.jsonl" rung \
        "wait_ms,after_close_ms,wait_ms:min,wait_ms:max,stalled:ntrue,connect_ms" >"$RESULTS/stall.csv"
    jsonl_table "$RAW/idle_cpu.jsonl" rung \
        "requested,served,idle_s,server_cpu_ms,server_cpu_pct,server_procs,server_threads,server_rss_kb" \
        >"$RESULTS/idle_cpu.csv"
    jsonl_table "$RAW/memory.jsonl" rung,n \
        "served,failed,server_rss_kb,server_pss_kb,server_procs,server_threads,setup_us_per_conn" \
        >"$RESULTS/memory.csv"
    # Per connection: the growth over the 1-connection run, divided by the
    # connections added. PSS is the honest figure for fork (shared pages are
    # divided among the processes that share them); RSS is given beside it.
    awk -F, '
        NR == 1 { for (i = 1; i <= NF; i++) idx[$i] = i
                  print "rung,n,pss_kb_per_conn,rss_kb_per_conn,setup_us_per_conn"; next }
        $(idx["n"]) == 1 { pss1[$1] = $(idx["server_pss_kb"]); rss1[$1] = $(idx["server_rss_kb"]); next }
        ($1 in pss1) && $(idx["n"]) > 1 {
            n = $(idx["n"]); d = n - 1
            printf "%s,%d,%.2f,%.2f,%s\n", $1, n, ($(idx["server_pss_kb"]) - pss1[$1]) / d,
                ($(idx["server_rss_kb"]) - rss1[$1]) / d, $(idx["setup_us_per_conn"])
        }' "$RESULTS/memory.csv" >"$RESULTS/memory_per_conn.csv"
    jsonl_table "$RAW/select.jsonl" rung \
        "requested,served,refused,failed,lost,corrupt,still_open" >"$RESULTS/select.csv"
    if [ -s "$RESULTS/select.csv" ]; then
        awk -F, -v n="${SELECT_SERVER_REFUSALS:-}" \
            'NR == 1 { print $0 ",server_refusal_lines"; next } { print $0 "," n }' \
            "$RESULTS/select.csv" >"$TMP/select.csv" && mv "$TMP/select.csv" "$RESULTS/select.csv"
    fi
    jsonl_table "$RAW/scan.jsonl" rung,idle \
        "rtt_p50_us,rtt_p99_us,server_cpu_ms_per_1k,round_trips,idle_open,rtt_p50_us:min,rtt_p50_us:max" \
        >"$RESULTS/scan.csv"
    jsonl_table "$RAW/c10k.jsonl" rung,run \
        "requested,established,served,failed,corrupt,bytes_verified,msgs_per_s,rtt_p50_us,rtt_p99_us,connect_ms_p99,connect_ms_max,client_cpu_ms,server_cpu_ms,server_rss_kb,server_pss_kb,server_procs,server_threads" \
        >"$RESULTS/c10k.csv"
    {
        echo "counter,before,after,delta"
        local k b a
        for k in somaxconn ListenOverflows ListenDrops; do
            b=$(counter "$k" "$KERNEL_BEFORE")
            a=$(counter "$k" "$KERNEL_AFTER")
            echo "$k,$b,$a,$(awk -v a="$a" -v b="$b" 'BEGIN { if (a != "" && b != "") print a - b }')"
        done
    } >"$RESULTS/kernel.csv"
}

# ---- verdicts -------------------------------------------------------------
# Each sets V_<claim> to one line: "reproduced: ...", "NOT reproduced: ..."
# or "not measured: ...".

verdict_stall() {
    local f=$RESULTS/stall.csv hold_ms w01 a01 runs worst="" worst_rung="" rung w
    hold_ms=$(calc "$STALL_HOLD * 1000")
    w01=$(csv_get "$f" wait_ms rung=01-blocking)
    a01=$(csv_get "$f" after_close_ms rung=01-blocking)
    runs=$(csv_get "$f" runs rung=01-blocking)
    for rung in $RUNGS; do
        [ "$rung" = 01-blocking ] && continue
        w=$(csv_get "$f" wait_ms rung="$rung")
        [ -n "$w" ] || continue
        if [ -z "$worst" ] || holds "$w > $worst"; then worst=$w worst_rung=$rung; fi
    done
    if [ -z "$w01" ] || [ -z "$worst" ]; then
        V_STALL="not measured: no stall result for 01-blocking or for the other rungs"
        return
    fi
    local text
    text="01-blocking: B waited $(fmt "$w01" 0) ms for a ${STALL_HOLD} s hold (median of $runs), answered $(fmt "$a01" 1) ms after A closed; 02-07: B waited at most $(fmt "$worst" 2) ms ($worst_rung)"
    if holds "$w01 >= $STALL_BLOCKED_SHARE * $hold_ms && $worst < $STALL_FREE_SHARE * $hold_ms"; then
        V_STALL="reproduced: $text"
    else
        V_STALL="NOT reproduced: $text"
    fi
}

verdict_idle() {
    local f=$RESULTS/idle_cpu.csv max="" max_rung="" rung p parts=""
    for rung in $RUNGS; do
        p=$(csv_get "$f" server_cpu_pct rung="$rung")
        [ -n "$p" ] || continue
        parts="$parts, ${rung%%-*} $(fmt "$p" 2)%"
        if [ -z "$max" ] || holds "$p > $max"; then max=$p max_rung=$rung; fi
    done
    if [ -z "$max" ]; then
        V_IDLE="not measured: no idle CPU result"
        return
    fi
    # /proc counts CPU time in clock ticks: one tick over the idle window is
    # the smallest figure above 0 that can be seen at all.
    local tick_pct
    tick_pct=$(awk -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" -v s="$IDLE_SECONDS" \
        'BEGIN { printf "%.2f", 100 / hz / s }')
    local text
    if holds "$max == 0"; then
        text="every server used 0 ms of CPU over ${IDLE_SECONDS} s with $IDLE_CLIENTS idle clients (01-blocking: 1); one clock tick would have shown as ${tick_pct}%"
    else
        text="server CPU over ${IDLE_SECONDS} s with $IDLE_CLIENTS idle clients (01-blocking: 1): at most $(fmt "$max" 2)% of one core ($max_rung; one clock tick is ${tick_pct}%):${parts#,}"
    fi
    if holds "$max <= $IDLE_CPU_MAX_PCT"; then V_IDLE="reproduced: $text"; else V_IDLE="NOT reproduced: $text"; fi
}

verdict_memory() {
    local f=$RESULTS/memory_per_conn.csv n_max rung p s parts="" ok=1
    n_max=${MEM_NS##* }
    local fork thr epo
    fork=$(csv_get "$f" pss_kb_per_conn rung=02-fork n="$n_max")
    thr=$(csv_get "$f" pss_kb_per_conn rung=03-threads n="$n_max")
    epo=$(csv_get "$f" pss_kb_per_conn rung=07-epoll n="$n_max")
    for rung in $MEM_RUNGS; do
        p=$(csv_get "$f" pss_kb_per_conn rung="$rung" n="$n_max")
        s=$(csv_get "$f" setup_us_per_conn rung="$rung" n="$n_max")
        parts="$parts; $rung $(fmt "$p" 2) KiB, $(fmt "$s" 0) µs"
    done
    if [ -z "$fork" ] || [ -z "$thr" ] || [ -z "$epo" ]; then
        V_MEMORY="not measured: missing memory results at $(thousands "$n_max") connections"
        return
    fi
    local text="per connection at $(thousands "$n_max") connections (memory: PSS growth over the 1-connection run; setup time):${parts#;}"
    # epoll's own figure can be near 0 (or even negative, by noise): compare
    # against at least 0.1 KiB so that the ratio means something.
    local floor
    floor=$(awk -v e="$epo" 'BEGIN { print (e < 0.1 ? 0.1 : e) }')
    if holds "$fork >= $MEM_FACTOR * $floor && $thr >= $MEM_FACTOR * $floor"; then
        V_MEMORY="reproduced: $text"
    else
        V_MEMORY="NOT reproduced: $text"
    fi
}

verdict_select() {
    local f=$RESULTS/select.csv served refused failed open lines
    served=$(csv_get "$f" served rung=04-select)
    refused=$(csv_get "$f" refused rung=04-select)
    failed=$(csv_get "$f" failed rung=04-select)
    open=$(csv_get "$f" still_open rung=04-select)
    lines=$(csv_get "$f" server_refusal_lines rung=04-select)
    if [ -z "$served" ]; then
        V_SELECT="not measured: no result for 04-select with $SELECT_N connections"
        return
    fi
    local text="04-select: $served of $SELECT_N connections served, $refused refused (the server logged ${lines:-?} FD_SETSIZE refusals), $open of the served still open after the idle second"
    # The ceiling holds if fewer than FD_SETSIZE were served, every other
    # connection was refused (not lost or corrupted), and the served ones
    # kept working.
    if holds "$served < 1024 && $served > 900 && $refused == $failed && $served + $refused == $SELECT_N && $open == $served"; then
        V_SELECT="reproduced: $text"
    else
        V_SELECT="NOT reproduced: $text"
    fi
}

# Median round trip at 0 idle and at the largest idle count, for one rung.
# Sets S_FIRST, S_LAST, S_LAST_IDLE, S_RATIO, S_CPU_RATIO.
scan_shape() {
    local f=$RESULTS/scan.csv rung=$1
    S_FIRST=$(csv_get "$f" rtt_p50_us rung="$rung" idle=0)
    S_LAST_IDLE=$(awk -F, -v r="$rung" 'NR > 1 && $1 == r && $2 + 0 > m { m = $2 + 0 } END { if (m) print m }' "$f" 2>/dev/null)
    S_LAST=""
    S_RATIO=""
    S_CPU_RATIO=""
    [ -n "$S_LAST_IDLE" ] || return 0
    S_LAST=$(csv_get "$f" rtt_p50_us rung="$rung" idle="$S_LAST_IDLE")
    S_RATIO=$(ratio "$S_FIRST" "$S_LAST")
    S_CPU_RATIO=$(ratio "$(csv_get "$f" server_cpu_ms_per_1k rung="$rung" idle=0)" \
        "$(csv_get "$f" server_cpu_ms_per_1k rung="$rung" idle="$S_LAST_IDLE")")
}

scan_phrase() {
    echo "$1: round trip $S_FIRST → $S_LAST µs (${S_RATIO}x) from 0 to $(thousands "$S_LAST_IDLE") idle, server CPU per round trip ${S_CPU_RATIO:-n/a}x"
}

# want: "grows" (select, poll) or "flat" (kqueue, epoll).
verdict_scan() {
    local want=$1 rungs=$2 rung text="" ok=1 missing=""
    for rung in $rungs; do
        scan_shape "$rung"
        if [ -z "$S_RATIO" ]; then
            missing="$missing $rung"
            continue
        fi
        text="$text; $(scan_phrase "$rung")"
        if [ "$want" = grows ] && ! holds "$S_RATIO >= $SCAN_GROWTH"; then
            ok=0
            text="$text (does not grow)"
        elif [ "$want" = flat ] && ! holds "$S_RATIO < $SCAN_GROWTH"; then
            ok=0
            text="$text (not flat)"
        fi
    done
    text=${text#; }
    if [ -n "$missing" ]; then
        echo "not measured (no scan result):$missing${text:+; $text}"
    elif [ "$ok" -eq 1 ]; then
        echo "reproduced: $text"
    else
        echo "NOT reproduced: $text"
    fi
}

verdict_c10k() {
    local f=$RESULTS/c10k.csv rung run runs served failed corrupt parts="" ok=1 claim_rungs="05-poll 06-kqueue 07-epoll"
    for rung in $C10K_RUNGS; do
        runs=1
        [ "$rung" = 07-epoll ] && runs=2
        for run in $(seq 1 "$runs"); do
            served=$(csv_get "$f" served rung="$rung" run="$run")
            failed=$(csv_get "$f" failed rung="$rung" run="$run")
            corrupt=$(csv_get "$f" corrupt rung="$rung" run="$run")
            local label=$rung
            [ "$runs" -gt 1 ] && label="$rung run $run"
            if [ -z "$served" ]; then
                parts="$parts, $label not measured"
                case " $claim_rungs " in *" $rung "*) ok=0 ;; esac
                continue
            fi
            parts="$parts, $label $served/$C10K_N"
            [ "${failed:-0}" -gt 0 ] && parts="$parts ($failed failed)"
            [ "${corrupt:-0}" -gt 0 ] && parts="$parts ($corrupt corrupt)"
            case " $claim_rungs " in
            *" $rung "*) { [ "$served" -eq "$C10K_N" ] && [ "${failed:-1}" -eq 0 ] && [ "${corrupt:-1}" -eq 0 ]; } || ok=0 ;;
            esac
        done
    done
    local what="$(thousands "$C10K_N") connections at once, every echoed byte checked; served"
    [ "$C10K_N" -lt 10000 ] && what="$what (quick run: fewer than C10K)"
    local text="$what:${parts#,}; 04-select cannot by design (FD_SETSIZE)"
    if [ "$ok" -eq 1 ]; then V_C10K="reproduced: $text"; else V_C10K="NOT reproduced: $text"; fi
}

compute_verdicts() {
    verdict_stall
    verdict_idle
    verdict_memory
    verdict_select
    V_ON=$(verdict_scan grows "04-select 05-poll")
    V_READY=$(verdict_scan flat "06-kqueue 07-epoll")
    verdict_c10k
    # Not a claim of its own: the blocking-per-client rungs, for contrast.
    local rung contrast=""
    for rung in 02-fork 03-threads; do
        scan_shape "$rung"
        [ -n "$S_RATIO" ] && contrast="$contrast; $(scan_phrase "$rung")"
    done
    V_CONTRAST=${contrast#; }
}

# ---- plots ------------------------------------------------------------------

# The scan table as gnuplot data: one block per rung (index 0, 1, ...),
# columns idle (0 drawn at 1 on the log axis), p50, p99, CPU per 1k.
scan_plot_data() {
    awk -F, -v rungs="$1" '
        NR == 1 { for (i = 1; i <= NF; i++) idx[$i] = i; next }
        { row[$1] = row[$1] sprintf("%d %s %s %s\n", ($2 == 0 ? 1 : $2),
              $(idx["rtt_p50_us"]), $(idx["rtt_p99_us"]), $(idx["server_cpu_ms_per_1k"])) }
        END {
            n = split(rungs, r, " ")
            for (i = 1; i <= n; i++) printf "# %s\n%s\n\n", r[i], row[r[i]]
        }' "$RESULTS/scan.csv"
}

make_plots() {
    local gp=$ROOT/scripts/plot.gp
    PLOTS=()
    if [ -s "$RESULTS/scan.csv" ]; then
        # Only rungs with data: gnuplot complains about empty blocks.
        local rungs="" rung
        for rung in $SCAN_RUNGS; do
            grep -q "^$rung," "$RESULTS/scan.csv" && rungs="$rungs $rung"
        done
        rungs=${rungs# }
        scan_plot_data "$rungs" >"$TMP/scan.dat"
        local pinned="server and client pinned to CPU $SCAN_CPU, medians of $SCAN_REPS"
        gnuplot -e "kind='scan'; data='$TMP/scan.dat'; rungs='$rungs'; col=2; term='svg'; out='$RESULTS/scan-rtt.svg'; ylab='round trip, median (µs)'; ttl='One active client beside N idle ones ($pinned)'" "$gp" &&
            PLOTS+=(scan-rtt.svg)
        if gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo; then
            gnuplot -e "kind='scan'; data='$TMP/scan.dat'; rungs='$rungs'; col=2; term='png'; out='$RESULTS/scan-rtt.png'; ylab='round trip, median (µs)'; ttl='One active client beside N idle ones ($pinned)'" "$gp" &&
                PLOTS+=(scan-rtt.png)
        fi
        gnuplot -e "kind='scan'; data='$TMP/scan.dat'; rungs='$rungs'; col=4; term='svg'; out='$RESULTS/scan-cpu.svg'; ylab='server CPU per 1000 round trips (ms)'; ttl='Server CPU per round trip beside N idle connections ($pinned)'" "$gp" &&
            PLOTS+=(scan-cpu.svg)
    fi
    if [ -s "$RESULTS/memory_per_conn.csv" ]; then
        # Rows: rung, then KiB per connection at each N > 1.
        local ns=${MEM_NS#1 }
        awk -F, -v rungs="$MEM_RUNGS" -v ns="$ns" '
            NR > 1 { v[$1, $2] = $3 }
            END {
                nn = split(ns, n, " "); nr = split(rungs, r, " ")
                for (i = 1; i <= nr; i++) {
                    printf "%s", r[i]
                    for (j = 1; j <= nn; j++) printf " %s", ((r[i], n[j]) in v ? v[r[i], n[j]] : "NaN")
                    printf "\n"
                }
            }' "$RESULTS/memory_per_conn.csv" >"$TMP/memory.dat"
        gnuplot -e "kind='memory'; data='$TMP/memory.dat'; ns='$ns'; rungs_mem='$MEM_RUNGS'; term='svg'; out='$RESULTS/memory.svg'; ylab='server memory per connection, PSS (KiB)'; ttl='What one more connection costs the server'" "$gp" &&
            PLOTS+=(memory.svg)
    fi
}

# ---- report.md --------------------------------------------------------------

# An image line for a plot that was made, nothing otherwise.
image() {
    local p
    for p in "${PLOTS[@]}"; do
        [ "$p" = "$1" ] && printf '![%s](%s)\n\n' "$2" "$1"
    done
    return 0
}

# "1 run", "3 runs"
runs_text() { [ "$1" -eq 1 ] && echo "1 run" || echo "$1 runs"; }

# What the C10K runs' connect times say about the listen queue.
listen_queue_text() {
    local slowest
    slowest=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "connect_ms_max") c = i; next }
        c && $c != "" && $c + 0 > m { m = $c + 0; r = $1 } END { if (r != "") printf "%s %s", m, r }' \
        "$RESULTS/c10k.csv" 2>/dev/null)
    [ -n "$slowest" ] || { echo "No C10K connect times were measured."; return; }
    local ms=${slowest% *} rung=${slowest#* }
    if holds "$ms >= 900"; then
        echo "The slowest C10K connect took $(fmt "$ms" 1) ms ($rung): at or above the first SYN retry (1 s), so the accept queue probably overflowed during the ramp."
    else
        echo "The slowest C10K connect took $(fmt "$ms" 1) ms ($rung): well under the first SYN retry (1 s), so no connection needed one."
    fi
}

report_md() {
    local hold_ms quick_note=""
    [ "$QUICK" -eq 1 ] && quick_note=" This was a **--quick** smoke run: fewer repetitions and smaller N; its figures are not the project's claims."
    cat <<EOF
# The I/O ladder, measured on this machine

Made by \`scripts/reproduce.sh\` on $M_DATE in $(elapsed_text).$quick_note
Every verdict below is computed from the numbers in the tables; the
thresholds it uses are listed under [How the verdicts are decided](#how-the-verdicts-are-decided).

## Summary

| claim | verdict |
|---|---|
| one idle client freezes a blocking server | $V_STALL |
| a blocking/sleeping server costs ~0% CPU idle | $V_IDLE |
| fork and threads scale by spending memory | $V_MEMORY |
| select has a hard ceiling | $V_SELECT |
| select and poll are O(n) per wakeup | $V_ON |
| kqueue and epoll are O(ready) | $V_READY |
| C10K | $V_C10K |

## Machine

| | |
|---|---|
| CPU | $M_CPU |
| CPUs | $M_CORES |
| memory | $M_MEM |
| kernel | $M_KERNEL |
| distribution | $M_DISTRO |
| compiler | $M_COMPILER |
| build | ${M_BUILD:-?}, sanitizers: ${M_SANITIZE:-?} ($BUILD_DIR) |
| load average at start | $M_LOAD |
| open files (this shell) | $M_NOFILE; fs.nr_open $M_NR_OPEN, fs.file-max $M_FILE_MAX |
| net.core.somaxconn | $M_SOMAXCONN (tcp_max_syn_backlog $M_SYN_BACKLOG, tcp_abort_on_overflow $M_ABORT_OVERFLOW) |
| ephemeral ports | $M_PORTS (tcp_tw_reuse $M_TW_REUSE) |
| process limits | pid_max $M_PID_MAX, threads-max $M_THREADS_MAX, vm.max_map_count $M_MAP_COUNT, stack $M_STACK |
| plots | $M_GNUPLOT |

06-kqueue on Linux runs on the project's epoll-backed shim, so its figures
here are epoll's.

## Settings

- Every measurement starts a fresh server on a kernel-chosen loopback port
  (\`-p 0\`), runs \`bin/loadgen ... --json\` against it, and stops it with
  SIGTERM (it must exit 0). Loopback only.
- Stall: \`loadgen stall --hold $STALL_HOLD\`, $(runs_text "$STALL_RUNS") per rung, medians.
- Idle CPU: \`loadgen hold -n $IDLE_CLIENTS --duration $IDLE_SECONDS --server-pid PID\`
  (01-blocking: \`-n 1\`, since it serves one client at a time and the rest
  would never get their first echo). CPU from /proc, summed over the
  server's processes; the clock tick is $(getconf CLK_TCK 2>/dev/null || echo 100) per second.
- Memory: \`loadgen hold -n N --duration 1 --server-pid PID\` at N = $(echo "$MEM_NS" | sed 's/ /, /g'),
  measured once all N have been served. Per connection = (PSS at N − PSS at 1) / (N − 1),
  PSS and RSS summed over the server's processes.
- Select ceiling: \`loadgen hold -n $SELECT_N --allow-refused\` against 04-select.
- Scan: \`loadgen scan --idle $SCAN_IDLE --duration $SCAN_DURATION --server-pid PID --cpu $SCAN_CPU\`
  (04-select: \`--idle $SCAN_IDLE_SELECT\`), $(runs_text "$SCAN_REPS") per rung, medians.
  **Pinned**: the server runs under \`taskset -c $SCAN_CPU\` and loadgen with \`--cpu $SCAN_CPU\`,
  so a round trip is two context switches on one CPU rather than
  cross-CPU wake-ups.
- C10K: \`loadgen c10k -n $C10K_N --duration $C10K_DURATION --server-pid PID\`, not pinned;
  07-epoll twice back to back.

## 1. One idle client freezes a blocking server

Client A connects and sends nothing for ${STALL_HOLD} s; client B connects
just after and sends a line. wait = until B's echo; after close = B's echo
minus A's close (negative: answered while A still held).

$(csv_to_md "$RESULTS/stall.csv" rung,runs,wait_ms,wait_ms_min,wait_ms_max,after_close_ms,stalled_ntrue \
        "rung|runs|wait (ms), median|min|max|after A closed (ms), median|runs where B waited for A")

**Verdict:** $V_STALL

## 2. Idle CPU

$(csv_to_md "$RESULTS/idle_cpu.csv" rung,served,idle_s,server_cpu_ms,server_cpu_pct,server_procs,server_threads,server_rss_kb \
        "rung|idle clients|idle (s)|server CPU (ms)|% of one core|processes|threads|RSS (KiB)")

**Verdict:** $V_IDLE

## 3. Memory and setup time per connection

Server totals once N connections have been served:

$(csv_to_md "$RESULTS/memory.csv" rung,n,served,server_rss_kb,server_pss_kb,server_procs,server_threads,setup_us_per_conn \
        "rung|N|served|RSS (KiB)|PSS (KiB)|processes|threads|setup (µs per connection)")

Per connection (growth over the 1-connection run). PSS divides pages that
fork's children share with their parent among them; RSS counts them in
every process, so for 02-fork it overstates the cost:

$(csv_to_md "$RESULTS/memory_per_conn.csv" rung,n,pss_kb_per_conn,rss_kb_per_conn,setup_us_per_conn \
        "rung|N|PSS per connection (KiB)|RSS per connection (KiB)|setup (µs per connection)")

Kernel memory (socket buffers, task structs, page tables) is not in PSS or
RSS: these are what the server process itself spends.

**Verdict:** $V_MEMORY

$(image memory.svg "memory per connection")

## 4. The select ceiling

$(csv_to_md "$RESULTS/select.csv" rung,requested,served,refused,lost,corrupt,still_open,server_refusal_lines \
        "rung|requested|served|refused|lost|corrupt|still open after idling|server's FD_SETSIZE lines")

**Verdict:** $V_SELECT

## 5. O(n) against O(ready)

One active client ping-pongs 64-byte messages beside N idle connections
(pinned, medians of $(runs_text "$SCAN_REPS")):

$(csv_to_md "$RESULTS/scan.csv" rung,idle,runs,rtt_p50_us,rtt_p50_us_min,rtt_p50_us_max,rtt_p99_us,server_cpu_ms_per_1k,round_trips \
        "rung|idle|runs|round trip p50 (µs)|p50 min|p50 max|p99 (µs)|server CPU per 1k round trips (ms)|round trips")

**Verdict, select and poll:** $V_ON

**Verdict, kqueue and epoll:** $V_READY

For contrast, a process or thread per client: ${V_CONTRAST:-not measured}.

$(image scan-rtt.svg "round trip against idle connections")

$(image scan-cpu.svg "server CPU per round trip against idle connections")

## 6. C10K

$(csv_to_md "$RESULTS/c10k.csv" rung,run,requested,served,failed,corrupt,bytes_verified,msgs_per_s,rtt_p50_us,rtt_p99_us,connect_ms_max,client_cpu_ms,server_cpu_ms,server_rss_kb,server_pss_kb,server_threads \
        "rung|run|requested|served|failed|corrupt|bytes verified|messages/s|rtt p50 (µs)|rtt p99 (µs)|slowest connect (ms)|client CPU (ms)|server CPU (ms)|server RSS (KiB)|server PSS (KiB)|server threads")

04-select is left out: it cannot watch an fd at or above FD_SETSIZE (1024),
by design (section 4).

**Verdict:** $V_C10K

## Listen queue

A full accept queue drops SYNs, which clients retry after 1 s, 3 s, ...;
such drops would show as connect times near 1000 ms above. The counters are
for the whole network namespace, so other activity on the machine counts too.

$(csv_to_md "$RESULTS/kernel.csv" counter,before,after,delta "counter|before|after|delta")

$(listen_queue_text)

## Plots

$(if [ ${#PLOTS[@]} -gt 0 ]; then
        for p in "${PLOTS[@]}"; do echo "- [$p]($p)"; done
    else
        echo "None were made (see stderr)."
    fi)

## How the verdicts are decided

- stall: 01-blocking's median wait ≥ ${STALL_BLOCKED_SHARE} × hold, and every other rung's median < ${STALL_FREE_SHARE} × hold.
- idle CPU: every rung ≤ ${IDLE_CPU_MAX_PCT}% of one core.
- memory: at the largest N, 02-fork's and 03-threads' PSS per connection each ≥ ${MEM_FACTOR} × 07-epoll's (at least 0.1 KiB).
- select ceiling: fewer than 1024 served (and more than 900), all the others refused rather than lost or corrupted, and the served ones still open.
- O(n): round-trip median at the largest idle count ≥ ${SCAN_GROWTH} × the one at 0 idle, for 04 and 05.
- O(ready): the same ratio < ${SCAN_GROWTH} for 06 and 07.
- C10K: 05, 06 and 07 (both runs) serve all $(thousands "$C10K_N") with no failure and no corrupt byte.

## Problems

$(if [ ${#FAILURES[@]} -eq 0 ] && [ ${#PROBLEMS[@]} -eq 0 ] && [ ${#NOTES[@]} -eq 0 ]; then
        echo "None: every measurement was made and every server exited 0 on SIGTERM."
    else
        for x in "${FAILURES[@]}"; do echo "- measurement not made: $x"; done
        for x in "${PROBLEMS[@]}"; do echo "- server: $x"; done
        for x in "${NOTES[@]}"; do echo "- note: $x"; done
    fi)

## Files

Raw JSON lines in \`raw/\` (one per loadgen result, tagged with rung and
run), one CSV per table, stderr of servers and loadgen in \`logs/\` when
they printed anything.
EOF
}

write_results() {
    write_csvs
    compute_verdicts
    make_plots
    report_md >"$RESULTS/report.md"
}

print_summary() {
    local w
    printf '\n== Summary (%s; full report: %s) ==\n' "$(elapsed_text)" "${RESULTS#"$ROOT"/}/report.md"
    printf '%-44s %s\n' "one idle client freezes a blocking server" "$V_STALL"
    printf '%-44s %s\n' "blocking/sleeping server ~0% CPU idle" "$V_IDLE"
    printf '%-44s %s\n' "fork and threads spend memory" "$V_MEMORY"
    printf '%-44s %s\n' "select has a hard ceiling" "$V_SELECT"
    printf '%-44s %s\n' "select and poll are O(n) per wakeup" "$V_ON"
    printf '%-44s %s\n' "kqueue and epoll are O(ready)" "$V_READY"
    printf '%-44s %s\n' "C10K" "$V_C10K"
    for w in "${FAILURES[@]}"; do printf 'measurement not made: %s\n' "$w"; done
    for w in "${PROBLEMS[@]}"; do printf 'server problem: %s\n' "$w"; done
}
