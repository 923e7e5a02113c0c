/*
 * loadgen_tests.c - the load client against servers that misbehave on
 * purpose: does loadgen count what went wrong, say so in its JSON and CSV,
 * and exit with the status it promises?
 *
 *   loadgen_tests LOADGEN FAKE_SERVER BACKEND CASE
 *   loadgen_tests --under-nofile LIMIT HELD PROGRAM ARGS...   (used by client-emfile)
 *
 * Each case starts fake_server (see fake_server.c) with a fault, runs
 * loadgen against it once with --json and once with --csv (a fresh server
 * each time, since some faults end the server), and checks the exit status,
 * the number of results, and expectations on the last result, written as
 * "key=value" (value as printed; empty for null), "key>number" or
 * "key<number" (a number: null fails both). Both formats must give the same
 * keys in the same order, and every result must keep the invariants that
 * hold whatever the timing (check_invariants). BACKEND is the event loop the
 * binary was built with ("epoll", "poll", "kqueue"), expected in
 * client_loop.
 *
 * Every fault is tied to byte offsets, not to time, so the counts are exact
 * on any machine. The few timed cases (pause, late, fork-cpu, the time-out
 * bounds) compare against a delay the fake server itself imposes, with
 * margins wide enough for a loaded 2-core machine and a sanitizer build.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#ifdef __linux__
#include <sched.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../clients/stats.h"

/* A loadgen run that takes longer than this has hung. */
#define RUN_TIMEOUT_S 60.0

#define MAX_KEYS 80
#define MAX_ROWS 8
#define MAX_ARGS 32

static const char *loadgen_bin, *fake_bin, *backend, *self_bin;

/* ---- results ----------------------------------------------------------- */

/* One result: its keys in order and their values as text ("" for null). */
typedef struct {
    int count;
    char keys[MAX_KEYS][48];
    char values[MAX_KEYS][96];
} record_t;

static void record_add(record_t *r, const char *key, size_t key_len, const char *value,
                       size_t value_len)
{
    if (r->count == MAX_KEYS || key_len >= sizeof r->keys[0] || value_len >= sizeof r->values[0])
        return;
    memcpy(r->keys[r->count], key, key_len);
    r->keys[r->count][key_len] = '\0';
    memcpy(r->values[r->count], value, value_len);
    r->values[r->count][value_len] = '\0';
    r->count++;
}

/* {"key":value,...} with values that hold no commas, quotes or braces. */
static bool parse_json(const char *line, record_t *r)
{
    *r = (record_t){0};
    const char *p = line;
    if (*p++ != '{')
        return false;
    while (*p == '"') {
        const char *key = ++p, *key_end = strchr(p, '"');
        if (!key_end || key_end[1] != ':')
            return false;
        p = key_end + 2;
        bool quoted = *p == '"';
        const char *value = p + quoted;
        const char *end = quoted ? strchr(value, '"') : value + strcspn(value, ",}");
        if (!end)
            return false;
        bool null = !quoted && end - value == 4 && strncmp(value, "null", 4) == 0;
        record_add(r, key, (size_t)(key_end - key), value, null ? 0 : (size_t)(end - value));
        p = end + quoted;
        if (*p == ',')
            p++;
    }
    return *p == '}' && r->count > 0;
}

/* Split one CSV line into its cells (no quoting: loadgen never needs it). */
static int split_csv(const char *line, char cells[][96], int max)
{
    int n = 0;
    for (const char *p = line; n < max; n++) {
        size_t len = strcspn(p, ",\n");
        if (len >= 96)
            len = 95;
        memcpy(cells[n], p, len);
        cells[n][len] = '\0';
        p += strcspn(p, ",\n");
        if (*p != ',')
            return n + 1;
        p++;
    }
    return n;
}

static bool parse_csv_row(const char *header, const char *row, record_t *r)
{
    static char keys[MAX_KEYS][96], values[MAX_KEYS][96];
    *r = (record_t){0};
    int nk = split_csv(header, keys, MAX_KEYS), nv = split_csv(row, values, MAX_KEYS);
    if (nk != nv)
        return expect(false, "CSV row has %d cells for %d columns", nv, nk);
    for (int i = 0; i < nk; i++)
        record_add(r, keys[i], strlen(keys[i]), values[i], strlen(values[i]));
    return true;
}

static const char *value_of(const record_t *r, const char *key)
{
    for (int i = 0; i < r->count; i++)
        if (strcmp(r->keys[i], key) == 0)
            return r->values[i];
    return NULL;
}

/* Splits loadgen's stdout into results; returns how many, -1 if malformed. */
static int parse_output(char *out, bool csv, record_t *rows, int max)
{
    int n = 0;
    char *save = NULL, *header = NULL;
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (csv && !header) {
            header = line;
            continue;
        }
        if (n == max)
            return -1;
        if (csv ? !parse_csv_row(header, line, &rows[n]) : !parse_json(line, &rows[n]))
            return expect(false, "result line is not %s: %s", csv ? "CSV" : "JSON", line), -1;
        n++;
    }
    return n;
}

/* LADDER_FORCE_PORTABLE=1: loadgen takes the off-Linux path on Linux, where
 * it reads no server figures (platform/proc.c) and connects from 127.0.0.1
 * only. A case's expectation of a server figure is then skipped, saying so. */
static bool forced_portable(void)
{
    const char *v = getenv("LADDER_FORCE_PORTABLE");
    return v && strcmp(v, "1") == 0;
}

/* "key=value" or "key>number", checked against one result. */
static bool check_expectation(const record_t *r, const char *e, const char *format)
{
    char key[48];
    size_t len = strcspn(e, "=><");
    snprintf(key, sizeof key, "%.*s", (int)len, e);
    const char *want = e[len] ? e + len + 1 : "";
    if (forced_portable() && (strncmp(key, "server_", 7) == 0 || strcmp(key, "saturated") == 0) &&
        (*want || e[len] != '='))
        return skip_check(e, "loadgen reads no server figures on the forced off-Linux path");
    if (strcmp(want, "BACKEND") == 0)
        want = backend;
    const char *got = value_of(r, key);
    if (!got)
        return expect(false, "%s: key %s is missing", format, key);
    if (e[len] == '>' || e[len] == '<') {
        double g = strtod(got, NULL), w = strtod(want, NULL);
        return expect(*got && (e[len] == '>' ? g > w : g < w), "%s: %s = %s (want %c %s)", format,
                      key, *got ? got : "null", e[len], want);
    }
    return expect(strcmp(got, want) == 0, "%s: %s = %s (want %s)", format, key,
                  *got ? got : "null", *want ? want : "null");
}

