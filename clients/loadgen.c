/*
 * loadgen - the load client that reproduces the I/O ladder's measurements.
 *
 *   loadgen stall [-p PORT] [--hold SECONDS]
 *       Client A connects and sends nothing for --hold seconds; client B
 *       connects right after it and sends one line. How long does B wait
 *       for its echo, and how close to A's leaving does it come? A blocking
 *       server answers B only once A has gone.
 *   loadgen c10k  [-p PORT] -n CONNECTIONS [--duration S] [--size BYTES] [--rate R]
 *       Open N connections, keep them all open, and let every one of them
 *       ping-pong --size-byte messages for --duration seconds: closed-loop
 *       ("how many can it hold"), or with --rate open-loop, R messages per
 *       second on a fixed schedule, each round trip timed from when it was
 *       due (pool.h).
 *   loadgen scan  [-p PORT] --idle 0,100,1000,10000 [--duration S]
 *       One active connection's round trip beside each number of idle
 *       ones: it grows with the idle count under select and poll (O(n) per
 *       wakeup) and stays flat under kqueue and epoll (O(ready)).
 *   loadgen hold  [-p PORT] -n CONNECTIONS [--duration S]
 *       Open N connections, one echo each, then all sit idle: what does an
 *       idle connection cost the server in memory and CPU?
 *
 * Every echoed byte is checked against what was sent. The exit status is 0
 * when the run measured what it was asked to, 1 when it could not (refused,
 * reset, timed out, bytes differed; one line on stderr says why), 2 for a
 * bad command line.
 *
 * The client is one thread with non-blocking sockets and its own event loop
 * (loop.h), so it reads while it writes and cannot deadlock against a
 * correct server. It reports its own CPU time, so a reader can
 * see that it was not the bottleneck.
 */
#define _GNU_SOURCE /* sched_setaffinity, and POSIX under strict -std=c11 */

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "crew.h"
#include "loop.h"
#include "options.h"
#include "pool.h"
#include "proc.h"
#include "report.h"
#include "stats.h"

/* Descriptors beyond the connections: stdio, the event loop, /proc files. */
#define FD_MARGIN 32

/* The line client B sends in stall mode: text, so `-v` server logs stay readable. */
static const char STALL_PROBE[] = "loadgen stall probe\n";

/* Longest single wait in stall mode; see run_stall. */
#define STALL_STEP_NS (50 * NS_PER_MS)

/*
 * After the last echo, how long a run keeps reading (its side half-closed)
 * for bytes nobody sent, before it stops waiting for the server's close.
 */
#define TAIL_NS (500 * NS_PER_MS)

/* ---- set-up ------------------------------------------------------------ */

/*
 * Every connection is a descriptor and the soft limit is often 1024. Raise
 * it to the hard limit (no privilege needed), and if even that is too small
 * say what is needed now rather than fail half way through.
 */
static bool raise_fd_limit(long connections)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)connections + FD_MARGIN;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return true; /* nothing to go on; let socket() report EMFILE */
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit raised = {rl.rlim_max, rl.rlim_max};
        /* macOS refuses RLIM_INFINITY as a soft limit; then ask for what is needed. */
        if (setrlimit(RLIMIT_NOFILE, &raised) < 0 && need < rl.rlim_max)
            raised.rlim_cur = need;
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
            rl.rlim_cur = raised.rlim_cur;
    }
    if (rl.rlim_cur >= need)
        return true;
    fprintf(stderr,
            "loadgen: %ld connections need about %llu open files, but the limit is %llu; "
            "raise it first (`ulimit -n %llu`, or as root `prlimit --nofile=%llu --pid $$`)\n",
            connections, (unsigned long long)need, (unsigned long long)rl.rlim_cur,
            (unsigned long long)need, (unsigned long long)need);
    return false;
}

