/*
 * 07-epoll: Linux's answer, O(ready).
 *
 * The idea: as in 06-kqueue, the interest list lives in the kernel. We add
 * each fd once with epoll_ctl(), change it only when the connection's state
 * changes, and epoll_wait() returns just the fds that are ready. A wakeup
 * costs the same with 10 idle clients or 10 000:
 *
 *     make wall      (runs: loadgen scan --idle 0,100,1000,10000)
 *
 * keeps one client's round trip flat, and
 *
 *     (then, in the same run: loadgen c10k -n 10000)
 *
 * serves ten thousand clients at once from one thread (C10K).
 *
 * The differences from kqueue: one registration per fd, with a bitmask of
 * events, where kqueue has one per (fd, filter); a mask change is one
 * EPOLL_CTL_MOD where kqueue enables one filter and disables the other.
 *
 * Level-triggered (the default), like 04-06: an fd is reported for as long
 * as it is ready, so reading one buffer per wakeup is safe and no client can
 * starve the others. (Edge-triggered: see README.md.)
 *
 * The wall: none at C10K. What is left is the cost of the work itself.
 */
#include "events.h"

#include <sys/epoll.h>

#define BUF_SIZE 16384

typedef struct {
    int fd;
    char *pending;      /* echo bytes the peer has not taken yet, or NULL */
    size_t pending_len; /* bytes in pending */
} conn_t;

static conn_t **conns;         /* by fd, sized to the open-file limit */
static long max_fds;           /* the size of conns */
static char buf[BUF_SIZE];     /* one read at a time, shared by all */
static int listen_fd;
static bool verbose;

#define MAX_EVENTS 256 /* ready fds taken per epoll_wait(); more wait a turn */

static int epoll_fd; /* the interest list, kept by the kernel */

/* ---- what a connection wants: derived from its state, never stored ----- */

static bool wants_write(const conn_t *c)
{
    return c->pending != NULL;
}

/* ---- telling the kernel what we want ----------------------------------- */

/* False, errno set, if the kernel refuses. Adding can meet ENOSPC (past
 * fs.epoll.max_user_watches) or ENOMEM; changing or deleting an fd that is
 * already in the list allocates nothing. */
static bool set_interest(int op, int fd, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.fd = fd};
    return epoll_ctl(epoll_fd, op, fd, &ev) == 0;
}

static uint32_t interest(const conn_t *c)
{
    return wants_write(c) ? EPOLLOUT : EPOLLIN;
}

static bool start_watching(conn_t *c)
{
    return set_interest(EPOLL_CTL_ADD, c->fd, interest(c));
}

static void watch(conn_t *c)
{
    set_interest(EPOLL_CTL_MOD, c->fd, interest(c));
}

/* Before close(): epoll watches the open file, not the fd number (epoll(7)). */
static void stop_watching(conn_t *c)
{
    set_interest(EPOLL_CTL_DEL, c->fd, 0);
}

static void watch_listener(bool on)
{
    set_interest(EPOLL_CTL_MOD, listen_fd, on ? EPOLLIN : 0);
}

/* ---- one connection ---------------------------------------------------- */

/* Write what the peer's socket buffer takes; keep the rest (at most one
 * buffer's worth) to send when it is writable again. */
static bool send_or_keep(conn_t *c, const char *data, size_t len)
{
    ssize_t n = write(c->fd, data, len);
    if (n < 0 && !is_transient(errno)) {
        log_errno("fd %d: write", c->fd);
        return false;
    }
    size_t sent = n < 0 ? 0 : (size_t)n;
    if (sent < len) {
        c->pending = malloc(len - sent);
        if (!c->pending) {
            log_msg("fd %d: out of memory", c->fd);
            return false;
        }
        memcpy(c->pending, data + sent, len - sent);
        c->pending_len = len - sent;
    }
    return true;
}

/* Returns false when the connection is finished. */
static bool on_readable(conn_t *c)
{
    ssize_t n = read(c->fd, buf, sizeof buf);
    if (n > 0)
        return send_or_keep(c, buf, (size_t)n);
    if (n == 0)
        return false; /* the peer is done sending, and we owe it nothing */
    if (is_transient(errno))
        return true;
    log_errno("fd %d: read", c->fd);
    return false;
}

