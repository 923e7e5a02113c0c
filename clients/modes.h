/*
 * What loadgen's modes share. loadgen.c parses the command line and runs one
 * of them: stall.c, c10k.c, hold.c, scan.c. measure.c holds what they have in
 * common: the measured window (both sides' CPU, the host around it, whether
 * it was contended) and the results every mode but stall reports.
 */
#ifndef LOADGEN_MODES_H
#define LOADGEN_MODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crew.h"
#include "options.h"
#include "pool.h"
#include "proc.h"
#include "report.h"
#include "stats.h"

/*
 * After the last echo, how long a run keeps reading (its side half-closed)
 * for bytes nobody sent, before it stops waiting for the server's close.
 */
#define TAIL_NS (500 * NS_PER_MS)

/*
 * A side counts as saturated when it kept one core at least this busy over
 * the window: each of loadgen's event loops is one thread, which can never
 * use more (with --threads the busiest thread is judged, c10k.c), and
 * msgs_per_s then says how fast the client went, not the server. The same
 * bound is applied to the server's CPU summed over its processes and
 * threads, as a share of one core (a single-threaded event loop cannot use
 * more either; a forking or threaded server could, and is then named too).
 */
#define SATURATED_PCT 90.0

/*
 * CPU time both sides spent over one measured window. The client reads its
 * own clock inside the server readings, so walking /proc (a tenth of a
 * second at 10 000 fork children) is not charged to the client. With
 * --server-cgroup the server's CPU time is one reading of its cgroup, taken
 * at the window's edges with the walk (for context switches) outside them:
 * a server of 10 001 processes is then read as exactly as one of one.
 *
 * The host around the window: what the measured CPUs ran that neither side
 * did (another program, a hypervisor's steal), and each side's run delay.
 */
typedef struct {
    uint64_t wall_start;
    double client_start;
    proc_cpu_t server_start;
    bool server_known;
    long long cgroup_start; /* ns; -1 without --server-cgroup or unreadable */
    proc_host_t host_start;
    bool host_known;
    long long delay_server_start, delay_client_start;
    double wall_ms, client_ms, server_ms; /* results; server_ms is NAN when unknown */
    long long switches, involuntary;      /* the server's context switches; -1: unknown */
    double foreign_pct, steal_pct;        /* of the measured CPUs' time; NAN: unknown */
    int host_cpus;
    double server_delay_ms, client_delay_ms; /* NAN: not kept by this kernel */
    double probe_us, probe_best_us, slowdown_pct; /* speed.c's verdict; NAN: not measured */
} cpu_window_t;

/* The CPUs speed.c probes, and the fastest each has run the probe. */
#define SPEED_MAX_CPUS 8
typedef struct {
    int count; /* 0: not measured here */
    int cpus[SPEED_MAX_CPUS];
    double best_us[SPEED_MAX_CPUS];
} speed_t;

/* The modes: each returns loadgen's exit status. */
int run_stall(const options_t *o, target_t *t, uint64_t deadline);
int run_c10k(const options_t *o, target_t *t, uint64_t deadline);
int run_hold(const options_t *o, target_t *t, uint64_t deadline);
int run_scan(const options_t *o, target_t *t, uint64_t deadline);

/* The window (measure.c). */
void cpu_window_start(cpu_window_t *w, const options_t *o);
void cpu_window_end(cpu_window_t *w, const options_t *o);
bool contended(const cpu_window_t *w, const options_t *o);
void report_host(report_t *r, const cpu_window_t *w, int retries, const options_t *o);
const char *saturated_side(double client_pct, double server_pct);
double core_pct(double cpu_ms, double wall_ms);
void report_switches(report_t *r, const cpu_window_t *cpu, uint64_t msgs);

/* The machine's speed at the window's edges (speed.c). */
void speed_start(speed_t *s, const options_t *o);
void speed_edge(speed_t *s, double *edge_us);
void speed_judge(const speed_t *s, const double *before, const double *after, cpu_window_t *w);
void speed_end(speed_t *s, const options_t *o);

/* The results (measure.c). */
const char *run_error(const pool_t *p, const options_t *o, size_t requested);
int explain_failure(const pool_t *p, const options_t *o, size_t requested);
void report_counts(report_t *r, const pool_t *p, size_t requested);
void report_count_or_null(report_t *r, const char *key, long value);
void report_memory(report_t *r, const proc_memory_t *m);
void report_kernel(report_t *r, const proc_kernel_t *before, const proc_kernel_t *after);
proc_memory_t server_memory(const options_t *o);
void report_rtt(report_t *r, const pool_t *p);
void report_parts(report_t *r, const crew_sum_t *s);
double per_second(uint64_t count, uint64_t window_ns);
double ms_between(uint64_t from_ns, uint64_t to_ns);
long us_until(uint64_t until);

#endif