/* The most connections a mode holds open at once. */
static long connections_needed(const options_t *o)
{
    long most = 2; /* stall */
    if (o->mode & (MODE_C10K | MODE_HOLD))
        most = o->connections;
    for (int i = 0; o->mode == MODE_SCAN && i < o->idle_count; i++)
        if (o->idle[i] + 1 > most)
            most = o->idle[i] + 1;
    return most;
}

/*
 * --cpu: with the server pinned to the same CPU (taskset -c 0 server) a round
 * trip is two context switches on one warm core, the steadiest figure a
 * shared machine gives.
 */
static void pin_to_cpu(int cpu)
{
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) == 0)
        return;
    usage_error("--cpu %d: cannot run there (%s)", cpu, strerror(errno));
#else
    (void)cpu;
    usage_error("--cpu is supported on Linux only");
#endif
}

static double ms_between(uint64_t from_ns, uint64_t to_ns)
{
    return ((double)to_ns - (double)from_ns) / (double)NS_PER_MS;
}

/* A loop_wait timeout that ends at `until`, rounded up so it never spins. */
static long us_until(uint64_t until)
{
    uint64_t now = now_ns();
    return until > now ? (long)((until - now + NS_PER_US - 1) / NS_PER_US) : 0;
}

/* ---- stall ------------------------------------------------------------- */

/* What became of clients A and B, counted as c10k counts its connections. */
typedef struct {
    int connect_failed; /* A or B could not connect */
    int refused;        /* B was closed or reset before its whole echo came */
    int unanswered;     /* B's echo had not come when --timeout passed */
    int corrupt;        /* B's echo differed from its line */
    long duplicated;    /* bytes B received beyond its one line */
    int client_errors;  /* loadgen's own failures (no fd, no port, no loop registration) */
    int unclosed;       /* B half-closed after its echo, and the server never closed it */
    bool b_ended;       /* B's stream ended (server closed or reset it) after its echo */
    const char *error;  /* the short reason for the result's `error`, or NULL */
} stall_counts_t;

/* The socket-call failures that are loadgen's, not the server's (as pool.c counts them). */
static bool client_fault(int err)
{
    return err == EMFILE || err == ENFILE || err == EADDRNOTAVAIL || err == EADDRINUSE ||
           err == ENOBUFS || err == ENOMEM;
}

/* Connect one socket and wait for the handshake to finish. The fd, or -1. */
static int connect_and_wait(target_t *t, loop_t *loop, uint64_t deadline, const char *who,
                            stall_counts_t *n)
{
    int err = 0;
    socklen_t len = sizeof err;
    loop_event_t ev;
    bool mine = false;
    int fd = target_connect(t);
    if (fd < 0 || loop_add(loop, fd, LOOP_WRITE, NULL) < 0) {
        err = errno;
        mine = fd >= 0 || client_fault(err); /* a failed registration is always ours */
    } else if (loop_wait(loop, &ev, 1, us_until(deadline)) <= 0)
        err = ETIMEDOUT;
    else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (fd >= 0)
        loop_remove(loop, fd);
    if (err == 0)
        return fd;
    fprintf(stderr, "loadgen: %s could not connect to %s: %s%s\n", who, t->name, strerror(err),
            mine ? " (loadgen's own failure)" : "");
    if (mine) {
        n->client_errors++;
        n->error = "client";
    } else {
        n->connect_failed++;
        n->error = err == ETIMEDOUT ? "timeout" : "connect failed";
    }
    if (fd >= 0)
        close(fd);
    return -1;
}

/*
 * Read B's echo as it arrives and compare it with the probe. Returns 1 when
 * the whole line is back, 0 while more is due, -1 on failure (counted).
 */
static int read_probe_echo(int fd, size_t *got, stall_counts_t *count)
{
    char buf[sizeof STALL_PROBE];
    size_t want = sizeof STALL_PROBE - 1 - *got;
    ssize_t n = read(fd, buf, want);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    if (n <= 0) {
        fprintf(stderr, "loadgen: client B: %s before its echo was complete\n",
                n == 0 ? "closed by the server" : strerror(errno));
        count->refused++;
        count->error = "refused";
        return -1;
    }
    if (memcmp(buf, STALL_PROBE + *got, (size_t)n) != 0) {
        fprintf(stderr, "loadgen: client B: the echo differs from the line sent\n");
        count->corrupt++;
        count->error = "corrupt";
        return -1;
    }
    *got += (size_t)n;
    return *got == sizeof STALL_PROBE - 1;
}

