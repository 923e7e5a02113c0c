/*
 * stats.h - clocks and latency samples.
 *
 * Latencies come from the monotonic clock (wall-clock time can jump). Every
 * sample is kept, 8 bytes each, and percentiles come from sorting them all:
 * exact figures with no bucket widths to argue about. A 5-second C10K run
 * collects around a million round trips, so a few megabytes.
 */
#ifndef LOADGEN_STATS_H
#define LOADGEN_STATS_H

#include <stddef.h>
#include <stdint.h>

#define NS_PER_US 1000ULL
#define NS_PER_MS 1000000ULL
#define NS_PER_S 1000000000ULL

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);

/* CPU time (user + system) this process has used so far, in milliseconds. */
double self_cpu_ms(void);

typedef struct {
    uint64_t *ns;    /* the samples, in nanoseconds */
    size_t count;    /* how many are in use */
    size_t capacity; /* how many fit before the array grows */
} samples_t;

typedef struct {
    size_t count;
    double p50, p99, max; /* nanoseconds; NAN when there are no samples */
} summary_t;

void samples_add(samples_t *s, uint64_t ns);
void samples_clear(samples_t *s);
void samples_free(samples_t *s);

/* Sorts the samples in place and reads the percentiles off the order. */
summary_t samples_summarize(samples_t *s);

#endif /* LOADGEN_STATS_H */
