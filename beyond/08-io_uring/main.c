/*
 * 08-io_uring: completion, not readiness.
 *
 * The idea: 04-07 ask the kernel "which fds are ready?" and then make the
 * calls themselves, one system call each: a read, a write, an epoll_ctl.
 * io_uring turns that around. We write requests ("receive on fd 7", "send
 * these bytes") into a queue shared with the kernel, and it writes back
 * completions: the result each call would have returned. One
 * io_uring_enter() submits every request of a turn and waits for the next
 * completions, however many connections they belong to:
 *
 *     make wall      (runs: loadgen c10k --rate, against 07 and 08)
 *
 * Who owns a buffer changes too. 07 reads into a buffer of its own when the
 * fd is ready; here a receive is pending in the kernel before any byte
 * arrives, so it cannot name a buffer then without one per connection
 * sitting idle. Instead we lend the kernel a pool (a provided-buffer ring):
 * it picks a buffer when data comes and tells us which in the completion.
 * A buffer is the kernel's while it is in the pool, ours from that
 * completion until we give it back, and must not move while a send of it
 * is in the kernel. A connection's memory is the same: it is freed only
 * once every request that names it has completed.
 *
 * One accept request (multishot) yields a completion per new client, and
 * one receive per connection yields a completion per chunk of data, each in
 * a buffer from the pool; where the kernel refuses multishot, one request
 * per completion. Sends take MSG_DONTWAIT: what the peer's socket buffer
 * takes goes, the rest is kept as in 04-07, and the connection waits for
 * writability and stops being read (backpressure).
 *
 * The wall: not C10K either. What changes is the cost per message: fewer
 * system calls, the same work in the kernel. Where io_uring is refused
 * (ENOSYS, EPERM: kernel.io_uring_disabled, seccomp; an old kernel) the
 * server says so in one line and exits with status 3.
 */
#include "events.h"
#include "ring.h" /* the raw system calls, the rings, the pool, filling in requests */
#include "owed.h" /* the byte queue, error lines, the fallbacks for old kernels, the accept pause */

#define BUF_SIZE 2048  /* one provided buffer: what one receive completion carries */
#define POOL_BUFS 1024 /* the pool, shared by all (a power of two); empty: ENOBUFS */
#define POOL_GROUP 0

typedef struct conn {
    int fd;
    owed_t owed;        /* the send that is out, and what came behind it (owed.h) */
    int in_kernel;      /* requests naming this connection not yet completed */
    bool reading, multishot, stopping, blocked, eof, closing, starved;
    struct conn *next_starved; /* while starved: the next one waiting for a buffer */
} conn_t;

static conn_t **conns;         /* by fd, sized to the open-file limit */
static long max_fds;           /* the size of conns */
static buffer_pool_t pool;     /* the receive buffers, lent to the kernel */
static conn_t *starved;        /* receives that found the pool empty, waiting */
static int listen_fd;
static bool verbose;

#define SQ_ENTRIES 256  /* requests per submission; more are submitted on the way */
#define CQ_ENTRIES 4096 /* completions the kernel may queue (NODROP keeps more) */

static ring_t ring;             /* the two queues, shared with the kernel */
static bool accepting;          /* an accept request is in the kernel */

/* What a completion is for: a connection's address with the operation in
 * its low bits (malloc aligns to 8 at least), or one of these. */
enum { ON_RECV, ON_SEND, ON_WRITABLE };
enum { NOTHING, ON_ACCEPT, ON_STOP };

/* ---- what a connection wants: derived from its state, never stored ----- */

static bool wants_write(const conn_t *c)
{
    return c->owed.out != NULL;
}

static bool wants_read(const conn_t *c)
{
    return !c->eof && !c->blocked && !c->owed.pending && !c->closing && !c->starved;
}

/* ---- telling the kernel what we want ----------------------------------- */

static uint64_t tag(conn_t *c, int op)
{
    c->in_kernel++;
    return (uint64_t)(uintptr_t)c | (uint64_t)op;
}

/* Receive into a buffer the kernel picks from the pool when data comes. */
static void start_reading(conn_t *c)
{
    c->multishot = multishot_recv;
    ring_recv_pooled(&ring, c->fd, tag(c, ON_RECV), POOL_GROUP, BUF_SIZE, c->multishot);
    c->reading = true;
}

