/*
 * loadgen hold: N connections, one echo each, then all of them idle for
 * --duration seconds: what an idle connection costs the server.
 */
#define _GNU_SOURCE /* POSIX under strict -std=c11 */

#include <math.h>
#include <stdio.h>

#include "modes.h"

int run_hold(const options_t *o, target_t *t, uint64_t deadline)
{
    size_t n = (size_t)o->connections;
    pool_t p;
    if (pool_init(&p, t, n, (size_t)o->size) < 0) {
        fprintf(stderr, "loadgen: out of memory for %zu connections\n", n);
        return 1;
    }
    proc_kernel_t kernel_before, kernel_after;
    proc_kernel_memory(&kernel_before);
    uint64_t t0 = now_ns();
    pool_grow(&p, n, deadline);
    double setup_ms = ms_between(t0, now_ns());
    proc_kernel_memory(&kernel_after);
    proc_memory_t mem = server_memory(o);

    /* Everyone idle: a server that sleeps in the kernel should spend ~nothing. */
    cpu_window_t cpu;
    cpu_window_start(&cpu, o);
    if (!p.timed_out)
        pool_idle(&p, (uint64_t)(o->duration_s * NS_PER_S), deadline);
    cpu_window_end(&cpu, o);
    size_t still_open = pool_open_passive(&p);
    if (!p.timed_out)
        pool_tail(&p, TAIL_NS, deadline);

    /* Counted now, so connections the server dropped while idle are in the figures. */
    report_t r = {0};
    report_str(&r, "mode", "hold");
    report_counts(&r, &p, n);
    report_num(&r, "setup_ms_total", setup_ms, 1);
    report_num(&r, "setup_us_per_conn", p.n.served ? setup_ms * 1000.0 / (double)p.n.served : NAN,
               1);
    report_int(&r, "connect_window", (long long)p.connect_window);
    report_memory(&r, &mem);
    report_kernel(&r, &kernel_before, &kernel_after);
    report_int(&r, "size", o->size);
    report_int(&r, "bytes_verified", (long long)p.n.bytes_verified);
    report_num(&r, "idle_s", cpu.wall_ms / 1000.0, 3);
    report_num(&r, "client_cpu_ms", cpu.client_ms, 1);
    report_num(&r, "server_cpu_ms", cpu.server_ms, 3);
    report_num(&r, "server_cpu_pct", core_pct(cpu.server_ms, cpu.wall_ms), 2);
    /* A server asleep in the kernel is switched out once per wakeup: idle, next to none. */
    report_switches(&r, &cpu, 0);
    report_num(&r, "server_wakeups_per_s",
               cpu.switches >= 0 && cpu.wall_ms > 0 ? (double)cpu.switches * 1000.0 / cpu.wall_ms
                                                    : NAN,
               2);
    report_int(&r, "still_open", (long long)still_open);
    report_str(&r, "client_loop", loop_backend);
    report_str(&r, "error", run_error(&p, o, n));
    report_print(&r, o->output);

    int status = explain_failure(&p, o, n);
    pool_free(&p);
    return status;
}
