/*
 * sys/event.h - a small TEACHING SHIM, not a kqueue implementation.
 *
 * Linux has no kqueue. This header maps the subset of kqueue(2) that
 * 06-kqueue/main.c and the load client's kqueue backend (clients/loop_kqueue.c)
 * use onto epoll(7), so that the same code builds and passes the same tests
 * on Linux. It is put on the include path only where
 * the system has no <sys/event.h>; on macOS and the BSDs the real one is used.
 * On Linux the measured O(ready) behaviour of 06-kqueue is therefore epoll's.
 *
 * Supported: EVFILT_READ and EVFILT_WRITE on descriptors, with EV_ADD,
 * EV_DELETE, EV_ENABLE, EV_DISABLE and EV_RECEIPT, level-triggered, or
 * edge-triggered with EV_CLEAR (EPOLLET), as the workshop's edge-triggered
 * 06 uses it. Any other flag (EV_ONESHOT, ...), filter, or a non-zero fflags
 * (NOTE_LOWAT) is rejected with EINVAL, reported like any other changelist
 * error. 06-kqueue/README.md lists where the shim still differs from kqueue.
 *
 * One real difference callers must respect: native kqueue forgets an fd's
 * registrations when the fd is closed, but this shim cannot see close().
 * EV_DELETE both filters before close() (06-kqueue/main.c does). Likewise a
 * closed kqueue's table stays allocated until kqueue() returns its number again.
 *
 * Header-only: every function is static inline, so the ones a program does not
 * call cost nothing and do not trip -Werror. Each .c file that includes it has
 * its own copy of the state, so use a kqueue from the file that created it.
 * Threads may make and use kqueues at the same time (the table of kqueues is
 * locked), each kqueue from one thread at a time.
 */
#ifndef LADDER_KQUEUE_SHIM_H
#define LADDER_KQUEUE_SHIM_H

#ifndef __linux__
#error "this kqueue shim is for Linux only; use the system's <sys/event.h>"
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h> /* SIOCOUTQ */
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

/* Same fields in the same order as macOS and FreeBSD (before FreeBSD 12's ext[]). */
struct kevent {
    uintptr_t ident; /* the file descriptor */
    int16_t filter;  /* EVFILT_READ or EVFILT_WRITE */
    uint16_t flags;  /* EV_* action flags in, EV_EOF / EV_ERROR out */
    uint32_t fflags; /* always 0 here: see kq_shim_fill */
    intptr_t data;   /* out: a size hint, or the errno with EV_ERROR */
    void *udata;     /* opaque, handed back unchanged */
};

/* Fill one kevent; evaluates kevp once, like the BSD macro. */
#define EV_SET(kevp, a, b, c, d, e, f)                                                             \
    (*(kevp) = (struct kevent){(uintptr_t)(a), (int16_t)(b), (uint16_t)(c), (uint32_t)(d),         \
                               (intptr_t)(e), (f)})

#define EVFILT_READ  (-1)
#define EVFILT_WRITE (-2)

#define EV_ADD     0x0001 /* add, or modify if the (ident, filter) pair exists */
#define EV_DELETE  0x0002 /* remove the pair */
#define EV_ENABLE  0x0004 /* report events again */
#define EV_DISABLE 0x0008 /* keep the pair but stop reporting it */
#define EV_CLEAR   0x0020 /* report a change of state once, not the state while it lasts */
#define EV_RECEIPT 0x0040 /* report every change as EV_ERROR, data 0 on success */
#define EV_ERROR   0x4000 /* out: this change failed, errno in data */
#define EV_EOF     0x8000 /* out: the peer shut down, or the socket failed */

/* kqueue identifies a registration by (ident, filter); keep two of them per fd. */
#define KQ_SHIM_READ  1u
#define KQ_SHIM_WRITE 2u
#define KQ_SHIM_BATCH 1024 /* epoll events fetched per kevent() call, at most */

