/*
 * loop_kqueue.c - loop.h on macOS and the BSDs: kqueue(2), level-triggered.
 *
 * kqueue watches (descriptor, filter) pairs, so reading and writing are two
 * registrations and can come back as two events for one socket. Setting an
 * interest adds both filters and enables or disables each: EV_ADD on a pair
 * that exists only changes it, so the same call serves add and modify.
 */
#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/event.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>

#define BATCH 1024

struct loop {
    int kq;
    struct kevent ready[BATCH];
};

const char loop_backend[] = "kqueue";

loop_t *loop_create(int expected_fds)
{
    (void)expected_fds;
    loop_t *loop = malloc(sizeof *loop);
    if (loop && (loop->kq = kqueue()) < 0) {
        free(loop);
        return NULL;
    }
    return loop;
}

void loop_destroy(loop_t *loop)
{
    if (loop) {
        close(loop->kq);
        free(loop);
    }
}

int loop_add(loop_t *loop, int fd, int interest, void *data)
{
    struct kevent changes[2];
    EV_SET(&changes[0], fd, EVFILT_READ, EV_ADD | (interest & LOOP_READ ? EV_ENABLE : EV_DISABLE),
           0, 0, data);
    EV_SET(&changes[1], fd, EVFILT_WRITE, EV_ADD | (interest & LOOP_WRITE ? EV_ENABLE : EV_DISABLE),
           0, 0, data);
    return kevent(loop->kq, changes, 2, NULL, 0, NULL);
}

/* EV_ADD on a pair that exists only changes it (see the top of the file). */
int loop_modify(loop_t *loop, int fd, int interest, void *data)
{
    return loop_add(loop, fd, interest, data);
}

/* close() would drop both registrations too; this keeps the backends alike. */
int loop_remove(loop_t *loop, int fd)
{
    struct kevent changes[2];
    EV_SET(&changes[0], fd, EVFILT_READ, EV_DELETE, 0, 0, NULL);
    EV_SET(&changes[1], fd, EVFILT_WRITE, EV_DELETE, 0, 0, NULL);
    return kevent(loop->kq, changes, 2, NULL, 0, NULL);
}

/* kevent(2) takes its timeout as a timespec: the microseconds pass unrounded. */
int loop_wait(loop_t *loop, loop_event_t *events, int max_events, long timeout_us)
{
    struct timespec ts = {timeout_us / 1000000L, (timeout_us % 1000000L) * 1000L};
    if (max_events > BATCH)
        max_events = BATCH;
    int n = kevent(loop->kq, NULL, 0, loop->ready, max_events, timeout_us < 0 ? NULL : &ts);
    if (n < 0)
        return errno == EINTR ? 0 : -1;
    for (int i = 0; i < n; i++) {
        const struct kevent *k = &loop->ready[i];
        events[i].data = k->udata;
        events[i].events = (k->filter == EVFILT_READ ? LOOP_READ : LOOP_WRITE) |
                           (k->flags & (EV_EOF | EV_ERROR) ? LOOP_ERROR : 0);
    }
    return n;
}