/* msgs_per_s must be msgs over the window actually measured (window_s). */
static void check_rate(const record_t *r, const char *format)
{
    const char *msgs = value_of(r, "msgs") ? value_of(r, "msgs") : value_of(r, "round_trips");
    const char *window = value_of(r, "window_s"), *rate = value_of(r, "msgs_per_s");
    if (!msgs || !window || !rate || !*window || !*rate)
        return;
    double want = strtod(msgs, NULL) / strtod(window, NULL), got = strtod(rate, NULL);
    expect(fabs(got - want) <= 0.01 * want + 1, "%s: msgs_per_s %s = msgs %s / window_s %s",
           format, rate, msgs, window);
}

/* A key's value as a number; NAN when missing or null. */
static double number_of(const record_t *r, const char *key)
{
    const char *v = value_of(r, key);
    return v && *v ? strtod(v, NULL) : NAN;
}

/*
 * What must hold in every run, whatever the timing:
 *   - echoes per connection: min <= p50 <= max, and the sum of the minimum
 *     over the served connections is at most msgs;
 *   - a closed-loop c10k run without faults, its window not run again:
 *     every byte verified belongs to a whole echo, one per connection
 *     before the window, msgs inside it and in_flight_at_end in the drain, so
 *     bytes_verified == size * (served + msgs + in_flight_at_end);
 *   - a hold run without faults: bytes_verified == size * served;
 *   - saturated is "client" exactly when client_cpu_pct >= 90.
 */
static void check_invariants(const record_t *r, const char *format)
{
    const char *mode = value_of(r, "mode"), *error = value_of(r, "error");
    if (!mode)
        return;
    double min = number_of(r, "echoes_per_conn_min"), p50 = number_of(r, "echoes_per_conn_p50");
    double max = number_of(r, "echoes_per_conn_max"), msgs = number_of(r, "msgs");
    double served = number_of(r, "served"), size = number_of(r, "size");
    double bytes = number_of(r, "bytes_verified");
    if (!isnan(min))
        expect(min <= p50 && p50 <= max && min * served <= msgs,
               "%s: echoes per connection %g <= %g <= %g, %g x %g served <= msgs %g", format, min,
               p50, max, min, served, msgs);
    bool clean = error && !*error;
    /* A window run again (contended_retries) verified its first tries' echoes too. */
    if (strcmp(mode, "c10k") == 0 && clean && !*value_of(r, "rate_offered") &&
        number_of(r, "contended_retries") == 0) {
        double in_flight = number_of(r, "in_flight_at_end");
        expect(bytes == size * (served + msgs + in_flight),
               "%s: bytes_verified %.0f == size %g x (served %g + msgs %g + in flight %g)", format,
               bytes, size, served, msgs, in_flight);
    }
    if (strcmp(mode, "hold") == 0 && clean)
        expect(bytes == size * served, "%s: bytes_verified %.0f == size %g x served %g", format,
               bytes, size, served);
    /* The client is saturated when its busiest thread is: with --threads,
     * client_cpu_pct sums them and may pass 90 while none is near it. */
    const char *saturated = value_of(r, "saturated");
    double client_pct = number_of(r, "client_thread_cpu_pct_max");
    if (isnan(client_pct))
        client_pct = number_of(r, "client_cpu_pct");
    if (saturated && !isnan(client_pct) &&
        fabs(client_pct - 90.0) >= 0.1) /* printed rounded */
        expect((strcmp(saturated, "client") == 0) == (client_pct >= 90.0),
               "%s: saturated = %s with its busiest thread at %g%%", format, saturated,
               client_pct);
}

/* ---- cases ------------------------------------------------------------- */

typedef struct {
    const char *name;
    const char *fault[12]; /* fake_server's arguments, NULL-terminated; empty: nothing listens */
    const char *args[16];  /* loadgen's, before -p PORT and the format */
    int exit_code;
    int rows;              /* results printed */
    const char *want[24];  /* expectations on the last result, NULL-terminated */
    double max_s;          /* > 0: each loadgen run must end within this many seconds */
    const char *env;       /* "NAME=VALUE" set for loadgen, or NULL */
    int nofile, held;      /* > 0: loadgen runs under RLIMIT_NOFILE nofile, with `held` fds open */
    const char *client_fault; /* a line for tests/fault.c, preloaded into loadgen only, or NULL */
    const char *speed;        /* what the file loadgen's SPEED_FILE argument names holds */
} case_t;

#define N20 "-n", "20", "--duration", "0.5"