struct kq_shim_fd {
    void *udata[2];     /* [0] for EVFILT_READ, [1] for EVFILT_WRITE */
    unsigned added;     /* KQ_SHIM_* bits: pairs that exist */
    unsigned enabled;   /* KQ_SHIM_* bits: pairs that exist and report */
    unsigned delivered; /* KQ_SHIM_* bits: returned by the kevent() call under way */
    unsigned clear;     /* KQ_SHIM_* bits: pairs added with EV_CLEAR */
    int in_epoll;       /* the fd is in epoll's list (from its first pair to its last) */
};

/* A kevent epoll reported that did not fit in the caller's eventlist. */
struct kq_shim_pending {
    int fd;
    unsigned bit; /* KQ_SHIM_READ or KQ_SHIM_WRITE */
};

struct kq_shim {
    struct kq_shim_fd *fds; /* indexed by fd, grown on demand (C10K reaches fd 10 000+) */
    int nfds;
    /* Undelivered kevents, oldest first, returned first by the next call
     * (kqueue(2) keeps them queued). epoll is asked only once this is empty,
     * for at most KQ_SHIM_BATCH fds and no more than the eventlist has room
     * for; each fd gives two kevents at most, so at most one per fd is left
     * over and this never overflows. */
    struct kq_shim_pending pending[KQ_SHIM_BATCH];
    int npending;
};

/* All kqueues of this program, indexed by their epoll fd. A static pointer
 * keeps them reachable, so leak checkers see nothing lost at exit. Threads
 * may make kqueues while others wait in theirs (loadgen's workers each have
 * one), and kqueue() may move the table to grow it: so the table is read and
 * changed under a lock, held only to look up or store one entry (not for
 * the wait). One kqueue's own state is its caller's: use it from one thread
 * at a time. */
struct kq_shim_registry {
    struct kq_shim **kqs;
    int n;
    pthread_mutex_t lock;
};

static inline struct kq_shim_registry *kq_shim_registry(void)
{
    static struct kq_shim_registry registry = {.lock = PTHREAD_MUTEX_INITIALIZER};
    return &registry;
}

/* The kqueue numbered kq, or NULL. */
static inline struct kq_shim *kq_shim_find(int kq)
{
    struct kq_shim_registry *r = kq_shim_registry();
    pthread_mutex_lock(&r->lock);
    struct kq_shim *st = kq >= 0 && kq < r->n ? r->kqs[kq] : NULL;
    pthread_mutex_unlock(&r->lock);
    return st;
}

/* Return `array` (of *n elements of `size` bytes) grown to hold index `want`,
 * new slots zeroed; NULL if out of memory, leaving the old array as it was. */
static inline void *kq_shim_grow(void *array, int *n, int want, size_t size)
{
    int grown = *n > 0 ? *n : 64;
    while (grown <= want) {
        if (grown > INT_MAX / 2)
            return NULL;
        grown *= 2;
    }
    if (grown == *n)
        return array;
    char *p = realloc(array, (size_t)grown * size);
    if (p != NULL) {
        memset(p + (size_t)*n * size, 0, (size_t)(grown - *n) * size);
        *n = grown;
    }
    return p;
}

static inline int kqueue(void)
{
    /* kqueue(2): the queue is not inherited across fork(); epoll's is, so at
     * least keep it out of exec'd programs. */
    int kq = epoll_create1(EPOLL_CLOEXEC);
    if (kq < 0)
        return -1;
    struct kq_shim_registry *r = kq_shim_registry();
    pthread_mutex_lock(&r->lock);
    struct kq_shim **kqs = kq_shim_grow(r->kqs, &r->n, kq, sizeof *kqs);
    struct kq_shim *st = kqs != NULL ? calloc(1, sizeof *st) : NULL, *old = NULL;
    if (kqs != NULL)
        r->kqs = kqs;
    if (st != NULL) {
        old = r->kqs[kq]; /* a recycled number must not inherit a closed kqueue's pairs */
        r->kqs[kq] = st;
    }
    pthread_mutex_unlock(&r->lock);
    if (st == NULL) {
        close(kq);
        errno = ENOMEM;
        return -1;
    }
    if (old != NULL) {
        free(old->fds);
        free(old);
    }
    return kq;
}

