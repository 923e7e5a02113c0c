/*
 * loop.h - the load client's event loop: one small interface, three kernels.
 *
 * The client holds thousands of sockets at once and must keep reading while
 * it writes, so it waits on all of them together. CMake compiles
 * exactly one backend: loop_epoll.c on Linux, loop_kqueue.c on macOS and the
 * BSDs, loop_poll.c anywhere else (or when asked, to test it). This is
 * plumbing for the measuring tool, not the lesson: the servers spell their
 * loops out in full in their own main.c.
 *
 * Every backend behaves the same way:
 *   - level-triggered: an event repeats until the condition is gone;
 *   - a descriptor is registered once with its interest and an opaque
 *     pointer, which comes back with each of its events;
 *   - call loop_remove() before close(); an event already fetched for a
 *     descriptor closed earlier in the same batch can still be delivered,
 *     so the caller checks its own state before acting on one.
 */
#ifndef LOADGEN_LOOP_H
#define LOADGEN_LOOP_H

enum {
    LOOP_READ = 1,  /* interest and event: readable (or EOF) */
    LOOP_WRITE = 2, /* interest and event: writable (or connect finished) */
    LOOP_ERROR = 4, /* event only: error or hang-up; a read will say which */
};

typedef struct {
    void *data; /* the pointer given to loop_add / loop_modify */
    int events; /* LOOP_READ | LOOP_WRITE | LOOP_ERROR */
} loop_event_t;

typedef struct loop loop_t;

/* expected_fds: how many descriptors it should expect to watch (a hint: a
 * backend with tables grows them past it). NULL on failure. */
loop_t *loop_create(int expected_fds);
void loop_destroy(loop_t *loop);

/* All three return 0, or -1 with errno set. */
int loop_add(loop_t *loop, int fd, int interest, void *data);
int loop_modify(loop_t *loop, int fd, int interest, void *data);
int loop_remove(loop_t *loop, int fd);

/*
 * Wait up to timeout_us microseconds (-1: forever) and fill at most
 * max_events entries. Returns how many; 0 on timeout or when a signal
 * interrupted the wait. Microseconds, not the milliseconds of epoll_wait and
 * poll, because the open-loop schedule sends every 50 us at 20 000 msgs/s:
 * a wait rounded up to the next millisecond would make the client itself
 * late. Backends whose kernel call takes milliseconds only round up.
 */
int loop_wait(loop_t *loop, loop_event_t *events, int max_events, long timeout_us);

/* "epoll", "kqueue" or "poll": reported with the results. */
extern const char loop_backend[];

#endif /* LOADGEN_LOOP_H */
