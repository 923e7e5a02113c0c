/*
 * loop_epoll.c - loop.h on Linux: epoll(7), level-triggered.
 *
 * The kernel keeps the interest list, so a wait costs time in proportion to
 * the sockets that are ready, not to the ten thousand that are idle: the
 * client stays cheap while it measures servers that are not.
 */
#include "loop.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

/* Enough for one batch at C10K without a second epoll_wait per wakeup. */
#define BATCH 1024

struct loop {
    int epfd;
    struct epoll_event ready[BATCH];
};

const char loop_backend[] = "epoll";

loop_t *loop_create(int expected_fds)
{
    (void)expected_fds; /* epoll grows as needed */
    loop_t *loop = malloc(sizeof *loop);
    if (loop && (loop->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        free(loop);
        return NULL;
    }
    return loop;
}

void loop_destroy(loop_t *loop)
{
    if (loop) {
        close(loop->epfd);
        free(loop);
    }
}

static int control(loop_t *loop, int op, int fd, int interest, void *data)
{
    struct epoll_event ev = {.data.ptr = data};
    if (interest & LOOP_READ)
        ev.events |= EPOLLIN;
    if (interest & LOOP_WRITE)
        ev.events |= EPOLLOUT;
    return epoll_ctl(loop->epfd, op, fd, &ev);
}

int loop_add(loop_t *loop, int fd, int interest, void *data)
{
    return control(loop, EPOLL_CTL_ADD, fd, interest, data);
}

int loop_modify(loop_t *loop, int fd, int interest, void *data)
{
    return control(loop, EPOLL_CTL_MOD, fd, interest, data);
}

/*
 * close() alone would also do (the client never dup()s a socket, so the
 * close drops it from the set), but removing explicitly keeps every backend
 * the same: a descriptor removed and added again is simply new.
 */
int loop_remove(loop_t *loop, int fd)
{
    return epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
}

/*
 * epoll_pwait2 (Linux 5.11, glibc 2.35) takes a timespec; older kernels say
 * ENOSYS, and a container's seccomp profile that does not know the call
 * says EPERM. Then epoll_wait's milliseconds are rounded up, never down (a
 * wait of 0 would spin). Each worker's loop may be the first to find out,
 * so the flag is atomic.
 */
static int wait_us(loop_t *loop, int max_events, long timeout_us)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
    static atomic_bool no_pwait2;
    if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
        struct timespec ts = {timeout_us / 1000000L, (timeout_us % 1000000L) * 1000L};
        int n = epoll_pwait2(loop->epfd, loop->ready, max_events, timeout_us < 0 ? NULL : &ts,
                             NULL);
        if (n >= 0 || (errno != ENOSYS && errno != EPERM))
            return n;
        atomic_store_explicit(&no_pwait2, true, memory_order_relaxed);
    }
#endif
    int timeout_ms = timeout_us < 0 ? -1 : (int)((timeout_us + 999) / 1000);
    return epoll_wait(loop->epfd, loop->ready, max_events, timeout_ms);
}

int loop_wait(loop_t *loop, loop_event_t *events, int max_events, long timeout_us)
{
    if (max_events > BATCH)
        max_events = BATCH;
    int n = wait_us(loop, max_events, timeout_us);
    if (n < 0)
        return errno == EINTR ? 0 : -1;
    for (int i = 0; i < n; i++) {
        uint32_t e = loop->ready[i].events;
        events[i].data = loop->ready[i].data.ptr;
        events[i].events = (e & EPOLLIN ? LOOP_READ : 0) | (e & EPOLLOUT ? LOOP_WRITE : 0) |
                           (e & (EPOLLERR | EPOLLHUP) ? LOOP_ERROR : 0);
    }
    return n;
}