/* Most cases leave the trailing fields (max_s, env, nofile) at zero. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const case_t CASES[] = {
    {"correct", {"--mode", "echo"}, {"c10k", N20, "--server-pid", "SERVER_PID"}, 0, 1,
     {"requested=20", "established=20", "served=20", "failed=0", "refused=0",
      "connect_failed=0", "unanswered=0", "lost=0", "corrupt=0", "timed_out=0", "unclosed=0",
      "msgs>0", "bytes_verified>1280", "server_cpu_ms>0", "server_procs=1",
      "client_loop=BACKEND", "error="}},
    {"corrupt", {"--mode", "corrupt", "--every", "10", "--after", "1000"}, {"c10k", N20}, 1, 1,
     {"served=20", "failed=0", "corrupt=2", "lost=0", "timed_out=0", "msgs>0",
      "client_loop=BACKEND", "error=corrupt"}},
    {"reset", {"--mode", "reset", "--every", "10", "--after", "1000"}, {"c10k", N20}, 1, 1,
     {"served=20", "failed=0", "lost=2", "corrupt=0", "timed_out=0", "error=lost"}},
    {"close-early", {"--mode", "close", "--every", "10"}, {"c10k", N20}, 1, 1,
     {"established=20", "served=18", "failed=2", "refused=2", "lost=0", "error=not served"}},
    {"close-early-allowed", {"--mode", "close", "--every", "10"},
     {"c10k", N20, "--allow-refused"}, 0, 1,
     {"served=18", "failed=2", "refused=2", "lost=0", "error="}},
    {"never-answer", {"--mode", "silent"}, {"c10k", "-n", "5", "--timeout", "1"}, 1, 1,
     {"established=5", "served=0", "failed=5", "unanswered=5", "msgs=0", "window_s=",
      "msgs_per_s=", "error=timeout"}},
    /* A full accept queue: the kernel drops the SYNs of all but the first connection or
     * two, whose connect() never completes. Those failed to connect; they were never
     * connected, so they are not unanswered (the ones queued are). */
    {"connect-never-completes", {"--mode", "full"}, {"c10k", "-n", "5", "--timeout", "1"}, 1, 1,
     {"requested=5", "served=0", "failed=5", "established<3", "connect_failed>2",
      "unanswered<3", "error=timeout"}},
    {"accept-then-stall", {"--mode", "stall", "--every", "10", "--after", "1000"},
     {"c10k", N20, "--timeout", "3"}, 1, 1,
     {"served=20", "failed=0", "timed_out=2", "lost=0", "corrupt=0", "error=timeout"}},
    {"exit-mid-run", {"--mode", "exit", "--after", "12800"}, {"c10k", N20}, 1, 1,
     {"served=20", "failed=0", "lost=20", "corrupt=0", "error=lost"}},
    {"refused", {NULL}, {"c10k", N20}, 1, 1,
     {"requested=20", "established=0", "served=0", "failed=20", "connect_failed=20",
      "msgs=0", "error=not served"}},
    {"timeout-window", {"--mode", "echo"}, {"c10k", "-n", "5", "--duration", "30", "--timeout",
     "1"}, 1, 1, {"served=5", "lost=0", "msgs>0", "window_s>0.9", "window_s<1.0001",
     "error=timeout"}, .max_s = 1.6},
    /* A duplicated echo: while nothing is owed (open loop, between sends) it is duplicated... */
    {"duplicate", {"--mode", "dup", "--every", "10", "--after", "300"},
     {"c10k", "-n", "20", "--duration", "1", "--rate", "200"}, 1, 1,
     {"served=20", "duplicated=128", "corrupt=0", "lost=0", "error=duplicated"}},
    /* ...and so it is while the next message is already out (closed loop): the last
     * message's bytes again, not a wrong echo of the next. */
    {"duplicate-closed-loop", {"--mode", "dup", "--every", "10", "--after", "1000"},
     {"c10k", N20}, 1, 1,
     {"served=20", "duplicated=128", "corrupt=0", "lost=0", "error=duplicated"}},
    {"extra-after-last", {"--mode", "extra", "--every", "10"}, {"c10k", N20}, 1, 1,
     {"served=20", "corrupt=0", "lost=0", "timed_out=0", "duplicated=36", "msgs>0",
      "error=duplicated"}},
    {"swap", {"--mode", "swap", "--every", "10", "--after", "1000"}, {"c10k", N20}, 1, 1,
     {"served=20", "corrupt>1", "error=corrupt"}},
    /* One connection in ten answers nothing for 1.5 s: inside a 0.5 s window, no progress. */
    {"late-conn", {"--mode", "late", "--every", "10", "--after", "64", "--delay", "1500"},
     {"c10k", N20}, 0, 1,
     {"served=20", "lost=0", "corrupt=0", "echoes_per_conn_min=0", "echoes_per_conn_max>10",
      "in_flight_at_end>1", "msgs>0", "error="}},
    /* 200 ms pauses each second: arrivals keep coming in an open loop, so p99 holds them... */
    {"pause-open-loop", {"--mode", "pause", "--delay", "200"},
     {"c10k", "-n", "10", "--duration", "3", "--rate", "1000"}, 0, 1,
     {"served=10", "rate_offered=1000.0", "rtt_p99_us>150000", "rtt_p99_us<400000",
      "rtt_max_us>150000", "lost=0", "error="}},
    /* ...a closed loop stops asking while it waits: the pauses are a few samples, in max only. */
    {"pause-closed-loop", {"--mode", "pause", "--delay", "200"},
     {"c10k", "-n", "10", "--duration", "3"}, 0, 1,
     {"served=10", "rate_offered=", "rtt_p99_us<50000", "rtt_max_us>150000", "lost=0",
      "error="}},
    /* late_sends is loadgen's own lateness, which a loaded machine (an ASan build, tests
     * running beside it) makes common: only that most sends were on time is asserted here;
     * the schedule itself is checked through rate_achieved and msgs. */
    {"open-loop-correct", {"--mode", "echo"},
     {"c10k", "-n", "20", "--duration", "1", "--rate", "400", "--server-pid", "SERVER_PID"}, 0,
     1, {"served=20", "rate_offered=400.0", "rate_achieved>360", "rate_achieved<440",
         "msgs>360", "msgs<440", "echoes_per_conn_min>15", "echoes_per_conn_max<25",
         "late_sends<300", "schedule_lag_ms_max>-1", "in_flight_at_end<21", "rtt_p999_us>0",
         "server_cpu_pct>0", "client_cpu_pct<90", "saturated=none", "error="}},
    /* --threads 2: two event loops share the 20 connections; their counters are summed
     * (two of twenty corrupted: one in each loop's share or both in one, 2 in all) and the
     * closed-loop invariant on bytes_verified holds for the merged result. */
    {"threads-closed-loop", {"--mode", "echo"},
     {"c10k", N20, "--threads", "2", "--server-pid", "SERVER_PID"}, 0, 1,
     {"served=20", "threads=2", "lost=0", "corrupt=0", "msgs>0", "echoes_per_conn_min>0",
      "client_cpu_ms>0", "client_thread_cpu_pct_max>0", "server_ctx_switches>0", "error="}},
    {"threads-corrupt", {"--mode", "corrupt", "--every", "10", "--after", "1000"},
     {"c10k", N20, "--threads", "2"}, 1, 1,
     {"served=20", "threads=2", "corrupt=2", "lost=0", "error=corrupt"}},
    /* Each worker's first connection, cross-wired by the server for their first message:
     * the two must send different bytes for that to show. */
    {"threads-cross", {"--mode", "cross", "--after", "64"},
     {"c10k", "-n", "2", "--duration", "0.3", "--threads", "2"}, 1, 1,
     {"threads=2", "served=0", "corrupt=2", "lost=0", "error=corrupt"}},
    {"threads-open-loop", {"--mode", "echo"},
     {"c10k", "-n", "21", "--duration", "1", "--rate", "420", "--threads", "2"}, 0, 1,
     {"served=21", "threads=2", "rate_offered=420.0", "rate_achieved>378", "rate_achieved<462",
      "msgs>378", "echoes_per_conn_min>15", "echoes_per_conn_max<25", "error="}},
    /* --cpu 0,1: each worker on one of them, the main thread on both, so the host CPUs
     * measured around the window are both (not only the last CPU of the list). */
    {"threads-cpu-list", {"--mode", "echo"},
     {"c10k", "-n", "2", "--duration", "0.2", "--threads", "2", "--cpu", "0,1"}, 0, 1,
     {"served=2", "threads=2", "host_cpus=2", "error="}},
    /* A load curve: one result per rate, on the same connections. The last step ran at
     * its own rate, not the one before (200: 100 msgs in its 0.5 s); how close to it is
     * open-loop-correct's to check, over a window twice as long, where a stall of 50 ms
     * on a loaded machine costs 5 %, not 10. */
    {"sweep", {"--mode", "echo"},
     {"c10k", "-n", "20", "--duration", "0.5", "--rate", "100,200,400", "--server-pid",
      "SERVER_PID"}, 0, 3,
     {"served=20", "requested=20", "rate_offered=400.0", "rate_achieved>300", "msgs>150",
      "server_ctx_switches_per_msg>0", "unclosed=0", "error="}},
    /* Idle: a server asleep in poll() makes no wakeup (a second's worth of slack). */
    {"hold-wakeups", {"--mode", "echo"},
     {"hold", "-n", "10", "--duration", "1", "--server-pid", "SERVER_PID"}, 0, 1,
     {"served=10", "server_ctx_switches>-1", "server_wakeups_per_s<2", "error="}},
    /* Every slot due inside the window is sent, also one due just before its end: at
     * 1000.002 msgs/s slot j is due at j / 1000.002 s, so slots 0 to 1000 fall inside the
     * 1 s window (slot 1000 at 999.998 ms, 2 us before the end; slot 1001 after it). Each
     * is echoed, inside the window or in the drain, after the 20 first echoes:
     * bytes_verified = 64 x (20 + 1001) = 65344, whatever the timing. */
    {"open-loop-every-slot", {"--mode", "echo"},
     {"c10k", "-n", "20", "--duration", "1", "--rate", "1000.002"}, 0, 1,
     {"served=20", "lost=0", "timed_out=0", "bytes_verified=65344", "error="}},
    /* Each child burns 1000 us of CPU per message: the tree's CPU per message must show it. */
    {"fork-cpu", {"--mode", "fork", "--busy-us", "1000"},
     {"c10k", "-n", "2", "--duration", "1", "--server-pid", "SERVER_PID"}, 0, 1,
     {"served=2", "server_procs=3", "server_cpu_us_per_msg>950", "server_cpu_us_per_msg<1500",
      "msgs>100", "error="}},
    /* Server CPU is read when the window closes, not after the drain: this server stops
     * answering 0.7 s in, 0.3 s before the window closes, and burns 1.5 s of CPU time while
     * the echoes in flight wait for the drain. One thread cannot spend more CPU than the
     * 1 s window lasts (here ~930 ms); read after the drain, server_cpu_ms would hold the
     * whole burn (~2100 ms). lost=0: every echo held back by the burn came in the drain. */
    {"cpu-window", {"--mode", "burn", "--delay", "700", "--busy-us", "1500000"},
     {"c10k", "-n", "2", "--duration", "1", "--server-pid", "SERVER_PID"}, 0, 1,
     {"served=2", "in_flight_at_end>0", "server_cpu_ms<1300", "msgs>100", "lost=0", "error="}},
    /* The CPUs are timed running a fixed probe at each window's edges, against the fastest
     * they have run it (kept in --speed-file across runs). A file that says they once ran it
     * in 1 us makes every window hundreds of times slower than their best: contended, and
     * run again as often as --retry-contended allows. */
    {"speed-slowed", {"--mode", "echo"},
     {"c10k", "-n", "2", "--duration", "0.2", "--retry-contended", "2", "--speed-file",
      "SPEED_FILE"}, 0, 1,
     {"served=2", "probe_best_us=1.0", "slowdown_pct>1000", "slowed_bound_pct=25.0",
      "contended=true", "contended_retries=2", "error="},
     .speed = "0 1\n1 1\n2 1\n3 1\n4 1\n5 1\n6 1\n7 1\n"},
    /* Without a best from before, the window's own edges are the best: its probe is a real
     * time, never faster than that best, and the verdict stands on it. */
    {"speed-measured", {"--mode", "echo"},
     {"c10k", "-n", "2", "--duration", "0.2", "--speed-file", "SPEED_FILE",
      "--slowed-pct", "100"}, 0, 1,
     {"served=2", "probe_us>10", "probe_best_us>10", "slowdown_pct>-0.001",
      "slowed_bound_pct=100.0", "error="}, .speed = ""},
    {"client-emfile", {"--mode", "echo"}, {"c10k", "-n", "30", "--duration", "0.3"}, 1, 1,
     {"requested=30", "client_errors>0", "connect_failed=0", "refused=0", "lost=0",
      "error=client"}, .nofile = 64, .held = 40},
    /* 64 connections on 64 event loops need 64 + 64 + the margin's descriptors: under a
     * limit of 120 loadgen says so before it starts, rather than run out half way. */
    {"threads-fd-limit", {"--mode", "echo"},
     {"c10k", "-n", "64", "--duration", "0.2", "--threads", "64"}, 1, 0, {NULL}, .nofile = 120},
    /* loadgen's own write() fails (ENOBUFS: its kernel memory, not the server) once the
     * connection has been served: the client's failure, never the server's lost one. */
    {"client-write-enobufs", {"--mode", "echo"}, {"c10k", "-n", "1", "--duration", "0.3"}, 1, 1,
     {"served=1", "lost=0", "refused=0", "client_errors=1", "error=client"},
     .client_fault = "write ENOBUFS 1"},
    /* epoll_pwait2 refused by a seccomp profile (EPERM), not only missing (ENOSYS):
     * loadgen waits with epoll_wait instead, and the run is a correct one. */
    {"client-pwait2-eperm", {"--mode", "echo"}, {"c10k", N20}, 0, 1,
     {"requested=20", "established=20", "served=20", "failed=0", "lost=0", "corrupt=0",
      "msgs>0", "error="}, .client_fault = "epoll_pwait2 EPERM"},
    /* A non-blocking connect() refused with EAGAIN: Linux short of local resources
     * (connect(2)), the client's own failure, not a connection the server failed. */
    {"client-connect-eagain", {"--mode", "echo"}, {"c10k", "-n", "20", "--duration", "0.3"}, 1,
     1, {"requested=20", "served=10", "client_errors=10", "connect_failed=0", "refused=0",
         "error=client"}, .client_fault = "connect EAGAIN 10"},
    /* loadgen's own event loop fails while A's connect() is under way: the client's
     * failure, not a connect that timed out. */
    {"stall-wait-fails", {"--mode", "echo"}, {"stall", "--hold", "0.2"}, 1, 1,
     {"connect_failed=0", "refused=0", "client_errors=1", "error=client"},
     .client_fault = "epoll_pwait2 ENOMEM"},
    /* The same for stall: the connect() of client A refused with EAGAIN is loadgen's. */
    {"stall-connect-eagain", {"--mode", "echo"}, {"stall", "--hold", "0.2"}, 1, 1,
     {"connect_failed=0", "client_errors=1", "error=client"}, .client_fault = "connect EAGAIN"},
    {"stall-write-enobufs", {"--mode", "echo"}, {"stall", "--hold", "0.2"}, 1, 1,
     {"refused=0", "client_errors=1", "error=client"}, .client_fault = "write ENOBUFS"},
    {"client-write-enomem", {"--mode", "echo"}, {"c10k", "-n", "3", "--duration", "0.3"}, 1, 1,
     {"served=3", "lost=0", "refused=0", "client_errors=3", "error=client"},
     .client_fault = "write ENOMEM 3"},
    /* Off Linux loadgen connects from 127.0.0.1 only; on Linux from 127.0.0.2 and up. The
     * off-Linux path runs no speed probe either: it does not tell the CPUs apart. */
    {"portable", {"--mode", "echo", "--only-from", "127.0.0.1"},
     {"c10k", N20, "--server-pid", "SERVER_PID", "--speed-file", "SPEED_FILE"}, 0, 1,
     {"served=20", "msgs>0", "server_cpu_ms=", "server_rss_kb=", "server_pss_kb=",
      "server_cpu_pct=", "server_cpu_us_per_msg=", "connect_window=128", "probe_us=",
      "slowdown_pct=", "error="},
     .env = "LADDER_FORCE_PORTABLE=1", .speed = ""},
    {"source-spread", {"--mode", "echo", "--only-from", "127.0.0.1"}, {"c10k", N20}, 1, 1,
     {"served=0", "refused=20", "error=not served"}},
    {"hold-portable", {"--mode", "echo"},
     {"hold", "-n", "10", "--duration", "0.3", "--server-pid", "SERVER_PID"}, 0, 1,
     {"served=10", "server_procs=", "server_footprint_kb=", "connect_window=128", "error="},
     .env = "LADDER_FORCE_PORTABLE=1"},
    {"hold-close", {"--mode", "close", "--every", "5", "--after", "64"},
     {"hold", "-n", "10", "--duration", "0.5"}, 1, 1,
     {"served=10", "failed=0", "lost=2", "still_open=8", "error=lost"}},
    {"hold-exit", {"--mode", "exit", "--after", "640"}, {"hold", "-n", "10", "--duration", "0.5"},
     1, 1, {"served=10", "lost=10", "still_open=0", "error=lost"}},
    {"hold-correct", {"--mode", "echo"},
     {"hold", "-n", "10", "--duration", "0.3", "--server-pid", "SERVER_PID"}, 0, 1,
     {"served=10", "lost=0", "still_open=10", "server_procs=1", "server_rss_kb>0", "error="}},
    /* Two connections in ten are never closed after loadgen's half-close: unclosed, an
     * error of the server's, the run's only one. */
    {"noclose", {"--mode", "noclose", "--every", "5"}, {"c10k", "-n", "10", "--duration", "0.3"},
     1, 1, {"served=10", "lost=0", "corrupt=0", "client_errors=0", "unclosed=2", "msgs>0",
            "error=not closed"}},
    {"hold-noclose", {"--mode", "noclose"}, {"hold", "-n", "5", "--duration", "0.2"}, 1, 1,
     {"served=5", "lost=0", "still_open=5", "unclosed=5", "error=not closed"}},
    {"stall-noclose", {"--mode", "noclose"}, {"stall", "--hold", "0.2"}, 1, 1,
     {"stalled=false", "corrupt=0", "duplicated=0", "unclosed=1", "error=not closed"}},
    /* scan never half-closes: whether the server would close is unknown. */
    {"scan-noclose", {"--mode", "noclose"}, {"scan", "--idle", "0,2", "--duration", "0.2"}, 0, 2,
     {"idle=2", "served=3", "unclosed=", "error="}},
    {"stall-correct", {"--mode", "echo"}, {"stall", "--hold", "0.2"}, 0, 1,
     {"stalled=false", "connect_failed=0", "refused=0", "unanswered=0", "lost=0", "corrupt=0",
      "duplicated=0", "held_ms>150", "wait_ms<100", "client_loop=BACKEND", "error="}},
    /* A server that serves one client at a time answers B only once A has left. */
    {"stall-serial", {"--mode", "serial"}, {"stall", "--hold", "0.3"}, 0, 1,
     {"stalled=true", "wait_ms>290", "wait_ms<600", "after_close_ms>-0.001",
      "after_close_ms<100", "held_ms>299", "held_ms<400", "corrupt=0", "duplicated=0",
      "error="}},
    {"stall-duplicate", {"--mode", "dup", "--after", "3"}, {"stall", "--hold", "0.2"}, 1, 1,
     {"corrupt=0", "duplicated=20", "wait_ms>0", "error=duplicated"}},
    {"stall-extra", {"--mode", "extra", "--every", "2"}, {"stall", "--hold", "0.2"}, 1, 1,
     {"corrupt=0", "duplicated=18", "error=duplicated"}},
    {"stall-corrupt", {"--mode", "corrupt", "--after", "3"}, {"stall", "--hold", "0.2"}, 1, 1,
     {"corrupt=1", "wait_ms=", "stalled=", "error=corrupt"}},
    {"stall-never-answer", {"--mode", "silent"}, {"stall", "--hold", "0.2", "--timeout", "1"},
     1, 1, {"unanswered=1", "corrupt=0", "wait_ms=", "error=timeout"}},
    {"stall-close", {"--mode", "close", "--every", "2"}, {"stall", "--hold", "0.2"}, 1, 1,
     {"refused=1", "lost=0", "corrupt=0", "error=refused"}},
    /* B is closed by the server right after its echo, before its own half-close: lost,
     * as a served connection closed early is in c10k, not a clean end. */
    {"stall-close-after-echo", {"--mode", "close", "--every", "2", "--after", "20"},
     {"stall", "--hold", "0.2"}, 1, 1,
     {"refused=0", "lost=1", "unclosed=0", "corrupt=0", "wait_ms>0", "error=lost"}},
    {"stall-refused", {NULL}, {"stall", "--hold", "0.2"}, 1, 1,
     {"connect_failed=1", "wait_ms=", "error=connect failed"}},
    {"stall-timeout", {"--mode", "echo"}, {"stall", "--hold", "30", "--timeout", "0.5"}, 1, 1,
     {"stalled=false", "unanswered=0", "held_ms>450", "held_ms<600", "error=timeout"},
     .max_s = 1.2},
    {"scan-correct", {"--mode", "echo"},
     {"scan", "--idle", "0,5", "--duration", "0.3", "--server-pid", "SERVER_PID"}, 0, 2,
     {"idle=5", "idle_open=5", "requested=6", "served=6", "lost=0", "round_trips>0",
      "server_cpu_ms_per_1k>0", "error="}},
    {"scan-corrupt", {"--mode", "corrupt", "--after", "1000"},
     {"scan", "--idle", "0,5", "--duration", "0.3"}, 1, 1,
     {"idle=0", "corrupt=1", "error=corrupt"}},
    {"scan-exit", {"--mode", "exit", "--after", "6400"},
     {"scan", "--idle", "0,5", "--duration", "0.3"}, 1, 1,
     {"idle=0", "served=1", "lost=1", "error=lost"}},
    {"scan-idle-reset", {"--mode", "reset", "--every", "3", "--after", "64"},
     {"scan", "--idle", "0,5", "--duration", "0.3", "--allow-refused"}, 1, 2,
     {"idle=5", "requested=6", "served=6", "lost=2", "error=lost"}},
};

