/*
 * loop_poll.c - loop.h anywhere POSIX: poll(2), the portable fallback.
 *
 * The interest list lives here, in an array handed whole to the kernel on
 * every wait, so each wakeup costs time in proportion to every socket held
 * (the very wall 05-poll demonstrates). Good enough to drive a few thousand
 * connections; prefer epoll or kqueue when measuring at C10K.
 */
#include "loop.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

struct loop {
    struct pollfd *fds; /* the array poll() scans, packed, in no order */
    void **data;        /* data[i] belongs to fds[i] */
    int *slot;          /* slot[fd]: index of fd in fds, or -1 */
    int count;          /* entries in use in fds and data */
    int max_fds;        /* size of all three arrays */
    int next;           /* where the next scan of revents starts */
};

const char loop_backend[] = "poll";

loop_t *loop_create(int max_fds)
{
    loop_t *loop = calloc(1, sizeof *loop);
    if (!loop)
        return NULL;
    loop->max_fds = max_fds;
    loop->fds = calloc((size_t)max_fds, sizeof *loop->fds);
    loop->data = calloc((size_t)max_fds, sizeof *loop->data);
    loop->slot = malloc((size_t)max_fds * sizeof *loop->slot);
    if (!loop->fds || !loop->data || !loop->slot) {
        loop_destroy(loop);
        return NULL;
    }
    for (int fd = 0; fd < max_fds; fd++)
        loop->slot[fd] = -1;
    return loop;
}

void loop_destroy(loop_t *loop)
{
    if (loop) {
        free(loop->fds);
        free(loop->data);
        free(loop->slot);
        free(loop);
    }
}

static short poll_events(int interest)
{
    return (short)((interest & LOOP_READ ? POLLIN : 0) | (interest & LOOP_WRITE ? POLLOUT : 0));
}

int loop_add(loop_t *loop, int fd, int interest, void *data)
{
    if (fd < 0 || fd >= loop->max_fds || loop->slot[fd] >= 0) {
        errno = fd < 0 || fd >= loop->max_fds ? EINVAL : EEXIST;
        return -1;
    }
    int i = loop->count++;
    loop->fds[i] = (struct pollfd){.fd = fd, .events = poll_events(interest)};
    loop->data[i] = data;
    loop->slot[fd] = i;
    return 0;
}

int loop_modify(loop_t *loop, int fd, int interest, void *data)
{
    if (fd < 0 || fd >= loop->max_fds || loop->slot[fd] < 0) {
        errno = ENOENT;
        return -1;
    }
    int i = loop->slot[fd];
    loop->fds[i].events = poll_events(interest);
    loop->data[i] = data;
    return 0;
}

/* Move the last entry into the hole, so the array stays packed. */
int loop_remove(loop_t *loop, int fd)
{
    if (fd < 0 || fd >= loop->max_fds || loop->slot[fd] < 0) {
        errno = ENOENT;
        return -1;
    }
    int i = loop->slot[fd];
    int last = --loop->count;
    loop->fds[i] = loop->fds[last];
    loop->data[i] = loop->data[last];
    loop->slot[loop->fds[i].fd] = i;
    loop->slot[fd] = -1;
    return 0;
}

/* poll(2) takes milliseconds: rounded up, so that a short wait never becomes a spin. */
int loop_wait(loop_t *loop, loop_event_t *events, int max_events, long timeout_us)
{
    int timeout_ms = timeout_us < 0 ? -1 : (int)((timeout_us + 999) / 1000);
    int nready = poll(loop->fds, (nfds_t)loop->count, timeout_ms);
    if (nready < 0)
        return errno == EINTR ? 0 : -1;
    /*
     * Report at most max_events, starting where the last scan stopped, so a
     * socket near the end of the array is not starved by busy ones before it.
     */
    int n = 0;
    for (int k = 0; k < loop->count && n < nready && n < max_events; k++) {
        int i = (loop->next + k) % loop->count;
        short r = loop->fds[i].revents;
        if (r == 0)
            continue;
        events[n].data = loop->data[i];
        events[n].events = (r & POLLIN ? LOOP_READ : 0) | (r & POLLOUT ? LOOP_WRITE : 0) |
                           (r & (POLLERR | POLLHUP | POLLNVAL) ? LOOP_ERROR : 0);
        n++;
        if (n == max_events)
            loop->next = (i + 1) % loop->count;
    }
    return n;
}