static bool read_extra(int b, stall_counts_t *n);

/* The moments a stall run is made of, from now_ns(); 0 when it did not happen. */
typedef struct {
    uint64_t a_connected; /* A's handshake done: its hold starts */
    uint64_t b_connect;   /* B's connect() called */
    uint64_t b_sent;      /* B's line written */
    uint64_t b_echoed;    /* B's whole echo back and checked */
    uint64_t a_closed;    /* A closed */
} stall_times_t;

/* Milliseconds from one moment to another, NAN if either did not happen. */
static double ms_if_both(uint64_t from_ns, uint64_t to_ns)
{
    return from_ns && to_ns ? ms_between(from_ns, to_ns) : NAN;
}

static void print_stall(const options_t *o, const stall_times_t *t, const stall_counts_t *n)
{
    report_t r = {0};
    report_str(&r, "mode", "stall");
    report_num(&r, "hold_s", o->hold_s, 3);
    report_num(&r, "wait_ms", ms_if_both(t->b_sent, t->b_echoed), 3);
    report_num(&r, "after_close_ms", ms_if_both(t->a_closed, t->b_echoed), 3);
    if (t->b_echoed)
        report_bool(&r, "stalled", t->a_closed && t->b_echoed >= t->a_closed);
    else
        report_null(&r, "stalled");
    report_num(&r, "held_ms", ms_if_both(t->a_connected, t->a_closed), 3);
    report_num(&r, "connect_ms", ms_if_both(t->b_connect, t->b_sent), 3);
    report_int(&r, "connect_failed", n->connect_failed);
    report_int(&r, "refused", n->refused);
    report_int(&r, "unanswered", n->unanswered);
    report_int(&r, "corrupt", n->corrupt);
    report_int(&r, "duplicated", n->duplicated);
    report_int(&r, "client_errors", n->client_errors);
    report_int(&r, "unclosed", n->unclosed);
    report_str(&r, "client_loop", loop_backend);
    report_str(&r, "error", n->error);
    report_print(&r, o->output);
}

/*
 * Wait for the two things that end a stall run, in either order: B's echo,
 * and A's time to leave. The kernel lets a poll-family timeout run late by
 * 0.1 % of its length (timer slack: 1.5 ms on a 1.5 s wait), so wait in
 * short steps to close A within a millisecond of --hold. Returns 0, or -1
 * with the failure counted.
 */
static int await_echo_and_close(const options_t *o, loop_t *loop, int *a, int b,
                                uint64_t a_close_at, uint64_t deadline, stall_times_t *at,
                                stall_counts_t *n)
{
    size_t got = 0;
    while (at->b_echoed == 0 || at->a_closed == 0) {
        if (at->a_closed == 0 && now_ns() >= a_close_at) {
            close(*a); /* a blocking server can turn to B at last */
            *a = -1;
            at->a_closed = now_ns();
            continue;
        }
        if (now_ns() >= deadline) { /* also when --timeout is shorter than --hold */
            fprintf(stderr, "loadgen: timed out after --timeout %g s%s\n", o->timeout_s,
                    at->b_echoed ? "" : " with no echo for client B");
            n->unanswered += at->b_echoed == 0;
            n->error = "timeout";
            return -1;
        }
        loop_event_t ev;
        uint64_t until = at->a_closed == 0 ? a_close_at : deadline;
        if (until > now_ns() + STALL_STEP_NS)
            until = now_ns() + STALL_STEP_NS;
        int ready = loop_wait(loop, &ev, 1, us_until(until));
        if (ready > 0 && at->b_echoed == 0) {
            int done = read_probe_echo(b, &got, n);
            if (done < 0)
                return -1;
            if (done)
                at->b_echoed = now_ns();
        } else if (ready > 0 && read_extra(b, n)) {
            loop_remove(loop, b); /* B's server side closed: nothing more to hear */
            n->b_ended = true;
        }
    }
    return 0;
}