/* Send what out holds. MSG_DONTWAIT: the send completes at once with what
 * the socket buffer took, rather than waiting in the kernel with our buffer. */
static void start_sending(conn_t *c)
{
    ring_send(&ring, c->fd, tag(c, ON_SEND), c->owed.out, c->owed.out_len, MSG_DONTWAIT);
}

/* What the state asks for, only where it changed (07's watch()). Stopping
 * asks for the receive back (-ECANCELED), matched by its tag. */
static void watch(conn_t *c)
{
    if (wants_read(c) && !c->reading)
        start_reading(c);
    else if (!wants_read(c) && c->reading && !c->stopping) {
        ring_cancel(&ring, c->fd, (uint64_t)(uintptr_t)c | ON_RECV, 0, NOTHING);
        c->stopping = true;
    }
}

/* One request, a completion per new client (multishot). Paused (events.h),
 * one client per request: each completion then comes back to the loop,
 * which ends the pause once nobody is queued (owed.h). */
static void start_accepting(void)
{
    ring_accept(&ring, listen_fd, ON_ACCEPT, multishot_accept && !accept_paused());
    accepting = true;
}

/* ---- one connection ---------------------------------------------------- */

/* A receive completed, res bytes in pool buffer bid, now ours: send it
 * straight back, or copy it behind the send that is out and give it back. */
static bool on_received(conn_t *c, int res, unsigned flags, int bid)
{
    if (!(flags & IORING_CQE_F_MORE))
        c->reading = c->stopping = false; /* this receive is over */
    if (res > 0 && !wants_write(c)) {
        c->owed = owed_from_pool(&pool, bid, (size_t)res);
        start_sending(c); /* from the pool buffer itself, no copy: held until the send is back */
    } else if (res > 0) {
        bool ok = owed_queue(&c->owed, pool_buffer(&pool, (unsigned)bid), (size_t)res, BUF_SIZE);
        pool_give(&pool, (unsigned)bid);
        return ok || failed(c->fd, -ENOMEM, "recv");
    } else if (res == 0)
        c->eof = true; /* the peer is done sending: finish what we owe, then close */
    else if (res == -ENOBUFS) { /* the pool is empty: wait until a buffer comes back */
        c->starved = true, c->next_starved = starved, starved = c;
        c->in_kernel++; /* held as a request is: not freed while in the list */
    } else if (!recv_rearmed(c->multishot, res)) /* cancelled, or an old kernel: owed.h */
        return failed(c->fd, res, "recv");
    return true;
}

/* The send is back with what the peer took: all of it, or wait until it
 * takes more. Once drained, nothing is held: an idle connection holds no
 * buffer. */
static bool on_sent(conn_t *c, int res)
{
    if (res < 0 && !is_transient(-res))
        return failed(c->fd, res, "write");
    size_t sent = res < 0 ? 0 : (size_t)res;
    c->blocked = sent < c->owed.out_len;
    if (!owed_keep(&c->owed, sent, &pool))
        return failed(c->fd, -ENOMEM, "write");
    if (c->blocked) /* the rest waits until the peer's socket buffer has room */
        ring_poll(&ring, c->fd, tag(c, ON_WRITABLE), POLLOUT);
    else if (c->owed.out)
        start_sending(c); /* what came while the send was out */
    return true;
}

static bool on_writable(conn_t *c, int res)
{
    if (res < 0 && res != -ECANCELED)
        return failed(c->fd, res, "poll");
    if (res >= 0)
        start_sending(c);
    return true;
}

/* First call: ask for the connection's requests back; the fd stays open
 * until they are, so its number cannot be reused meanwhile. Last: free it. */
static void close_conn(conn_t *c)
{
    if (!c->closing && c->in_kernel > 0)
        ring_cancel(&ring, c->fd, 0, IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_ALL, NOTHING);
    c->closing = true;
    if (c->in_kernel > 0)
        return; /* the kernel still holds requests that name it */
    conns[c->fd] = NULL;
    close(c->fd);
    if (verbose)
        log_msg("fd %d: closed", c->fd);
    owed_drop(&c->owed, &pool);
    free(c);
    accept_resume(); /* a descriptor is free again: events.h */
}

/*
 * A request completed: data says on which connection and what for, res is
 * what the call returned. A receive's buffer is ours from here, whatever
 * res says: one that brought no bytes for us goes back at once. Handle
 * it, then tell the kernel what the connection wants next.
 */