#ifdef LADDER_FAULT_LIB /* CMake passes its full path where it builds it (Linux) */
#define LADDER_HAVE_FAULTS 1
#else
#define LADDER_HAVE_FAULTS 0
#define LADDER_FAULT_LIB "libladder_fault.so"
#endif

/* Whether loop_epoll.c waits with epoll_pwait2 (its own test: glibc 2.35 or later). */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define LOADGEN_WAITS_WITH_PWAIT2 1
#else
#define LOADGEN_WAITS_WITH_PWAIT2 0
#endif

/*
 * Processes started from now on (loadgen, not the server: it is started
 * first) get libladder_fault.so preloaded, steered by a control file that
 * holds `line` (see tests/fault.c). Returns the file's name to hand to
 * client_fault_off, or NULL on failure.
 */
static char *client_fault_on(const char *line, char **old_asan)
{
    static char path[64];
    if (!LADDER_HAVE_FAULTS)
        skip_test("Linux only (the faults come from libladder_fault.so, preloaded with "
                  "LD_PRELOAD, which is built on Linux only)");
    snprintf(path, sizeof path, "/tmp/loadgen-fault-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
        expect(false, "writing the fault file: %s", strerror(errno));
        if (fd >= 0)
            close(fd), unlink(path);
        return NULL;
    }
    close(fd);
    const char *old = getenv("ASAN_OPTIONS");
    *old_asan = old ? strdup(old) : NULL;
    char asan[512];
    /* ASan refuses to start behind a preloaded library unless told. */
    snprintf(asan, sizeof asan, "%s%sverify_asan_link_order=0", old ? old : "",
             old && *old ? ":" : "");
    setenv("ASAN_OPTIONS", asan, 1);
    setenv("LD_PRELOAD", LADDER_FAULT_LIB, 1);
    setenv("LADDER_FAULT_FILE", path, 1);
    return path;
}

