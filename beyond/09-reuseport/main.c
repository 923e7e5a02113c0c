/*
 * 09-reuseport: 07's loop once per core.
 *
 * The idea: one event loop uses one CPU, however many connections it
 * holds. So run 07's loop unchanged once per online CPU (or -t N), each in
 * its own thread with its own epoll set, its own connections and its own
 * listening socket, all bound to the same port with SO_REUSEPORT. The
 * kernel hands each new connection to one of those sockets by a hash of
 * its addresses and ports (socket(7)); from then on it lives in one loop
 * only. Nothing is shared between the loops but the stop pipe, so nothing
 * is locked:
 *
 *     make wall      (runs: loadgen c10k -n 10000, then the count per loop)
 *
 * The alternative it avoids: one listener in every loop's epoll set. Each
 * new connection then wakes every loop and one wins the accept() (the
 * thundering herd; pitfall 19). EPOLLEXCLUSIVE (Linux 4.5, epoll_ctl(2))
 * wakes one or more instead of all, but the accept queue stays one, shared
 * and contended. With a listener per loop each queue has one reader.
 *
 * Where it runs: Linux only, since its loop is 07's epoll. FreeBSD's plain
 * SO_REUSEPORT does not spread connections (a port there would need a kqueue
 * loop and FreeBSD 12's SO_REUSEPORT_LB, setsockopt(2)), and macOS's does
 * not balance at all: one socket gets the new connections (the last bound,
 * as observed), so the loops would not share. Threads, not processes: a
 * second copy of the server on the port is still refused (reuseport.h
 * claims the port first, without the option).
 *
 * The wall: the hash does not know how busy a loop is. A loop whose
 * clients are busy cannot hand new ones to an idle loop, and a few
 * connections may land unevenly (-v prints each loop's count at exit).
 */
#include "reuseport.h" /* LOOP_LOCAL, the shared port, the threads */

#include <sys/epoll.h>

#define BUF_SIZE 16384

typedef struct {
    int fd;
    char *pending;      /* echo bytes the peer has not taken yet, or NULL */
    size_t pending_len; /* bytes in pending */
} conn_t;

/* One of each per loop (LOOP_LOCAL: _Thread_local); the rest is read-only. */
static LOOP_LOCAL conn_t **conns;     /* by fd, this loop's, sized to the open-file limit */
static LOOP_LOCAL long max_fds;       /* the size of conns */
static LOOP_LOCAL char buf[BUF_SIZE]; /* one read at a time, shared by this loop's clients */
static LOOP_LOCAL int listen_fd;
static LOOP_LOCAL long accepted;      /* connections this loop took: -v prints it */
static bool verbose;
static int listeners[MAX_LOOPS];      /* one per loop, all on the same port */

#define MAX_EVENTS 256 /* ready fds taken per epoll_wait(); more wait a turn */

static LOOP_LOCAL int epoll_fd; /* this loop's interest list, kept by the kernel */

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
        accepted++;
        if (verbose)
            log_msg("fd %d: connected", fd);
    }
}

/* ---- one loop per core --------------------------------------------------- */

/* 07's main() from its table on, once per loop; id 0 runs on the main thread. */
static void *run_loop(void *arg)
{
    int id = (int)(intptr_t)arg;
    conns = new_fd_table(sizeof *conns, &max_fds, LONG_MAX, verbose && id == 0);
    listen_fd = listeners[id];
    if (set_nonblocking(listen_fd) < 0)
        fatal("fcntl O_NONBLOCK");
    epoll_fd = epoll_create1(0);
    if (epoll_fd < 0)
        fatal("epoll_create1");

    /* The listener; the stop pipe that wakes every loop on SIGINT/SIGTERM (its
     * one byte is never read, so it stays readable for all: net.h); and this
     * loop's bell, rung when another loop frees an fd while this one is paused
     * at the limit (edge-triggered: reuseport.h reads it). */
    if (!set_interest(EPOLL_CTL_ADD, listen_fd, EPOLLIN) ||
        !set_interest(EPOLL_CTL_ADD, stop_pipe[0], EPOLLIN) ||
        !set_interest(EPOLL_CTL_ADD, loop_bell(), EPOLLIN | EPOLLET))
        fatal("epoll_ctl");
    loop_is_ready();
    if (id == 0) {
        wait_for_loops(loops); /* then every loop is set up (reuseport.h) */
        announce_listening(listen_fd);
    }

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
    if (verbose)
        log_msg("loop %d: %ld connections", id, accepted);
    return NULL;
}

int main(int argc, char **argv)
{
    server_options_t opts;
    loops = default_loops();
    parse_options(argc, argv, &opts, "t:", " [-t LOOPS]", on_loops_option); /* reuseport.h */
    verbose = opts.verbose;
    install_signal_handlers();
    claim_port(&opts); /* a port in use fails here, as in every rung */
    for (int i = 0; i < loops; i++)
        listeners[i] = open_shared_listener(&opts);
    if (verbose)
        log_msg("%d loops, one listener each on port %s", loops, shared_port);
    run_loops(loops, run_loop);
    close_stop_pipe();
    return 0;
}
