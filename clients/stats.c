/*
 * stats.c - see stats.h.
 */
#define _GNU_SOURCE /* clock_gettime and getrusage under strict -std=c11 */

#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

void samples_add(samples_t *s, uint64_t ns)
{
    if (s->count == s->capacity) {
        size_t capacity = s->capacity ? s->capacity * 2 : 4096;
        uint64_t *grown = realloc(s->ns, capacity * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "loadgen: out of memory for %zu latency samples\n", capacity);
            exit(1);
        }
        s->ns = grown;
        s->capacity = capacity;
    }
    s->ns[s->count++] = ns;
}

void samples_clear(samples_t *s)
{
    s->count = 0;
}

void samples_free(samples_t *s)
{
    free(s->ns);
    *s = (samples_t){0};
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest sample with at least p percent at or below it. */
static double percentile(const samples_t *sorted, double p)
{
    size_t rank = (size_t)ceil(p / 100.0 * (double)sorted->count);
    return (double)sorted->ns[rank > 0 ? rank - 1 : 0];
}

summary_t samples_summarize(samples_t *s)
{
    summary_t sum = {.count = s->count, .p50 = NAN, .p99 = NAN, .max = NAN};
    if (s->count == 0)
        return sum;
    qsort(s->ns, s->count, sizeof *s->ns, compare_u64);
    sum.p50 = percentile(s, 50);
    sum.p99 = percentile(s, 99);
    sum.max = (double)s->ns[s->count - 1];
    return sum;
}
