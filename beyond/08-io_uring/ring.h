/*
 * ring.h - the io_uring plumbing that 08-io_uring needs and does not teach:
 * mapping the two rings the kernel shares with us and asking which
 * operations it knows, taking a free submission slot and filling it in for
 * each kind of request, one io_uring_enter() call, taking completions, and
 * the ring of provided buffers.
 *
 * Raw system calls and <linux/io_uring.h>, no liburing, so that every
 * call the server makes can be read here. It sits beside 08's main.c, not
 * in common/, because no other server uses it; main.c keeps what is the
 * lesson (what it submits, what a completion means, who owns a buffer).
 *
 * The memory-ordering rule of the shared rings (io_uring(7)): we write a
 * submission entry, then publish it by storing the SQ tail with release
 * order; the kernel stores the CQ tail with release order after writing a
 * completion, so we load it with acquire order before reading the entry,
 * and store the CQ head (release) only once we are done with the entries.
 * Linux only; main.c calls only the functions below.
 */
#ifndef LADDER_RING_H
#define LADDER_RING_H

#include "net.h" /* fatal() */

#include <errno.h>
#include <linux/io_uring.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int fd;
    unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
    unsigned *cq_head, *cq_tail, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
    unsigned to_submit;       /* entries written since the last enter */
    void *sq_map, *cq_map;    /* the mappings, for munmap */
    size_t sq_map_len, cq_map_len, sqes_len;
} ring_t;

typedef struct {
    struct io_uring_buf_ring *ring; /* shared with the kernel */
    char *memory;                   /* count buffers of size bytes */
    unsigned count, size;
    unsigned free;                  /* given to the kernel and not yet seen in a completion */
    size_t ring_len;
} buffer_pool_t;

static inline void *ring_map(int fd, size_t len, off_t what)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, what);
    return p == MAP_FAILED ? NULL : p;
}

/* Does this kernel know the operations main.c asks for? (IORING_REGISTER_PROBE,
 * 5.6) 0, ENOTSUP, or the errno of io_uring_register itself (a seccomp filter
 * may refuse it alone: then the pool could not be registered either). */
static inline int ring_knows_ops(const ring_t *r)
{
    static const int ops[] = {IORING_OP_ACCEPT, IORING_OP_RECV, IORING_OP_SEND,
                              IORING_OP_POLL_ADD, IORING_OP_ASYNC_CANCEL};
    size_t len = sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op);
    struct io_uring_probe *probe = calloc(1, len);
    if (!probe)
        return ENOMEM;
    int err = syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_PROBE, probe, 256) == 0
                  ? 0 : errno;
    for (size_t i = 0; !err && i < sizeof ops / sizeof *ops; i++)
        if (ops[i] > probe->last_op || !(probe->ops[ops[i]].flags & IO_URING_OP_SUPPORTED))
            err = ENOTSUP;
    free(probe);
    return err;
}

/* 0, or the errno of the call that failed; *why names the step. */
static inline int ring_open(ring_t *r, unsigned sq_entries, unsigned cq_entries, const char **why)
{
    struct io_uring_params p = {.flags = IORING_SETUP_CQSIZE, .cq_entries = cq_entries};
    *r = (ring_t){.fd = (int)syscall(__NR_io_uring_setup, sq_entries, &p)};
    *why = "io_uring_setup";
    if (r->fd < 0)
        return errno;
    /* NODROP (5.5): a full completion queue is kept, not lost; EXT_ARG
     * (5.11): io_uring_enter() takes a time-out. */
    *why = "io_uring_setup: no IORING_FEAT_NODROP and IORING_FEAT_EXT_ARG (Linux 5.11+)";
    if (!(p.features & IORING_FEAT_NODROP) || !(p.features & IORING_FEAT_EXT_ARG))
        return ENOTSUP;
    r->sq_map_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    r->cq_map_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
    *why = "mmap of the rings";
    if (!(r->sq_map = ring_map(r->fd, r->sq_map_len, IORING_OFF_SQ_RING)) ||
        !(r->cq_map = ring_map(r->fd, r->cq_map_len, IORING_OFF_CQ_RING)) ||
        !(r->sqes = ring_map(r->fd, r->sqes_len, IORING_OFF_SQES)))
        return errno;
    char *sq = r->sq_map, *cq = r->cq_map;
    r->sq_head = (unsigned *)(sq + p.sq_off.head);
    r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    r->sq_array = (unsigned *)(sq + p.sq_off.array);
    r->cq_head = (unsigned *)(cq + p.cq_off.head);
    r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    int err = ring_knows_ops(r);
    *why = err == ENOTSUP ? "accept, recv, send, poll (Linux 5.6+)" : "io_uring_register";
    if (err)
        return err;
    /* A filter may refuse io_uring_enter alone: find out now, before the
     * listening line, not at the first turn of the loop. */
    *why = "io_uring_enter";
    return syscall(__NR_io_uring_enter, r->fd, 0, 0, 0, NULL, 0) < 0 ? errno : 0;
}

