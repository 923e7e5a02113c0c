/*
 * pool.c - see pool.h. Sections: payload, target, connection states, the
 * event handlers, and the phases the modes call.
 */
#define _GNU_SOURCE /* POSIX and Linux declarations under strict -std=c11 */

#include "pool.h"

#include "proc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__APPLE__)
#include <sys/sysctl.h>
#define SOMAXCONN_SYSCTL "kern.ipc.somaxconn"
#elif defined(__FreeBSD__) || defined(__DragonFly__)
#include <sys/sysctl.h>
/* FreeBSD 10 renamed kern.ipc.somaxconn to this; the old name is still an alias. */
#define SOMAXCONN_SYSCTL "kern.ipc.soacceptqueue"
#endif

/*
 * At most this many connections are between connect() and their first echo
 * at any moment, and never more than the system's somaxconn, which caps
 * every listen backlog (Linux 4096 since 5.4, 128 before; macOS's
 * kern.ipc.somaxconn and FreeBSD's kern.ipc.soacceptqueue 128 by default).
 * A connection waiting in the accept queue is one of these, so the queue
 * never overflows: no SYN is dropped and retried a second later (the 1 s,
 * 2 s, ... retransmissions a burst of 10 000 connects would otherwise cost
 * on a Mac), and a slow server is not buried in handshakes. The bound used
 * is reported as connect_window.
 */
#define CONNECT_WINDOW 256

/* somaxconn where it cannot be read: the BSD and macOS default. */
#define FALLBACK_SOMAXCONN 128

/*
 * While opening connections, give up on the ones still waiting for their
 * first echo once nothing at all has happened for this long. A blocking
 * server (01) busy with an earlier client never answers them; without this
 * the run would sit until --timeout.
 */
#define RAMP_STALL_NS (10 * NS_PER_S)

/* After a window closes, how long the echoes in flight may take. */
#define DRAIN_NS (10 * NS_PER_S)

/* Largest single write: a bigger message goes out in pieces of this size. */
#define MAX_CHUNK (1024 * 1024)

/* Most events handled per wakeup. */
#define EVENT_BATCH 1024
#define SCHEDULE_EVERY 32 /* events handled between two visits of the schedule */

/* ---- payload ----------------------------------------------------------- */

/*
 * splitmix64's output function: a cheap, well-mixed 64-bit hash. Hashing a
 * block number gives the n-th word of a stream without computing the ones
 * before it, which is what lets any stretch of a message be regenerated.
 */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Bytes [offset, offset + len) of message `msg` on connection `id`. */
static void payload_fill(uint8_t *out, uint32_t id, uint32_t msg, size_t offset, size_t len)
{
    uint64_t seed = mix64(((uint64_t)id << 32) | msg);
    uint64_t block = offset / 8;
    unsigned byte = (unsigned)(offset % 8);
    while (len > 0) {
        uint64_t word = mix64(seed ^ block);
        for (; byte < 8 && len > 0; byte++, len--)
            *out++ = (uint8_t)(word >> (8 * byte));
        byte = 0;
        block++;
    }
}

/* ---- target ------------------------------------------------------------ */

int target_resolve(target_t *t, const char *host, const char *port, const char **why)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *ai;
    int rc = getaddrinfo(host, port, &hints, &ai);
    if (rc != 0) {
        *why = gai_strerror(rc);
        return -1;
    }
    memset(t, 0, sizeof *t);
    memcpy(&t->addr, ai->ai_addr, ai->ai_addrlen);
    t->addr_len = ai->ai_addrlen;
    freeaddrinfo(ai);
    snprintf(t->name, sizeof t->name, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);

    /* Off Linux (and under LADDER_FORCE_PORTABLE=1) only 127.0.0.1 is used. */
    const struct sockaddr_in *in = (const struct sockaddr_in *)&t->addr;
#ifdef __linux__
    t->spread = t->addr.ss_family == AF_INET && in->sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
                !proc_forced_portable();
#else
    (void)in;
    t->spread = false;
#endif
    return 0;
}

