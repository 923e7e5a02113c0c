/*
 * options.h - loadgen's command line: the mode, then its options.
 *
 * Kept apart from the measurements so the modes read as what they measure.
 * Every mistake ends the same way: one line saying what was wrong, the
 * synopsis, exit status 2. An option that does not apply to the chosen mode
 * is a mistake too, rather than silently ignored.
 */
#ifndef LOADGEN_OPTIONS_H
#define LOADGEN_OPTIONS_H

#include <stdbool.h>

#include "report.h"

#define MAX_IDLE_COUNTS 32
#define MAX_RATES 32 /* steps of one --rate sweep */
#define MAX_CPUS 64  /* CPUs in one --cpu list */
#define MAX_THREADS 64 /* --threads: c10k's event loops */
#define CONTENDED_PCT 10.0 /* --contended-pct's default: see measure.c's contended() */
#define SLOWED_PCT 25.0    /* --slowed-pct's default: see speed.c */

typedef enum { MODE_STALL = 1, MODE_C10K = 2, MODE_SCAN = 4, MODE_HOLD = 8 } run_mode_t;

typedef struct {
    run_mode_t mode;
    const char *mode_name;
    const char *addr;           /* -b: server address */
    const char *port;           /* -p: server port */
    long connections;           /* -n (c10k, hold) */
    double hold_s;              /* --hold (stall) */
    double duration_s;          /* --duration (c10k, scan, hold) */
    long size;                  /* --size: bytes per message */
    double rate;                /* --rate (c10k): messages per second in total; 0: closed loop */
    double rates[MAX_RATES];    /* --rate R1,R2,...: one result per rate (rates[0] = rate) */
    int rate_count;             /* 0: closed loop */
    int threads;                /* --threads (c10k): event loops, one per thread (1) */
    long idle[MAX_IDLE_COUNTS]; /* --idle (scan) */
    int idle_count;
    double timeout_s;           /* --timeout */
    long server_pid;            /* --server-pid; 0: not given */
    const char *server_cgroup;  /* --server-cgroup: its cpuacct cgroup (Linux), or NULL */
    int retry_contended;        /* --retry-contended (c10k): re-runs of a contended window */
    double contended_pct;       /* --contended-pct: the bound a contended window passes (10) */
    double slowed_pct;          /* --slowed-pct (c10k): the slowdown that makes it contended */
    const char *speed_file;     /* --speed-file (c10k): each CPU's best probe, kept across runs */
    int cpus[MAX_CPUS];         /* --cpu N,M,...: c10k's workers go round them */
    int cpu_count;
    output_t output;            /* --json, --csv, or a table */
    bool allow_refused;         /* --allow-refused */
} options_t;

/* Fills *o with defaults completed by argv; exits 2 on a mistake, 0 for -h. */
void parse_options(int argc, char **argv, options_t *o);

/* "loadgen: <message>", the synopsis, exit 2. */
void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* LOADGEN_OPTIONS_H */
