/*
 * What the modes share (modes.h): the results every mode but stall reports,
 * and the measured window: both sides' CPU time, the host around it, and
 * whether someone else had its CPUs.
 */
#define _GNU_SOURCE /* POSIX under strict -std=c11 */

#include <math.h>
#include <stdio.h>

#include "modes.h"

double ms_between(uint64_t from_ns, uint64_t to_ns)
{
    return ((double)to_ns - (double)from_ns) / (double)NS_PER_MS;
}

/* A loop_wait timeout that ends at `until`, rounded up so it never spins. */
long us_until(uint64_t until)
{
    uint64_t now = now_ns();
    return until > now ? (long)((until - now + NS_PER_US - 1) / NS_PER_US) : 0;
}

/* ---- shared by c10k, scan and hold ------------------------------------- */

/*
 * The short reason in a result's `error` key (NULL: the run measured what
 * it was asked to), in order of precedence. stderr gets the long version.
 */
const char *run_error(const pool_t *p, const options_t *o, size_t requested)
{
    const pool_counts_t *n = &p->n;
    size_t failed = requested - n->served;
    if (p->timed_out || n->timed_out > 0)
        return "timeout";
    if (n->corrupt > 0)
        return "corrupt";
    if (n->duplicated > 0)
        return "duplicated";
    if (n->lost > 0)
        return "lost";
    if (n->client_errors > 0)
        return "client";
    if (failed > 0 && !(o->allow_refused && failed == n->refused))
        return "not served";
    if (n->unclosed > 0)
        return "not closed";
    return NULL;
}

/*
 * The line on stderr that says why a run did not measure what it was asked
 * to: the worst failure by run_error's order, after a timeout's line when
 * the run also timed out. Returns the exit status.
 */
int explain_failure(const pool_t *p, const options_t *o, size_t requested)
{
    const pool_counts_t *n = &p->n;
    size_t failed = requested - n->served;
    if (!run_error(p, o, requested))
        return 0;
    if (p->timed_out || n->timed_out > 0)
        fprintf(stderr, "loadgen: timed out after --timeout %g s (%zu connection(s) were still "
                        "owed an echo)\n", o->timeout_s, n->timed_out);
    if (n->corrupt > 0)
        fprintf(stderr, "loadgen: %zu connection(s) got back bytes that differ from what they "
                        "sent; first problem: %s\n", n->corrupt, p->first_error);
    else if (n->duplicated > 0)
        fprintf(stderr, "loadgen: %llu byte(s) arrived that no message asked for (a duplicated "
                        "or extra echo); first problem: %s\n",
                (unsigned long long)n->duplicated, p->first_error);
    else if (n->lost > 0)
        fprintf(stderr, "loadgen: %zu connection(s) broke after their first echo; first "
                        "problem: %s\n", n->lost, p->first_error);
    else if (n->client_errors > 0)
        fprintf(stderr, "loadgen: %zu connection(s) failed on loadgen's own side (its file "
                        "descriptors, local ports, memory or event loop), not the server's; first "
                        "problem: %s\n", n->client_errors, p->first_error);
    else if (failed > 0 && !(o->allow_refused && failed == n->refused))
        fprintf(stderr, "loadgen: %zu of %zu connections were not served (%zu failed to connect, "
                        "%zu refused, %zu unanswered, %zu never tried); first problem: %s\n",
                failed, requested, n->connect_failed, n->refused, n->unanswered, n->untried,
                p->first_error);
    else if (n->unclosed > 0)
        fprintf(stderr, "loadgen: %zu connection(s) were still open when loadgen stopped waiting "
                        "for the server to close them after their half-close (an echo server "
                        "closes once it has sent what it owes); first problem: %s\n",
                n->unclosed, p->first_error);
    return 1;
}

/* How many connections were asked for, and what became of them over the whole run. */
void report_counts(report_t *r, const pool_t *p, size_t requested)
{
    report_int(r, "requested", (long long)requested);
    report_int(r, "established", (long long)p->n.established);
    report_int(r, "served", (long long)p->n.served);
    report_int(r, "failed", (long long)(requested - p->n.served));
    report_int(r, "refused", (long long)p->n.refused);
    report_int(r, "connect_failed", (long long)p->n.connect_failed);
    report_int(r, "unanswered", (long long)p->n.unanswered);
    report_int(r, "lost", (long long)p->n.lost);
    report_int(r, "corrupt", (long long)p->n.corrupt);
    report_int(r, "timed_out", (long long)p->n.timed_out);
    report_int(r, "duplicated", (long long)p->n.duplicated);
    report_int(r, "client_errors", (long long)p->n.client_errors);
    if (p->tailed) /* only pool_tail half-closes: scan never does */
        report_int(r, "unclosed", (long long)p->n.unclosed);
    else
        report_null(r, "unclosed");
}

/* -1 (unknown) prints as null. */
void report_count_or_null(report_t *r, const char *key, long value)
{
    report_num(r, key, value < 0 ? NAN : (double)value, 0);
}

