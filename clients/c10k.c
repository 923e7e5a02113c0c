/*
 * loadgen c10k: N connections open at once, every one of them ping-ponging
 * messages, closed-loop or on an open-loop schedule (--rate, a sweep of
 * rates), one measured window per rate.
 */
#define _GNU_SOURCE /* POSIX under strict -std=c11 */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loop.h"
#include "modes.h"

/* The open-loop figures: rate asked for and kept, and the client's own lateness. */
static void report_schedule(report_t *r, const options_t *o, const pool_t *p)
{
    bool open_loop = o->rate > 0;
    report_num(r, "rate_offered", open_loop ? o->rate : NAN, 1);
    report_num(r, "rate_achieved", per_second(p->n.sends, p->n.window_ns), 1);
    report_num(r, "schedule_lag_ms_max",
               open_loop && p->n.window_ns ? (double)p->n.lag_max_ns / NS_PER_MS : NAN, 3);
    report_count_or_null(r, "late_sends", open_loop && p->n.window_ns ? (long)p->n.late_sends : -1);
}

/* Progress and fairness: echoes inside the window, per connection. */
static void report_fairness(report_t *r, const crew_sum_t *s)
{
    bool known = s->n.window_ns > 0;
    report_count_or_null(r, "echoes_per_conn_min", known ? s->echoes_min : -1);
    report_count_or_null(r, "echoes_per_conn_p50", known ? s->echoes_median : -1);
    report_count_or_null(r, "echoes_per_conn_max", known ? s->echoes_max : -1);
    report_count_or_null(r, "in_flight_at_end", known ? (long)s->n.in_flight_at_end : -1);
}

/*
 * Both sides' CPU over the window, and which side (if either) was saturated.
 * The client is saturated when its busiest thread kept its core busy: with
 * --threads, client_cpu_pct sums the threads and may pass 100.
 */
static void report_cpu(report_t *r, const cpu_window_t *cpu, const crew_sum_t *s)
{
    const pool_counts_t *n = &s->n;
    double client_pct = n->window_ns ? core_pct(s->cpu_ms, cpu->wall_ms) : NAN;
    double busiest_pct = n->window_ns ? core_pct(s->cpu_ms_busiest, cpu->wall_ms) : NAN;
    double server_pct = n->window_ns ? core_pct(cpu->server_ms, cpu->wall_ms) : NAN;
    report_num(r, "client_cpu_ms", s->cpu_ms, 1);
    report_num(r, "client_cpu_pct", client_pct, 1);
    report_num(r, "client_thread_cpu_pct_max", busiest_pct, 1);
    if (isnan(busiest_pct))
        report_null(r, "client_bound");
    else
        report_bool(r, "client_bound", busiest_pct >= SATURATED_PCT);
    report_num(r, "server_cpu_ms", cpu->server_ms, 3);
    report_num(r, "server_cpu_pct", server_pct, 1);
    report_num(r, "server_cpu_us_per_msg",
               n->round_trips ? cpu->server_ms * 1000.0 / (double)n->round_trips : NAN, 3);
    report_str(r, "saturated", saturated_side(busiest_pct, server_pct));
}

/*
 * A sweep (--rate R1,R2,...) stops after the first step at which fewer than
 * this share of the messages due in the window were sent in it: the server
 * (or the client) fell behind, and a higher rate would only pile up more
 * backlog behind it. That step is still reported: it shows the knee.
 */
#define SWEEP_KEEP_UP 0.9

/* The crew read as one pool, for the reporters that take one. */
static pool_t as_pool(const crew_sum_t *s)
{
    pool_t p;
    memset(&p, 0, sizeof p);
    p.n = s->n;
    p.rtt_ns = s->rtt_ns;
    p.connect_ns = s->connect_ns;
    p.connect_window = s->connect_window;
    p.timed_out = s->timed_out;
    p.tailed = s->tailed;
    snprintf(p.first_error, sizeof p.first_error, "%s", s->first_error);
    return p;
}

/* What the opening phase measured, reported with every step of the run. */
typedef struct {
    double setup_ms;
    summary_t connect;
    proc_memory_t memory;
    proc_kernel_t kernel_before, kernel_after;
} c10k_setup_t;

static void print_c10k_row(const options_t *o, const c10k_setup_t *setup, const crew_sum_t *s,
                           const cpu_window_t *cpu, double rate, int step_index, int retries)
{
    pool_t p = as_pool(s);
    size_t n = (size_t)o->connections;
    double window_s = (double)s->n.window_ns / (double)NS_PER_S;
    options_t step = *o;
    step.rate = rate;
    report_t r = {0};
    report_str(&r, "mode", "c10k");
    report_counts(&r, &p, n);
    report_num(&r, "connect_ms_total", setup->setup_ms, 1);
    report_num(&r, "connect_ms_p50", setup->connect.p50 / NS_PER_MS, 3);
    report_num(&r, "connect_ms_p99", setup->connect.p99 / NS_PER_MS, 3);
    report_num(&r, "connect_ms_max", setup->connect.max / NS_PER_MS, 3);
    report_int(&r, "connect_window", (long long)s->connect_window);
    report_memory(&r, &setup->memory);
    report_kernel(&r, &setup->kernel_before, &setup->kernel_after);
    report_num(&r, "duration_s", o->duration_s, 3);
    report_int(&r, "size", o->size);
    report_int(&r, "threads", o->threads);
    report_int(&r, "bytes_verified", (long long)s->n.bytes_verified);
    report_int(&r, "msgs", (long long)s->n.round_trips);
    report_num(&r, "window_s", s->n.window_ns ? window_s : NAN, 3);
    report_num(&r, "msgs_per_s", per_second(s->n.round_trips, s->n.window_ns), 1);
    report_schedule(&r, &step, &p);
    report_rtt(&r, &p);
    report_parts(&r, s);
    report_fairness(&r, s);
    report_cpu(&r, cpu, s);
    report_switches(&r, cpu, s->n.round_trips);
    report_host(&r, cpu, retries, o);
    report_str(&r, "client_loop", loop_backend);
    report_str(&r, "error", run_error(&p, o, n));
    if (o->rate_count > 1) /* a sweep: rows of a series, one header (CSV, table) */
        report_print_row(&r, o->output, step_index == 0);
    else
        report_print(&r, o->output);
}

