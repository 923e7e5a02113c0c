/*
 * options.c - see options.h.
 */
#define _GNU_SOURCE /* getopt_long, CPU_SETSIZE */

#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

#define DEFAULT_PORT "9999"
#define DEFAULT_ADDR "127.0.0.1"
#define DEFAULT_HOLD_S 1.5
#define DEFAULT_SIZE 64
#define MAX_SIZE (1L << 30)
#define MAX_CONNECTIONS 1000000L
#define MAX_SECONDS 86400.0
#define MAX_RATE 1e8

#ifdef CPU_SETSIZE
#define MAX_CPU (CPU_SETSIZE - 1)
#else
#define MAX_CPU 1023
#endif

/* --timeout defaults to this plus however long the run itself is meant to last. */
#define TIMEOUT_SLACK_S 60.0

/* The synopsis, printed after every command-line mistake; -h adds HELP. */
static const char SYNOPSIS[] =
    "usage: loadgen stall [-p PORT] [--hold SECONDS]\n"
    "       loadgen c10k  [-p PORT] -n CONNECTIONS [--duration S] [--size BYTES]\n"
    "                     [--rate R[,R2,...]] [--threads N]\n"
    "       loadgen scan  [-p PORT] --idle 0,100,1000,10000 [--duration S] [--size BYTES]\n"
    "       loadgen hold  [-p PORT] -n CONNECTIONS [--duration S] [--size BYTES]\n"
    "       (common: -b ADDR, --json | --csv, --server-pid PID, --server-cgroup DIR,\n"
    "        --cpu N, --timeout S; -h for more)\n";

static const char HELP[] =
    "\n"
    "  stall  A connects and idles --hold s (1.5); B sends a line: how long until its echo?\n"
    "  c10k   N connections open at once, all ping-ponging --size-byte messages (64)\n"
    "         for --duration s (5); closed-loop, or with --rate R open-loop: R msgs/s in\n"
    "         total on a fixed schedule, each round trip timed from when it was due\n"
    "  scan   one active connection's round trip beside each number of idle ones\n"
    "         (--duration s each, default 3; the idle set grows from one count to the next)\n"
    "  hold   N connections, one echo each, then all idle for --duration s (3)\n"
    "\n"
    "options:\n"
    "  -p PORT           server port (default 9999)\n"
    "  -b ADDR           server address (default 127.0.0.1; connections to it come from\n"
    "                    127.0.0.2-254 on Linux so back-to-back runs do not run out\n"
    "                    of ports; from 127.0.0.1 elsewhere and under\n"
    "                    LADDER_FORCE_PORTABLE=1)\n"
    "  --json            one JSON object per result line (default: a table)\n"
    "  --csv             a header line, then one CSV row per result\n"
    "  --server-pid PID  also measure the server's CPU and memory, summed over its\n"
    "                    processes and threads (Linux; macOS: CPU and RSS of the\n"
    "                    server and its children; FreeBSD: their CPU, RSS and\n"
    "                    threads; elsewhere left unknown)\n"
    "  --server-cgroup DIR  the server's CPU time read in one go from this cpuacct\n"
    "                    cgroup (Linux: every thread and child it holds), at the\n"
    "                    window's edges, instead of summed process by process\n"
    "  --retry-contended N  c10k: a window whose CPUs were busy with other work or\n"
    "                    stolen by the hypervisor (\"contended\") is run again, up to\n"
    "                    N times (0)\n"
    "  --contended-pct P the share of the CPUs' time (or of the client's wait) above\n"
    "                    which a window is contended (10; 100: never)\n"
    "  --slowed-pct P    c10k, with --speed-file: a window is contended too when its\n"
    "                    CPUs ran the probe more than P%% slower than their best (25)\n"
    "  --speed-file FILE c10k: time a fixed probe on the measured CPUs at each\n"
    "                    window's edges, against each CPU's best, read from FILE at\n"
    "                    start and kept there at the end (so that a run compares with\n"
    "                    the runs before it); without it, slowdown_pct is null\n"
    "  --rate R          c10k: offer R messages per second in total (open loop);\n"
    "                    R1,R2,... sweeps: one window and one result per rate, on the\n"
    "                    same connections, stopping after the first rate the server\n"
    "                    fell behind at (a load curve)\n"
    "  --threads N       c10k: N event loops on N threads sharing nothing, the\n"
    "                    connections and the rate split among them (1)\n"
    "  --cpu N[,M...]    run loadgen on CPU N only; with a list, c10k's threads go\n"
    "                    round the CPUs listed\n"
    "  --timeout S       the whole run's deadline: then print what was measured, with\n"
    "                    error \"timeout\", and exit 1 (default: 60 s plus the run's\n"
    "                    planned length; see clients/README.md)\n"
    "  --allow-refused   connections the server closes unanswered are not an error\n"
    "  -h, --help        this text\n"
    "\n"
    "Every echoed byte is checked. Exit status: 0 measured; 1 could not measure\n"
    "(refused, reset, timed out, bytes differed: stderr says why); 2 bad usage.\n";

