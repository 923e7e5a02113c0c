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
#include <limits.h>
#include <poll.h>
#include <stdlib.h>

struct loop {
    struct pollfd *fds; /* the array poll() scans, packed, in no order */
    void **data;        /* data[i] belongs to fds[i] */
    int room;           /* entries fds and data have room for */
    int count;          /* entries in use in fds and data */
    int *slot;          /* slot[fd]: index of fd in fds, or -1 */
    int slots;          /* the size of slot: one more than the highest fd it covers */
    int next;           /* where the next scan of revents starts */
};

const char loop_backend[] = "poll";

/*
 * The tables start at what the caller expects to hold and grow past it,
 * doubling: sized by the open-file limit instead, they would take 20 bytes
 * per descriptor the limit allows, about 20 GiB where the hard limit is
 * 2^30 (some containers), for a run of a few thousand connections.
 */
static int grow_slots(loop_t *loop, int fd)
{
    int size = loop->slots > 0 ? loop->slots : 64;
    while (size <= fd)
        size = size > INT_MAX / 2 ? INT_MAX : size * 2;
    int *slot = realloc(loop->slot, (size_t)size * sizeof *slot);
    if (!slot)
        return -1;
    for (int i = loop->slots; i < size; i++)
        slot[i] = -1;
    loop->slot = slot;
    loop->slots = size;
    return 0;
}

static int resize_entries(loop_t *loop, int room)
{
    struct pollfd *fds = realloc(loop->fds, (size_t)room * sizeof *fds);
    if (fds)
        loop->fds = fds;
    void **data = fds ? realloc(loop->data, (size_t)room * sizeof *data) : NULL;
    if (!data)
        return -1;
    loop->data = data;
    loop->room = room;
    return 0;
}

loop_t *loop_create(int expected_fds)
{
    loop_t *loop = calloc(1, sizeof *loop);
    if (!loop)
        return NULL;
    if (resize_entries(loop, expected_fds > 0 ? expected_fds : 1) < 0 ||
        grow_slots(loop, expected_fds) < 0) {
        loop_destroy(loop);
        return NULL;
    }
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

/* fd's entry in fds and data, or -1 with errno ENOENT. */
static int entry_of(const loop_t *loop, int fd)
{
    if (fd >= 0 && fd < loop->slots && loop->slot[fd] >= 0)
        return loop->slot[fd];
    errno = ENOENT;
    return -1;
}

int loop_add(loop_t *loop, int fd, int interest, void *data)
{
    if (fd < 0 || entry_of(loop, fd) >= 0) {
        errno = fd < 0 ? EINVAL : EEXIST;
        return -1;
    }
    if ((fd >= loop->slots && grow_slots(loop, fd) < 0) ||
        (loop->count == loop->room &&
         resize_entries(loop, loop->room > INT_MAX / 2 ? INT_MAX : loop->room * 2) < 0)) {
        errno = ENOMEM;
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
    int i = entry_of(loop, fd);
    if (i < 0)
        return -1;
    loop->fds[i].events = poll_events(interest);
    loop->data[i] = data;
    return 0;
}

/* Move the last entry into the hole, so the array stays packed. */
int loop_remove(loop_t *loop, int fd)
{
    int i = entry_of(loop, fd);
    if (i < 0)
        return -1;
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