/*
 * Submit what is written and wait for at least wait_nr completions, or
 * timeout_ms (-1: no limit). 0, or the errno (EINTR: a signal; ETIME: the
 * time-out). The one system call of the loop.
 */
static inline int ring_enter(ring_t *r, unsigned wait_nr, int timeout_ms)
{
    struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
                                   .tv_nsec = (timeout_ms % 1000) * 1000000LL};
    struct io_uring_getevents_arg arg = {.ts = timeout_ms >= 0 ? (uint64_t)(uintptr_t)&ts : 0};
    unsigned flags = IORING_ENTER_EXT_ARG | (wait_nr ? IORING_ENTER_GETEVENTS : 0);
    long n = syscall(__NR_io_uring_enter, r->fd, r->to_submit, wait_nr, flags, &arg, sizeof arg);
    if (n < 0)
        return errno;
    r->to_submit -= (unsigned)n < r->to_submit ? (unsigned)n : r->to_submit;
    return 0;
}

/*
 * Is an error of io_uring_enter() one to try again after? EINTR, ETIME:
 * the wait ended. EBUSY: completions are waiting to be taken first.
 * EAGAIN, ENOMEM: the kernel was short of memory for the requests, which
 * stay in the queue; a millisecond's nap keeps that from spinning. EBADR:
 * completions were lost (no memory for NODROP's overflow), said once.
 */
static inline bool ring_try_again(int err)
{
    static bool lost;
    if (err == EBADR && !lost)
        lost = true, log_msg("io_uring_enter: the kernel lost completions (out of memory)");
    if (err == EAGAIN || err == ENOMEM || err == EBADR)
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    return err == EINTR || err == ETIME || err == EBUSY || err == EAGAIN || err == ENOMEM ||
           err == EBADR;
}

/* The loop's turn: submit every request written, wait for one completion
 * or timeout_ms (-1: no limit). An error to try again after is survived
 * (the loop turns again), any other ends the server. */
static inline void ring_wait(ring_t *r, int timeout_ms)
{
    int err = ring_enter(r, 1, timeout_ms);
    if (err && !ring_try_again(err))
        errno = err, fatal("io_uring_enter");
}

/* A zeroed submission entry to fill in, published by ring_push(); when the
 * queue is full, what it holds is submitted first, until the kernel takes
 * some (it may be short of memory for a moment). */
static inline struct io_uring_sqe *ring_sqe(ring_t *r)
{
    unsigned tail = *r->sq_tail;
    while (tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) > *r->sq_mask) {
        int err = ring_enter(r, 0, -1);
        if (err && !ring_try_again(err))
            errno = err, fatal("io_uring_enter: the kernel takes no more requests");
    }
    unsigned slot = tail & *r->sq_mask;
    struct io_uring_sqe *sqe = &r->sqes[slot];
    memset(sqe, 0, sizeof *sqe);
    r->sq_array[slot] = slot;
    return sqe;
}

/* The entry ring_sqe() gave is filled in: publish it (release: the kernel
 * must see the entry before the tail that names it). */
static inline void ring_push(ring_t *r)
{
    __atomic_store_n(r->sq_tail, *r->sq_tail + 1, __ATOMIC_RELEASE);
    r->to_submit++;
}

/* ---- requests and completions ------------------------------------------ */

/* A submission entry for op on fd, its completion tagged data; the caller
 * fills in the rest and publishes it with ring_push(). */
static inline struct io_uring_sqe *ring_request(ring_t *r, int op, int fd, uint64_t data)
{
    struct io_uring_sqe *sqe = ring_sqe(r);
    sqe->opcode = (uint8_t)op;
    sqe->fd = fd;
    sqe->user_data = data;
    return sqe;
}

static inline void ring_accept(ring_t *r, int fd, uint64_t data, bool multishot)
{
    ring_request(r, IORING_OP_ACCEPT, fd, data)->ioprio = multishot ? IORING_ACCEPT_MULTISHOT : 0;
    ring_push(r);
}

/* A receive into a buffer the kernel picks from group when data comes. A
 * multishot receive must give no length (6.0: EINVAL otherwise); a single
 * one gives the buffer's: Linux 5.19 only shortens the length to the
 * buffer's, so 0 would read 0 bytes, which looks like end of file. */
static inline void ring_recv_pooled(ring_t *r, int fd, uint64_t data, int group, unsigned size,
                                    bool multishot)
{
    struct io_uring_sqe *sqe = ring_request(r, IORING_OP_RECV, fd, data);
    sqe->flags = IOSQE_BUFFER_SELECT;
    sqe->buf_group = (uint16_t)group;
    sqe->ioprio = multishot ? IORING_RECV_MULTISHOT : 0;
    sqe->len = multishot ? 0 : size;
    ring_push(r);
}

