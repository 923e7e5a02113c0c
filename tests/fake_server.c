/*
 * fake_server - an echo server that misbehaves on purpose, to test loadgen.
 *
 *   fake_server [-p PORT] --mode MODE [--every K] [--after BYTES] [--delay MS]
 *               [--busy-us US] [--only-from ADDR]
 *
 * It echoes like the real rungs, except that every K-th connection it
 * accepts (the K-th, 2K-th, ...; K defaults to 1: all of them) meets MODE
 * once BYTES bytes of it have been echoed (default 0):
 *
 *   echo     nothing: a correct echo server
 *   corrupt  byte number BYTES of the echo is flipped; the rest is echoed
 *   reset    the connection is reset (RST: SO_LINGER 0, then close)
 *   close    the connection is closed (FIN)
 *   stall    the connection is neither read nor answered again, but kept open
 *   silent   every connection is read and never answered (K and BYTES unused)
 *   exit     the whole server exits, status 0, once BYTES bytes have been
 *            echoed over all connections together (K unused)
 *   dup      the read holding byte number BYTES is echoed twice
 *   extra    when the client half-closes, a few bytes it never sent come
 *            back before the close (after its last echo)
 *   swap     from byte BYTES on, what this connection sends is echoed to
 *            the connection accepted just before it, and the other way round
 *   cross    connections are paired in the order they are accepted (the 1st
 *            with the 2nd, ...), and the first BYTES bytes each one sends are
 *            echoed to the other; then each is echoed its own. The first of
 *            a pair is not read until the second comes (K unused)
 *   late     after BYTES bytes the connection is not read for --delay MS
 *            (default 200), then served again: its echoes come late, whole
 *   pause    every connection's responses stop for --delay MS (200) at the
 *            start of every second since the server started (K, BYTES unused)
 *   fork     a child process per connection, each burning --busy-us
 *            microseconds of its own CPU time per read before echoing
 *   serial   one connection at a time, like 01-blocking: the next is
 *            accepted once the current one has closed
 *   burn     --delay MS after the first connection (default 200), the
 *            server answers nothing while it burns --busy-us microseconds
 *            of its own CPU time, once, then serves again (K, BYTES unused)
 *   noclose  when the client half-closes, the connection is kept open and
 *            never read again: the server does not close it (BYTES unused)
 *   full     listens with a backlog of 0 and never accepts: the accept queue
 *            is full after a connection or two, and the kernel drops the
 *            SYNs after that, so their connect() never completes (K, BYTES
 *            unused)
 *
 * --only-from ADDR closes, unanswered, every connection whose source address
 * is not ADDR (the test of loadgen's portable path: 127.0.0.1 only).
 *
 * Exact byte offsets make every outcome independent of timing: with -n 20,
 * --every 10 and --after 1000, two connections break a little into the
 * ping-pong, after their first echo, whatever the speed of the machine.
 *
 * Like the rungs it prints "listening on 127.0.0.1:PORT" once it listens,
 * and exits 0 on SIGTERM. One thread and poll(2); accepted sockets block,
 * which is enough for loadgen's small messages.
 */
#define _GNU_SOURCE /* POSIX declarations under strict -std=c11 */

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Connections open at once; loadgen's tests use a few dozen. */
#define MAX_CONNS 1024

typedef enum { MODE_ECHO, MODE_CORRUPT, MODE_RESET, MODE_CLOSE, MODE_STALL, MODE_SILENT,
               MODE_EXIT, MODE_DUP, MODE_EXTRA, MODE_SWAP, MODE_LATE, MODE_PAUSE, MODE_FORK,
               MODE_SERIAL, MODE_BURN, MODE_NOCLOSE, MODE_CROSS, MODE_FULL } fault_mode_t;

static const char *const MODE_NAMES[] = {"echo", "corrupt", "reset", "close", "stall",
                                         "silent", "exit", "dup", "extra", "swap", "late",
                                         "pause", "fork", "serial", "burn", "noclose",
                                         "cross", "full"};

/* What `extra` sends after the last echo. */
static const char EXTRA_BYTES[] = "bytes nobody sent\n";

/* pause: the responses stop at the start of every period, for --delay ms. */
#define PAUSE_PERIOD_MS 1000

