/*
 * loadgen scan: one active connection's round trip beside each number of
 * idle ones: it grows with the idle count under select and poll (O(n) per
 * wakeup) and stays flat under kqueue and epoll (O(ready)).
 */
#define _GNU_SOURCE /* POSIX under strict -std=c11 */

#include <math.h>
#include <stdio.h>

#include "modes.h"

/* Connection slots a scan needs: one active plus every increase of the idle set. */
static size_t scan_capacity(const options_t *o)
{
    size_t slots = 1;
    long open = 0;
    for (int i = 0; i < o->idle_count; i++) {
        if (o->idle[i] > open)
            slots += (size_t)(o->idle[i] - open);
        open = o->idle[i];
    }
    return slots;
}

/* scan's reason: the run's, or the active connection's failure. */
static const char *scan_error(const pool_t *p, const options_t *o, size_t requested)
{
    const char *why = run_error(p, o, requested);
    if (!why && p->conns[0].state != CONN_IDLE)
        why = "active connection failed";
    return why;
}

/* One row per idle count; the counters are the whole run's so far. */
static void print_scan_row(const options_t *o, const pool_t *p, long idle, size_t requested,
                           const cpu_window_t *cpu, bool first)
{
    report_t r = {0};
    report_str(&r, "mode", "scan");
    report_int(&r, "idle", idle);
    report_int(&r, "idle_open", (long long)pool_open_passive(p));
    report_rtt(&r, p);
    report_int(&r, "round_trips", (long long)p->n.round_trips);
    report_num(&r, "window_s", p->n.window_ns ? (double)p->n.window_ns / NS_PER_S : NAN, 3);
    report_num(&r, "msgs_per_s", per_second(p->n.round_trips, p->n.window_ns), 1);
    report_num(&r, "client_cpu_ms", cpu->client_ms, 1);
    report_num(&r, "server_cpu_ms", cpu->server_ms, 3);
    report_num(&r, "server_cpu_ms_per_1k",
               p->n.round_trips ? cpu->server_ms * 1000.0 / (double)p->n.round_trips : NAN, 3);
    report_counts(&r, p, requested);
    report_int(&r, "connect_window", (long long)p->connect_window);
    report_str(&r, "client_loop", loop_backend);
    report_str(&r, "error", scan_error(p, o, requested));
    report_print_row(&r, o->output, first);
}

/*
 * The idle set grows (or shrinks) from one count to the next rather than
 * being reopened each time: 0,100,1000,10000 costs 10 000 connects, not
 * 11 100. Idle connections each echo once first, so the server has really
 * accepted them; the active connection is opened first and kept throughout.
 * A row is printed for every idle count reached, also the one a failure or
 * --timeout cut short.
 */
int run_scan(const options_t *o, target_t *t, uint64_t deadline)
{
    size_t capacity = scan_capacity(o);
    pool_t p;
    if (pool_init(&p, t, capacity, (size_t)o->size) < 0) {
        fprintf(stderr, "loadgen: out of memory for %zu connections\n", capacity);
        return 1;
    }
    size_t requested = 1;
    pool_grow(&p, 1, deadline);
    p.conns[0].active = true;

    long open = 0;
    for (int i = 0; i < o->idle_count; i++) {
        if (o->idle[i] > open) { /* bring the idle set from `open` connections to idle[i] */
            pool_grow(&p, (size_t)(o->idle[i] - open), deadline);
            requested += (size_t)(o->idle[i] - open);
        } else if (o->idle[i] < open) {
            pool_close_newest(&p, (size_t)(open - o->idle[i]));
        }
        open = o->idle[i];

        pool_forget_window(&p); /* before the CPU window: clearing is not the step's work */
        cpu_window_t cpu;
        cpu_window_start(&cpu, o);
        bool measured = p.conns[0].state == CONN_IDLE && !p.timed_out;
        if (measured)
            pool_window(&p, (uint64_t)(o->duration_s * NS_PER_S), 0, deadline);
        cpu_window_end(&cpu, o); /* before the drain: the same window as round_trips */
        if (measured)
            pool_drain(&p, deadline);
        print_scan_row(o, &p, o->idle[i], requested, &cpu, i == 0);
        if (p.conns[0].state != CONN_IDLE || p.timed_out)
            break;
    }
    int status = explain_failure(&p, o, requested);
    if (status == 0 && p.conns[0].state != CONN_IDLE) {
        fprintf(stderr, "loadgen: the active connection failed: %s\n", p.first_error);
        status = 1;
    }
    pool_free(&p);
    return status;
}