static void client_fault_off(char *path, char *old_asan)
{
    unsetenv("LD_PRELOAD");
    unsetenv("LADDER_FAULT_FILE");
    if (old_asan)
        setenv("ASAN_OPTIONS", old_asan, 1);
    else
        unsetenv("ASAN_OPTIONS");
    free(old_asan);
    unlink(path);
}

/* Run the case once in one format; the parsed results go to rows. */
static int run_once(const case_t *c, bool csv, record_t *rows)
{
    server_t s = {.pid = -1};
    launch_t how = {.extra_args = c->fault};
    bool listening = c->fault[0] != NULL;
    if (listening && !server_start(&s, fake_bin, &how))
        return -1;
    char port[16], pid[16];
    snprintf(port, sizeof port, "%d", listening ? s.port : free_port());
    snprintf(pid, sizeof pid, "%d", (int)s.pid);

    const char *args[MAX_ARGS];
    int k = 0;
    char limit[16], held[16];
    const char *program = loadgen_bin;
    if (c->nofile > 0) { /* through --under-nofile, below */
        snprintf(limit, sizeof limit, "%d", c->nofile);
        snprintf(held, sizeof held, "%d", c->held);
        args[k++] = "--under-nofile";
        args[k++] = limit;
        args[k++] = held;
        args[k++] = loadgen_bin;
        program = self_bin;
    }
    char speed_file[] = "/tmp/ladder-speed-XXXXXX";
    int speed_fd = c->speed ? mkstemp(speed_file) : -1;
    if (speed_fd >= 0) {
        expect(write(speed_fd, c->speed, strlen(c->speed)) == (ssize_t)strlen(c->speed),
               "the speed file is written");
        close(speed_fd);
    }
    for (int i = 0; c->args[i] && k < MAX_ARGS - 4; i++)
        args[k++] = strcmp(c->args[i], "SERVER_PID") == 0   ? pid
                    : strcmp(c->args[i], "SPEED_FILE") == 0 ? speed_file
                                                            : c->args[i];
    args[k++] = "-p";
    args[k++] = port;
    args[k++] = csv ? "--csv" : "--json";
    args[k] = NULL;

    run_result_t r;
    int n = -1;
    const char *format = csv ? "csv" : "json";
    char *fault_file = NULL, *old_asan = NULL;
    if (c->client_fault && !(fault_file = client_fault_on(c->client_fault, &old_asan))) {
        if (listening)
            server_cleanup(&s);
        return -1;
    }
    double started = now_s();
    bool ran = run_to_exit(program, args, RUN_TIMEOUT_S, &r);
    double took = now_s() - started;
    if (fault_file)
        client_fault_off(fault_file, old_asan);
    if (speed_fd >= 0)
        unlink(speed_file);
    if (ran) {
        expect(r.exited && r.code == c->exit_code, "%s: loadgen exit status %d (want %d)", format,
               r.exited ? r.code : -1, c->exit_code);
        if (c->max_s > 0)
            expect(took < c->max_s, "%s: loadgen took %.2f s (want < %.2f s)", format, took,
                   c->max_s);
        if (c->exit_code != 0)
            expect(strncmp(r.err, "loadgen: ", 9) == 0, "%s: stderr says why: %.*s", format,
                   (int)strcspn(r.err, "\n"), r.err);
        expect(!sanitizer_report_in(r.err), "%s: no sanitizer report", format);
        if (harness_failures)
            note("stderr: %s", r.err);
        n = parse_output(r.out, csv, rows, MAX_ROWS);
        run_result_free(&r);
    }
    if (listening)
        server_cleanup(&s);
    return n;
}