/*
 * Anything B reads after its whole line is back was never sent. Returns
 * true when B's stream has ended (closed or reset), false while it may
 * still bring bytes.
 */
static bool read_extra(int b, stall_counts_t *n)
{
    char buf[4096];
    ssize_t got = read(b, buf, sizeof buf);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return false;
    if (got <= 0)
        return true;
    if (n->duplicated == 0)
        fprintf(stderr, "loadgen: client B: %zd bytes arrived after its whole echo, that it "
                        "never sent\n", got);
    n->duplicated += got;
    return false;
}

/*
 * B half-closes and reads until the server closes (TAIL_NS at most): an
 * echo sent twice, or any byte after the line, shows up here, and so does
 * a server that never closes a half-closed connection.
 */
static void read_tail(loop_t *loop, int b, stall_counts_t *n)
{
    uint64_t until = now_ns() + TAIL_NS;
    shutdown(b, SHUT_WR);
    while (now_ns() < until) {
        loop_event_t ev;
        if (loop_wait(loop, &ev, 1, us_until(until)) > 0 && read_extra(b, n))
            return;
    }
    fprintf(stderr, "loadgen: client B: not closed by the server within %.1f s of its "
                    "half-close (shutdown SHUT_WR) after its echo\n", (double)TAIL_NS / NS_PER_S);
    n->unclosed++;
}

/*
 * A connects and holds still; B connects right after and sends one line.
 * connect() succeeds from the listen backlog even on a blocking server, so
 * the stall shows as time to the first echo, not time to connect. Whatever
 * goes wrong, the result is printed with what was measured up to then.
 */
static int run_stall(const options_t *o, target_t *t, uint64_t deadline)
{
    int a = -1, b = -1;
    stall_times_t at = {0};
    stall_counts_t n = {0};
    loop_t *loop = loop_create(64);
    if (!loop) {
        fprintf(stderr, "loadgen: cannot create the event loop: %s\n", strerror(errno));
        return 1;
    }
    if ((a = connect_and_wait(t, loop, deadline, "client A", &n)) < 0)
        goto out;
    at.a_connected = now_ns();
    uint64_t a_close_at = at.a_connected + (uint64_t)(o->hold_s * NS_PER_S);
    at.b_connect = now_ns();
    if ((b = connect_and_wait(t, loop, deadline, "client B", &n)) < 0)
        goto out;
    at.b_sent = now_ns();
    ssize_t sent = write(b, STALL_PROBE, sizeof STALL_PROBE - 1);
    if (sent != sizeof STALL_PROBE - 1 || loop_add(loop, b, LOOP_READ, NULL) < 0) {
        /* A failed registration, or a write failure that is not the peer's, is loadgen's. */
        bool mine = sent == sizeof STALL_PROBE - 1 || (sent < 0 && !write_error_is_peers(errno));
        fprintf(stderr, "loadgen: client B could not send its line: %s%s\n", strerror(errno),
                mine ? " (loadgen's own failure)" : "");
        if (mine)
            n.client_errors++;
        else
            n.refused++;
        n.error = mine ? "client" : "refused";
        goto out;
    }
    if (await_echo_and_close(o, loop, &a, b, a_close_at, deadline, &at, &n) == 0) {
        if (!n.b_ended)
            read_tail(loop, b, &n);
        if (n.duplicated > 0)
            n.error = "duplicated";
        else if (n.unclosed > 0)
            n.error = "not closed";
    }
out:
    if (a >= 0) {
        close(a);
        at.a_closed = now_ns();
    }
    if (b >= 0)
        close(b);
    loop_destroy(loop);
    print_stall(o, &at, &n);
    return n.error ? 1 : 0;
}