/*
 * The side that closes first keeps the connection in TIME_WAIT for a minute,
 * and one source address has about 28 000 ephemeral ports to a given server
 * port, so back-to-back C10K runs from 127.0.0.1 alone could
 * fail with EADDRNOTAVAIL. All of 127.0.0.0/8 is loopback on Linux, so when
 * the server is 127.0.0.1 the client spreads its sockets over 127.0.0.2 to
 * 127.0.0.254, each with its own ports. macOS and the BSDs configure only
 * 127.0.0.1 on lo0, so there (and under LADDER_FORCE_PORTABLE=1) the client
 * sends from the default address; should a bind to 127.0.0.2 still fail on
 * Linux, it falls back the same way. Any other server address: the default
 * source.
 */
static int bind_source(target_t *t, int fd)
{
    if (!t->spread)
        return 0;
#ifdef IP_BIND_ADDRESS_NO_PORT
    /* Leave the port to connect(), which can reuse it towards other servers. */
    int one = 1;
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
#endif
    struct sockaddr_in src = {.sin_family = AF_INET};
    src.sin_addr.s_addr = htonl(0x7f000002u + t->next_source % 253); /* 127.0.0.2 + k */
    if (bind(fd, (struct sockaddr *)&src, sizeof src) == 0) {
        t->next_source++;
        return 0;
    }
    if (errno == EADDRNOTAVAIL && t->next_source == 0) {
        fprintf(stderr, "loadgen: note: cannot send from 127.0.0.2, so all connections come "
                        "from 127.0.0.1; back-to-back runs may run out of ports\n");
        t->spread = false;
        return 0;
    }
    return -1;
}

/*
 * TCP_NODELAY on every socket: each message goes out in one write, so
 * Nagle's algorithm could only hold a message back, waiting for an ACK that
 * the peer delays.
 */
int target_connect(target_t *t)
{
    int one = 1;
    int fd = socket(t->addr.ss_family, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0 || bind_source(t, fd) < 0 ||
        (connect(fd, (struct sockaddr *)&t->addr, t->addr_len) < 0 && errno != EINPROGRESS)) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* ---- connection states ------------------------------------------------- */

typedef enum {
    FAIL_CONNECT,
    FAIL_REFUSED,
    FAIL_UNANSWERED,
    FAIL_LOST,
    FAIL_CORRUPT,
    FAIL_DUPLICATED, /* bytes came that no message asked for */
    FAIL_TIMED_OUT,  /* an echo still owed when --timeout ended the run */
    FAIL_CLIENT,     /* loadgen's own failure: its fds, ports, memory, event loop */
    FAIL_UNCLOSED,   /* half-closed, and the server never closed its side */
} failure_t;

bool connect_error_is_clients(int err)
{
    switch (err) {
    case EAGAIN:
    case EMFILE:
    case ENFILE:
    case EADDRNOTAVAIL:
    case EADDRINUSE:
    case ENOBUFS:
    case ENOMEM: return true;
    default: return false;
    }
}

bool write_error_is_peers(int err)
{
    switch (err) {
    case EPIPE:
    case ECONNRESET:
    case ECONNABORTED:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN: return true;
    default: return false;
    }
}

static void conn_close(pool_t *p, conn_t *c, conn_state_t state)
{
    if (c->fd >= 0) {
        loop_remove(p->loop, c->fd);
        close(c->fd);
        c->fd = -1;
    }
    if (c->state == CONN_BUSY)
        p->busy--;
    c->state = state;
}

/* Give up on a connection, count why, and keep the first reason for the summary. */
static void conn_fail(pool_t *p, conn_t *c, failure_t kind, const char *fmt, ...)
{
    if (p->first_error[0] == '\0') {
        int len = snprintf(p->first_error, sizeof p->first_error, "connection %u: ", c->id);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->first_error + len, sizeof p->first_error - (size_t)len, fmt, ap);
        va_end(ap);
    }
    if (kind == FAIL_CLIENT)
        p->n.client_errors++;
    else if (kind == FAIL_UNCLOSED)
        p->n.unclosed++;
    else if (kind == FAIL_CORRUPT)
        p->n.corrupt++;
    else if (kind == FAIL_DUPLICATED)
        ; /* counted in bytes by the caller */
    else if (c->served && kind == FAIL_TIMED_OUT)
        p->n.timed_out++;
    else if (c->served)
        p->n.lost++;
    else if (kind == FAIL_CONNECT)
        p->n.connect_failed++;
    else if (kind == FAIL_REFUSED)
        p->n.refused++;
    else
        p->n.unanswered++;
    if (!c->served)
        p->settled++;
    conn_close(p, c, CONN_FAILED);
}