/* The server's memory, every key null without --server-pid or when unreadable. */
void report_memory(report_t *r, const proc_memory_t *m)
{
    report_count_or_null(r, "server_rss_kb", m->rss_kb);
    report_count_or_null(r, "server_pss_kb", m->pss_kb);
    report_count_or_null(r, "server_footprint_kb", m->footprint_kb);
    report_count_or_null(r, "server_procs", m->procs);
    report_count_or_null(r, "server_threads", m->threads);
}

proc_memory_t server_memory(const options_t *o)
{
    proc_memory_t m = {-1, -1, -1, -1, -1};
    if (o->server_pid)
        proc_tree_memory(o->server_pid, &m);
    return m;
}

/* Round-trip figures of the messages due in the last window (the histogram's). */
void report_rtt(report_t *r, const pool_t *p)
{
    summary_t s = hist_summarize(p->rtt_ns);
    report_num(r, "rtt_p50_us", s.p50 / NS_PER_US, 1);
    report_num(r, "rtt_p90_us", s.p90 / NS_PER_US, 1);
    report_num(r, "rtt_p99_us", s.p99 / NS_PER_US, 1);
    report_num(r, "rtt_p999_us", s.p999 / NS_PER_US, 1);
    report_num(r, "rtt_max_us", s.max / NS_PER_US, 1);
}

/*
 * The open loop's round trips in their two parts (pool.h): the client's send
 * lag and the server's service time. A step is judged on the service time;
 * the lag says how well the client kept its schedule.
 */
void report_parts(report_t *r, const crew_sum_t *s)
{
    summary_t lag = hist_summarize(s->lag_ns), service = hist_summarize(s->service_ns);
    report_num(r, "lag_p90_us", lag.p90 / NS_PER_US, 1);
    report_num(r, "lag_p99_us", lag.p99 / NS_PER_US, 1);
    report_num(r, "service_p50_us", service.p50 / NS_PER_US, 1);
    report_num(r, "service_p90_us", service.p90 / NS_PER_US, 1);
    report_num(r, "service_p99_us", service.p99 / NS_PER_US, 1);
}

/* Round trips per second of the window actually measured. */
double per_second(uint64_t count, uint64_t window_ns)
{
    return window_ns ? (double)count * (double)NS_PER_S / (double)window_ns : NAN;
}

/* ---- the window -------------------------------------------------------- */


/*
 * A window is contended when more than CONTENDED_PCT of the measured CPUs'
 * time went to neither side (someone else's work, the kernel's own, or a
 * hypervisor's steal), or when the client spent more than CONTENDED_PCT of
 * the window runnable but waiting for its CPU (its run delay, where the
 * kernel keeps it: loadgen is alone on its CPUs, so a wait there is
 * someone else's doing). Measured on a quiet 2-core VM, 1 s windows: 1 to
 * 6 % neither side's (rising with the rate: the kernel's loopback work
 * that it charges to no task), client run delays under 2 %; with a busy
 * loop on either CPU, tens of percent. One exception, the server's own
 * doing: its run delay is not judged (a thread or a process per client
 * wait for each other on its one CPU). A kernel thread busy because of the
 * server is still someone else: DAMON's physical-address monitoring
 * (kdamond, a VM's proactive reclaim) visits every mapping of each page it
 * samples, and a page 02-fork's 10 000 children share has 10 000: 18 to
 * 45 % of both CPUs' time on a quiet host, 4 % with DAMON off.
 * scripts/reproduce.sh pauses DAMON for its run.
 */

void cpu_window_start(cpu_window_t *w, const options_t *o)
{
    *w = (cpu_window_t){0};
    w->probe_us = w->probe_best_us = w->slowdown_pct = NAN; /* speed_judge's, after the drain */
    w->server_known = o->server_pid && proc_tree_cpu(o->server_pid, &w->server_start) == 0;
    w->delay_server_start = o->server_pid ? proc_run_delay_ns(o->server_pid) : -1;
    w->delay_client_start = proc_run_delay_ns(0);
    w->host_known = proc_host_cpu(o->server_pid, &w->host_start) == 0;
    w->cgroup_start = o->server_cgroup ? proc_cgroup_cpu_ns(o->server_cgroup) : -1;
    w->client_start = self_cpu_ms();
    w->wall_start = now_ns();
}

static double delay_ms(long long start, long long end)
{
    return start >= 0 && end >= start ? (double)(end - start) / NS_PER_MS : NAN;
}

