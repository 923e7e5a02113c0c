/*
 * 06-kqueue: the kernel keeps the list, and returns only what is ready.
 *
 * The idea: select and poll hand the kernel every fd on every call, and the
 * kernel answers by marking up that whole list. kqueue (FreeBSD 4.1, 2000;
 * macOS) turns this around: we register each event once, as an (fd, filter)
 * pair, and kevent() returns just the events that fired. A wakeup costs the
 * same with 10 idle clients or 10 000:
 *
 *     make wall      (runs: loadgen scan --idle 0,100,1000,10000)
 *
 * keeps one client's round trip flat where 05-poll's grows.
 *
 * Reading and writing are two separate filters on one fd, EVFILT_READ and
 * EVFILT_WRITE. Both are added when a client arrives, and the connection's
 * state enables one and disables the other. kevent() can apply a list of
 * changes and wait in the same call; this server keeps the two apart, as 07
 * does with epoll_ctl() and epoll_wait(): each change is a kevent() call of
 * its own, made when the connection's state changes, and the loop waits with
 * an empty change list. (Batching the changes into the next wait would save
 * those calls, at the price of their errors arriving among the events.)
 *
 * Level-triggered (the default), like 04 and 05: an event fires for as long
 * as the fd is ready, so reading one buffer per wakeup is safe.
 *
 * On Linux, which has no kqueue, this same file builds against the small
 * shim in platform/kqueue-shim/ (over epoll): run there, the numbers are epoll's.
 *
 * Next: 07-epoll, Linux's own interface for the same idea.
 */
#include "events.h"

#include <sys/event.h>
#include <sys/types.h>

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

#define MAX_EVENTS 256 /* ready events taken per kevent(); more wait a turn */

static int kq; /* the interest list, kept by the kernel */

/* ---- what a connection wants: derived from its state, never stored ----- */

static bool wants_write(const conn_t *c)
{
    return c->pending != NULL;
}

/* ---- telling the kernel what we want ----------------------------------- */

/* Both filters of one fd in one kevent() call. False, errno set, if the
 * kernel refuses: adding can meet ENOMEM; enabling, disabling or deleting a
 * filter that is already registered allocates nothing. */
static bool set_interest(int fd, int read_flags, int write_flags)
{
    struct kevent changes[2];
    EV_SET(&changes[0], fd, EVFILT_READ, read_flags, 0, 0, NULL);
    EV_SET(&changes[1], fd, EVFILT_WRITE, write_flags, 0, 0, NULL);
    return kevent(kq, changes, 2, NULL, 0, NULL) == 0;
}

static bool start_watching(conn_t *c)
{
    return set_interest(c->fd, EV_ADD | EV_ENABLE, EV_ADD | EV_DISABLE);
}

static void watch(conn_t *c)
{
    bool w = wants_write(c);
    set_interest(c->fd, w ? EV_DISABLE : EV_ENABLE, w ? EV_ENABLE : EV_DISABLE);
}

/* Before close(). On the BSDs close() drops the fd's events by itself
 * (kqueue(2)); the Linux shim cannot see close(), so it needs this. */
static void stop_watching(conn_t *c)
{
    set_interest(c->fd, EV_DELETE, EV_DELETE);
}

/* Only one filter here: the listener has nothing to write. */
static bool watch_read(int fd, int flags)
{
    struct kevent change;
    EV_SET(&change, fd, EVFILT_READ, flags, 0, 0, NULL);
    return kevent(kq, &change, 1, NULL, 0, NULL) == 0;
}

static void watch_listener(bool on)
{
    watch_read(listen_fd, on ? EV_ENABLE : EV_DISABLE);
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
    kq = kqueue();
    if (kq < 0)
        fatal("kqueue");

    /* The listener, and the stop pipe that wakes us on SIGINT/SIGTERM (net.h). */
    if (!watch_read(listen_fd, EV_ADD) || !watch_read(stop_pipe[0], EV_ADD))
        fatal("kevent");
    announce_listening(listen_fd);

    while (!stop_requested) {
        int timeout = ms_until_accept_retry(); /* -1 unless accept() is paused (events.h) */
        struct kevent events[MAX_EVENTS];
        struct timespec retry = {.tv_nsec = timeout * 1000000L};
        int nready = kevent(kq, NULL, 0, events, MAX_EVENTS, timeout < 0 ? NULL : &retry);
        if (nready < 0) {
            if (errno == EINTR)
                continue;
            fatal("kevent");
        }
        /* O(ready): every entry is an fd with something to do. An fd comes
         * once per batch (one filter is enabled at a time) and only its own
         * handler closes it, so no entry names a connection already gone. */
        for (int i = 0; i < nready; i++) {
            int fd = (int)events[i].ident;
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
    close(kq);
    close(listen_fd);
    close_stop_pipe();
    return 0;
}
