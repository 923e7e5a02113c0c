/*
 * symptoms.c - does a planted bug show what the lab sheet says it shows?
 *
 *     symptoms SERVER-BINARY LAB
 *
 * SERVER-BINARY is a rung built with docs/workshop/bugs/LAB.patch applied
 * (a path under a folder named like 07-epoll). Each check below acts out the
 * "what you will see" column of docs/workshop/bugs/README.md, from outside,
 * the way a student at a terminal would (Ctrl-Z is SIGSTOP, `top` is the
 * server's CPU share, `ps` is the harness's process reader), and passes only if the symptom is
 * there. The Caught-by: tests prove the suite catches each bug; this proves
 * the sheet tells the truth about it. Run against an unbroken server, every
 * check fails: tests/class/symptoms.sh does that for a few labs, as a
 * control. Exit status 0 when every check saw the symptom.
 */
#include "harness.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    const char *name;
    void (*check)(server_t *s);
    long nofile; /* > 0: start the server with this open-file limit */
} lab_t;

/* True if the server's stderr so far contains `what`. */
static bool stderr_has(const server_t *s, const char *what)
{
    char *err = server_stderr(s);
    bool found = err && strstr(err, what);
    free(err);
    return found;
}

/* Wait up to timeout_s for the server to end by itself. */
static bool ended_within(server_t *s, double timeout_s)
{
    double deadline = now_s() + timeout_s;
    while (server_alive(s) && now_s() < deadline)
        sleep_s(0.01);
    return !server_alive(s);
}

/* n clients that connect and send nothing; after settle_s for the server to
 * take them, its CPU share over one second. */
static double share_with_silent_clients(server_t *s, int *fds, int n, double settle_s)
{
    for (int i = 0; i < n; i++)
        fds[i] = client_connect(s->port, 0);
    sleep_s(settle_s);
    return cpu_share_over(s->pid, 1.0);
}