/* Once drained, pending is gone: an idle connection holds no buffer. */
static bool on_writable(conn_t *c)
{
    char *held = c->pending;
    c->pending = NULL;
    bool ok = send_or_keep(c, held, c->pending_len);
    free(held);
    return ok;
}

static void close_conn(conn_t *c)
{
    stop_watching(c); /* before close(), while the fd is still ours */
    conns[c->fd] = NULL;
    close(c->fd);
    if (verbose)
        log_msg("fd %d: closed", c->fd);
    free(c->pending);
    free(c);
    accept_resume(); /* a descriptor is free again: events.h */
}

/*
 * The fd is ready for what we asked, or has an error that the I/O will
 * report. Do the I/O, then tell the kernel only if the interest changed.
 */
static void on_ready(conn_t *c)
{
    bool was_writing = wants_write(c);
    bool keep = was_writing ? on_writable(c) : on_readable(c);
    if (!keep)
        close_conn(c);
    else if (wants_write(c) != was_writing)
        watch(c);
}

/* ---- new connections --------------------------------------------------- */

/* The listener is readable: take the queued connections, until EAGAIN or
 * ACCEPT_BATCH of them (a connect storm must not starve the clients we have). */
static void accept_clients(void)
{
    for (int taken = 0; taken < ACCEPT_BATCH; taken++) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0) {
            if (accept_retry_at_once(errno))
                continue; /* a signal, or a client that failed while queued (net.h) */
            /* EAGAIN: all who queued are in. Out of fds (EMFILE, ENFILE) the
             * client stays queued and the listener readable, and we would
             * spin: a pause begins, and we stop watching it for a while; an
             * EAGAIN after the pause ends it (accept_failed(): events.h). */
            if (accept_failed(errno))
                watch_listener(!accept_paused());
            return;
        }
        /* A limit raised while we run (prlimit --pid) allows fds past the table. */
        if (refuse_past(fd, max_fds, table_limit))
            continue;
        conn_t *c = malloc(sizeof *c);
        if (c)
            *c = (conn_t){.fd = fd};
        if (!c || set_nonblocking(fd) < 0 || !start_watching(c)) {
            log_errno("fd %d: cannot set up connection", fd);
            free(c);
            close(fd);
            continue;
        }
        conns[fd] = c;
        if (verbose)
            log_msg("fd %d: connected", fd);
    }
}

int main(int argc, char **argv)
{
    server_options_t opts;
    parse_options(argc, argv, &opts, NULL, NULL, NULL);
    verbose = opts.verbose;
    install_signal_handlers();
    conns = new_fd_table(sizeof *conns, &max_fds, LONG_MAX, verbose);
    listen_fd = open_listener(&opts);
    if (set_nonblocking(listen_fd) < 0)
        fatal("fcntl O_NONBLOCK");
    epoll_fd = epoll_create1(0);
    if (epoll_fd < 0)
        fatal("epoll_create1");

    /* The listener, and the stop pipe that wakes us on SIGINT/SIGTERM (net.h). */
    if (!set_interest(EPOLL_CTL_ADD, listen_fd, EPOLLIN) ||
        !set_interest(EPOLL_CTL_ADD, stop_pipe[0], EPOLLIN))
        fatal("epoll_ctl");
    announce_listening(listen_fd);

    while (!stop_requested) {
        int timeout = ms_until_accept_retry(); /* -1 unless accept() is paused (events.h) */
        struct epoll_event events[MAX_EVENTS];
        int nready = epoll_wait(epoll_fd, events, MAX_EVENTS, timeout);
        if (nready < 0) {
            if (errno == EINTR)
                continue;
            fatal("epoll_wait");
        }
        /* O(ready): every entry is an fd with something to do. epoll gives
         * an fd at most once per batch and only its own handler closes it,
         * so no entry names a connection already gone. */
        for (int i = 0; i < nready; i++) {
            int fd = events[i].data.fd;
            if (fd == listen_fd)
                accept_clients();
            else if (conns[fd])
                on_ready(conns[fd]);
        }
        if (timeout == 0)
            accept_clients(); /* paused, and the retry was due as the turn began (events.h) */
    }

    for (long fd = 0; fd < max_fds; fd++)
        if (conns[fd])
            close_conn(conns[fd]);
    free(conns);
    close(epoll_fd);
    close(listen_fd);
    close_stop_pipe();
    return 0;
}
