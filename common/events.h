/*
 * events.h - for the event-loop rungs, 04-07, on top of net.h.
 *
 * What a one-thread event loop needs and the blocking rungs do not:
 * non-blocking sockets, a table of connections indexed by fd with the bound
 * that keeps an fd from landing past its end, and pausing accept() when it
 * fails in a way the next try would repeat. How the loop waits stays in
 * each main.c, and so does watching the listening socket: the state of the
 * pause lives only here, and accept_failed() tells the rung when a pause
 * begins or ends, for it to stop or start watching the listener.
 */
#ifndef LADDER_EVENTS_H
#define LADDER_EVENTS_H

#include "net.h"

#include <fcntl.h>
#include <limits.h> /* LONG_MAX, and OPEN_MAX on macOS */

/* The state of one loop. Empty for 04-08, which have one loop; 09 runs a
 * loop per thread and makes it _Thread_local (reuseport.h). */
#ifndef LOOP_LOCAL
#define LOOP_LOCAL
#endif

/* On a non-blocking socket these mean "not now", never "this peer failed". */
static inline bool is_transient(int err)
{
    return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}

/* F_GETFL fails only on a bad fd, and then F_SETFL fails too: -1 either way. */
static inline int set_nonblocking(int fd)
{
    return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* ---- the table of connections ------------------------------------------ */

/*
 * How many fds may one poll() watch here? XNU's poll() fails with EINVAL
 * when nfds exceeds OPEN_MAX (10240), whatever the open-file limit
 * (bsd/kern/sys_generic.c); Linux and FreeBSD refuse only more than
 * RLIMIT_NOFILE, which the table below follows already. kevent() and
 * epoll_wait() have no such limit.
 */
static inline long poll_fd_max(void)
{
#ifdef __APPLE__
    return OPEN_MAX;
#else
    return LONG_MAX;
#endif
}

/* What a refused connection's line names as the table's end. */
static const char *table_limit = "the connection table's size";

/*
 * 05-07 find a connection by its fd in a table with one slot for every fd
 * the open-file limit allows (raised first, and capped), or fewer if the
 * wait call takes fewer (`most`: 05 passes poll_fd_max()). Returns the
 * zeroed table and its number of slots. The stop pipe, made earlier, is
 * looked up like any fd: should inherited descriptors have pushed it past
 * a limit lowered to the ceiling, the table grows to cover it.
 */
static inline void *new_fd_table(size_t slot_size, long *slots, long most, bool verbose)
{
    *slots = raise_open_file_limit(verbose);
    if (*slots > most)
        *slots = most, table_limit = "OPEN_MAX, the most fds poll() takes on macOS";
    if (*slots <= stop_pipe[0])
        *slots = stop_pipe[0] + 1L;
    void *table = calloc((size_t)*slots, slot_size);
    if (!table)
        fatal("calloc: a table of %ld connections", *slots);
    return table;
}

/*
 * An fd past the end of the table (04: FD_SETSIZE) must be refused: FD_SET()
 * or conns[fd] would write past the end. For 05-07 that happens when the
 * limit is raised while the server runs (prlimit --pid, as root). One line
 * per run of refusals, not per client: refused clients may well reconnect.
 */
static inline bool refuse_past(int fd, long slots, const char *table)
{
    static LOOP_LOCAL bool logged; /* until an fd fits again */
    if (fd < slots)
        return logged = false;
    if (!logged)
        log_msg("fd %d: at or above %s (%ld): connection refused, and the next ones too until one fits",
                fd, table, slots);
    logged = true;
    close(fd);
    return true;
}

/* ---- pausing accept() ---------------------------------------------------- */

/*
 * Out of descriptors, accept() fails (EMFILE: our limit; ENFILE: the
 * system's) but leaves the client queued, so a level-triggered listener
 * stays ready and the loop would spin; short of kernel memory (ENOBUFS,
 * ENOMEM) the next try fails just the same. So the loop stops watching the
 * listener, tries again as soon as one of its clients leaves, and, since
 * the shortage may end elsewhere (another process, for ENFILE), also
 * ACCEPT_RETRY_MS later. The retry is due at a fixed time, checked at the
 * start of every turn of the loop: a time-out that restarts with each wait
 * would never run out while a client chatters. One line per episode; an episode ends when accept()
 * says EAGAIN. (Linux reports EMFILE before it looks at the queue, so the
 * try after a client leaves is what sees EAGAIN when nobody was waiting:
 * watching the listener again would wait for a client that never comes,
 * and the next episode would go unlogged.)
 */
static LOOP_LOCAL struct {
    bool paused;        /* the listener is not watched */
    bool logged;        /* this episode's line is out */
    long long retry_ms; /* when to try again, in monotonic_ms() */
} accept_pause;

/*
 * 09 runs this loop once per thread, and the descriptors they run short of
 * are the process's, not a loop's: reuseport.h defines these to end every
 * loop's pause when a client leaves any of them. One loop needs none of it.
 */
#ifndef LOOPS_SHARE_FDS
static inline void accept_pause_noted(bool paused) { (void)paused; }
static inline void resume_other_loops(void) {}
static inline bool resumed_by_other_loop(void) { return false; }
#endif

/*
 * And however readable the listener, one wakeup takes at most ACCEPT_BATCH
 * connections: in a connect storm accept() would otherwise keep the loop
 * while its clients wait. Level-triggered, the listener is reported again.
 */
#define ACCEPT_BATCH 64

/* A client left, so a descriptor is free: if paused, the retry is due now
 * (the next turn's ms_until_accept_retry() says 0), here and in 09's other
 * loops. */
static inline void accept_resume(void)
{
    if (accept_pause.paused)
        accept_pause.retry_ms = 0;
    resume_other_loops();
}

static inline bool accept_paused(void)
{
    return accept_pause.paused;
}

/*
 * accept() failed with err, and not one accept_retry_at_once() retries.
 * Returns true when that begins a pause or ends one: the rung then stops
 * or starts watching the listener (accept_paused() says which).
 */
static inline bool accept_failed(int err)
{
    bool was_paused = accept_pause.paused;
    if (is_transient(err)) { /* EAGAIN: all who queued are in */
        accept_pause.paused = accept_pause.logged = false;
        if (was_paused)
            accept_pause_noted(false);
        return was_paused;
    }
    errno = err;
    if (!accept_pause.logged)
        log_errno("accept (pausing until a client leaves, retrying every %d ms)", ACCEPT_RETRY_MS);
    accept_pause.paused = accept_pause.logged = true;
    accept_pause.retry_ms = monotonic_ms() + ACCEPT_RETRY_MS;
    if (!was_paused)
        accept_pause_noted(true);
    return !was_paused;
}

/* The wait's time-out, taken once a turn: -1 (none) while accepting, else
 * the ms until the retry is due, 0 once it is; a turn that began at 0 ends
 * with the retry. */
static inline int ms_until_accept_retry(void)
{
    if (accept_pause.paused && resumed_by_other_loop())
        accept_pause.retry_ms = 0;
    long long ms = accept_pause.retry_ms - monotonic_ms();
    return !accept_pause.paused ? -1 : ms > 0 ? (int)ms : 0;
}

#endif /* LADDER_EVENTS_H */