enum { OPT_HOLD = 256, OPT_DURATION, OPT_SIZE, OPT_IDLE, OPT_JSON, OPT_CSV, OPT_SERVER_PID,
       OPT_CPU, OPT_TIMEOUT, OPT_ALLOW_REFUSED, OPT_RATE, OPT_THREADS, OPT_SERVER_CGROUP,
       OPT_RETRY_CONTENDED, OPT_CONTENDED_PCT, OPT_SLOWED_PCT, OPT_SPEED_FILE, OPT_END };
#define OPT_FIRST OPT_HOLD
#define LONG_COUNT (OPT_END - OPT_FIRST)

#define MEASURING (MODE_C10K | MODE_SCAN | MODE_HOLD)
#define EVERY (MODE_STALL | MEASURING)

/* The long options, each with the modes it means something to; getopt_long gets its value. */
static const struct { const char *name; int has_arg; unsigned modes; } OPTIONS[LONG_COUNT] = {
    [OPT_HOLD - OPT_FIRST] = {"hold", required_argument, MODE_STALL},
    [OPT_DURATION - OPT_FIRST] = {"duration", required_argument, MEASURING},
    [OPT_SIZE - OPT_FIRST] = {"size", required_argument, MEASURING},
    [OPT_IDLE - OPT_FIRST] = {"idle", required_argument, MODE_SCAN},
    [OPT_JSON - OPT_FIRST] = {"json", no_argument, EVERY},
    [OPT_CSV - OPT_FIRST] = {"csv", no_argument, EVERY},
    [OPT_SERVER_PID - OPT_FIRST] = {"server-pid", required_argument, MEASURING},
    [OPT_CPU - OPT_FIRST] = {"cpu", required_argument, EVERY},
    [OPT_TIMEOUT - OPT_FIRST] = {"timeout", required_argument, EVERY},
    [OPT_ALLOW_REFUSED - OPT_FIRST] = {"allow-refused", no_argument, MEASURING},
    [OPT_RATE - OPT_FIRST] = {"rate", required_argument, MODE_C10K},
    [OPT_THREADS - OPT_FIRST] = {"threads", required_argument, MODE_C10K},
    [OPT_SERVER_CGROUP - OPT_FIRST] = {"server-cgroup", required_argument, MEASURING},
    [OPT_RETRY_CONTENDED - OPT_FIRST] = {"retry-contended", required_argument, MODE_C10K},
    [OPT_CONTENDED_PCT - OPT_FIRST] = {"contended-pct", required_argument, MEASURING},
    [OPT_SLOWED_PCT - OPT_FIRST] = {"slowed-pct", required_argument, MODE_C10K},
    [OPT_SPEED_FILE - OPT_FIRST] = {"speed-file", required_argument, MODE_C10K},
};

/* The modes an option means something to: -n c10k's and hold's, -p and -b every mode's. */
static unsigned modes_of(int opt)
{
    if (opt >= OPT_FIRST)
        return OPTIONS[opt - OPT_FIRST].modes;
    return opt == 'n' ? MODE_C10K | MODE_HOLD : EVERY;
}

void usage_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "loadgen: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n%s", SYNOPSIS);
    exit(2);
}

static void print_help(void)
{
    fputs(SYNOPSIS, stdout);
    fputs(HELP, stdout);
    exit(0);
}

/* "-n" or "--hold", for messages. */
static const char *option_name(int opt)
{
    static char name[32];
    if (opt >= OPT_FIRST)
        snprintf(name, sizeof name, "--%s", OPTIONS[opt - OPT_FIRST].name);
    else
        snprintf(name, sizeof name, "-%c", opt);
    return name;
}

static long parse_long(const char *s, long min, long max, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0 || v < min || v > max)
        usage_error("bad %s '%s' (want %ld to %ld)", what, s, min, max);
    return v;
}

static double parse_seconds(const char *s, double min, const char *what)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno != 0 || !isfinite(v) || v < min || v > MAX_SECONDS)
        usage_error("bad %s '%s' (want seconds, %g to %g)", what, s, min, MAX_SECONDS);
    return v;
}