/* connect() failed, by the client's fault or the server's (connect_error_is_clients). */
static void connect_failed(pool_t *p, conn_t *c, int err)
{
    conn_fail(p, c, connect_error_is_clients(err) ? FAIL_CLIENT : FAIL_CONNECT, "connect to %s: %s",
              p->target->name, strerror(err));
}

/*
 * The loop watches for what the connection waits for: the end of connect(),
 * room to send the rest of a message, and always for input, which is either
 * the echo or the server hanging up.
 */
static void watch(pool_t *p, conn_t *c)
{
    int want = c->state == CONN_CONNECTING ? LOOP_WRITE : LOOP_READ;
    if (c->state == CONN_BUSY && c->sent < p->msg_size)
        want |= LOOP_WRITE;
    if (want == c->interest)
        return;
    c->interest = want;
    if (loop_modify(p->loop, c->fd, want, c) < 0)
        conn_fail(p, c, FAIL_CLIENT, "event loop: %s", strerror(errno));
}

/*
 * Offer all that is left of the message to one write() (up to MAX_CHUNK):
 * a message written in pieces invites Nagle and delayed ACK to add tens of
 * milliseconds to a round trip. A short write is continued from where it
 * stopped once the socket has room, never restarted: so while the message
 * is not all out, the loop watches for room (watch).
 */
static void send_more(pool_t *p, conn_t *c)
{
    size_t len = p->msg_size - c->sent;
    if (len > p->buf_size)
        len = p->buf_size;
    payload_fill(p->send_buf, c->id, c->msg, c->sent, len);
    ssize_t n = write(c->fd, p->send_buf, len);
    /* A failure of the peer's is refused (lost, once served); any other, the client's. */
    if (n >= 0)
        c->sent += (size_t)n;
    else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        conn_fail(p, c, write_error_is_peers(errno) ? FAIL_REFUSED : FAIL_CLIENT, "write: %s",
                  strerror(errno));
    if (c->state == CONN_BUSY)
        watch(p, c);
}

/* Send the next message, timed from due_ns (the write's own time in a closed loop). */
static void start_message(pool_t *p, conn_t *c, uint64_t due_ns)
{
    c->state = CONN_BUSY;
    c->sent = c->received = 0;
    c->started_ns = due_ns;
    c->lag_ns = 0;
    c->in_window = p->window_end && due_ns >= p->window_start && due_ns < p->window_end;
    uint64_t now = now_ns();
    p->n.sends += p->window_end && now >= p->window_start && now < p->window_end;
    /* By when it was due, not when write() ran: a message due inside the
     * window but sent in the batch handled just after its end is owed, so
     * it counts as in flight at the end (and its echo, in the drain). */
    p->sent_after_end += p->window_open && due_ns >= p->window_end;
    p->busy++;
    send_more(p, c);
}

/* ---- the open-loop schedule -------------------------------------------- */

/* When slot j of the schedule is due. */
static uint64_t slot_due(const pool_t *p, uint64_t j)
{
    return p->window_start + (uint64_t)((double)j * (double)NS_PER_S / p->rate);
}

/* When the connection's next unsent slot is due. */
static uint64_t next_due(const pool_t *p, const conn_t *c)
{
    return slot_due(p, c->sched_sent * p->slot_count + c->slot_index);
}

/*
 * An idle connection whose next slot is due (and inside the window) sends
 * it now. The earliest it could have gone is when it was due or when the
 * previous echo came back, whichever is later; any delay beyond that is the
 * client's, measured and counted here.
 */