/* ---- shared by c10k, scan and hold ------------------------------------- */

/*
 * The short reason in a result's `error` key (NULL: the run measured what
 * it was asked to), in order of precedence. stderr gets the long version.
 */
static const char *run_error(const pool_t *p, const options_t *o, size_t requested)
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
 * The one line on stderr that says why a run did not measure what it was
 * asked to. Returns the exit status.
 */
static int verdict(const pool_t *p, const options_t *o, size_t requested)
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
static void report_counts(report_t *r, const pool_t *p, size_t requested)
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
static void report_count_or_null(report_t *r, const char *key, long value)
{
    report_num(r, key, value < 0 ? NAN : (double)value, 0);
}

/* The server's memory, every key null without --server-pid or when unreadable. */
static void report_memory(report_t *r, const proc_memory_t *m)
{
    report_count_or_null(r, "server_rss_kb", m->rss_kb);
    report_count_or_null(r, "server_pss_kb", m->pss_kb);
    report_count_or_null(r, "server_footprint_kb", m->footprint_kb);
    report_count_or_null(r, "server_procs", m->procs);
    report_count_or_null(r, "server_threads", m->threads);
}

static proc_memory_t server_memory(const options_t *o)
{
    proc_memory_t m = {-1, -1, -1, -1, -1};
    if (o->server_pid)
        proc_tree_memory(o->server_pid, &m);
    return m;
}

/* Round-trip figures of the messages due in the last window (the histogram's). */
static void report_rtt(report_t *r, const pool_t *p)
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
static void report_parts(report_t *r, const crew_sum_t *s)
{
    summary_t lag = hist_summarize(s->lag_ns), service = hist_summarize(s->service_ns);
    report_num(r, "lag_p90_us", lag.p90 / NS_PER_US, 1);
    report_num(r, "lag_p99_us", lag.p99 / NS_PER_US, 1);
    report_num(r, "service_p50_us", service.p50 / NS_PER_US, 1);
    report_num(r, "service_p90_us", service.p90 / NS_PER_US, 1);
    report_num(r, "service_p99_us", service.p99 / NS_PER_US, 1);
}

/* Round trips per second of the window actually measured. */
static double per_second(uint64_t count, uint64_t window_ns)
{
    return window_ns ? (double)count * (double)NS_PER_S / (double)window_ns : NAN;
}

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
} cpu_window_t;

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

static void cpu_window_start(cpu_window_t *w, const options_t *o)
{
    *w = (cpu_window_t){0};
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

static void cpu_window_end(cpu_window_t *w, const options_t *o)
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
        w->steal_pct = 100.0 * steal_ms / capacity_ms;
        if (!isnan(w->server_ms)) /* 10 ms ticks can make it a little negative */
            w->foreign_pct = 100.0 * (others_ms - w->server_ms) / capacity_ms;
    }
}

/* Whether someone else had the measured CPUs; false when it cannot be told. */
static bool contended(const cpu_window_t *w, double bound)
{
    double foreign = isnan(w->foreign_pct) ? 0 : w->foreign_pct;
    double steal = isnan(w->steal_pct) ? 0 : w->steal_pct;
    double waited = isnan(w->client_delay_ms) ? 0 : w->client_delay_ms;
    return foreign + steal > bound || 100.0 * waited / w->wall_ms > bound;
}

/* The host around the window (see cpu_window_t); every key null where unknown. */
static void report_host(report_t *r, const cpu_window_t *w, int retries, double bound)
{
    bool known = !isnan(w->foreign_pct) || !isnan(w->steal_pct);
    report_count_or_null(r, "host_cpus", known ? w->host_cpus : -1);
    report_num(r, "foreign_cpu_pct", w->foreign_pct, 2);
    report_num(r, "steal_pct", w->steal_pct, 2);
    report_num(r, "server_run_delay_ms", w->server_delay_ms, 3);
    report_num(r, "client_run_delay_ms", w->client_delay_ms, 3);
    if (known)
        report_bool(r, "contended", contended(w, bound));
    else
        report_null(r, "contended");
    report_num(r, "contended_bound_pct", bound, 1);
    report_int(r, "contended_retries", retries);
}

