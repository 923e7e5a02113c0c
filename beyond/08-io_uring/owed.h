/*
 * owed.h - what 08-io_uring keeps beside the lesson: the bytes a connection
 * owes its peer (the send that is out, and what came behind it), one line
 * for a peer's failed call, the fallbacks for kernels without multishot
 * requests or without io_uring, and the accept pause of events.h emulated
 * for a listener that is never polled.
 *
 * main.c decides who owns a buffer; this file only moves bytes between the
 * blocks it is given. Linux only, beside main.c like ring.h.
 */
#ifndef LADDER_OWED_H
#define LADDER_OWED_H

#include "events.h"
#include "ring.h"

#include <poll.h>

/* The bytes owed to one peer. out is either a pool buffer (out_bid) that a
 * receive filled and a send now reads, or a block of the connection's own
 * (out_bid -1); pending collects what arrived while that send was out. */
typedef struct {
    char *out;          /* the bytes of the send in the kernel (or kept for it), or NULL */
    size_t out_len;
    int out_bid;        /* out is pool buffer out_bid, or (when -1) a block malloc'ed for it */
    char *pending;      /* echo bytes that came while a send was out, or NULL */
    size_t pending_len; /* bytes in pending */
    size_t pending_cap; /* its size */
} owed_t;

/* What a receive brought, len bytes in pool buffer bid, sent from the
 * buffer itself: no copy. */
static inline owed_t owed_from_pool(const buffer_pool_t *pool, int bid, size_t len)
{
    return (owed_t){.out = pool_buffer(pool, (unsigned)bid), .out_len = len, .out_bid = bid};
}

/* Everything owed: the pool buffer back to the pool, the blocks freed. */
static inline void owed_drop(owed_t *o, buffer_pool_t *pool)
{
    if (o->out_bid >= 0)
        pool_give(pool, (unsigned)o->out_bid);
    else
        free(o->out);
    free(o->pending);
}

/* The peer took sent bytes of out. What is left, the tail and then what
 * came meanwhile, goes out next from a block of the connection's own; a
 * pool buffer goes back at once. False (and nothing changed) if out of
 * memory. */
static inline bool owed_keep(owed_t *o, size_t sent, buffer_pool_t *pool)
{
    size_t tail = o->out_len - sent, len = tail + o->pending_len;
    char *block = len ? malloc(len) : NULL;
    if (len && !block)
        return false;
    if (tail)
        memcpy(block, o->out + sent, tail);
    if (o->pending_len)
        memcpy(block + tail, o->pending, o->pending_len);
    owed_drop(o, pool);
    *o = (owed_t){.out = block, .out_len = len, .out_bid = -1};
    return true;
}

/* Bytes that came while a send was out wait behind it. The block doubles,
 * so a burst of receives costs a few copies, not one per receive. */
static inline bool owed_queue(owed_t *o, const char *data, size_t len, size_t first_cap)
{
    size_t cap = o->pending_cap ? o->pending_cap : first_cap;
    while (cap < o->pending_len + len)
        cap *= 2;
    char *more = cap > o->pending_cap ? realloc(o->pending, cap) : o->pending;
    if (!more)
        return false;
    o->pending = more, o->pending_cap = cap;
    memcpy(o->pending + o->pending_len, data, len);
    o->pending_len += len;
    return true;
}

/* A call on fd failed with -res (a completion's result): one line, and
 * false, for the connection to be closed. */
static inline bool failed(int fd, int res, const char *call)
{
    errno = -res;
    log_errno("fd %d: %s", fd, call);
    return false;
}

/* ---- kernels without multishot, or without io_uring -------------------- */

/* Until the kernel refuses one (EINVAL), accepts and receives are multishot. */
static bool multishot_accept = true, multishot_recv = true;

/*
 * A multishot request (accept: Linux 5.19, receive: 6.0) that an older
 * kernel refuses completes with EINVAL. True if that is what res says for
 * a request made multishot: then *multishot goes false, with one line the
 * first time, and the caller re-arms it as one request per completion.
 * Several receives may be refused in one batch (every connection accepted
 * with the first), so each one's own kind is asked, not the switch.
 */
static inline bool multishot_refused(bool *multishot, bool was_multishot, int res,
                                     const char *call, const char *since)
{
    if (res != -EINVAL || !was_multishot)
        return false;
    if (*multishot)
        log_msg("multishot %s refused by this kernel (Linux %s+): one request per completion",
                call, since);
    *multishot = false;
    return true;
}

/* A receive that ended so that making it again is all there is to do: it
 * was cancelled (main.c's watch() asked for it back), or it was multishot
 * and this kernel refused that. */
static inline bool recv_rearmed(bool was_multishot, int res)
{
    return res == -ECANCELED ||
           multishot_refused(&multishot_recv, was_multishot, res, "recv", "6.0");
}

#define EXIT_NO_IO_URING 3 /* documented: "skipped: io_uring unavailable" */

/* Where io_uring is refused (err: ENOSYS, EPERM from kernel.io_uring_disabled
 * or seccomp, ENOTSUP from an old kernel), say why in one line and exit 3;
 * why names the step that failed (ring_open(), pool_open()). */
static inline void exit_if_refused(int err, const char *why)
{
    if (err)
        errno = err, log_errno("io_uring unavailable: %s", why), exit(EXIT_NO_IO_URING);
}

/* ---- the accept pause, for a listener that is never polled -------------- */

/*
 * events.h pauses accept() while descriptors are short and ends the pause
 * when accept() says EAGAIN. Paused, 08 submits one single accept per
 * retry; a multishot accept would wait in the kernel where 07's accept()
 * says EAGAIN. So when a retry is due and nobody is queued, that is the
 * EAGAIN: the pause is over. True when an accept should be submitted now:
 * none is out and either no pause holds or the retry is due.
 */
static inline bool accept_due(int listen_fd, bool accepting, int timeout)
{
    struct pollfd p = {.fd = listen_fd, .events = POLLIN};
    if (timeout == 0 && poll(&p, 1, 0) <= 0)
        accept_failed(EAGAIN); /* paused, due, and nobody waits: the episode is over */
    return !accepting && (timeout == 0 || !accept_paused());
}

/*
 * An accept completed with res: the new fd (true), or what accept() would
 * say. Without IORING_CQE_F_MORE the request is over (*accepting goes
 * false) and the loop makes another: one accept per client where the
 * kernel refused multishot. A client that failed while queued is skipped
 * (net.h); EMFILE, ENFILE...: a pause begins (events.h).
 */
static inline bool accept_completed(bool *accepting, int res, unsigned flags)
{
    if (!(flags & IORING_CQE_F_MORE))
        *accepting = false;
    if (res < 0 && !multishot_refused(&multishot_accept, multishot_accept, res, "accept", "5.19") &&
        !accept_retry_at_once(-res))
        accept_failed(-res);
    return res >= 0;
}

#endif /* LADDER_OWED_H */
