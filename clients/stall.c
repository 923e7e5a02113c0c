/*
 * loadgen stall: client A connects and sends nothing for --hold seconds;
 * client B connects right after it and sends one line. How long does B wait
 * for its echo, and how close to A's leaving does it come?
 */
#define _GNU_SOURCE /* POSIX under strict -std=c11 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loop.h"
#include "modes.h"

/* The line client B sends in stall mode: text, so `-v` server logs stay readable. */
static const char STALL_PROBE[] = "loadgen stall probe\n";

/* Longest single wait in stall mode; see run_stall. */
#define STALL_STEP_NS (50 * NS_PER_MS)


/* What became of clients A and B, counted as c10k counts its connections. */
typedef struct {
    int connect_failed; /* A or B could not connect */
    int refused;        /* B was closed or reset before its whole echo came */
    int unanswered;     /* B's echo had not come when --timeout passed */
    int lost;           /* B was reset after its echo, or closed before its half-close */
    int corrupt;        /* B's echo differed from its line */
    long duplicated;    /* bytes B received beyond its one line */
    int client_errors;  /* loadgen's own failures (no fd, no port, no loop registration) */
    int unclosed;       /* B half-closed after its echo, and the server never closed it */
    bool b_ended;       /* B's stream ended (server closed or reset it) after its echo */
    const char *error;  /* the short reason for the result's `error`, or NULL */
} stall_counts_t;

/* Connect one socket and wait for the handshake to finish. The fd, or -1. */
static int connect_and_wait(target_t *t, loop_t *loop, uint64_t deadline, const char *who,
                            stall_counts_t *n)
{
    int err = 0;
    socklen_t len = sizeof err;
    loop_event_t ev;
    bool mine = false, wait_failed = false;
    int ready = 0;
    int fd = target_connect(t);
    if (fd < 0 || loop_add(loop, fd, LOOP_WRITE, NULL) < 0) {
        err = errno;
        mine = fd >= 0 || connect_error_is_clients(err); /* a failed registration: ours */
    } else if ((ready = loop_wait(loop, &ev, 1, us_until(deadline))) < 0) {
        err = errno;
        mine = wait_failed = true; /* the event loop's failure, not the handshake's */
    } else if (ready == 0) {
        err = ETIMEDOUT;
    } else {
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
            err = errno;
        mine = connect_error_is_clients(err); /* as pool.c's on_connected counts it */
    }
    if (fd >= 0)
        loop_remove(loop, fd);
    if (err == 0)
        return fd;
    fprintf(stderr, "loadgen: %s could not connect to %s: %s%s%s\n", who, t->name,
            wait_failed ? "waiting for events: " : "", strerror(err),
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

/*
 * Anything B reads after its whole line is back was never sent. Returns
 * true when B's stream has ended, false while it may still bring bytes.
 * Only a close after B's half-close is the end asked for: a reset, or a
 * close before it, loses B (as pool.c counts a served connection).
 */
static bool read_extra(int b, bool half_closed, stall_counts_t *n)
{
    char buf[4096];
    ssize_t got = read(b, buf, sizeof buf);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return false;
    if (got == 0 && half_closed)
        return true;
    if (got <= 0) {
        fprintf(stderr, "loadgen: client B: %s after its echo%s\n",
                got == 0 ? "closed by the server" : strerror(errno),
                half_closed ? "" : ", before its half-close");
        n->lost++;
        n->error = "lost";
        return true;
    }
    if (n->duplicated == 0)
        fprintf(stderr, "loadgen: client B: %zd bytes arrived after its whole echo, that it "
                        "never sent\n", got);
    n->duplicated += got;
    return false;
}

/* The event loop failed while B waited: loadgen's own failure. Returns -1. */
static int waiting_failed(stall_counts_t *n)
{
    fprintf(stderr, "loadgen: client B: waiting for events: %s (loadgen's own failure)\n",
            strerror(errno));
    n->client_errors++;
    n->error = "client";
    return -1;
}

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
    report_int(&r, "lost", n->lost);
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
        if (ready < 0)
            return waiting_failed(n);
        if (ready > 0 && at->b_echoed == 0) {
            int done = read_probe_echo(b, &got, n);
            if (done < 0)
                return -1;
            if (done)
                at->b_echoed = now_ns();
        } else if (ready > 0 && read_extra(b, false, n)) {
            loop_remove(loop, b); /* B's server side closed: nothing more to hear */
            n->b_ended = true;
        }
    }
    return 0;
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
        int ready = loop_wait(loop, &ev, 1, us_until(until));
        if (ready < 0) {
            waiting_failed(n);
            return;
        }
        if (ready > 0 && read_extra(b, true, n))
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
int run_stall(const options_t *o, target_t *t, uint64_t deadline)
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