static void send_if_due(pool_t *p, conn_t *c, uint64_t now)
{
    if (c->state != CONN_IDLE || !c->active)
        return;
    uint64_t due = next_due(p, c);
    if (due > now || due >= p->window_end)
        return;
    uint64_t could = due > c->done_ns ? due : c->done_ns;
    uint64_t lag = now > could ? now - could : 0;
    if (lag > p->n.lag_max_ns)
        p->n.lag_max_ns = lag;
    p->n.late_sends += lag > LATE_NS;
    c->sched_sent++;
    start_message(p, c, due);
    c->lag_ns = lag;
}

/* Visit every slot that has fallen due since the last call. */
static void run_schedule(pool_t *p, uint64_t now)
{
    while (p->next_slot < UINT64_MAX) {
        uint64_t due = slot_due(p, p->next_slot);
        if (due > now || due >= p->window_end)
            break;
        send_if_due(p, p->slots[p->next_slot % p->slot_count], now);
        p->next_slot++;
    }
}

/* The whole echo is back and verified. */
static void complete_message(pool_t *p, conn_t *c)
{
    uint64_t t = now_ns();
    if (c->in_window) { /* every message due in the window is timed, also in the drain */
        hist_add(p->rtt_ns, t - c->started_ns);
        if (p->rate > 0 || c->lag_ns) {
            hist_add(p->lag_ns, c->lag_ns);
            hist_add(p->service_ns, t - c->started_ns - c->lag_ns);
        }
    }
    if (t <= p->window_end && p->window_end) { /* msgs: echoes inside the window only */
        p->n.round_trips++;
        c->window_echoes++;
    } else if (p->window_open) {
        p->done_after_end++; /* in flight when the window closed, back just after */
    }
    c->msg++;
    c->state = CONN_IDLE;
    c->done_ns = t;
    p->busy--;
    if (!c->served) {
        c->served = true;
        p->n.served++;
        p->settled++;
    }
    if (c->active && p->rate > 0)
        send_if_due(p, c, t); /* its backlog, in order */
    else if (c->active && p->issuing && t < p->window_end)
        start_message(p, c, t);
    if (c->state == CONN_IDLE)
        watch(p, c);
}

/* ---- event handlers ---------------------------------------------------- */

static void on_connected(pool_t *p, conn_t *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err != 0) {
        connect_failed(p, c, err);
        return;
    }
    p->n.established++;
    hist_add(p->connect_ns, now_ns() - c->started_ns);
    start_message(p, c, now_ns());
}

/*
 * Whether n received bytes are the previous message's again, where this
 * one's echo should begin: in a closed loop the next message goes out the
 * moment an echo is whole, so a server that echoes a message twice is
 * heard while the next one is owed. Those bytes are duplicated, not wrong.
 */
static bool repeats_last_message(pool_t *p, const conn_t *c, size_t n)
{
    if (c->msg == 0)
        return false;
    payload_fill(p->expect_buf, c->id, c->msg - 1, c->received, n);
    return memcmp(p->expect_buf, p->recv_buf, n) == 0;
}

/* Compare n received bytes with what the echo should hold at this point. */
static bool verify(pool_t *p, conn_t *c, size_t n)
{
    payload_fill(p->expect_buf, c->id, c->msg, c->received, n);
    if (memcmp(p->expect_buf, p->recv_buf, n) == 0)
        return true;
    if (repeats_last_message(p, c, n)) {
        p->n.duplicated += (uint64_t)n;
        conn_fail(p, c, FAIL_DUPLICATED, "message %u, byte %zu: %zu bytes of message %u again",
                  c->msg, c->received, n, c->msg - 1);
        return false;
    }
    payload_fill(p->expect_buf, c->id, c->msg, c->received, n);
    size_t i = 0;
    while (p->expect_buf[i] == p->recv_buf[i])
        i++;
    conn_fail(p, c, FAIL_CORRUPT, "message %u, byte %zu of %zu: sent 0x%02x, echo has 0x%02x",
              c->msg, c->received + i, p->msg_size, p->expect_buf[i], p->recv_buf[i]);
    return false;
}

