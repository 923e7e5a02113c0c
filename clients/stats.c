/*
 * stats.c - see stats.h.
 */
#define _GNU_SOURCE /* clock_gettime and getrusage under strict -std=c11 */

#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

double self_cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double us = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
                (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    return us / 1e3;
}

double thread_cpu_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * Values below 2 * HIST_SUB are their own bucket. Above, a value with its
 * top bit at position b (b > HIST_SUB_BITS) keeps its HIST_SUB_BITS + 1 top
 * bits: shift = b - HIST_SUB_BITS drops the rest, and the bucket is
 * shift * HIST_SUB + (v >> shift), which continues the exact range without
 * a gap or an overlap.
 */
size_t hist_bucket_of(uint64_t v)
{
    if (v < 2 * HIST_SUB)
        return (size_t)v;
    unsigned shift = (unsigned)(63 - __builtin_clzll(v)) - HIST_SUB_BITS; /* top bit's index */
    return (size_t)shift * HIST_SUB + (size_t)(v >> shift);
}

void hist_bucket_bounds(size_t bucket, uint64_t *lo, uint64_t *hi)
{
    if (bucket < 2 * HIST_SUB) {
        *lo = *hi = bucket;
        return;
    }
    unsigned shift = (unsigned)(bucket / HIST_SUB) - 1;
    uint64_t top = bucket - (size_t)shift * HIST_SUB; /* HIST_SUB .. 2 * HIST_SUB - 1 */
    *lo = top << shift;
    *hi = *lo + ((1ULL << shift) - 1);
}

void hist_clear(histogram_t *h)
{
    memset(h, 0, sizeof *h);
}

void hist_merge(histogram_t *into, const histogram_t *from)
{
    if (from->total == 0)
        return;
    for (size_t b = 0; b < HIST_BUCKETS; b++)
        into->counts[b] += from->counts[b];
    if (into->total == 0 || from->min < into->min)
        into->min = from->min;
    if (from->max > into->max)
        into->max = from->max;
    into->total += from->total;
}

void hist_add(histogram_t *h, uint64_t ns)
{
    h->counts[hist_bucket_of(ns)]++; /* UINT64_MAX's is the last of HIST_BUCKETS */
    if (h->total == 0 || ns < h->min)
        h->min = ns;
    if (ns > h->max)
        h->max = ns;
    h->total++;
}

/*
 * Nearest rank: the smallest k with k / total >= per_100k / HIST_PCT_SCALE,
 * that is ceil(per_100k * total / HIST_PCT_SCALE), in integers. The product
 * could overflow for a total above 2^47, so total is split into whole
 * multiples of the scale and a remainder.
 */
static uint64_t nearest_rank(uint64_t total, uint32_t per_100k)
{
    if (per_100k > HIST_PCT_SCALE)
        per_100k = HIST_PCT_SCALE;
    uint64_t whole = total / HIST_PCT_SCALE, rest = total % HIST_PCT_SCALE;
    uint64_t rank = whole * per_100k + (rest * per_100k + HIST_PCT_SCALE - 1) / HIST_PCT_SCALE;
    return rank > 0 ? rank : 1;
}

double hist_percentile(const histogram_t *h, uint32_t per_100k)
{
    if (h->total == 0)
        return NAN;
    uint64_t rank = nearest_rank(h->total, per_100k);
    uint64_t seen = 0;
    for (size_t b = 0; b < HIST_BUCKETS; b++) {
        seen += h->counts[b];
        if (seen < rank)
            continue;
        uint64_t lo, hi;
        hist_bucket_bounds(b, &lo, &hi);
        double mid = ((double)lo + (double)hi) / 2.0;
        /* No sample lies outside [min, max], so neither does a percentile. */
        return fmin(fmax(mid, (double)h->min), (double)h->max);
    }
    return (double)h->max;
}

summary_t hist_summarize(const histogram_t *h)
{
    return (summary_t){.count = h->total, .p50 = hist_percentile(h, 50000),
                       .p90 = hist_percentile(h, 90000), .p99 = hist_percentile(h, 99000),
                       .p999 = hist_percentile(h, 99900), .max = h->total ? (double)h->max : NAN};
}