/*
 * Make epoll's one registration per fd match the merged interest. The fd
 * joins epoll with its first pair (EV_ADD, the one change that may need
 * memory: ENOMEM, or ENOSPC past fs.epoll.max_user_watches) and leaves it
 * with its last (EV_DELETE); in between, enabling and disabling are
 * EPOLL_CTL_MOD, which allocates nothing, so a connection switched from
 * reading to writing (READ disabled, then WRITE enabled: nothing enabled
 * for a moment) can never drop out of epoll half way. With nothing
 * enabled, the mask is empty but for EPOLLONESHOT: epoll(7) reports
 * EPOLLHUP and EPOLLERR even for an empty mask, and one-shot disarms the fd
 * after one such report, so a disabled pair on a hung-up socket wakes the
 * wait at most once (kevent() then waits again) instead of at every call.
 * EV_CLEAR is EPOLLET: epoll then reports the fd when it becomes ready
 * again, as kqueue reports a cleared pair when its state changes.
 */
static inline int kq_shim_sync(int kq, int fd, struct kq_shim_fd *f)
{
    struct epoll_event ev = {.data.fd = fd};
    ev.events = ((f->enabled & KQ_SHIM_READ) ? EPOLLIN | EPOLLRDHUP : 0u) |
                ((f->enabled & KQ_SHIM_WRITE) ? EPOLLOUT : 0u);
    if (ev.events == 0)
        ev.events = EPOLLONESHOT;
    else if (f->clear != 0)
        ev.events |= EPOLLET;
    if (f->added == 0) {
        if (!f->in_epoll || epoll_ctl(kq, EPOLL_CTL_DEL, fd, NULL) == 0 || errno == ENOENT)
            return f->in_epoll = 0; /* ENOENT: closed, number reused, and epoll forgot it */
        return errno;
    }
    int op = f->in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(kq, op, fd, &ev) != 0) {
        /* EEXIST / ENOENT: epoll's view differs from ours (an fd was closed
         * without EV_DELETE, and epoll(7) dropped it); the other operation fixes it. */
        if (errno != (op == EPOLL_CTL_ADD ? EEXIST : ENOENT))
            return errno;
        op = op == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
        if (epoll_ctl(kq, op, fd, &ev) != 0)
            return errno;
    }
    f->in_epoll = 1;
    return 0;
}

/* Apply one change; 0 or an errno for EV_ERROR. As in kqueue(2), the pair
 * (ident, filter) is the identity:
 *  - EV_ADD creates a missing pair, enabled unless EV_DISABLE is given; on an
 *    existing pair it only modifies (udata): a disabled pair stays disabled.
 *  - EV_ENABLE / EV_DISABLE switch an existing pair (EV_ENABLE wins if both).
 *  - any change but EV_DELETE replaces udata, as the BSDs do.
 *  - without EV_ADD, a missing pair is ENOENT, or EBADF if the fd is not open.
 *  - EV_CLEAR is taken when the pair is created, and kept by later changes.
 * A change carrying both EV_ADD and EV_DELETE deletes an existing pair.
 * The shim's own limit: epoll's EPOLLET is one bit per fd, where kqueue's
 * EV_CLEAR is per pair, so creating a pair whose EV_CLEAR differs from that
 * of the fd's other pair is EINVAL (delete that one first). */
