/*
 * 05-poll: select without the ceiling.
 *
 * The idea: the same event loop as 04-select, connection by connection, but
 * the interest list is an array of struct pollfd that we own and size
 * ourselves, one entry per watched fd, instead of a fixed bitmap. No
 * FD_SETSIZE: any fd the process may open can be watched, so 10 000 clients
 * fit. The kernel writes its answer into each entry's revents and leaves
 * our events alone, so nothing has to be copied before each call.
 *
 * The wall: poll() is still O(n) per wakeup. Each call copies the whole
 * array into the kernel, which checks every entry, and we then scan every
 * revents, even when a single client out of 10 000 is active:
 *
 *     make wall      (runs: loadgen scan --idle 0,100,1000,10000)
 *
 * shows one client's round trip and the server's CPU per round trip growing
 * with the number of idle connections.
 *
 * Next: 06-kqueue keeps the interest list inside the kernel and returns only
 * the ready events: O(ready), not O(n).
 */
#include "events.h"

#include <poll.h>

#define BUF_SIZE 16384

typedef struct {
    int fd;
    char *pending;      /* echo bytes the peer has not taken yet, or NULL */
    size_t pending_len; /* bytes in pending */
    size_t slot;        /* its entry in pollfds */
} conn_t;

static conn_t **conns;         /* by fd, sized to the open-file limit */
static long max_fds;           /* the size of conns */
static char buf[BUF_SIZE];     /* one read at a time, shared by all */
static int listen_fd;
static bool verbose;

/* Slot 0 is the listener, slot 1 the stop pipe, then one per connection. */
static struct pollfd *pollfds;
static size_t npollfds, pollfds_cap;

/* ---- what a connection wants: derived from its state, never stored ----- */

static bool wants_write(const conn_t *c)
{
    return c->pending != NULL;
}

/* ---- telling the kernel what we want ----------------------------------- */

static short interest(const conn_t *c)
{
    return wants_write(c) ? POLLOUT : POLLIN;
}

/* Append an entry, growing the array as needed; false if out of memory. */
static bool add_pollfd(int fd, short events)
{
    if (npollfds == pollfds_cap) {
        size_t cap = pollfds_cap ? 2 * pollfds_cap : 64;
        struct pollfd *grown = realloc(pollfds, cap * sizeof *grown);
        if (!grown)
            return false;
        pollfds = grown;
        pollfds_cap = cap;
    }
    pollfds[npollfds++] = (struct pollfd){.fd = fd, .events = events};
    return true;
}

static bool start_watching(conn_t *c)
{
    c->slot = npollfds;
    return add_pollfd(c->fd, interest(c));
}

static void watch(conn_t *c)
{
    pollfds[c->slot].events = interest(c);
}

/* Move the last entry into the hole, so the array stays dense. */
static void stop_watching(conn_t *c)
{
    struct pollfd last = pollfds[--npollfds];
    if (c->slot < npollfds) {
        pollfds[c->slot] = last;
        conns[last.fd]->slot = c->slot;
    }
}

static void watch_listener(bool on)
{
    pollfds[0].events = on ? POLLIN : 0;
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
        /* Past the table (a limit raised while we run: prlimit --pid), or
         * past what poll() takes (macOS: OPEN_MAX). */
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
    conns = new_fd_table(sizeof *conns, &max_fds, poll_fd_max(), verbose); /* macOS: fewer */
    listen_fd = open_listener(&opts);
    if (set_nonblocking(listen_fd) < 0)
        fatal("fcntl O_NONBLOCK");

    /* The listener, and the stop pipe that wakes us on SIGINT/SIGTERM (net.h). */
    if (!add_pollfd(listen_fd, POLLIN) || !add_pollfd(stop_pipe[0], POLLIN))
        fatal("realloc pollfds");
    announce_listening(listen_fd);

    while (!stop_requested) {
        int timeout = ms_until_accept_retry(); /* -1 unless accept() is paused (events.h) */
        int nready = poll(pollfds, npollfds, timeout);
        if (nready < 0) {
            if (errno == EINTR)
                continue;
            fatal("poll");
        }
        /* The O(n) scan, from the end: closing slot i moves the last entry,
         * already scanned, into i, and new clients go on the end unscanned. */
        for (size_t i = npollfds; i-- > 0 && nready > 0;) {
            if (pollfds[i].revents == 0)
                continue;
            nready--;
            int fd = pollfds[i].fd;
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
    free(pollfds);
    close(listen_fd);
    close_stop_pipe();
    return 0;
}