/* ---- c10k -------------------------------------------------------------- */

/*
 * A side counts as saturated when it kept one core at least this busy over
 * the window: loadgen is one thread, so it can never use more, and
 * msgs_per_s then says how fast the client went, not the server. The same
 * bound is applied to the server's CPU summed over its processes and
 * threads, as a share of one core (a single-threaded event loop cannot use
 * more either; a forking or threaded server could, and is then named too).
 */
#define SATURATED_PCT 90.0

/* "client", "server", "none"; NULL when it cannot be told. */
static const char *saturated_side(double client_pct, double server_pct)
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
static double core_pct(double cpu_ms, double wall_ms)
{
    return wall_ms > 0 ? 100.0 * cpu_ms / wall_ms : NAN;
}

/* The open-loop figures: rate asked for and kept, and the client's own lateness. */
static void report_schedule(report_t *r, const options_t *o, const pool_t *p)
{
    bool open_loop = o->rate > 0;
    report_num(r, "rate_offered", open_loop ? o->rate : NAN, 1);
    report_num(r, "rate_achieved", per_second(p->n.sends, p->n.window_ns), 1);
    report_num(r, "schedule_lag_ms_max",
               open_loop && p->n.window_ns ? (double)p->n.lag_max_ns / NS_PER_MS : NAN, 3);
    if (open_loop && p->n.window_ns)
        report_int(r, "late_sends", (long long)p->n.late_sends);
    else
        report_null(r, "late_sends");
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

/* The server's context switches over the window, and per message. */
static void report_switches(report_t *r, const cpu_window_t *cpu, uint64_t msgs)
{
    report_count_or_null(r, "server_ctx_switches", (long)cpu->switches);
    report_count_or_null(r, "server_ctx_switches_involuntary", (long)cpu->involuntary);
    report_num(r, "server_ctx_switches_per_msg",
               cpu->switches >= 0 && msgs ? (double)cpu->switches / (double)msgs : NAN, 3);
}

/* What the kernel spent on the connections: growth of its own memory, machine-wide. */
static void report_kernel(report_t *r, const proc_kernel_t *before, const proc_kernel_t *after)
{
    /* A difference: the kernel may also have freed memory meanwhile, so it can be negative. */
    bool known = before->slab_kb >= 0 && after->slab_kb >= 0;
    report_num(r, "kernel_stack_kb", known ? (double)(after->stack_kb - before->stack_kb) : NAN, 0);
    report_num(r, "kernel_page_tables_kb",
               known ? (double)(after->page_tables_kb - before->page_tables_kb) : NAN, 0);
    report_num(r, "kernel_slab_kb", known ? (double)(after->slab_kb - before->slab_kb) : NAN, 0);
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
    report_host(&r, cpu, retries, o->contended_pct);
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

static void note_late(const crew_sum_t *s, double rate)
{
    if (rate > 0 && s->n.late_sends > 0)
        fprintf(stderr, "loadgen: note: the client could not keep the schedule: %llu send(s) "
                        "more than 1 ms late, the worst %.1f ms; sent %.0f of %.0f msgs/s\n",
                (unsigned long long)s->n.late_sends, (double)s->n.lag_max_ns / NS_PER_MS,
                per_second(s->n.sends, s->n.window_ns), rate);
}

/*
 * Open every connection, then one window per rate (one closed-loop window
 * without --rate), each followed by its drain; the tail after the last.
 * Both CPU clocks are read when each window opens and again the moment it
 * closes, before the echoes still in flight are drained, so CPU per message
 * and CPU % cover exactly the interval that `msgs` counts. Counters are the
 * run's so far; window figures are the step's.
 */
static int run_c10k(const options_t *o, target_t *t, uint64_t deadline)
{
    size_t n = (size_t)o->connections;
    crew_t *crew = crew_start(o->threads, t, n, (size_t)o->size, o->cpus,
                              o->cpu_count > 1 ? o->cpu_count : 0);
    if (!crew) {
        fprintf(stderr, "loadgen: out of memory or threads for %zu connections\n", n);
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
            cpu_window_start(&cpu, o);
            crew_run(crew, TASK_WINDOW, (uint64_t)(o->duration_s * NS_PER_S), rate, deadline);
            cpu_window_end(&cpu, o);
            crew_sum(crew, &sum);
            measured = sum.n.window_ns > 0;
            if (measured)
                crew_run(crew, TASK_DRAIN, 0, 0, deadline);
            crew_sum(crew, &sum);
            pool_t now = as_pool(&sum);
            if (!measured || sum.timed_out || run_error(&now, o, n) != NULL ||
                !contended(&cpu, o->contended_pct) || retries == o->retry_contended)
                break;
            retries++;
            fprintf(stderr, "loadgen: note: the window at %.0f msgs/s was contended (%.1f%% of "
                            "its CPUs' time neither side's, %.1f%% stolen): run again (%d of %d)\n",
                    rate, cpu.foreign_pct, cpu.steal_pct, retries, o->retry_contended);
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
    int status = verdict(&whole, o, n);
    crew_free(crew);
    return status;
}

/* ---- hold -------------------------------------------------------------- */

static int run_hold(const options_t *o, target_t *t, uint64_t deadline)
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
        pool_tail(&p, TAIL_NS);

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

    int status = verdict(&p, o, n);
    pool_free(&p);
    return status;
}

/* ---- scan -------------------------------------------------------------- */

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

/* Bring the idle set from `before` connections to `after`. */
static void resize_idle_set(pool_t *p, long before, long after, uint64_t deadline)
{
    if (after > before)
        pool_grow(p, (size_t)(after - before), deadline);
    else if (after < before)
        pool_close_newest(p, (size_t)(before - after));
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
static int run_scan(const options_t *o, target_t *t, uint64_t deadline)
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
        resize_idle_set(&p, open, o->idle[i], deadline);
        if (o->idle[i] > open)
            requested += (size_t)(o->idle[i] - open);
        open = o->idle[i];

        cpu_window_t cpu;
        cpu_window_start(&cpu, o);
        p.n.round_trips = 0;
        p.n.window_ns = 0;
        hist_clear(p.rtt_ns);
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
    int status = verdict(&p, o, requested);
    if (status == 0 && p.conns[0].state != CONN_IDLE) {
        fprintf(stderr, "loadgen: the active connection failed: %s\n", p.first_error);
        status = 1;
    }
    pool_free(&p);
    return status;
}

/* ---- main -------------------------------------------------------------- */

int main(int argc, char **argv)
{
    options_t o;
    parse_options(argc, argv, &o);

    target_t target;
    const char *why;
    if (target_resolve(&target, o.addr, o.port, &why) < 0)
        usage_error("bad address '%s' (%s)", o.addr, why);
    /* A list is checked CPU by CPU here; each of c10k's threads then pins itself (crew.c). */
    for (int i = 0; i < o.cpu_count; i++)
        pin_to_cpu(o.cpus[i]);
    if (!raise_fd_limit(connections_needed(&o)))
        return 1;
    /* A write to a connection the server reset fails with EPIPE instead of killing us. */
    signal(SIGPIPE, SIG_IGN);

    uint64_t deadline = now_ns() + (uint64_t)(o.timeout_s * NS_PER_S);
    switch (o.mode) {
    case MODE_STALL: return run_stall(&o, &target, deadline);
    case MODE_C10K: return run_c10k(&o, &target, deadline);
    case MODE_SCAN: return run_scan(&o, &target, deadline);
    case MODE_HOLD: return run_hold(&o, &target, deadline);
    }
    return 2;
}