/* A share in percent, more than 0, at most 100. */
static double parse_percent(const char *s, const char *what)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno != 0 || !isfinite(v) || v <= 0 || v > 100)
        usage_error("bad %s '%s' (want a percentage, more than 0, at most 100)", what, s);
    return v;
}

/* --rate: messages per second, more than 0, at most MAX_RATE. */
static double parse_rate(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno != 0 || !isfinite(v) || v <= 0 || v > MAX_RATE)
        usage_error("bad --rate '%s' (want messages per second, more than 0, up to %g)", s,
                    MAX_RATE);
    return v;
}

/* "500,1000,2000": each a rate as --rate takes it, at most MAX_RATES. */
static void parse_rate_list(const char *s, options_t *o)
{
    char item[64];
    o->rate_count = 0;
    for (const char *start = s;;) {
        size_t len = strcspn(start, ",");
        if (len == 0 || len >= sizeof item)
            usage_error("bad --rate '%s' (want R or R1,R2,... messages per second)", s);
        if (o->rate_count == MAX_RATES)
            usage_error("--rate: more than %d rates in '%s'", MAX_RATES, s);
        memcpy(item, start, len);
        item[len] = '\0';
        o->rates[o->rate_count++] = parse_rate(item);
        if (start[len] == '\0')
            break;
        start += len + 1;
    }
    o->rate = o->rates[0];
}

/* "1" or "0,1": CPU numbers, at most MAX_CPUS. */
static void parse_cpu_list(const char *s, options_t *o)
{
    char item[32];
    o->cpu_count = 0;
    for (const char *start = s;;) {
        size_t len = strcspn(start, ",");
        if (len == 0 || len >= sizeof item || o->cpu_count == MAX_CPUS)
            usage_error("bad --cpu '%s' (want N or N,M,... CPU numbers)", s);
        memcpy(item, start, len);
        item[len] = '\0';
        o->cpus[o->cpu_count++] = (int)parse_long(item, 0, MAX_CPU, "--cpu");
        if (start[len] == '\0')
            break;
        start += len + 1;
    }
}

/* "0,100,1000,10000" */
static void parse_idle_list(const char *s, options_t *o)
{
    o->idle_count = 0;
    for (const char *item = s;; item++) {
        char *end;
        errno = 0;
        long v = strtol(item, &end, 10);
        if (end == item || (*end != ',' && *end != '\0') || errno != 0 || v < 0 ||
            v > MAX_CONNECTIONS)
            usage_error("bad --idle list '%s' (want counts 0 to %ld, comma-separated)", s,
                        MAX_CONNECTIONS);
        if (o->idle_count == MAX_IDLE_COUNTS)
            usage_error("--idle: more than %d counts in '%s'", MAX_IDLE_COUNTS, s);
        o->idle[o->idle_count++] = v;
        if (*end == '\0')
            return;
        item = end;
    }
}

static run_mode_t parse_mode(const char *name)
{
    static const struct { const char *name; run_mode_t mode; } modes[] = {
        {"stall", MODE_STALL}, {"c10k", MODE_C10K}, {"scan", MODE_SCAN}, {"hold", MODE_HOLD}};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(name, modes[i].name) == 0)
            return modes[i].mode;
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0)
        print_help();
    usage_error("unknown mode '%s' (want stall, c10k, scan or hold)", name);
}

/* --json and --csv each choose the one output format. */
static void set_output(options_t *o, output_t format)
{
    if (o->output != OUTPUT_TABLE && o->output != format)
        usage_error("--json and --csv cannot be combined");
    o->output = format;
}