static inline int kq_shim_apply(int kq, struct kq_shim *st, const struct kevent *ch)
{
    unsigned bit = ch->filter == EVFILT_READ ? KQ_SHIM_READ : 0u;
    if (ch->filter == EVFILT_WRITE)
        bit = KQ_SHIM_WRITE;
    if (bit == 0 || ch->fflags != 0 ||
        (ch->flags & ~(EV_ADD | EV_DELETE | EV_ENABLE | EV_DISABLE | EV_RECEIPT | EV_CLEAR)) != 0)
        return EINVAL;
    if (ch->ident > INT_MAX)
        return EBADF;
    int fd = (int)ch->ident;
    int exists = fd < st->nfds && (st->fds[fd].added & bit);
    /* Only an fd that is open may grow the table (a stray ident must not make
     * it huge), and kqueue(2) checks the descriptor before the pair. */
    if (!exists && fcntl(fd, F_GETFD) < 0)
        return EBADF;
    if (!exists && (ch->flags & (EV_ADD | EV_DELETE)) != EV_ADD)
        return ENOENT;
    struct kq_shim_fd *fds = kq_shim_grow(st->fds, &st->nfds, fd, sizeof *fds);
    if (fds == NULL)
        return ENOMEM;
    st->fds = fds;

    struct kq_shim_fd *f = &st->fds[fd];
    struct kq_shim_fd saved = *f;
    unsigned other = bit ^ (KQ_SHIM_READ | KQ_SHIM_WRITE);
    if (!exists && !(ch->flags & EV_DELETE) && (f->added & other) &&
        !(f->clear & other) != !(ch->flags & EV_CLEAR))
        return EINVAL; /* one EPOLLET per fd: both pairs cleared, or neither */
    if (ch->flags & EV_DELETE) {
        f->added &= ~bit;
        f->enabled &= ~bit;
        f->clear &= ~bit;
    } else {
        if (!exists && (ch->flags & EV_CLEAR))
            f->clear |= bit;
        if (!exists && !(ch->flags & EV_DISABLE))
            f->enabled |= bit;
        if (ch->flags & EV_ENABLE)
            f->enabled |= bit;
        else if (ch->flags & EV_DISABLE)
            f->enabled &= ~bit;
        f->added |= bit;
        f->udata[bit - 1] = ch->udata;
    }
    /* Skip the syscall when epoll already matches; EV_ADD always tells it,
     * which also repairs an fd closed without EV_DELETE and reused. */
    if (f->enabled == saved.enabled && (f->added != 0) == (saved.added != 0) &&
        !(ch->flags & EV_ADD))
        return 0;
    int err = kq_shim_sync(kq, fd, f);
    if (err == EBADF)
        memset(f, 0, sizeof *f); /* closed without EV_DELETE: the BSDs forgot it at close() */
    else if (err != 0)
        *f = saved; /* a failed change leaves nothing behind */
    return err;
}

/* Fill one kevent from an epoll event. `data` is a hint, as in kqueue(2):
 * READ gives the bytes readable (FIONREAD), which tcp(7) refuses with EINVAL
 * on a listening socket: Linux cannot tell the accept queue's length, so 1.
 * WRITE gives SO_SNDBUF minus the bytes queued (SIOCOUTQ), else 1; rough,
 * since socket(7) says SO_SNDBUF reads back doubled for kernel bookkeeping. */
static inline void kq_shim_fill(struct kevent *out, int fd, unsigned bit, void *udata, uint32_t ev)
{
    int n = 0, sndbuf = 0;
    socklen_t len = sizeof sndbuf;
    EV_SET(out, fd, bit == KQ_SHIM_READ ? EVFILT_READ : EVFILT_WRITE, 0, 0, 1, udata);
    if (bit == KQ_SHIM_READ && ioctl(fd, FIONREAD, &n) == 0)
        out->data = n;
    if (bit == KQ_SHIM_WRITE && getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) == 0 &&
        ioctl(fd, SIOCOUTQ, &n) == 0 && sndbuf > n)
        out->data = sndbuf - n;
    /* EOF comes only from the kernel's hang-up bits, never from FIONREAD == 0:
     * EPOLLRDHUP is the peer's FIN, EPOLLHUP both directions shut, EPOLLERR a
     * socket error. kqueue(2) warns EOF may come while data is still pending.
     * Native kqueue also puts the socket error in fflags; Linux can only read
     * SO_ERROR by clearing it, which would turn the reset that read() should
     * report into a clean EOF, so the shim leaves fflags 0. */
    if ((ev & (EPOLLHUP | EPOLLERR)) || (bit == KQ_SHIM_READ && (ev & EPOLLRDHUP)))
        out->flags |= EV_EOF;
}