/* Whether the step just run kept up with its schedule (see SWEEP_KEEP_UP). */
static bool kept_up(const crew_sum_t *s, double rate)
{
    double due = rate * (double)s->n.window_ns / (double)NS_PER_S;
    return rate <= 0 || (double)s->n.sends >= SWEEP_KEEP_UP * due;
}

/* Say so when the client made its own sends late (over LATE_NS): the server did not. */
static void note_late(const crew_sum_t *s, double rate)
{
    if (rate > 0 && s->n.late_sends > 0)
        fprintf(stderr, "loadgen: note: the client could not keep the schedule: %llu send(s) "
                        "more than %g ms late, the worst %.1f ms; sent %.0f of %.0f msgs/s\n",
                (unsigned long long)s->n.late_sends, (double)LATE_NS / NS_PER_MS,
                (double)s->n.lag_max_ns / NS_PER_MS, per_second(s->n.sends, s->n.window_ns), rate);
}

/*
 * Open every connection, then one window per rate (one closed-loop window
 * without --rate), each followed by its drain; the tail after the last.
 * Both CPU clocks are read when each window opens and again the moment it
 * closes, before the echoes still in flight are drained, so CPU per message
 * and CPU % cover exactly the interval that `msgs` counts. Counters are the
 * run's so far; window figures are the step's.
 */
int run_c10k(const options_t *o, target_t *t, uint64_t deadline)
{
    size_t n = (size_t)o->connections;
    speed_t speed; /* each CPU's best probe time so far: speed.c */
    speed_start(&speed, o);
    crew_t *crew = crew_start(o->threads, t, n, (size_t)o->size, o->cpus,
                              o->cpu_count > 1 ? o->cpu_count : 0);
    if (!crew) {
        fprintf(stderr, "loadgen: out of memory or threads for %zu connections\n", n);
        speed_end(&speed, o);
        return 1;
    }

    /* All connections open and each echoed once... */
    c10k_setup_t setup;
    proc_kernel_memory(&setup.kernel_before);
    uint64_t t0 = now_ns();
    crew_run(crew, TASK_GROW, 0, 0, deadline);
    setup.setup_ms = ms_between(t0, now_ns());
    proc_kernel_memory(&setup.kernel_after);
    setup.memory = server_memory(o);
    crew_sum_t sum;
    crew_sum(crew, &sum);
    setup.connect = hist_summarize(sum.connect_ns);

    /* ...then every one of them exchanges messages at once, at each rate in turn. */
    int steps = o->rate_count > 0 ? o->rate_count : 1;
    for (int step = 0; step < steps; step++) {
        double rate = o->rate_count > 0 ? o->rates[step] : 0;
        cpu_window_t cpu;
        bool measured;
        int retries = 0;
        for (;;) { /* a contended window is the host's, not the server's: run it again */
            double before[SPEED_MAX_CPUS], after[SPEED_MAX_CPUS];
            speed_edge(&speed, before);
            cpu_window_start(&cpu, o);
            crew_run(crew, TASK_WINDOW, (uint64_t)(o->duration_s * NS_PER_S), rate, deadline);
            cpu_window_end(&cpu, o);
            crew_sum(crew, &sum);
            measured = sum.n.window_ns > 0;
            if (measured)
                crew_run(crew, TASK_DRAIN, 0, 0, deadline);
            speed_edge(&speed, after);
            speed_judge(&speed, before, after, &cpu);
            crew_sum(crew, &sum);
            pool_t now = as_pool(&sum);
            if (!measured || sum.timed_out || run_error(&now, o, n) != NULL ||
                !contended(&cpu, o) || retries == o->retry_contended)
                break;
            retries++;
            fprintf(stderr, "loadgen: note: the window at %.0f msgs/s was contended (%.1f%% of "
                            "its CPUs' time neither side's, %.1f%% stolen, the CPUs %.0f%% "
                            "slower than their best): run again (%d of %d)\n",
                    rate, cpu.foreign_pct, cpu.steal_pct, cpu.slowdown_pct, retries,
                    o->retry_contended);
        }
        pool_t so_far = as_pool(&sum);
        bool last = step + 1 == steps || !measured || sum.timed_out || !kept_up(&sum, rate) ||
                    run_error(&so_far, o, n) != NULL;
        if (last && measured && !sum.timed_out)
            crew_run(crew, TASK_TAIL, TAIL_NS, 0, deadline);
        crew_sum(crew, &sum); /* counted now: whatever broke in the tail is in the figures */
        print_c10k_row(o, &setup, &sum, &cpu, rate, step, retries);
        note_late(&sum, rate);
        if (last && step + 1 < steps && measured && !kept_up(&sum, rate))
            fprintf(stderr, "loadgen: note: the sweep stops at %.0f msgs/s: only %.0f sent "
                            "(the rest of the rates are not tried)\n",
                    rate, per_second(sum.n.sends, sum.n.window_ns));
        if (last)
            break;
    }

    pool_t whole = as_pool(&sum);
    int status = explain_failure(&whole, o, n);
    crew_free(crew);
    speed_end(&speed, o);
    return status;
}