typedef struct {
    int fd;            /* -1: slot free */
    bool targeted;     /* one of every K-th: MODE applies to it */
    bool stalled;      /* stall: no longer watched */
    unsigned long echoed; /* bytes of it echoed so far */
    int partner;       /* swap, cross: the slot of the connection it is paired with, or -1 */
    bool swapped;      /* swap: its echoes go to the partner */
    double resume_at;  /* late: not read before this (monotonic seconds) */
    bool delayed;      /* late: the delay has been served already */
} conn_t;

/* The options every mode reads. */
typedef struct {
    fault_mode_t mode;
    unsigned long every, after;
    double delay_s;    /* --delay, in seconds */
    long busy_us;      /* --busy-us */
    const char *only_from;
} config_t;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Spend `us` microseconds of this process's own CPU time. */
static void burn_cpu(long us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    do
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000L < us);
}

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static _Noreturn void usage(const char *why)
{
    fprintf(stderr, "fake_server: %s\nusage: fake_server [-p PORT] --mode "
                    "echo|corrupt|reset|close|stall|silent|exit|dup|extra|swap|late|pause|"
                    "fork|serial|burn|noclose|cross|full\n"
                    "       [--every K] [--after BYTES] [--delay MS] [--busy-us US] "
                    "[--only-from ADDR]\n",
            why);
    exit(2);
}

static int listen_on(int port, int backlog)
{
    int one = 1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, backlog) < 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &len) < 0) {
        perror("fake_server: listen");
        exit(1);
    }
    printf("listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
    fflush(stdout);
    return fd;
}

static bool write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        buf += n;
        len -= (size_t)n;
    }
    return true;
}

static void drop(conn_t *c, bool reset)
{
    if (reset) {
        struct linger hard = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    }
    close(c->fd);
    c->fd = -1;
}

/* What happens to a targeted connection once `after` bytes are echoed. */
static void meet_mode(conn_t *c, fault_mode_t mode, const config_t *cf)
{
    if (mode == MODE_RESET || mode == MODE_CLOSE)
        drop(c, mode == MODE_RESET);
    else if (mode == MODE_STALL)
        c->stalled = true;
    else if (mode == MODE_LATE && !c->delayed) {
        c->delayed = true;
        c->resume_at = mono_s() + cf->delay_s;
    }
}

static unsigned long total_echoed;

/* The modes that stop reading exactly at the trigger offset. */
static bool stops_at_trigger(fault_mode_t mode)
{
    return mode == MODE_RESET || mode == MODE_CLOSE || mode == MODE_STALL || mode == MODE_LATE;
}

/* The client half-closed (or went): extra owes it some bytes first; noclose
 * keeps the connection, unwatched (its EOF would wake poll for ever). */
static void on_eof(conn_t *c, const config_t *cf)
{
    if (c->targeted && cf->mode == MODE_NOCLOSE) {
        c->stalled = true;
        return;
    }
    if (c->targeted && cf->mode == MODE_EXTRA)
        write_all(c->fd, EXTRA_BYTES, sizeof EXTRA_BYTES - 1);
    drop(c, false);
}

/* Read what the client sent (never past the trigger offset) and echo it. */
static void on_readable(conn_t *conns, conn_t *c, const config_t *cf)
{
    char buf[4096];
    size_t want = sizeof buf;
    fault_mode_t mode = cf->mode;
    unsigned long after = cf->after;
    bool at_trigger = c->targeted && stops_at_trigger(mode) && !c->delayed;
    bool crossed = mode == MODE_CROSS && c->partner >= 0 && c->echoed < after;
    if ((at_trigger || crossed) && after - c->echoed < want)
        want = after - c->echoed;
    ssize_t n = read(c->fd, buf, want);
    if (n < 0 && errno == EINTR)
        return;
    if (n <= 0) {
        on_eof(c, cf);
        return;
    }
    if (mode == MODE_SILENT)
        return;
    bool holds_trigger = c->echoed <= after && after < c->echoed + (unsigned long)n;
    if (c->targeted && mode == MODE_CORRUPT && holds_trigger)
        buf[after - c->echoed] ^= 0x5a;
    if (c->targeted && mode == MODE_SWAP && c->partner >= 0 && c->echoed + (unsigned long)n > after)
        c->swapped = conns[c->partner].swapped = true;
    bool elsewhere = (c->swapped || crossed) && c->partner >= 0 && conns[c->partner].fd >= 0;
    conn_t *to = elsewhere ? &conns[c->partner] : c;
    bool ok = write_all(to->fd, buf, (size_t)n);
    if (ok && c->targeted && mode == MODE_DUP && holds_trigger)
        ok = write_all(to->fd, buf, (size_t)n);
    if (!ok) {
        drop(to, false);
        return;
    }
    c->echoed += (unsigned long)n;
    total_echoed += (unsigned long)n;
    if (mode == MODE_EXIT && total_echoed >= after)
        exit(0); /* the kernel closes every connection, as when a server dies */
    if (at_trigger && c->echoed >= after)
        meet_mode(c, mode, cf);
}