/* EOF or an error on read: whether it counts as refused or lost depends on served. */
static void peer_gone(pool_t *p, conn_t *c, ssize_t n)
{
    const char *what = n == 0 ? "closed by the server" : strerror(errno);
    if (c->state == CONN_TAIL && n == 0) {
        conn_close(p, c, CONN_CLOSED); /* the close we asked for */
        return;
    }
    if (c->state == CONN_TAIL)
        conn_fail(p, c, FAIL_LOST, "%s after its last echo", what);
    else if (c->served)
        conn_fail(p, c, FAIL_LOST, "%s", what);
    else
        conn_fail(p, c, FAIL_REFUSED, "%s before its first echo", what);
}

static void on_readable(pool_t *p, conn_t *c)
{
    /* While idle, any byte at all is one the server should not have sent. */
    size_t want = c->state == CONN_BUSY ? p->msg_size - c->received : p->buf_size;
    if (want > p->buf_size)
        want = p->buf_size;
    ssize_t n = read(c->fd, p->recv_buf, want);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        peer_gone(p, c, n);
        return;
    }
    if (c->state != CONN_BUSY) {
        p->n.duplicated += (uint64_t)n;
        conn_fail(p, c, FAIL_DUPLICATED, "%zd bytes arrived that were never sent%s", n,
                  c->state == CONN_TAIL ? ", after its last echo" : "");
        return;
    }
    if (!verify(p, c, (size_t)n))
        return;
    c->received += (size_t)n;
    p->n.bytes_verified += (uint64_t)n;
    if (c->received == p->msg_size)
        complete_message(p, c);
}

static void on_event(pool_t *p, conn_t *c, int events)
{
    if (c->fd < 0)
        return; /* closed by an earlier event of the same batch */
    if (c->state == CONN_CONNECTING) {
        on_connected(p, c);
        return;
    }
    if (events & (LOOP_READ | LOOP_ERROR))
        on_readable(p, c);
    if (c->fd >= 0 && (events & LOOP_WRITE) && c->state == CONN_BUSY && c->sent < p->msg_size)
        send_more(p, c);
}

/* Wait for events until `until` at the latest (capped at a second), handle them. */
static void poll_once(pool_t *p, uint64_t until)
{
    loop_event_t events[EVENT_BATCH];
    uint64_t now = now_ns();
    uint64_t wait_ns = until > now ? until - now : 0;
    if (wait_ns > NS_PER_S)
        wait_ns = NS_PER_S;
    int n = loop_wait(p->loop, events, EVENT_BATCH, (long)((wait_ns + NS_PER_US - 1) / NS_PER_US));
    if (n < 0) {
        perror("loadgen: waiting for events");
        exit(1);
    }
    for (int i = 0; i < n; i++) {
        on_event(p, events[i].data, events[i].events);
        /*
         * A batch can hold a thousand echoes, 10 to 20 us of work each: the
         * slots that fall due meanwhile are visited every SCHEDULE_EVERY
         * events, so that a burst the server sent does not make the
         * client's own sends late.
         */
        if (p->rate > 0 && p->window_open && (i + 1) % SCHEDULE_EVERY == 0)
            run_schedule(p, now_ns());
    }
}

/* ---- phases ------------------------------------------------------------ */

/*
 * The kernel's cap on listen backlogs, or FALLBACK_SOMAXCONN if it cannot be
 * read (also under LADDER_FORCE_PORTABLE=1 on Linux: no /proc there).
 */
static long system_somaxconn(void)
{
    long value = -1;
#if defined(__linux__)
    FILE *f = proc_forced_portable() ? NULL : fopen("/proc/sys/net/core/somaxconn", "r");
    if (f) {
        if (fscanf(f, "%ld", &value) != 1)
            value = -1;
        fclose(f);
    }
#elif defined(SOMAXCONN_SYSCTL)
    int v;
    size_t len = sizeof v;
    if (sysctlbyname(SOMAXCONN_SYSCTL, &v, &len, NULL, 0) == 0 && len == sizeof v)
        value = v;
#endif
    return value > 0 ? value : FALLBACK_SOMAXCONN;
}