static inline void ring_send(ring_t *r, int fd, uint64_t data, const char *buf, size_t len,
                             int msg_flags)
{
    struct io_uring_sqe *sqe = ring_request(r, IORING_OP_SEND, fd, data);
    sqe->addr = (uint64_t)(uintptr_t)buf;
    sqe->len = (uint32_t)len;
    sqe->msg_flags = (uint32_t)msg_flags;
    ring_push(r);
}

static inline void ring_poll(ring_t *r, int fd, uint64_t data, unsigned events)
{
    ring_request(r, IORING_OP_POLL_ADD, fd, data)->poll32_events = events;
    ring_push(r);
}

/* Ask for requests on fd back (they complete with -ECANCELED): the one
 * tagged match, or with how = IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_ALL
 * every one. The cancel's own completion is tagged data. */
static inline void ring_cancel(ring_t *r, int fd, uint64_t match, unsigned how, uint64_t data)
{
    struct io_uring_sqe *sqe = ring_request(r, IORING_OP_ASYNC_CANCEL, fd, data);
    sqe->cancel_flags = how;
    sqe->addr = match;
    ring_push(r);
}

/* How many completions are there now. The loop takes only these in a turn:
 * under load more keep coming while it handles them (its sends complete as
 * they are submitted), and a stop, or an accept to re-arm, would wait. */
static inline unsigned ring_ready(const ring_t *r)
{
    return __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) - *r->cq_head;
}

/* Copy the next completion to *cqe and hand its slot back; false if none. */
static inline bool ring_next(ring_t *r, struct io_uring_cqe *cqe)
{
    unsigned head = *r->cq_head;
    if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
        return false;
    *cqe = r->cqes[head & *r->cq_mask];
    __atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
    return true;
}

static inline void ring_close(ring_t *r)
{
    if (r->sqes)
        munmap(r->sqes, r->sqes_len);
    if (r->cq_map)
        munmap(r->cq_map, r->cq_map_len);
    if (r->sq_map)
        munmap(r->sq_map, r->sq_map_len);
    if (r->fd >= 0)
        close(r->fd);
}

/* ---- the provided buffers ---------------------------------------------- */

/* Hand buffer bid back to the kernel, which may fill it with the next recv. */
static inline void pool_give(buffer_pool_t *b, unsigned bid)
{
    unsigned short tail = b->ring->tail;
    struct io_uring_buf *slot = &b->ring->bufs[tail & (b->count - 1)];
    slot->addr = (uint64_t)(uintptr_t)(b->memory + (size_t)bid * b->size);
    slot->len = b->size;
    slot->bid = (unsigned short)bid;
    __atomic_store_n(&b->ring->tail, (unsigned short)(tail + 1), __ATOMIC_RELEASE);
    b->free++;
}

/* The pool buffer a receive completion carries (IORING_CQE_F_BUFFER), now
 * ours, or -1. Any result may carry one: on 5.19 an end of file or error
 * after the kernel picked it, on 6.x a receive that ended in io-wq. */
static inline int pool_take(buffer_pool_t *b, unsigned flags)
{
    if (!(flags & IORING_CQE_F_BUFFER))
        return -1;
    b->free--;
    return (int)(flags >> IORING_CQE_BUFFER_SHIFT);
}

static inline char *pool_buffer(const buffer_pool_t *b, unsigned bid)
{
    return b->memory + (size_t)bid * b->size;
}

/* count (a power of two) buffers of size bytes as group gid
 * (IORING_REGISTER_PBUF_RING, 5.19). 0, or the errno; *why names the step. */
static inline int pool_open(ring_t *r, buffer_pool_t *b, unsigned count, unsigned size, int gid,
                            const char **why)
{
    *why = "IORING_REGISTER_PBUF_RING (Linux 5.19+)";
    *b = (buffer_pool_t){.count = count, .size = size,
                         .ring_len = count * sizeof(struct io_uring_buf)};
    void *ring = mmap(NULL, b->ring_len, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE,
                      -1, 0);
    b->ring = ring == MAP_FAILED ? NULL : ring;
    b->memory = malloc((size_t)count * size);
    if (!b->ring || !b->memory)
        return ENOMEM;
    struct io_uring_buf_reg reg = {.ring_addr = (uint64_t)(uintptr_t)b->ring,
                                   .ring_entries = count, .bgid = (unsigned short)gid};
    if (syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_PBUF_RING, &reg, 1) < 0)
        return errno;
    for (unsigned bid = 0; bid < count; bid++)
        pool_give(b, bid);
    return 0;
}

/* After ring_close(): the kernel has let go of the buffers. */
static inline void pool_close(buffer_pool_t *b)
{
    if (b->ring)
        munmap(b->ring, b->ring_len);
    free(b->memory);
}

#endif /* LADDER_RING_H */