/* --only-from: whether the peer's address is the one allowed. */
static bool source_allowed(int fd, const config_t *cf)
{
    if (!cf->only_from)
        return true;
    struct sockaddr_in peer;
    socklen_t len = sizeof peer;
    char text[INET_ADDRSTRLEN] = "";
    if (getpeername(fd, (struct sockaddr *)&peer, &len) < 0 ||
        !inet_ntop(AF_INET, &peer.sin_addr, text, sizeof text))
        return false;
    return strcmp(text, cf->only_from) == 0;
}

static void on_accept(int listen_fd, conn_t *conns, const config_t *cf, unsigned long *accepted,
                      int *last_slot)
{
    int fd = accept(listen_fd, NULL, NULL);
    if (fd < 0)
        return;
    if (!source_allowed(fd, cf)) {
        close(fd);
        return;
    }
    for (int i = 0; i < MAX_CONNS; i++) {
        if (conns[i].fd >= 0)
            continue;
        ++*accepted;
        conns[i] = (conn_t){.fd = fd, .targeted = *accepted % cf->every == 0, .partner = -1};
        if (conns[i].targeted && cf->mode == MODE_SWAP)
            conns[i].partner = *last_slot;
        if (cf->mode == MODE_CROSS && *accepted % 2 == 0 && *last_slot >= 0)
            conns[i].partner = *last_slot, conns[*last_slot].stalled = false;
        else if (cf->mode == MODE_CROSS)
            conns[i].stalled = true; /* until its partner comes */
        if (conns[i].partner >= 0)
            conns[conns[i].partner].partner = i;
        *last_slot = i;
        if (conns[i].targeted && cf->after == 0 && stops_at_trigger(cf->mode))
            meet_mode(&conns[i], cf->mode, cf);
        return;
    }
    close(fd); /* full: more than the tests ever open */
}

/* ---- fork and serial: blocking servers ---------------------------------- */

/* Echo one connection with blocking calls until EOF; burn CPU per read if asked. */
static void serve_blocking(int fd, const config_t *cf)
{
    char buf[4096];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR && !stop_requested)
            continue;
        if (n <= 0)
            break;
        if (cf->busy_us > 0)
            burn_cpu(cf->busy_us);
        if (!write_all(fd, buf, (size_t)n))
            break;
    }
    close(fd);
}

static void reap(int sig)
{
    (void)sig;
    int saved = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    errno = saved;
}

/* fork: a child per connection; serial: one connection at a time, in this process. */
static void run_blocking(int listen_fd, const config_t *cf)
{
    static pid_t children[MAX_CONNS];
    int forked = 0;
    struct sigaction sa = {.sa_handler = reap, .sa_flags = SA_RESTART | SA_NOCLDSTOP};
    sigaction(SIGCHLD, &sa, NULL);
    while (!stop_requested) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0)
            continue; /* EINTR: the loop condition decides */
        if (cf->mode == MODE_SERIAL) {
            serve_blocking(fd, cf);
            continue;
        }
        pid_t pid = fork();
        if (pid == 0) {
            signal(SIGTERM, SIG_DFL);
            close(listen_fd);
            serve_blocking(fd, cf);
            _exit(0);
        }
        if (pid > 0 && forked < MAX_CONNS)
            children[forked++] = pid;
        close(fd);
    }
    for (int i = 0; i < forked; i++)
        kill(children[i], SIGTERM);
    while (wait(NULL) > 0)
        ;
}

/* ---- the poll loop ------------------------------------------------------ */

/* pause: seconds left of the current pause, 0 outside one. */
static double pause_left(double start, const config_t *cf)
{
    if (cf->mode != MODE_PAUSE)
        return 0;
    double into = fmod(mono_s() - start, PAUSE_PERIOD_MS / 1000.0);
    return into < cf->delay_s ? cf->delay_s - into : 0;
}