void cpu_window_end(cpu_window_t *w, const options_t *o)
{
    w->wall_ms = ms_between(w->wall_start, now_ns());
    w->client_ms = self_cpu_ms() - w->client_start;
    long long cgroup_end = w->cgroup_start >= 0 ? proc_cgroup_cpu_ns(o->server_cgroup) : -1;
    proc_host_t host_end;
    bool host_known = w->host_known && proc_host_cpu(o->server_pid, &host_end) == 0;
    w->server_delay_ms = delay_ms(w->delay_server_start,
                                  o->server_pid ? proc_run_delay_ns(o->server_pid) : -1);
    w->client_delay_ms = delay_ms(w->delay_client_start, proc_run_delay_ns(0));
    proc_cpu_t end = {0};
    w->server_ms = NAN;
    w->switches = w->involuntary = -1;
    if (w->server_known && proc_tree_cpu(o->server_pid, &end) == 0) {
        w->server_ms = proc_cpu_ms_between(&w->server_start, &end);
        proc_switches_between(&w->server_start, &end, &w->switches, &w->involuntary);
    }
    if (cgroup_end >= w->cgroup_start && w->cgroup_start >= 0)
        w->server_ms = (double)(cgroup_end - w->cgroup_start) / NS_PER_MS;
    proc_cpu_free(&end);
    proc_cpu_free(&w->server_start);

    w->foreign_pct = w->steal_pct = NAN;
    if (host_known && host_end.cpus == w->host_start.cpus && w->wall_ms > 0) {
        double capacity_ms = w->wall_ms * host_end.cpus;
        double idle_ms = (double)(host_end.idle_ns - w->host_start.idle_ns) / NS_PER_MS;
        double steal_ms = (double)(host_end.steal_ns - w->host_start.steal_ns) / NS_PER_MS;
        double others_ms = capacity_ms - idle_ms - steal_ms - w->client_ms;
        w->host_cpus = host_end.cpus;
        if (host_end.steal_known)
            w->steal_pct = 100.0 * steal_ms / capacity_ms;
        if (!isnan(w->server_ms)) /* 10 ms ticks can make it a little negative */
            w->foreign_pct = 100.0 * (others_ms - w->server_ms) / capacity_ms;
    }
}

/* Whether someone else had the measured CPUs, or they ran slow; false when it cannot be told. */
bool contended(const cpu_window_t *w, const options_t *o)
{
    double foreign = isnan(w->foreign_pct) ? 0 : w->foreign_pct;
    double steal = isnan(w->steal_pct) ? 0 : w->steal_pct;
    double waited = isnan(w->client_delay_ms) ? 0 : w->client_delay_ms;
    double slowed = isnan(w->slowdown_pct) ? 0 : w->slowdown_pct;
    return foreign + steal > o->contended_pct || 100.0 * waited / w->wall_ms > o->contended_pct ||
           slowed > o->slowed_pct;
}

/* The host around the window (see cpu_window_t); every key null where unknown. */
void report_host(report_t *r, const cpu_window_t *w, int retries, const options_t *o)
{
    bool known = w->host_cpus > 0; /* the host was measured, steal or not */
    report_count_or_null(r, "host_cpus", known ? w->host_cpus : -1);
    report_num(r, "foreign_cpu_pct", w->foreign_pct, 2);
    report_num(r, "steal_pct", w->steal_pct, 2);
    report_num(r, "server_run_delay_ms", w->server_delay_ms, 3);
    report_num(r, "client_run_delay_ms", w->client_delay_ms, 3);
    report_num(r, "probe_us", w->probe_us, 1);
    report_num(r, "probe_best_us", w->probe_best_us, 1);
    report_num(r, "slowdown_pct", w->slowdown_pct, 1);
    if (known)
        report_bool(r, "contended", contended(w, o));
    else
        report_null(r, "contended");
    report_num(r, "contended_bound_pct", o->contended_pct, 1);
    report_num(r, "slowed_bound_pct", o->slowed_pct, 1);
    report_int(r, "contended_retries", retries);
}


/* "client", "server", "none"; NULL when it cannot be told. */
const char *saturated_side(double client_pct, double server_pct)
{
    if (!isnan(client_pct) && client_pct >= SATURATED_PCT)
        return "client";
    if (isnan(server_pct))
        return NULL; /* the client was not; whether the server was is unknown */
    if (server_pct >= SATURATED_PCT)
        return "server";
    return isnan(client_pct) ? NULL : "none";
}

/* Percent of one core that `cpu_ms` of CPU time is over `wall_ms`. */
double core_pct(double cpu_ms, double wall_ms)
{
    return wall_ms > 0 ? 100.0 * cpu_ms / wall_ms : NAN;
}

/* The server's context switches over the window, and per message. */
void report_switches(report_t *r, const cpu_window_t *cpu, uint64_t msgs)
{
    report_count_or_null(r, "server_ctx_switches", (long)cpu->switches);
    report_count_or_null(r, "server_ctx_switches_involuntary", (long)cpu->involuntary);
    report_num(r, "server_ctx_switches_per_msg",
               cpu->switches >= 0 && msgs ? (double)cpu->switches / (double)msgs : NAN, 3);
}

/* What the kernel spent on the connections: growth of its own memory, machine-wide. */
void report_kernel(report_t *r, const proc_kernel_t *before, const proc_kernel_t *after)
{
    /* A difference: the kernel may also have freed memory meanwhile, so it can be negative. */
    bool known = before->slab_kb >= 0 && after->slab_kb >= 0;
    report_num(r, "kernel_stack_kb", known ? (double)(after->stack_kb - before->stack_kb) : NAN, 0);
    report_num(r, "kernel_page_tables_kb",
               known ? (double)(after->page_tables_kb - before->page_tables_kb) : NAN, 0);
    report_num(r, "kernel_slab_kb", known ? (double)(after->slab_kb - before->slab_kb) : NAN, 0);
}