static void on_completion(uint64_t data, int res, unsigned flags)
{
    conn_t *c = (conn_t *)(uintptr_t)(data & ~(uint64_t)7);
    int op = (int)(data & 7), bid = op == ON_RECV ? pool_take(&pool, flags) : -1;
    if (!(flags & IORING_CQE_F_MORE))
        c->in_kernel--;
    if (bid >= 0 && (res <= 0 || c->closing))
        pool_give(&pool, (unsigned)bid);
    bool keep_open = !c->closing && (op == ON_RECV ? on_received(c, res, flags, bid)
                                     : op == ON_SEND ? on_sent(c, res) : on_writable(c, res));
    if (!keep_open || (c->eof && !wants_write(c) && !c->owed.pending))
        close_conn(c);
    else
        watch(c);
}

/* Buffers are back in the pool: as many starved receives as there are
 * buffers try again (not each at once into an empty pool: a spin). Each
 * ends its wait as a cancelled receive ends: the hold goes, and the
 * connection is closed or re-armed as after any completion. */
static void feed_starved(void)
{
    for (unsigned n = pool.free; starved && n > 0; n--) {
        conn_t *c = starved;
        starved = c->next_starved, c->starved = false;
        on_completion((uint64_t)(uintptr_t)c | ON_RECV, -ECANCELED, 0);
    }
}

/* ---- new connections --------------------------------------------------- */

/* An accept completed: res is the new fd, or what accept() would say
 * (EMFILE, ENFILE...: a pause begins; an old kernel: no more multishot;
 * owed.h). Once the request is over, the loop makes another. A limit
 * raised while we run (prlimit --pid) allows fds past the table. */
static void on_accepted(int res, unsigned flags)
{
    if (!accept_completed(&accepting, res, flags) || refuse_past(res, max_fds, table_limit))
        return;
    conn_t *c = calloc(1, sizeof *c);
    if (!c) {
        log_errno("fd %d: cannot set up connection", res);
        close(res);
        return;
    }
    c->fd = res, c->owed.out_bid = -1;
    conns[res] = c;
    watch(c);
    if (verbose)
        log_msg("fd %d: connected", res);
}

int main(int argc, char **argv)
{
    server_options_t opts;
    parse_options(argc, argv, &opts, NULL, NULL, NULL);
    verbose = opts.verbose;
    install_signal_handlers();
    conns = new_fd_table(sizeof *conns, &max_fds, LONG_MAX, verbose);
    listen_fd = open_listener(&opts);
    const char *why = "io_uring_setup"; /* ring_open and pool_open name the step that failed */
    int refused = ring_open(&ring, SQ_ENTRIES, CQ_ENTRIES, &why);
    if (!refused)
        refused = pool_open(&ring, &pool, POOL_BUFS, BUF_SIZE, POOL_GROUP, &why);
    exit_if_refused(refused, why); /* the fallback: say why in one line, and exit 3 */

    /* The listener, and the stop pipe that wakes us on SIGINT/SIGTERM (net.h). */
    start_accepting();
    ring_poll(&ring, stop_pipe[0], ON_STOP, POLLIN);
    announce_listening(listen_fd);

    while (!stop_requested) {
        int timeout = accepting ? -1 : ms_until_accept_retry(); /* -1 unless paused (events.h) */
        ring_wait(&ring, timeout); /* submit all, wait for one (ring.h) */
        /* Every completion is one finished call: its result is in res. Only
         * those there now: the stop and the accept below must not wait. */
        struct io_uring_cqe cqe;
        for (unsigned n = ring_ready(&ring); n > 0 && ring_next(&ring, &cqe); n--) {
            if (cqe.user_data == ON_ACCEPT)
                on_accepted(cqe.res, cqe.flags);
            else if (cqe.user_data > ON_STOP)
                on_completion(cqe.user_data, cqe.res, cqe.flags);
        }
        feed_starved();
        if (accept_due(listen_fd, accepting, timeout))
            start_accepting(); /* re-armed, or paused and the retry is due (events.h) */
    }

    for (long fd = 0; fd < max_fds; fd++)
        if (conns[fd]) /* the ring goes below, and its requests with it: none holds it */
            conns[fd]->in_kernel = 0, close_conn(conns[fd]);
    ring_close(&ring);
    pool_close(&pool);
    free(conns);
    close(listen_fd);
    close_stop_pipe();
    return 0;
}
