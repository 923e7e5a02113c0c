/*
 * stats.h - clocks and latency histograms.
 *
 * Latencies come from the monotonic clock (wall-clock time can jump) and go
 * into a log-linear histogram of fixed size, in the manner of HdrHistogram:
 * values below 256 ns have a bucket each; above, every power of two is cut
 * into 128 equal buckets, so a bucket is never wider than 1/128 of the
 * smallest value in it. A percentile is read as the middle of its bucket,
 * which is then within 0.4 % of the true sample (the exact maximum and
 * minimum are kept beside the buckets). The memory is the same whether a
 * run records ten round trips or a hundred million: about 58 KiB.
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

/* CPU time of the calling thread so far, ms; 0 if unreadable (CLOCK_THREAD_CPUTIME_ID). */
double thread_cpu_ms(void);

/* Buckets per power of two: the resolution. 128 gives at most 1/128 (0.78 %) width. */
#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
/* Enough buckets for any uint64_t: shifts 0 to 56 above the exact range. */
#define HIST_BUCKETS ((64 - HIST_SUB_BITS + 1) * HIST_SUB)

typedef struct {
    uint64_t counts[HIST_BUCKETS];
    uint64_t total; /* samples recorded */
    uint64_t min, max;
} histogram_t;

typedef struct {
    uint64_t count;
    /* nanoseconds; NAN when there are no samples */
    double p50, p90, p99, p999, max;
} summary_t;

void hist_clear(histogram_t *h);
void hist_add(histogram_t *h, uint64_t ns);

/* Add every sample of `from` to `into` (several loops' histograms read as one). */
void hist_merge(histogram_t *into, const histogram_t *from);

/* Nearest-rank percentiles (the smallest value with at least p % at or below it). */
summary_t hist_summarize(const histogram_t *h);

/*
 * Percentiles are named in thousandths of a percent, so that p99.9 is the
 * integer 99900 and its rank is exact: in binary floating point 99.9 / 100
 * is a hair above 0.999, and ceil(0.999... * 1000) would make p99.9 of
 * 1000 samples the 1000th (the maximum) instead of the 999th.
 */
#define HIST_PCT_SCALE 100000u /* 100 % */

/* The value reported for percentile per_100k / HIST_PCT_SCALE, NAN when empty. */
double hist_percentile(const histogram_t *h, uint32_t per_100k);

/* Exposed for the histogram's own accuracy check: bucket of a value, and its bounds. */
size_t hist_bucket_of(uint64_t v);
void hist_bucket_bounds(size_t bucket, uint64_t *lo, uint64_t *hi);

#endif /* LOADGEN_STATS_H */