int pool_init(pool_t *p, target_t *target, size_t capacity, size_t msg_size)
{
    memset(p, 0, sizeof *p);
    p->target = target;
    p->msg_size = msg_size;
    p->capacity = capacity;
    long somaxconn = system_somaxconn();
    p->connect_window = somaxconn < CONNECT_WINDOW ? (size_t)somaxconn : CONNECT_WINDOW;
    p->buf_size = msg_size < MAX_CHUNK ? (msg_size < 4096 ? 4096 : msg_size) : MAX_CHUNK;
    /* What it will hold, and a few more: not the open-file limit (loop_poll.c). */
    p->loop = loop_create(capacity < INT_MAX - 64 ? (int)capacity + 64 : INT_MAX);
    p->conns = calloc(capacity, sizeof *p->conns);
    p->slots = calloc(capacity, sizeof *p->slots);
    p->connect_ns = calloc(1, sizeof *p->connect_ns);
    p->rtt_ns = calloc(1, sizeof *p->rtt_ns);
    p->lag_ns = calloc(1, sizeof *p->lag_ns);
    p->service_ns = calloc(1, sizeof *p->service_ns);
    p->send_buf = malloc(p->buf_size);
    p->recv_buf = malloc(p->buf_size);
    p->expect_buf = malloc(p->buf_size);
    if (!p->loop || !p->conns || !p->slots || !p->connect_ns || !p->rtt_ns || !p->lag_ns ||
        !p->service_ns || !p->send_buf ||
        !p->recv_buf || !p->expect_buf) {
        pool_free(p);
        return -1;
    }
    return 0;
}

void pool_free(pool_t *p)
{
    for (size_t i = 0; i < p->count; i++)
        if (p->conns[i].fd >= 0)
            conn_close(p, &p->conns[i], CONN_CLOSED);
    loop_destroy(p->loop);
    free(p->conns);
    free(p->slots);
    free(p->connect_ns);
    free(p->rtt_ns);
    free(p->lag_ns);
    free(p->service_ns);
    free(p->send_buf);
    free(p->recv_buf);
    free(p->expect_buf);
}

static void open_one(pool_t *p)
{
    conn_t *c = &p->conns[p->count];
    *c = (conn_t){.fd = -1, .id = p->first_id + (uint32_t)p->count, .state = CONN_CONNECTING};
    p->count++;
    c->started_ns = now_ns();
    c->fd = target_connect(p->target);
    if (c->fd < 0) {
        connect_failed(p, c, errno);
        return;
    }
    c->interest = LOOP_WRITE;
    if (loop_add(p->loop, c->fd, c->interest, c) < 0)
        conn_fail(p, c, FAIL_CLIENT, "event loop: %s", strerror(errno));
}

/*
 * Every connection not yet served gets no more chances: one whose connect()
 * never completed (a full accept queue drops SYNs) failed to connect; one
 * connected went unanswered: stalled (nothing moved for RAMP_STALL_NS), or
 * --timeout came first.
 */
static void give_up_waiting(pool_t *p, bool stalled)
{
    char why[64] = " before --timeout";
    if (stalled)
        snprintf(why, sizeof why, ", and nothing moved for %g s", (double)RAMP_STALL_NS / NS_PER_S);
    for (size_t i = 0; i < p->count; i++) {
        conn_t *c = &p->conns[i];
        if (c->served || c->fd < 0)
            continue;
        if (c->state == CONN_CONNECTING)
            conn_fail(p, c, FAIL_CONNECT, "connect to %s did not complete%s%s", p->target->name,
                      why, stalled ? " (is its accept queue full?)" : "");
        else
            conn_fail(p, c, FAIL_UNANSWERED, "no echo%s%s", why,
                      stalled ? " (is the server busy with another client?)" : "");
    }
}

/*
 * Every connection opened before is settled when this starts, so the phase
 * is over once `settled` reaches the new total.
 */