/* Whether epoll (or poll: the same bits on Linux) events make a filter ready. */
static inline int kq_shim_ready(unsigned bit, uint32_t ev)
{
    uint32_t any = EPOLLHUP | EPOLLERR;
    return (ev & (bit == KQ_SHIM_READ ? EPOLLIN | EPOLLRDHUP | any : EPOLLOUT | any)) != 0;
}

/* One kevent for (fd, bit) into out[*n] if there is room, else into pending. */
static inline void kq_shim_emit(struct kq_shim *st, int fd, unsigned bit, uint32_t ev,
                                struct kevent *out, int *n, int room)
{
    struct kq_shim_fd *f = &st->fds[fd];
    if (*n < room) {
        kq_shim_fill(&out[(*n)++], fd, bit, f->udata[bit - 1], ev);
        f->delivered |= bit;
    } else if (st->npending < KQ_SHIM_BATCH) {
        st->pending[st->npending++] = (struct kq_shim_pending){fd, bit};
    }
}

/* Split one epoll event into up to two kevents, one per enabled filter; a
 * pair already returned by this call (from the pending list) is not repeated. */
static inline int kq_shim_split(struct kq_shim *st, const struct epoll_event *ev,
                                struct kevent *out, int room)
{
    int fd = ev->data.fd, n = 0;
    struct kq_shim_fd *f = &st->fds[fd]; /* in the table: only EV_ADD puts fds in epoll */
    for (unsigned bit = KQ_SHIM_READ; bit <= KQ_SHIM_WRITE; bit <<= 1)
        if ((f->enabled & bit) && !(f->delivered & bit) && kq_shim_ready(bit, ev->events))
            kq_shim_emit(st, fd, bit, ev->events, out, &n, room);
    return n;
}

/* poll(2) and epoll(7) share the values of these bits on Linux. */
_Static_assert(POLLIN == EPOLLIN && POLLOUT == EPOLLOUT && POLLERR == EPOLLERR &&
                   POLLHUP == EPOLLHUP,
               "poll and epoll readiness bits differ");

/*
 * Return the kevents left over from an earlier call, oldest first, as the
 * kernel's queue would. Like kqueue(2), which checks a level-triggered
 * filter again before returning it, each is asked again (poll(2), no wait):
 * one whose pair was deleted or disabled since, or that is no longer ready,
 * is dropped. Those that do not fit stay queued.
 */
static inline int kq_shim_take_pending(struct kq_shim *st, struct kevent *out, int room)
{
    int n = 0, kept = 0;
    for (int i = 0; i < st->npending; i++) {
        struct kq_shim_pending q = st->pending[i];
        if (n == room) {
            st->pending[kept++] = q;
            continue;
        }
        if (q.fd >= st->nfds || !(st->fds[q.fd].enabled & q.bit))
            continue;
        struct pollfd pfd = {.fd = q.fd};
        pfd.events = (short)(q.bit == KQ_SHIM_READ ? EPOLLIN | EPOLLRDHUP : EPOLLOUT);
        if (poll(&pfd, 1, 0) == 1 && !(pfd.revents & POLLNVAL) &&
            kq_shim_ready(q.bit, (uint16_t)pfd.revents)) /* n < room: emitted into out */
            kq_shim_emit(st, q.fd, q.bit, (uint16_t)pfd.revents, out, &n, room);
    }
    st->npending = kept;
    return n;
}

