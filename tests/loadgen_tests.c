/*
 * loadgen_tests.c - the load client against servers that misbehave on
 * purpose: does loadgen count what went wrong, say so in its JSON and CSV,
 * and exit with the status it promises?
 *
 *   loadgen_tests LOADGEN FAKE_SERVER BACKEND CASE
 *
 * Each case starts fake_server (see fake_server.c) with a fault, runs
 * loadgen against it once with --json and once with --csv (a fresh server
 * each time, since some faults end the server), and checks the exit status,
 * the number of results, and expectations on the last result, written as
 * "key=value" (value as printed; empty for null) or "key>number". Both
 * formats must give the same keys in the same order. BACKEND is the event
 * loop the binary was built with ("epoll", "poll", "kqueue"), expected in
 * client_loop.
 *
 * Every fault is tied to byte offsets, not to time, so the counts are exact
 * on any machine; the only times here are generous time-outs.
 */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

/* A loadgen run that takes longer than this has hung. */
#define RUN_TIMEOUT_S 60.0

#define MAX_KEYS 64
#define MAX_ROWS 8
#define MAX_ARGS 24

static const char *loadgen_bin, *fake_bin, *backend;

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

/* "key=value" or "key>number", checked against one result. */
static bool check_expectation(const record_t *r, const char *e, const char *format)
{
    char key[48];
    size_t len = strcspn(e, "=>");
    snprintf(key, sizeof key, "%.*s", (int)len, e);
    const char *want = e[len] ? e + len + 1 : "";
    if (strcmp(want, "BACKEND") == 0)
        want = backend;
    const char *got = value_of(r, key);
    if (!got)
        return expect(false, "%s: key %s is missing", format, key);
    if (e[len] == '>')
        return expect(*got && strtod(got, NULL) > strtod(want, NULL), "%s: %s = %s (want > %s)",
                      format, key, *got ? got : "null", want);
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

/* ---- cases ------------------------------------------------------------- */

typedef struct {
    const char *name;
    const char *fault[8];  /* fake_server's arguments; empty: nothing listens */
    const char *args[16];  /* loadgen's, before -p PORT and the format */
    int exit_code;
    int rows;              /* results printed */
    const char *want[24];  /* expectations on the last result, NULL-terminated */
} case_t;

#define N20 "-n", "20", "--duration", "0.5"

static const case_t CASES[] = {
    {"correct", {"--mode", "echo"}, {"c10k", N20, "--server-pid", "SERVER_PID"}, 0, 1,
     {"requested=20", "established=20", "served=20", "failed=0", "refused=0",
      "connect_failed=0", "unanswered=0", "lost=0", "corrupt=0", "timed_out=0", "msgs>0",
      "bytes_verified>1280", "server_cpu_ms>0", "server_procs=1", "client_loop=BACKEND",
      "error="}},
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
    {"accept-then-stall", {"--mode", "stall", "--every", "10", "--after", "1000"},
     {"c10k", N20, "--timeout", "3"}, 1, 1,
     {"served=20", "failed=0", "timed_out=2", "lost=0", "corrupt=0", "error=timeout"}},
    {"exit-mid-run", {"--mode", "exit", "--after", "12800"}, {"c10k", N20}, 1, 1,
     {"served=20", "failed=0", "lost=20", "corrupt=0", "error=lost"}},
    {"refused", {NULL}, {"c10k", N20}, 1, 1,
     {"requested=20", "established=0", "served=0", "failed=20", "connect_failed=20",
      "msgs=0", "error=not served"}},
    {"timeout-window", {"--mode", "echo"}, {"c10k", "-n", "5", "--duration", "30", "--timeout",
     "1"}, 1, 1, {"served=5", "lost=0", "msgs>0", "window_s>0.5", "error=timeout"}},
    {"hold-close", {"--mode", "close", "--every", "5", "--after", "64"},
     {"hold", "-n", "10", "--duration", "0.5"}, 1, 1,
     {"served=10", "failed=0", "lost=2", "still_open=8", "error=lost"}},
    {"hold-exit", {"--mode", "exit", "--after", "640"}, {"hold", "-n", "10", "--duration", "0.5"},
     1, 1, {"served=10", "lost=10", "still_open=0", "error=lost"}},
    {"hold-correct", {"--mode", "echo"},
     {"hold", "-n", "10", "--duration", "0.3", "--server-pid", "SERVER_PID"}, 0, 1,
     {"served=10", "lost=0", "still_open=10", "server_procs=1", "server_rss_kb>0", "error="}},
    {"stall-correct", {"--mode", "echo"}, {"stall", "--hold", "0.2"}, 0, 1,
     {"stalled=false", "connect_failed=0", "refused=0", "unanswered=0", "corrupt=0",
      "held_ms>150", "client_loop=BACKEND", "error="}},
    {"stall-corrupt", {"--mode", "corrupt", "--after", "3"}, {"stall", "--hold", "0.2"}, 1, 1,
     {"corrupt=1", "wait_ms=", "stalled=", "error=corrupt"}},
    {"stall-never-answer", {"--mode", "silent"}, {"stall", "--hold", "0.2", "--timeout", "1"},
     1, 1, {"unanswered=1", "corrupt=0", "wait_ms=", "error=timeout"}},
    {"stall-close", {"--mode", "close", "--every", "2"}, {"stall", "--hold", "0.2"}, 1, 1,
     {"refused=1", "corrupt=0", "error=refused"}},
    {"stall-refused", {NULL}, {"stall", "--hold", "0.2"}, 1, 1,
     {"connect_failed=1", "wait_ms=", "error=connect failed"}},
    {"stall-timeout", {"--mode", "echo"}, {"stall", "--hold", "30", "--timeout", "0.5"}, 1, 1,
     {"stalled=false", "unanswered=0", "held_ms>0", "error=timeout"}},
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

/* A local port nothing listens on: bound by us, then released. */
static int unused_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
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
    snprintf(port, sizeof port, "%d", listening ? s.port : unused_port());
    snprintf(pid, sizeof pid, "%d", (int)s.pid);

    const char *args[MAX_ARGS];
    int k = 0;
    for (int i = 0; c->args[i] && k < MAX_ARGS - 4; i++)
        args[k++] = strcmp(c->args[i], "SERVER_PID") == 0 ? pid : c->args[i];
    args[k++] = "-p";
    args[k++] = port;
    args[k++] = csv ? "--csv" : "--json";
    args[k] = NULL;

    run_result_t r;
    int n = -1;
    const char *format = csv ? "csv" : "json";
    if (run_to_exit(loadgen_bin, args, RUN_TIMEOUT_S, &r)) {
        expect(r.exited && r.code == c->exit_code, "%s: loadgen exit status %d (want %d)", format,
               r.exited ? r.code : -1, c->exit_code);
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

static void run_case(const case_t *c)
{
    static record_t json[MAX_ROWS], csv[MAX_ROWS];
    int nj = run_once(c, false, json);
    int nc = run_once(c, true, csv);
    expect(nj == c->rows && nc == c->rows, "%d results in JSON, %d in CSV (want %d)", nj, nc,
           c->rows);
    if (nj < 1 || nc < 1)
        return;
    for (int i = 0; c->want[i]; i++) {
        check_expectation(&json[nj - 1], c->want[i], "json");
        check_expectation(&csv[nc - 1], c->want[i], "csv");
    }
    check_rate(&json[nj - 1], "json");
    check_rate(&csv[nc - 1], "csv");

    bool same = json[0].count == csv[0].count;
    for (int i = 0; same && i < json[0].count; i++)
        same = strcmp(json[0].keys[i], csv[0].keys[i]) == 0;
    expect(same, "CSV columns are the JSON keys, in order (%d and %d keys)", json[0].count,
           csv[0].count);
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

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: loadgen_tests LOADGEN FAKE_SERVER BACKEND CASE\n");
        return 2;
    }
    loadgen_bin = argv[1];
    fake_bin = argv[2];
    backend = argv[3];
    const char *name = argv[4];
    if (strcmp(name, "bad-args") == 0) {
        bad_args();
        return harness_failures ? 1 : 0;
    }
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        if (strcmp(CASES[i].name, name) == 0) {
            run_case(&CASES[i]);
            return harness_failures ? 1 : 0;
        }
    fprintf(stderr, "loadgen_tests: no case '%s'\n", name);
    return 2;
}