void pool_grow(pool_t *p, size_t more, uint64_t deadline)
{
    size_t target = p->count + more;
    if (target > p->capacity)
        target = p->capacity;
    uint64_t last_progress = now_ns();
    size_t progress = p->settled + p->n.established;

    while (p->settled < target) {
        while (p->count < target && p->count - p->settled < p->connect_window)
            open_one(p);
        if (p->settled == target)
            break;
        poll_once(p, deadline);
        uint64_t now = now_ns();
        if (p->settled + p->n.established != progress) {
            progress = p->settled + p->n.established;
            last_progress = now;
        } else if (now - last_progress >= RAMP_STALL_NS) {
            give_up_waiting(p, true);
            break;
        }
        if (now >= deadline) {
            p->timed_out = true;
            give_up_waiting(p, false);
            break;
        }
    }
    p->n.untried += target - p->count;
}

/* Give the active, idle connections their places in the open-loop schedule. */
static void build_schedule(pool_t *p)
{
    p->slot_count = 0;
    p->next_slot = 0;
    for (size_t i = 0; i < p->count; i++) {
        conn_t *c = &p->conns[i];
        if (c->active && c->state == CONN_IDLE) {
            c->slot_index = (uint32_t)p->slot_count;
            c->sched_sent = 0;
            p->slots[p->slot_count++] = c;
        }
    }
}

/*
 * The window is what the rates are divided by: it ends when the requested
 * duration is up, or earlier when --timeout cuts it short.
 */
void pool_forget_window(pool_t *p)
{
    hist_clear(p->rtt_ns);
    hist_clear(p->lag_ns);
    hist_clear(p->service_ns);
    p->n.round_trips = p->n.sends = p->n.late_sends = p->n.lag_max_ns = p->n.window_ns = 0;
    p->n.in_flight_at_end = 0;
    for (size_t i = 0; i < p->count; i++)
        p->conns[i].window_echoes = 0;
}

void pool_window(pool_t *p, uint64_t duration_ns, double rate, uint64_t deadline)
{
    pool_forget_window(p);
    p->done_after_end = p->sent_after_end = 0;
    p->window_open = true;
    uint64_t start = now_ns();
    p->window_start = start;
    p->window_end = start + duration_ns;
    if (p->window_end > deadline)
        p->window_end = deadline; /* round trips after the deadline are not counted either */
    p->rate = rate;
    if (rate > 0) {
        build_schedule(p);
        if (p->slot_count == 0)
            p->rate = 0;
    }
    p->issuing = p->rate == 0;
    for (size_t i = 0; p->issuing && i < p->count; i++)
        if (p->conns[i].active && p->conns[i].state == CONN_IDLE)
            start_message(p, &p->conns[i], start);

    for (uint64_t now = now_ns(); now < p->window_end; now = now_ns()) {
        uint64_t until = p->window_end;
        if (p->rate > 0) {
            run_schedule(p, now);
            uint64_t due = slot_due(p, p->next_slot);
            if (due < until)
                until = due;
        }
        poll_once(p, until);
    }
    /*
     * The last wait ended at or after window_end, so slots that fell due
     * between the last visit of the schedule and window_end have not been
     * visited yet: they are owed like every other slot of the window, and
     * go out now, late (counted so), timed from their due time, their echoes
     * in the drain.
     */
    if (p->rate > 0)
        run_schedule(p, now_ns());
    /*
     * The last batch of events was handled a moment after window_end: echoes
     * that came back then were still out at window_end; a message sent then
     * was owed at window_end (in flight) only if it was due before it, as the
     * slots just sent were.
     */
    p->issuing = p->window_open = false;
    p->n.in_flight_at_end = p->busy + p->done_after_end - p->sent_after_end;
    p->n.window_ns = p->window_end > start ? p->window_end - start : 0;
    if (p->window_end < start + duration_ns)
        p->timed_out = true; /* --timeout cut the window short */
}

/*
 * Nothing new is scheduled now; the echoes in flight must still come back
 * whole. In an open loop a connection's backlog (slots that fell due inside
 * the window while its echo was out) still goes out, each send timed from
 * its slot, so a server that stalls at the end of the window is not let off.
 */