/* kqueue takes a timespec (NULL: forever), epoll whole milliseconds. Round up,
 * so that a 1 ns timeout sleeps 1 ms rather than becoming a busy 0. */
static inline int kq_shim_timeout_ms(const struct timespec *ts)
{
    if (ts == NULL)
        return -1;
    if (ts->tv_sec >= INT_MAX / 1000)
        return INT_MAX;
    return (int)((long long)ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000);
}

/* Now in ms, by C11's clock (the includer may not ask for POSIX's
 * clock_gettime()); it only bounds the rare second wait below, which never
 * waits longer than the first. */
static inline long long kq_shim_now_ms(void)
{
    struct timespec now;
    timespec_get(&now, TIME_UTC);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static inline int kevent(int kq, const struct kevent *changelist, int nchanges,
                         struct kevent *eventlist, int nevents, const struct timespec *timeout)
{
    struct kq_shim *st = kq_shim_find(kq);
    if (st == NULL || nchanges < 0 || nevents < 0) {
        errno = st == NULL ? EBADF : EINVAL;
        return -1;
    }
    /* kqueue(2): changes apply before the wait, one by one. A failed change
     * (or any change with EV_RECEIPT) becomes an EV_ERROR event while the
     * eventlist has room; a failure with no room left ends the call with -1
     * and its errno, the changes after it not applied. Once any EV_ERROR
     * event is returned, kevent() does not wait. */
    int nerr = 0;
    for (int i = 0; i < nchanges; i++) {
        int err = kq_shim_apply(kq, st, &changelist[i]);
        if (err == 0 && !(changelist[i].flags & EV_RECEIPT))
            continue;
        if (nerr == nevents) {
            if (err == 0)
                continue; /* a receipt with no room: nothing to report */
            errno = err;
            return -1;
        }
        eventlist[nerr] = changelist[i];
        eventlist[nerr].flags = EV_ERROR;
        eventlist[nerr++].data = err;
    }
    if (nerr > 0 || nevents == 0)
        return nerr;
    /* The time limit matters only now; the changes above stay applied. */
    if (timeout &&
        (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000L)) {
        errno = EINVAL;
        return -1;
    }

    /* epoll(7) splits into two kevents what it reports as one fd, so a full
     * eventlist can leave the second kevent of an fd over; dropping it would
     * drop the same one on every call (READ comes first). kqueue(2) keeps
     * what it could not return for the next call: so does the shim, and then
     * the wait does not block, since there is something to return. */
    int out = kq_shim_take_pending(st, eventlist, nevents);
    int wait_ms = out > 0 ? 0 : kq_shim_timeout_ms(timeout);
    long long deadline = wait_ms > 0 ? kq_shim_now_ms() + wait_ms : 0;
    while (out < nevents) {
        struct epoll_event ready[KQ_SHIM_BATCH];
        int room = nevents - out;
        int n = epoll_wait(kq, ready, room < KQ_SHIM_BATCH ? room : KQ_SHIM_BATCH, wait_ms);
        if (n < 0 && out == 0)
            return -1; /* EINTR included: kevent(2) is not restarted either */
        for (int i = 0; i < n; i++)
            out += kq_shim_split(st, &ready[i], eventlist + out, nevents - out);
        /* Woken only by a disabled fd's one hang-up report (kq_shim_sync):
         * nothing to return, so wait again, for what is left of the time. */
        if (n <= 0 || out > 0 || wait_ms == 0)
            break;
        if (wait_ms > 0) { /* what is left of it, never more than it was */
            long long left = deadline - kq_shim_now_ms();
            if (left <= 0)
                break;
            if (left < wait_ms)
                wait_ms = (int)left;
        }
    }
    for (int i = 0; i < out; i++) /* ready for the next call */
        st->fds[eventlist[i].ident].delivered = 0;
    return out;
}

#endif /* LADDER_KQUEUE_SHIM_H */