static void close_clients(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* One connection, one payload, every byte checked. */
static bool one_echo(const server_t *s, uint64_t seed, size_t length)
{
    int fd = client_connect(s->port, 0);
    bool ok = fd >= 0 && echo_once(fd, seed, length, ECHO_KEEP_OPEN, 5.0);
    if (fd >= 0)
        close(fd);
    return ok;
}

/* n clients at once, each `length` bytes; counts of each verdict. */
static void many_at_once(const server_t *s, size_t n, size_t length, echo_end_t end, double timeout_s,
                         size_t counts[6])
{
    echo_t *e = calloc(n, sizeof *e);
    if (!e)
        return;
    for (size_t i = 0; i < n; i++)
        echo_init(&e[i], client_connect(s->port, 0), 100 + i, length, end);
    echo_run(e, n, &(echo_opts_t){.timeout_s = timeout_s});
    for (size_t i = 0; i < n; i++) {
        counts[e[i].result]++;
        if (e[i].fd >= 0)
            close(e[i].fd);
    }
    free(e);
}

/* What a client that sent `total` bytes and then its FIN got back. */
typedef struct {
    size_t sent, received, wrong; /* wrong: bytes unlike those sent at that offset */
    bool eof;
} stream_t;

/*
 * Send `total` payload bytes while reading slowly (64 KiB per 100 ms) for
 * `slow_s`, then at full speed, until EOF or `timeout_s`. Unlike the echo
 * engine it does not stop at the first wrong byte: it counts them, and
 * counts what came back, so "fewer bytes" and "the right number, some
 * wrong" can be told apart.
 */
static stream_t slow_stream(const server_t *s, size_t total, double slow_s, double timeout_s)
{
    stream_t st = {0};
    int fd = client_connect(s->port, 32 * KIB);
    if (fd < 0)
        return st;
    static unsigned char out[64 * KIB], in[64 * KIB], want[64 * KIB];
    uint64_t rng = 12345;
    double start = now_s(), next_read = start;
    while (!st.eof && now_s() - start < timeout_s) {
        bool slow = now_s() - start < slow_s;
        bool may_read = !slow || now_s() >= next_read;
        struct pollfd p = {.fd = fd, .events = (may_read ? POLLIN : 0) | (st.sent < total ? POLLOUT : 0)};
        if (poll(&p, 1, 5) < 0)
            break;
        if ((p.revents & POLLOUT) && st.sent < total) {
            /* Chunks of random size, as a real client's writes: the server's
             * reads and writes then stop short of its buffer at random. */
            size_t n = rng_between(&rng, 1, sizeof out);
            if (n > total - st.sent)
                n = total - st.sent;
            payload_fill(9, st.sent, out, n);
            ssize_t w = write(fd, out, n);
            if (w > 0 && (st.sent += (size_t)w) == total)
                shutdown(fd, SHUT_WR);
        }
        if (may_read && (p.revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t n = read(fd, in, sizeof in);
            if (n <= 0) {
                st.eof = n == 0 || errno != EAGAIN;
                continue;
            }
            payload_fill(9, st.received, want, (size_t)n);
            for (ssize_t i = 0; i < n; i++)
                st.wrong += in[i] != want[i];
            st.received += (size_t)n;
            next_read = now_s() + 0.1; /* slowly: 64 KiB per 100 ms at most */
        }
    }
    close(fd);
    note("sent %zu bytes, got %zu back (%zu of them wrong)%s", st.sent, st.received, st.wrong,
         st.eof ? ", then EOF" : ", no EOF in time");
    return st;
}

/* ---- the labs, in the order of the sheet ---------------------------------- */

/* "the server vanishes while clients come and go, with no error line about
 * it; its exit status says killed by a signal" */
static void check_sigpipe(server_t *s)
{
    /* Clients come and go: reset mid-transfer, close unread, close before
     * the echo (the last makes the server write to a closed connection). */
    for (int i = 0; i < 60 && server_alive(s); i++) {
        int fd = client_connect(s->port, i % 3 == 1 ? 4096 : 0);
        if (fd < 0)
            break;
        client_push_until_blocked(fd, 1, i % 3 == 2 ? 64 * KIB : 2 * MIB, 0.03);
        if (i % 3 == 0)
            client_reset(fd);
        else {
            if (i % 3 == 2)
                shutdown(fd, SHUT_WR);
            close(fd);
        }
    }
    bool gone = ended_within(s, 2.0);
    expect(gone && WIFSIGNALED(s->status), "the server vanished, killed by a signal (%s)",
           gone && WIFSIGNALED(s->status) ? strsignal(WTERMSIG(s->status)) : "it did not");
    expect(!stderr_has(s, "Broken pipe"), "with no error line of its own about it");
}

/* "fast clients are fine; a client that reads slowly gets fewer bytes back
 * than it sent: pieces are missing from the middle" */
static void check_dropped_tail(server_t *s)
{
    expect(one_echo(s, 1, 256 * KIB), "a fast client gets its 256 KiB back");
    stream_t st = slow_stream(s, 16 * MIB, 2.0, 20.0);
    expect(st.eof && st.sent == 16 * MIB && st.received < st.sent,
           "a slow reader got fewer bytes back than it sent (%zu of %zu)", st.received, st.sent);
}

/* "slow readers get the right number of bytes, but some of them are wrong
 * (repeats); fast clients are fine" */
static void check_short_write(server_t *s)
{
    expect(one_echo(s, 1, 256 * KIB), "a fast client gets its 256 KiB back");
    stream_t st = slow_stream(s, 16 * MIB, 2.0, 20.0);
    expect(st.eof && st.received == st.sent && st.wrong > 0,
           "a slow reader got the right number of bytes (%zu of %zu), %zu of them wrong", st.received, st.sent,
           st.wrong);
}

/* "everything is echoed correctly, yet with a few idle clients top shows the
 * server at 100 %" */
static void check_write_interest(server_t *s)
{
    skip_test_unless(PROC_FINE_CPU, "the server's CPU share");
    expect(one_echo(s, 1, 256 * KIB), "echoes are correct");
    int idle[3];
    double share = share_with_silent_clients(s, idle, 3, 0.2);
    expect(share > 0.3, "with 3 idle clients the server uses %.0f %% of a core", share * 100);
    close_clients(idle, 3);
}

/* "at the open-file limit (ulimit -n) the server burns a core, and never
 * says it is pausing" (started with 32 descriptors) */
static void check_emfile_spin(server_t *s)
{
    skip_test_unless(PROC_FINE_CPU, "the server's CPU share");
    int fds[48];
    double share = share_with_silent_clients(s, fds, 48, 0.3);
    expect(share > 0.3, "with clients queued past its limit the server uses %.0f %% of a core", share * 100);
    expect(!stderr_has(s, "pausing"), "and it logged no \"pausing\" line");
    close_clients(fds, 48);
}

/* "the first client is accepted, then nobody gets an echo, not even the
 * clients after it; the server sleeps (0 % CPU) with their bytes waiting" */
static void check_blocking_listener(server_t *s)
{
    static const char line[] = "hello\n";
    int fds[2] = {-1, -1};
    for (int i = 0; i < 2; i++) {
        fds[i] = client_connect(s->port, 0);
        bool sent = fds[i] >= 0 && write(fds[i], line, sizeof line - 1) == (ssize_t)(sizeof line - 1);
        expect(sent && wait_readable(fds[i], 1.5) == 0, "client %d sent a line: no echo within 1.5 s", i + 1);
    }
    expect(fds[0] >= 0 && wait_readable(fds[0], 0.5) == 0, "client 1 still has none after client 2 came");
    double share = cpu_share_over(s->pid, 0.5);
    expect((!cpu_seen(share) || share < 0.1) && seen_state(s->pid) == 'S', "the server sleeps meanwhile (%.0f %% of a core, state %c)",
           share * 100, seen_state(s->pid));
    close_clients(fds, 2);
}

/* "past about a thousand clients, a sanitizer report" */
static void check_fd_setsize(server_t *s)
{
    static int fds[1100];
    int n = 0;
    for (; n < 1100 && server_alive(s); n++)
        fds[n] = client_connect(s->port, 0);
    ended_within(s, 3.0);
    char *err = server_stderr(s);
    const char *report = err ? sanitizer_report_in(err) : NULL;
    expect(report != NULL, "a sanitizer report (%s) after %d clients", report ? report : "none", n);
    free(err);
    close_clients(fds, n);
}

/* "the server dies with an error line naming the interrupted call when it is
 * stopped and continued (Ctrl-Z, fg)" */
static void check_eintr_fatal(server_t *s)
{
    expect(one_echo(s, 1, 64 * KIB), "the server echoes before the nudge");
    sleep_s(0.5); /* idle, in epoll_wait(), as when a person presses Ctrl-Z */
    kill(s->pid, SIGSTOP);
    double deadline = now_s() + 5.0;
    while (seen_state(s->pid) != 'T' && now_s() < deadline)
        sleep_s(0.001);
    note("server state after SIGSTOP: %c", seen_state(s->pid));
    sleep_s(0.2); /* a person's Ctrl-Z ... fg takes longer than this */
    kill(s->pid, SIGCONT);
    bool gone = ended_within(s, 2.0);
    expect(gone, "stopped and continued (Ctrl-Z, fg), the server died");
    expect(gone && WIFEXITED(s->status) && WEXITSTATUS(s->status) == 1, "with exit status 1");
    expect(stderr_has(s, "Interrupted system call"), "and an error line \"...: Interrupted system call\"");

    /* Ctrl-C: SIGINT, whose handler interrupts the wait. */
    server_t again;
    if (server_start(&again, s->binary, NULL)) {
        sleep_s(0.3);
        kill(again.pid, SIGINT);
        bool ended = ended_within(&again, 3.0);
        expect(ended && WIFEXITED(again.status) && WEXITSTATUS(again.status) == 1 &&
                   stderr_has(&again, "Interrupted system call"),
               "Ctrl-C (SIGINT): exit status 1 and the same line, instead of a clean exit 0");
    }
    server_cleanup(&again);
}

/* "LeakSanitizer reports at shutdown, but only when a client was still owed
 * data at that moment" */
static void check_leak(server_t *s)
{
    int fd = client_connect(s->port, 32 * KIB);
    if (fd >= 0)
        client_push_until_blocked(fd, 1, 8 * MIB, 0.3); /* unread: the server holds its echo */
    kill(s->pid, SIGTERM);
    ended_within(s, 5.0);
    expect(stderr_has(s, "LeakSanitizer"), "LeakSanitizer reported at shutdown with a client owed data");
    if (fd >= 0)
        close(fd);
}

/* The other half of "only when": a shutdown with nobody owed anything. */
static void check_leak_quiet(server_t *s)
{
    expect(one_echo(s, 1, 64 * KIB), "a client served and gone");
    kill(s->pid, SIGTERM);
    ended_within(s, 5.0);
    expect(!stderr_has(s, "LeakSanitizer"), "no LeakSanitizer report when nobody was owed data");
}

/* "ps shows <defunct> children piling up, one per client served" */
static void check_no_reaper(server_t *s)
{
    for (int i = 0; i < 5; i++)
        one_echo(s, 1 + i, 1024);
    int zombies = settle(seen_zombie_children, s->pid, 5, 2.0);
    expect(zombies >= 5, "%d <defunct> children after 5 clients", zombies);
}

/* "with clients leaving one by one all is well; when hundreds leave at once,
 * some <defunct> children stay" */
static void check_reaper_once(server_t *s)
{
    for (int i = 0; i < 5; i++) {
        one_echo(s, 1 + i, 1024);
        sleep_s(0.05);
    }
    int after_one_by_one = settle(seen_zombie_children, s->pid, 0, 2.0);
    expect(after_one_by_one == 0, "clients one by one: %d <defunct> left", after_one_by_one);
    size_t counts[6] = {0};
    many_at_once(s, 500, 64, ECHO_SHUT_AFTER_ECHO, 20.0, counts);
    int left = settle(seen_zombie_children, s->pid, 0, 2.0);
    expect(left > 0, "500 clients leaving at once: %d <defunct> children stay", left);
}

/* "the echo arrives but the client never sees EOF after it shuts down its
 * side; the parent's fd count grows" */
static void check_parent_keeps_fd(server_t *s)
{
    skip_test_unless(PROC_FDS, "the server's descriptor count");
    int before = seen_fd_count(s->pid);
    echo_t e;
    echo_init(&e, client_connect(s->port, 0), 3, 4096, ECHO_SHUT_AFTER_SEND);
    echo_run(&e, 1, &(echo_opts_t){.timeout_s = 2.0});
    expect(e.received == e.length && e.result == ECHO_TIMEOUT,
           "the whole echo arrived (%zu of %zu bytes), then no EOF within 2 s", e.received, e.length);
    if (e.fd >= 0)
        close(e.fd);
    for (int i = 0; i < 5; i++)
        one_echo(s, 10 + i, 64);
    int after = seen_fd_count(s->pid);
    expect(after >= before + 5, "the parent's descriptors grew from %d to %d over 6 clients", before, after);
}

/* "clients get EOF or a reset at once, or someone else's echo" */
static void check_thread_fd_closed(server_t *s)
{
    size_t counts[6] = {0};
    many_at_once(s, 20, 64 * KIB, ECHO_KEEP_OPEN, 5.0, counts);
    expect(counts[ECHO_CLOSED] + counts[ECHO_CORRUPT] + counts[ECHO_FAILED] > 0,
           "of 20 clients: %zu closed or reset, %zu got wrong bytes, %zu failed", counts[ECHO_CLOSED],
           counts[ECHO_CORRUPT], counts[ECHO_FAILED]);
}

/* "one client at a time is fine; many at once get each other's bytes" */
static void check_shared_buffer(server_t *s)
{
    expect(one_echo(s, 1, 1 * MIB), "one client at a time gets its 1 MiB back");
    size_t counts[6] = {0};
    /* A race: on a busy machine one round of 50 can pass without two threads
     * writing the buffer at once (seen once in the suite), so up to three
     * rounds, as a student tries again. A correct server never mixes bytes. */
    int rounds = 0;
    while (rounds < 3 && counts[ECHO_CORRUPT] == 0) {
        many_at_once(s, 50, 1 * MIB, ECHO_KEEP_OPEN, 10.0, counts);
        rounds++;
    }
    expect(counts[ECHO_CORRUPT] > 0,
           "of %d round(s) of 50 at once, %zu clients got bytes that were not theirs", rounds,
           counts[ECHO_CORRUPT]);
}

/* "a second copy of the server starts on a port already in use, and clients
 * are split between the two" */
static void check_reuseport(server_t *s)
{
    skip_test_unless(PROC_FDS, "the servers' descriptor counts");
    char port[16];
    snprintf(port, sizeof port, "%d", s->port);
    server_t second;
    bool started = server_start(&second, s->binary, &(launch_t){.port = port});
    expect(started, "a second copy started on port %s", port);
    if (started) {
        int base1 = seen_fd_count(s->pid), base2 = seen_fd_count(second.pid);
        int fds[20];
        for (int i = 0; i < 20; i++)
            fds[i] = client_connect(s->port, 0);
        sleep_s(0.3);
        int got1 = seen_fd_count(s->pid) - base1, got2 = seen_fd_count(second.pid) - base2;
        expect(got1 > 0 && got2 > 0, "20 clients split between them: %d and %d", got1, got2);
        for (int i = 0; i < 20; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        server_stop(&second);
    }
    server_cleanup(&second);
}

/* "some clients stall forever with data waiting" */
static void check_et_one_read(server_t *s)
{
    size_t counts[6] = {0};
    many_at_once(s, 20, 1 * MIB, ECHO_KEEP_OPEN, 5.0, counts);
    expect(counts[ECHO_TIMEOUT] > 0 && counts[ECHO_CORRUPT] == 0,
           "of 20 clients sending 1 MiB, %zu stalled (no echo for the rest), %zu got wrong bytes",
           counts[ECHO_TIMEOUT], counts[ECHO_CORRUPT]);
}

static const lab_t lab_table[] = {
    {"sigpipe", check_sigpipe, 0},
    {"dropped-tail", check_dropped_tail, 0},
    {"short-write", check_short_write, 0},
    {"write-interest", check_write_interest, 0},
    {"emfile-spin", check_emfile_spin, 32},
    {"blocking-listener", check_blocking_listener, 0},
    {"fd-setsize", check_fd_setsize, 0},
    {"eintr-fatal", check_eintr_fatal, 0},
    {"leak", check_leak, 0},
    {"leak-quiet", check_leak_quiet, 0},
    {"no-reaper", check_no_reaper, 0},
    {"reaper-once", check_reaper_once, 0},
    {"parent-keeps-fd", check_parent_keeps_fd, 0},
    {"thread-fd-closed", check_thread_fd_closed, 0},
    {"shared-buffer", check_shared_buffer, 0},
    {"reuseport", check_reuseport, 0},
    {"et-one-read", check_et_one_read, 0},
};

int main(int argc, char **argv)
{
    const lab_t *lab = NULL;
    for (size_t i = 0; argc == 3 && i < sizeof lab_table / sizeof *lab_table; i++)
        if (strcmp(lab_table[i].name, argv[2]) == 0)
            lab = &lab_table[i];
    if (!lab) {
        fprintf(stderr, "usage: symptoms SERVER-BINARY LAB\nlabs:");
        for (size_t i = 0; i < sizeof lab_table / sizeof *lab_table; i++)
            fprintf(stderr, " %s", lab_table[i].name);
        fprintf(stderr, "\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    raise_own_fd_limit();
    printf("symptom of %s, on %s\n", lab->name, argv[1]);
    server_t s;
    if (server_start(&s, argv[1], &(launch_t){.nofile = lab->nofile, .asan_options = "detect_leaks=1"}))
        lab->check(&s);
    else
        harness_failures++;
    server_cleanup(&s);
    printf("%s\n", harness_failures ? "symptom NOT seen" : "symptom seen");
    return harness_failures ? 1 : 0;
}