/* The case's expectations and the rate on the last of n results, the invariants on all. */
static void check_results(const case_t *c, const record_t *rows, int n, const char *format)
{
    for (int i = 0; c->want[i]; i++)
        check_expectation(&rows[n - 1], c->want[i], format);
    check_rate(&rows[n - 1], format);
    for (int i = 0; i < n; i++)
        check_invariants(&rows[i], format);
}

static void run_case(const case_t *c)
{
    static record_t json[MAX_ROWS], csv[MAX_ROWS];
    int nj = run_once(c, false, json);
    int nc = run_once(c, true, csv);
    expect(nj == c->rows && nc == c->rows, "%d results in JSON, %d in CSV (want %d)", nj, nc,
           c->rows);
    if (nj < 1 || nc < 1)
        return;
    check_results(c, json, nj, "json");
    check_results(c, csv, nc, "csv");
    bool same = json[0].count == csv[0].count;
    for (int i = 0; same && i < json[0].count; i++)
        same = strcmp(json[0].keys[i], csv[0].keys[i]) == 0;
    expect(same, "CSV columns are the JSON keys, in order (%d and %d keys)", json[0].count,
           csv[0].count);
}

/* Whether this process may run on CPUs 0 and 1, where loadgen can pin (Linux). */
static bool may_run_on_cpus_0_and_1(void)
{
#ifdef __linux__
    cpu_set_t set;
    return !forced_portable() && sched_getaffinity(0, sizeof set, &set) == 0 &&
           CPU_ISSET(0, &set) && CPU_ISSET(1, &set);
#else
    return false;
#endif
}