static void apply_option(options_t *o, int opt, const char *arg)
{
    switch (opt) {
    case 'p': o->port = arg; parse_long(arg, 1, 65535, "port"); break;
    case 'b': o->addr = arg; break;
    case 'n': o->connections = parse_long(arg, 1, MAX_CONNECTIONS, "-n"); break;
    case OPT_HOLD: o->hold_s = parse_seconds(arg, 0, "--hold"); break;
    case OPT_DURATION: o->duration_s = parse_seconds(arg, 0.001, "--duration"); break;
    case OPT_SIZE: o->size = parse_long(arg, 1, MAX_SIZE, "--size"); break;
    case OPT_IDLE: parse_idle_list(arg, o); break;
    case OPT_JSON: set_output(o, OUTPUT_JSON); break;
    case OPT_CSV: set_output(o, OUTPUT_CSV); break;
    case OPT_SERVER_PID: o->server_pid = parse_long(arg, 1, INT_MAX, "--server-pid"); break;
    case OPT_CPU: parse_cpu_list(arg, o); break;
    case OPT_THREADS: o->threads = (int)parse_long(arg, 1, MAX_THREADS, "--threads"); break;
    case OPT_TIMEOUT: o->timeout_s = parse_seconds(arg, 0.001, "--timeout"); break;
    case OPT_ALLOW_REFUSED: o->allow_refused = true; break;
    case OPT_RATE: parse_rate_list(arg, o); break;
    case OPT_SERVER_CGROUP: o->server_cgroup = arg; break;
    case OPT_RETRY_CONTENDED:
        o->retry_contended = (int)parse_long(arg, 0, 5, "--retry-contended");
        break;
    case OPT_CONTENDED_PCT: o->contended_pct = parse_percent(arg, "--contended-pct"); break;
    case OPT_SLOWED_PCT: o->slowed_pct = parse_percent(arg, "--slowed-pct"); break;
    case OPT_SPEED_FILE: o->speed_file = arg; break;
    }
}

/* How long the run is meant to last, for the default --timeout. */
static double planned_seconds(const options_t *o)
{
    switch (o->mode) {
    case MODE_STALL: return o->hold_s;
    case MODE_SCAN: return o->duration_s * o->idle_count;
    case MODE_C10K: return o->duration_s * (o->rate_count > 1 ? o->rate_count : 1);
    default: return o->duration_s;
    }
}

static void check_and_complete(options_t *o)
{
    if ((o->mode & (MODE_C10K | MODE_HOLD)) && o->connections == 0)
        usage_error("%s needs -n CONNECTIONS", o->mode_name);
    if (o->mode == MODE_SCAN && o->idle_count == 0)
        usage_error("%s needs --idle COUNT,COUNT,...", o->mode_name);
    if (o->server_pid && !proc_exists(o->server_pid))
        usage_error("--server-pid: no process %ld is running", o->server_pid);
    if (o->threads == 0)
        o->threads = 1;
    if (o->cpu_count > 1 && o->mode != MODE_C10K)
        usage_error("--cpu: a list of CPUs is for c10k's --threads; %s runs on one", o->mode_name);
    if (o->mode == MODE_C10K && o->threads > o->connections)
        usage_error("--threads %d: more threads than the %ld connections", o->threads,
                    o->connections);
    if (o->duration_s == 0)
        o->duration_s = o->mode == MODE_C10K ? 5 : 3;
    if (o->contended_pct == 0)
        o->contended_pct = CONTENDED_PCT;
    if (o->slowed_pct == 0)
        o->slowed_pct = SLOWED_PCT;
    if (o->timeout_s == 0)
        o->timeout_s = TIMEOUT_SLACK_S + planned_seconds(o);
}

void parse_options(int argc, char **argv, options_t *o)
{
    *o = (options_t){.addr = DEFAULT_ADDR, .port = DEFAULT_PORT, .hold_s = DEFAULT_HOLD_S,
                     .size = DEFAULT_SIZE};
    if (argc < 2)
        usage_error("missing mode");
    o->mode_name = argv[1];
    o->mode = parse_mode(argv[1]);

    static struct option long_options[LONG_COUNT + 2]; /* then --help, then the zeros that end it */
    for (int i = 0; i < LONG_COUNT; i++)
        long_options[i] = (struct option){OPTIONS[i].name, OPTIONS[i].has_arg, NULL, OPT_FIRST + i};
    long_options[LONG_COUNT] = (struct option){"help", no_argument, NULL, 'h'};

    /* Options follow the mode: parse argv[1..] as if the mode were the program. */
    opterr = 0; /* our own one-line errors */
    int opt;
    while ((opt = getopt_long(argc - 1, argv + 1, ":p:b:n:h", long_options, NULL)) != -1) {
        const char *text = argv[optind]; /* the word just read; argv + 1 shifts optind */
        if (opt == 'h')
            print_help();
        if (opt == ':')
            usage_error("option '%s' needs a value", text);
        if (opt == '?')
            usage_error("unknown option '%s'", text);
        if (!(modes_of(opt) & o->mode))
            usage_error("option '%s' does not apply to %s", option_name(opt), o->mode_name);
        apply_option(o, opt, optarg);
    }
    if (optind + 1 < argc)
        usage_error("unexpected argument '%s'", argv[optind + 1]);
    check_and_complete(o);
}
