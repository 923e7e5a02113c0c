/*
 * options.h - loadgen's command line: the mode, then its options.
 *
 * Kept apart from the measurements so loadgen.c reads as what it measures.
 * Every mistake ends the same way: one line saying what was wrong, the
 * synopsis, exit status 2. An option that does not apply to the chosen mode
 * is a mistake too, rather than silently ignored.
 */
#ifndef LOADGEN_OPTIONS_H
#define LOADGEN_OPTIONS_H

#include <stdbool.h>

#include "report.h"

#define MAX_IDLE_COUNTS 32

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
    long idle[MAX_IDLE_COUNTS]; /* --idle (scan) */
    int idle_count;
    double timeout_s;           /* --timeout */
    long server_pid;            /* --server-pid; 0: not given */
    int cpu;                    /* --cpu; -1: not pinned */
    output_t output;            /* --json, --csv, or a table */
    bool allow_refused;         /* --allow-refused */
} options_t;

/* Fills *o with defaults completed by argv; exits 2 on a mistake, 0 for -h. */
void parse_options(int argc, char **argv, options_t *o);

/* "loadgen: <message>", the synopsis, exit 2. */
void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* LOADGEN_OPTIONS_H */