/* ---- bad command lines ------------------------------------------------- */

/* Each must exit 2, print nothing on stdout and one "loadgen:" line on stderr. */
static const char *const BAD[][8] = {
    {NULL},
    {"bogus"},
    {"stall", "--hold", "-1"},
    {"stall", "-n", "5"},
    {"stall", "--hold"},
    {"stall", "extra"},
    {"c10k"},
    {"c10k", "-n", "0"},
    {"c10k", "-n", "x"},
    {"c10k", "-n", "5", "--duration", "0"},
    {"c10k", "-n", "5", "--json", "--csv"},
    {"c10k", "-n", "5", "--idle", "1"},
    {"c10k", "-n", "5", "-b", "not-an-address"},
    {"c10k", "-n", "5", "--server-pid", "2147483647"},
    {"scan"},
    {"scan", "--idle", "1,,2"},
    {"scan", "--idle", "1", "-n", "5"},
    {"scan", "--idle", "1", "--timeout", "0"},
    {"hold"},
    {"hold", "-n", "5", "--hold", "1"},
    {"hold", "-n", "5", "-p", "70000"},
    {"hold", "-n", "5", "--bogus"},
    {"hold", "-n", "5", "--cpu", "-1"},
    {"hold", "-n", "5", "--rate", "10"},
    {"c10k", "-n", "5", "--rate", "0"},
    {"c10k", "-n", "5", "--rate", "x"},
    {"c10k", "-n", "5", "--rate", "-3"},
    {"scan", "--idle", "1", "--rate", "10"},
};

static void bad_args(void)
{
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char line[160] = "";
        for (int k = 0; BAD[i][k]; k++)
            snprintf(line + strlen(line), sizeof line - strlen(line), " %s", BAD[i][k]);
        run_result_t r;
        if (!run_to_exit(loadgen_bin, (const char *const *)BAD[i], RUN_TIMEOUT_S, &r))
            continue;
        int errors = 0;
        for (const char *p = r.err; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
            errors += strncmp(p, "loadgen:", 8) == 0;
        expect(r.exited && r.code == 2 && r.out[0] == '\0' && errors == 1 &&
                   strncmp(r.err, "loadgen: ", 9) == 0,
               "loadgen%s -> exit %d, %d error line(s): %.*s", line, r.exited ? r.code : -1,
               errors, (int)strcspn(r.err, "\n"), r.err);
        run_result_free(&r);
    }
}

/* ---- the histogram ----------------------------------------------------- */

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The percentiles checked, in thousandths of a percent (stats.h's HIST_PCT_SCALE). */
static const uint32_t PCTS[] = {1000, 50000, 90000, 99000, 99900, 99990, 99999, 100000};

/*
 * The nearest rank, written apart from stats.c: the smallest k (at least 1)
 * with k / n >= per_100k / 100000, found by truncating the quotient and
 * stepping up while k falls short. n is small enough here for the product.
 */
static uint64_t exact_rank(uint64_t n, uint32_t per_100k)
{
    uint64_t need = (uint64_t)per_100k * n, k = need / 100000;
    while (k * 100000 < need)
        k++;
    return k > 0 ? k : 1;
}

/*
 * Every percentile lands on exactly its nearest rank. Samples of two values
 * with a bucket each (below 256 ns, so read back exactly): with the lower
 * value at ranks 1 .. R the answer must be the lower, with it at 1 .. R - 1
 * the higher, so a rank one too high fails the first and one too low the
 * second. The counts include ones where the floating-point rank
 * ceil(p / 100 * n) lands one above the nearest rank (p99.9 of 1000 samples
 * would read as the maximum); the test checks that some do, so that it
 * keeps its teeth.
 */
static void histogram_ranks(void)
{
    enum { LOW = 100, HIGH = 200 };
    static const uint64_t COUNTS[] = {1, 2, 7, 999, 1000, 5000, 10000, 100000, 200000};
    static histogram_t h;
    int float_wrong = 0;
    for (size_t i = 0; i < sizeof COUNTS / sizeof COUNTS[0]; i++) {
        uint64_t n = COUNTS[i];
        char first[160] = "";
        int wrong = 0;
        for (size_t k = 0; k < sizeof PCTS / sizeof PCTS[0]; k++) {
            uint64_t rank = exact_rank(n, PCTS[k]);
            float_wrong += (uint64_t)ceil(PCTS[k] / 1000.0 / 100.0 * (double)n) != rank;
            for (uint64_t low = rank - 1; low <= rank; low++) {
                hist_clear(&h);
                for (uint64_t j = 0; j < n; j++)
                    hist_add(&h, j < low ? LOW : HIGH);
                double want = low == rank ? LOW : HIGH, got = hist_percentile(&h, PCTS[k]);
                if (got != want && wrong++ == 0)
                    snprintf(first, sizeof first, "p%g with the lower value at ranks 1..%llu "
                             "is %g, want %g (rank %llu)", PCTS[k] / 1000.0,
                             (unsigned long long)low, got, want, (unsigned long long)rank);
            }
        }
        expect(wrong == 0, "%llu samples: every percentile at its nearest rank%s%s",
               (unsigned long long)n, wrong ? "; first wrong: " : "", first);
    }
    expect(float_wrong > 0, "some of the counts make the floating-point rank wrong (%d do)",
           float_wrong);
}

/*
 * loadgen's latency histogram against exact percentiles of the same
 * samples: within 1 % everywhere from nanoseconds to minutes, buckets that
 * tile the number line, and a constant size.
 */
static void histogram_accuracy(void)
{
    enum { N = 200000 };
    static histogram_t h;
    static uint64_t v[N];
    uint64_t state = 0x9e3779b97f4a7c15ULL;
    for (int shape = 0; shape < 3; shape++) {
        hist_clear(&h);
        for (int i = 0; i < N; i++) {
            uint64_t r = rng_next(&state);
            /* uniform 0..10 ms; log-uniform 1 ns..100 s; a bimodal stall */
            v[i] = shape == 0 ? r % 10000000u
                 : shape == 1 ? (uint64_t)pow(10.0, (double)(r % 11000000u) / 1e6)
                              : (i % 50 == 0 ? 200000000u + r % 1000000u : 50000u + r % 20000u);
            hist_add(&h, v[i]);
        }
        qsort(v, N, sizeof *v, compare_u64);
        for (size_t k = 0; k < sizeof PCTS / sizeof PCTS[0]; k++) {
            uint64_t rank = exact_rank(N, PCTS[k]);
            double exact = (double)v[rank - 1], got = hist_percentile(&h, PCTS[k]);
            expect(fabs(got - exact) <= 0.01 * exact + 0.5,
                   "shape %d: p%g = %.1f, exact %.1f (relative error %.4f)", shape,
                   PCTS[k] / 1000.0, got, exact, exact > 0 ? fabs(got - exact) / exact : 0);
        }
        expect(h.total == N && h.max == v[N - 1] && h.min == v[0], "shape %d: count, min, max",
               shape);
    }
    uint64_t next = 0;
    size_t b = 0, bad = HIST_BUCKETS;
    for (; b < HIST_BUCKETS && bad == HIST_BUCKETS; b++) {
        uint64_t lo, hi;
        hist_bucket_bounds(b, &lo, &hi);
        if (lo != next || hi < lo || hist_bucket_of(lo) != b || hist_bucket_of(hi) != b ||
            (lo >= 256 && (double)(hi - lo + 1) > (double)lo / 128.0))
            bad = b;
        else if (hi == UINT64_MAX)
            break;
        next = hi + 1;
    }
    expect(bad == HIST_BUCKETS && b < HIST_BUCKETS,
           "buckets tile 0 .. 2^64 - 1, each at most 1/128 of its lowest value wide (first bad: "
           "%zu of %u)", bad, (unsigned)HIST_BUCKETS);
}

/* ---- the poll backend's tables --------------------------------------- */

/* Exec argv[0] with its soft and hard RLIMIT_NOFILE at `limit` and `held`
 * more descriptors open; returns (2) only if that failed, saying why. */
static int exec_under_nofile(rlim_t limit, int held, char *const *argv)
{
    struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
        perror("loadgen_tests: setrlimit");
        return 2;
    }
    for (int i = 0; i < held; i++)
        if (open("/dev/null", O_RDONLY) < 0) {
            perror("loadgen_tests: open");
            return 2;
        }
    execv(argv[0], argv);
    perror("loadgen_tests: exec");
    return 2;
}