/* Fill the poll set; returns the poll timeout in ms (-1: none). */
static int fill_poll_set(struct pollfd *fds, const conn_t *conns, int listen_fd, double paused)
{
    double now = mono_s(), wake = paused > 0 ? paused : -1;
    fds[0] = (struct pollfd){.fd = listen_fd, .events = POLLIN};
    for (int i = 0; i < MAX_CONNS; i++) { /* negative fds are skipped by poll */
        const conn_t *c = &conns[i];
        bool resting = c->resume_at > now;
        if (resting && (wake < 0 || c->resume_at - now < wake))
            wake = c->resume_at - now;
        bool watched = c->fd >= 0 && !c->stalled && !resting && paused == 0;
        fds[i + 1] = (struct pollfd){.fd = watched ? c->fd : -1, .events = POLLIN};
    }
    return wake < 0 ? -1 : (int)(wake * 1000.0) + 1;
}

static fault_mode_t parse_mode(const char *s)
{
    for (size_t i = 0; i < sizeof MODE_NAMES / sizeof MODE_NAMES[0]; i++)
        if (strcmp(s, MODE_NAMES[i]) == 0)
            return (fault_mode_t)i;
    usage("unknown mode");
}

static unsigned long parse_number(const char *s, unsigned long min)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s ? s : "", &end, 10);
    if (!s || *s == '\0' || *end != '\0' || errno || v < min)
        usage("bad number");
    return v;
}

int main(int argc, char **argv)
{
    int port = 9999;
    config_t cf = {.mode = MODE_ECHO, .every = 1, .delay_s = 0.2};
    unsigned long accepted = 0;
    int last_slot = -1;
    for (int i = 1; i < argc; i += 2) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "-p") == 0)
            port = (int)parse_number(value, 0);
        else if (strcmp(argv[i], "--mode") == 0 && value)
            cf.mode = parse_mode(value);
        else if (strcmp(argv[i], "--every") == 0)
            cf.every = parse_number(value, 1);
        else if (strcmp(argv[i], "--after") == 0)
            cf.after = parse_number(value, 0);
        else if (strcmp(argv[i], "--delay") == 0)
            cf.delay_s = (double)parse_number(value, 0) / 1000.0;
        else if (strcmp(argv[i], "--busy-us") == 0)
            cf.busy_us = (long)parse_number(value, 0);
        else if (strcmp(argv[i], "--only-from") == 0 && value)
            cf.only_from = value;
        else
            usage("unknown argument");
    }
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: poll() must wake */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    int listen_fd = listen_on(port, cf.mode == MODE_FULL ? 0 : SOMAXCONN);
    while (cf.mode == MODE_FULL && !stop_requested)
        poll(NULL, 0, 100); /* accept nothing, until SIGTERM */
    if (cf.mode == MODE_FORK || cf.mode == MODE_SERIAL) {
        run_blocking(listen_fd, &cf);
        close(listen_fd);
        return 0;
    }
    static conn_t conns[MAX_CONNS];
    static struct pollfd fds[MAX_CONNS + 1];
    for (int i = 0; i < MAX_CONNS; i++)
        conns[i].fd = -1;
    double start = mono_s(), burn_at = 0; /* burn: when, once a client came */
    bool burnt = false;
    while (!stop_requested) {
        if (cf.mode == MODE_BURN && burn_at > 0 && !burnt && mono_s() >= burn_at) {
            burn_cpu(cf.busy_us); /* nothing is read or answered meanwhile */
            burnt = true;
        }
        int timeout_ms = fill_poll_set(fds, conns, listen_fd, pause_left(start, &cf));
        if (cf.mode == MODE_BURN && !burnt && (timeout_ms < 0 || timeout_ms > 10))
            timeout_ms = 10; /* so as to start the burn on time */
        if (poll(fds, MAX_CONNS + 1, timeout_ms) < 0)
            continue; /* EINTR: the loop condition decides */
        if (fds[0].revents)
            on_accept(listen_fd, conns, &cf, &accepted, &last_slot);
        if (accepted > 0 && burn_at == 0)
            burn_at = mono_s() + cf.delay_s;
        if (pause_left(start, &cf) > 0)
            continue; /* a pause began while waiting: answer nothing now */
        for (int i = 0; i < MAX_CONNS; i++)
            if (fds[i + 1].revents && conns[i].fd >= 0)
                on_readable(conns, &conns[i], &cf);
    }
    for (int i = 0; i < MAX_CONNS; i++)
        if (conns[i].fd >= 0)
            close(conns[i].fd);
    close(listen_fd);
    return 0;
}
