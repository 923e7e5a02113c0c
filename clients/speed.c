/*
 * Whether the machine itself ran slower during a window.
 *
 * What a guest is told of its host (steal time, its CPUs' idle time) misses
 * the slowdowns that come from sharing the hardware: other guests on the
 * same cache and memory, a core clocked down. On this project's 2-core VM
 * the server's CPU per message at one and the same point moved by up to 2x
 * between rounds of one run, with steal and everybody else's work under
 * 5 %. Such a window measures the host, not the server.
 *
 * So a fixed piece of work is timed on each CPU the window uses, just
 * before the window opens and again after its drain, when the server is
 * idle and nothing of the probe is in the window's figures: a chain of
 * xorshift steps, each loading from and storing into a 4 MiB table (more
 * than a core's L2, as 10 000 connections' state is), best of PROBE_REPS
 * runs, each timed on the thread's own CPU clock so that being preempted
 * does not count (foreign_cpu_pct's business). A CPU's time for the window
 * is the faster of its two edges (a slowdown through the window shows at
 * both, a moment's jitter at one), and the window's is its slowest CPU's,
 * against the fastest that CPU has run the probe: at this run's edges so far,
 * and in the runs before it, which --speed-file keeps (a reproduction keeps
 * one file for all of its runs). Only with --speed-file: on CPUs busy with
 * other work the probe waits for its turn, and would shorten a window
 * bounded by --timeout.
 */
#define _GNU_SOURCE /* POSIX under strict -std=c11 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "modes.h"

#define PROBE_TABLE_WORDS (1u << 20) /* uint32_t: 4 MiB */
#define PROBE_STEPS 100000           /* about 0.25 ms on the VM above */
#define PROBE_REPS 8                 /* runs per CPU and edge; the best counts */

static uint32_t *table;
static volatile uint32_t sink; /* keeps the chain from being optimized away */

static double probe_once(void)
{
    uint32_t x = 2463534242u, sum = 0;
    double start = thread_cpu_ms();
    for (int i = 0; i < PROBE_STEPS; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        sum += table[x % PROBE_TABLE_WORDS];
        table[(x >> 7) % PROBE_TABLE_WORDS] ^= sum;
    }
    sink = sum;
    return (thread_cpu_ms() - start) * 1e3; /* us */
}

/* The best of `reps` runs on `cpu`; NAN if the thread cannot be put there. */
static double probe_on(int cpu, int reps)
{
    if (proc_move_thread(cpu) != 0)
        return NAN;
    double best = INFINITY;
    for (int i = 0; i < reps; i++)
        best = fmin(best, probe_once());
    proc_move_thread(-1);
    return best;
}

void speed_start(speed_t *s, const options_t *o)
{
    *s = (speed_t){0};
    if (!o->speed_file)
        return; /* asked for only: on CPUs busy with other work the probe waits its turn */
    s->count = proc_window_cpus(o->server_pid, s->cpus, SPEED_MAX_CPUS);
    if (s->count <= 0 || !(table = calloc(PROBE_TABLE_WORDS, sizeof *table))) {
        s->count = 0; /* not measured here */
        return;
    }
    for (uint32_t i = 0; i < PROBE_TABLE_WORDS; i++)
        table[i] = i * 2654435761u;
    for (int i = 0; i < s->count; i++)
        s->best_us[i] = INFINITY; /* until the first edge, or what the file kept */
    FILE *f = fopen(o->speed_file, "r"); /* none at the first run of a reproduction */
    int cpu;
    double us;
    while (f && fscanf(f, "%d %lf", &cpu, &us) == 2)
        for (int i = 0; i < s->count; i++)
            if (s->cpus[i] == cpu && us > 0)
                s->best_us[i] = fmin(s->best_us[i], us);
    if (f)
        fclose(f);
}

/* Each CPU's time at one edge of a window; NAN everywhere when not measured. */
void speed_edge(speed_t *s, double *edge_us)
{
    for (int i = 0; i < SPEED_MAX_CPUS; i++)
        edge_us[i] = i < s->count ? probe_on(s->cpus[i], PROBE_REPS) : NAN;
    for (int i = 0; i < s->count; i++)
        s->best_us[i] = fmin(s->best_us[i], edge_us[i]);
}

/* The window's probe time and how much slower than its CPU's best; NAN: unknown. */
void speed_judge(const speed_t *s, const double *before, const double *after, cpu_window_t *w)
{
    w->probe_us = w->probe_best_us = w->slowdown_pct = NAN;
    for (int i = 0; i < s->count; i++) {
        double us = fmin(before[i], after[i]);
        double slowdown = 100.0 * (us / s->best_us[i] - 1.0);
        if (isnan(slowdown) || (!isnan(w->slowdown_pct) && slowdown <= w->slowdown_pct))
            continue;
        w->probe_us = us;
        w->probe_best_us = s->best_us[i];
        w->slowdown_pct = slowdown;
    }
}

/* Keep each CPU's best for the next run of the same reproduction. */
void speed_end(speed_t *s, const options_t *o)
{
    FILE *f = o->speed_file && s->count > 0 ? fopen(o->speed_file, "w") : NULL;
    if (o->speed_file && s->count > 0 && !f)
        fprintf(stderr, "loadgen: --speed-file %s: cannot write it\n", o->speed_file);
    for (int i = 0; f && i < s->count; i++)
        if (!isnan(s->best_us[i]))
            fprintf(f, "%d %.1f\n", s->cpus[i], s->best_us[i]);
    if (f)
        fclose(f);
    free(table);
    table = NULL;
}