/* loadgen's peak resident memory (KiB), run to its end under an open-file
 * limit of `nofile` (soft and hard, at most the hard limit now); -1 if it
 * could not run. */
static long peak_rss_under_nofile(rlim_t nofile, const char *const *args)
{
    pid_t pid = fork();
    if (pid == 0) {
        dup2(open("/dev/null", O_WRONLY), STDOUT_FILENO);
        _exit(exec_under_nofile(nofile, 0, (char *const *)args));
    }
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status))
        return -1;
    expect(WEXITSTATUS(status) == 0, "loadgen under a limit of %llu files: exit status %d",
           (unsigned long long)nofile, WEXITSTATUS(status));
    return ru.ru_maxrss; /* KiB on Linux, bytes on macOS: compared with itself only */
}

/*
 * The same small run (64 connections on 64 threads) under a limit of 1024
 * open files and under the hard limit this test was given (at least 16 384;
 * raising it needs privilege): the tables loadgen keeps per descriptor must
 * be sized by the connections it opens, not by the limit, so the two peaks
 * are about the same. Sized by the limit, the poll backend's tables take 20
 * bytes per descriptor the limit allows in each thread: 8 MiB more
 * here under 20 000, 20 GiB under the 2^30 of some containers.
 */
static void poll_tables(void)
{
    static const char *const fault[] = {"--mode", "echo", NULL};
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max < 16384)
        skip_test("the hard open-file limit is below 16384, too close to the 1024 compared");
    rlim_t hard = rl.rlim_max > (rlim_t)1 << 30 ? (rlim_t)1 << 30 : rl.rlim_max;
    launch_t how = {.extra_args = fault};
    server_t s = {.pid = -1};
    if (!server_start(&s, fake_bin, &how))
        return;
    char port[16];
    snprintf(port, sizeof port, "%d", s.port);
    const char *const args[] = {loadgen_bin, "c10k", "-n", "64", "--duration", "0.2",
                                "--threads", "64", "-p", port, "--json", NULL};
    long small = peak_rss_under_nofile(1024, args);
    long large = peak_rss_under_nofile(hard, args);
    server_cleanup(&s);
    expect(small > 0 && large > 0 && large - small < 1024,
           "peak memory under %llu files %ld KiB, under 1024 files %ld KiB "
           "(want < 1 MiB more)", (unsigned long long)hard, large, small);
}

/*
 * --under-nofile LIMIT HELD PROGRAM ARGS...: run PROGRAM with its soft and
 * hard RLIMIT_NOFILE at LIMIT and HELD descriptors already open (inherited,
 * as from a shell that leaked them), so that loadgen passes its own
 * up-front check and then meets EMFILE for real, mid-run.
 */
static int under_nofile(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    return exec_under_nofile((rlim_t)atol(argv[2]), atoi(argv[3]), argv + 4);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--under-nofile") == 0)
        return under_nofile(argc, argv);
    if (argc != 5) {
        fprintf(stderr, "usage: loadgen_tests LOADGEN FAKE_SERVER BACKEND CASE\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN); /* macOS has no MSG_NOSIGNAL for the harness's writes */
    loadgen_bin = argv[1];
    fake_bin = argv[2];
    backend = argv[3];
    const char *name = argv[4];
    static char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    self_bin = len > 0 ? (self[len] = '\0', self) : argv[0];
    if (strcmp(name, "histogram") == 0) {
        histogram_accuracy();
        histogram_ranks();
        return harness_failures ? 1 : 0;
    }
    if (strcmp(name, "bad-args") == 0) {
        bad_args();
        return harness_failures ? 1 : 0;
    }
    if (strcmp(name, "poll-tables") == 0) {
        poll_tables();
        return harness_failures ? 1 : 0;
    }
    if (strcmp(name, "source-spread") == 0 && forced_portable()) {
        printf("skipped: Linux only (loadgen spreads its sources over 127.0.0.2-254 on Linux;"
               " the forced off-Linux path connects from 127.0.0.1)\n");
        return 77;
    }
    if (strcmp(name, "threads-cpu-list") == 0 && !may_run_on_cpus_0_and_1()) {
        printf("skipped: needs Linux with CPUs 0 and 1 usable (--cpu pins on Linux only)\n");
        return 77;
    }
#ifndef __linux__
    /* The BSDs answer the SYN from their syncache and reset at the last ACK
     * when the queue is full (net.inet.tcp.syncache.rst_on_sock_fail): a
     * refusal there, not a connect that never completes. */
    if (strcmp(name, "connect-never-completes") == 0) {
        printf("skipped: relies on Linux dropping SYNs while the accept queue is full\n");
        return 77;
    }
#endif
    if (strcmp(name, "stall-wait-fails") == 0 && !LOADGEN_WAITS_WITH_PWAIT2) {
        printf("skipped: the fault is injected into epoll_pwait2, which loadgen calls with "
               "glibc 2.35 or later only\n");
        return 77;
    }
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        if (strcmp(CASES[i].name, name) == 0) {
            if (CASES[i].env)
                putenv((char *)CASES[i].env);
            run_case(&CASES[i]);
            return harness_failures ? 1 : 0;
        }
    fprintf(stderr, "loadgen_tests: no case '%s'\n", name);
    return 2;
}