void pool_drain(pool_t *p, uint64_t deadline)
{
    uint64_t drain_end = now_ns() + DRAIN_NS;
    if (drain_end > deadline)
        drain_end = deadline;
    while (p->busy > 0 && now_ns() < drain_end)
        poll_once(p, drain_end);
    if (p->busy > 0 && drain_end == deadline)
        p->timed_out = true;
    for (size_t i = 0; i < p->count && p->busy > 0; i++) {
        conn_t *c = &p->conns[i];
        if (c->state != CONN_BUSY)
            continue;
        if (p->timed_out) /* still owed an echo when the run had to end */
            conn_fail(p, c, FAIL_TIMED_OUT, "no echo of message %u before --timeout", c->msg);
        else
            conn_fail(p, c, FAIL_LOST, "no echo of message %u within %g s", c->msg,
                      (double)DRAIN_NS / NS_PER_S);
    }
    p->rate = 0;
}

/* Connections half-closed by pool_tail that the server has not closed yet. */
static size_t count_tail(const pool_t *p)
{
    size_t open = 0;
    for (size_t i = 0; i < p->count; i++)
        open += p->conns[i].state == CONN_TAIL;
    return open;
}

/*
 * shutdown(SHUT_WR) sends FIN: an echo server finishes what it owes and
 * closes (RFC 862 has nothing more to send). Whatever arrives before that
 * close was never sent; a reset instead of a close is a lost connection.
 * A connection the server keeps open after the FIN is unclosed: a server
 * that never closes a half-closed connection keeps its descriptor (and its
 * memory) forever. The wait lasts as long as the server keeps closing
 * (tail_ns after the last close, so that 10 000 children or threads
 * exiting one by one on a slow machine are not taken for the fault), and
 * DRAIN_NS in all at most; past the run's deadline, only tail_ns.
 */
void pool_tail(pool_t *p, uint64_t tail_ns, uint64_t deadline)
{
    for (size_t i = 0; i < p->count; i++) {
        conn_t *c = &p->conns[i];
        if (c->fd < 0 || c->state != CONN_IDLE)
            continue;
        shutdown(c->fd, SHUT_WR); /* fails only if already reset, which read() reports */
        c->state = CONN_TAIL;
    }
    p->tailed = true;
    uint64_t start = now_ns(), last_close = start;
    uint64_t limit = start + DRAIN_NS;
    if (limit > deadline)
        limit = deadline > start + tail_ns ? deadline : start + tail_ns;
    size_t open = count_tail(p);
    while (open > 0) {
        uint64_t until = last_close + tail_ns;
        if (until > limit)
            until = limit;
        if (now_ns() >= until)
            break;
        poll_once(p, until);
        size_t still = count_tail(p);
        if (still < open)
            last_close = now_ns();
        open = still;
    }
    for (size_t i = 0; i < p->count && open > 0; i++)
        if (p->conns[i].state == CONN_TAIL)
            conn_fail(p, &p->conns[i], FAIL_UNCLOSED, "not closed by the server after its "
                      "last echo and loadgen's half-close (shutdown SHUT_WR)");
}

void pool_idle(pool_t *p, uint64_t duration_ns, uint64_t deadline)
{
    uint64_t until = now_ns() + duration_ns;
    if (until > deadline) {
        until = deadline;
        p->timed_out = true;
    }
    while (now_ns() < until)
        poll_once(p, until);
}

void pool_close_newest(pool_t *p, size_t how_many)
{
    for (size_t i = p->count; i-- > 0 && how_many > 0;) {
        conn_t *c = &p->conns[i];
        if (c->state == CONN_IDLE && !c->active) {
            conn_close(p, c, CONN_CLOSED);
            how_many--;
        }
    }
}

size_t pool_open_passive(const pool_t *p)
{
    size_t open = 0;
    for (size_t i = 0; i < p->count; i++) {
        const conn_t *c = &p->conns[i];
        if (!c->active && (c->state == CONN_IDLE || c->state == CONN_BUSY))
            open++;
    }
    return open;
}
