/*
 * 04-select: one thread, many clients, the kernel tells us who is ready.
 *
 * The idea: never block on one client. Every socket is non-blocking, and one
 * select() call sleeps until some socket can be read or written. Then we do
 * exactly that much I/O and go back to sleep. An idle client costs a small
 * struct, not a process or a thread.
 *
 * Each connection is in one of two states, and the state alone decides what
 * we wait for:
 *   - nothing pending: wait until it is readable, read into the one shared
 *     buffer, write straight back;
 *   - bytes pending (the peer did not take the whole echo): stop reading it
 *     and wait until it is writable. A client that does not read thus stops
 *     being read, and holds at most one buffer of our memory (backpressure).
 *
 * The walls, both measured by `make wall` with the load client:
 *   - select() takes a fixed-size bitmap, fd_set, of FD_SETSIZE (1024) bits;
 *     FD_SET() on a higher fd writes past its end. This server refuses such
 *     connections instead (loadgen hold -n 1100 --allow-refused).
 *   - Every call hands the kernel the whole set, the kernel walks it, and so
 *     do we: O(n) per wakeup in the number of connections, even when one is
 *     active (loadgen scan --idle 0,100,1000).
 *
 * Next: 05-poll removes the ceiling; the O(n) stays.
 */
/*
 * events.h, with net.h under it, holds what 04-07 share and do not teach:
 * options, listener, signals (the self-pipe that wakes the loop: net.h,
 * stop_pipe), non-blocking sockets, the table bound (refuse_past), and the
 * pause of accept() at the fd limit (accept_failed, accept_resume).
 */
#include "events.h"

#include <sys/select.h>

#define BUF_SIZE 16384

typedef struct {
    int fd;
    char *pending;      /* echo bytes the peer has not taken yet, or NULL */
    size_t pending_len; /* bytes in pending */
} conn_t;

static conn_t *conns[FD_SETSIZE]; /* by fd: select cannot watch more */
static char buf[BUF_SIZE];        /* one read at a time, shared by all */
static int listen_fd;
static bool verbose;

static fd_set read_set, write_set; /* what we want to hear about, by fd */
static int max_fd = -1;            /* highest fd in either set */

/* ---- what a connection wants: derived from its state, never stored ----- */

static bool wants_write(const conn_t *c)
{
    return c->pending != NULL;
}

/* ---- telling the kernel what we want ----------------------------------- */

static void set_interest(int fd, bool read, bool write)
{
    if (read)
        FD_SET(fd, &read_set);
    else
        FD_CLR(fd, &read_set);
    if (write)
        FD_SET(fd, &write_set);
    else
        FD_CLR(fd, &write_set);
    if ((read || write) && fd > max_fd)
        max_fd = fd;
    while (max_fd >= 0 && !FD_ISSET(max_fd, &read_set) && !FD_ISSET(max_fd, &write_set))
        max_fd--;
}

static bool start_watching(conn_t *c)
{
    set_interest(c->fd, true, false);
    return true; /* unlike a kernel's list, an fd_set cannot run out of room */
}

static void watch(conn_t *c)
{
    set_interest(c->fd, !wants_write(c), wants_write(c));
}

static void stop_watching(conn_t *c)
{
    set_interest(c->fd, false, false);
}

static void watch_listener(bool on)
{
    set_interest(listen_fd, on, false);
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
        /* FD_SET(fd) would write past the end of the fd_set. */
        if (refuse_past(fd, FD_SETSIZE, "FD_SETSIZE, the most select() can watch"))
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
    raise_open_file_limit(verbose); /* past 1024 we refuse cleanly, not EMFILE */
    listen_fd = open_listener(&opts);
    if (listen_fd >= FD_SETSIZE || stop_pipe[0] >= FD_SETSIZE) {
        log_msg("listening fd %d is at or above FD_SETSIZE (%d)", listen_fd, FD_SETSIZE);
        exit(1);
    }
    if (set_nonblocking(listen_fd) < 0)
        fatal("fcntl O_NONBLOCK");

    set_interest(listen_fd, true, false);
    set_interest(stop_pipe[0], true, false); /* wakes us on SIGINT/SIGTERM */
    announce_listening(listen_fd);

    while (!stop_requested) {
        int timeout = ms_until_accept_retry(); /* -1 unless accept() is paused (events.h) */
        /* select() overwrites its sets with the answer: pass copies. */
        fd_set readable = read_set, writable = write_set;
        struct timeval retry = {.tv_usec = timeout * 1000};
        int nready = select(max_fd + 1, &readable, &writable, NULL, timeout < 0 ? NULL : &retry);
        if (nready < 0) {
            if (errno == EINTR)
                continue;
            fatal("select");
        }
        /* The O(n) scan: the answer is a bitmap, so look at every bit. */
        for (int fd = 0; fd <= max_fd && nready > 0; fd++) {
            if (!FD_ISSET(fd, &readable) && !FD_ISSET(fd, &writable))
                continue;
            nready--;
            if (fd == listen_fd)
                accept_clients();
            else if (conns[fd])
                on_ready(conns[fd]);
        }
        if (timeout == 0)
            accept_clients(); /* paused, and the retry was due as the turn began (events.h) */
    }

    for (int fd = 0; fd < FD_SETSIZE; fd++)
        if (conns[fd])
            close_conn(conns[fd]);
    close(listen_fd);
    close_stop_pipe();
    return 0;
}
