/*
 * blocking.h - for the blocking rungs, 01-03, on top of net.h.
 *
 * Three things a server whose every call blocks needs, and an event loop
 * does not: write_all() for short writes; a way for SIGINT/SIGTERM to end a
 * call that is already blocked, or about to block, in accept(), read() or
 * write(); and a pause after an accept() failure that would only repeat.
 * Plus, for 02 and 03, the name of the limit a failed fork() or
 * pthread_create() met.
 */
#ifndef LADDER_BLOCKING_H
#define LADDER_BLOCKING_H

#include "net.h"

/* Sockets that SIGINT/SIGTERM put out of use (-1: none). */
static volatile sig_atomic_t listener_to_shut = -1, client_to_shut = -1;

/*
 * Write all of buf to a blocking socket. write() may send less than asked
 * (a signal, a full buffer), so loop on the remainder. Only for the blocking
 * rungs: on a non-blocking socket EAGAIN ends the loop with bytes unsent.
 */
static inline int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR && !stop_requested)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Run by net.h's signal handler once shut_listener_on_stop() has named the
 * listener; dup2() and shutdown() are async-signal-safe (signal-safety(7)). */
static inline void shut_blocked_calls(void)
{
    dup2(stop_pipe[0], listener_to_shut);
    if (client_to_shut >= 0)
        shutdown(client_to_shut, SHUT_RDWR);
}

/*
 * For a loop blocked in accept(). EINTR tells it about a signal that arrives
 * during the call, but one that lands just before (after the loop checked
 * stop_requested) would leave accept() waiting for the next client. So the
 * handler also puts the stop pipe in the listener's place with dup2(),
 * which closes the listening socket: any later accept() on that fd number
 * fails at once (ENOTSOCK), and the number stays ours to close. (shutdown()
 * of a listening socket wakes accept() on Linux, but macOS refuses it with
 * ENOTCONN and leaves accept() waiting.)
 *
 * This works only because the handler runs on the thread that accepts: that
 * accept() returns EINTR, and dup2() only makes the next one fail. dup2()
 * does not wake an accept() blocked in another thread (Linux, FreeBSD), and
 * on macOS the dup2() itself would wait until that accept() returned. Hence
 * 03-threads' rule that only its main thread takes SIGINT/SIGTERM.
 *
 * Call it after announce_listening(): from here on the listener's number may
 * name the pipe, on which getsockname() fails.
 */
static inline void shut_listener_on_stop(int listen_fd)
{
    listener_to_shut = listen_fd;
    on_stop_hook = shut_blocked_calls;
}

/*
 * The same for the client being served (-1 when none). A signal during a
 * write() that has already sent part of the buffer does not fail with EINTR:
 * write() returns the short count, and write_all() would block again on a
 * client that never reads. Shut down, the socket fails every call at once.
 */
static inline void shut_client_on_stop(int fd)
{
    client_to_shut = fd;
}

/*
 * accept() failed, and not for a signal or a client that gave up while
 * queued. Out of descriptors (EMFILE, ENFILE) the client stays queued, and
 * out of memory (ENOBUFS, ENOMEM) the next try fails too: retrying at once
 * would spin. So wait ACCEPT_RETRY_MS (a stop signal cuts it short), and say
 * so once per run of failures: a second without one ends the run.
 */
static inline void accept_failed(int err)
{
    static long long last_failure_ms = -1000000;
    long long now = monotonic_ms();
    errno = err;
    if (now - last_failure_ms > 1000)
        log_errno("accept (retrying every %d ms)", ACCEPT_RETRY_MS);
    last_failure_ms = now;
    nanosleep(&(struct timespec){.tv_nsec = ACCEPT_RETRY_MS * 1000000L}, NULL);
}

/*
 * The BSDs' own caps on tasks, for task_limit(): the per-user process limit
 * is RLIMIT_NPROC held under kern.maxprocperuid; threads per process are
 * capped by kern.num_taskthreads on macOS (4096 on current Macs) and
 * kern.threads.max_threads_per_proc on FreeBSD, whose value replaces
 * RLIMIT_NPROC's. NULL on Linux, where RLIMIT_NPROC is the whole story:
 * it counts threads too (proc(5)).
 */
static inline const char *platform_task_limit(bool threads, long *value)
{
#if defined(__APPLE__) || defined(__FreeBSD__)
#ifdef __APPLE__
    const char *name = "kern.num_taskthreads";
#else
    const char *name = "kern.threads.max_threads_per_proc";
#endif
    int cap;
    size_t len = sizeof cap;
    if (!threads)
        return "RLIMIT_NPROC, under kern.maxprocperuid";
    if (sysctlbyname(name, &cap, &len, NULL, 0) == 0)
        return *value = cap, name;
#endif
    (void)threads, (void)value;
    return NULL;
}

/*
 * For the log line of a fork() (threads false) or pthread_create() that
 * failed with err: if EAGAIN, the limit it most likely met, with its value;
 * else "". Every kernel caps tasks at a number of its choosing: the
 * per-user RLIMIT_NPROC, which on Linux counts threads too, and whatever
 * platform_task_limit() names. Leaves errno = err, for the log_errno() it
 * is an argument of.
 */
static inline const char *task_limit(int err, bool threads)
{
    static char text[96];
    struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
    getrlimit(RLIMIT_NPROC, &rl);
    long value = rl.rlim_cur == RLIM_INFINITY ? -1 : (long)rl.rlim_cur;
    const char *name = platform_task_limit(threads, &value);
    char number[24] = "unlimited";
    if (value >= 0)
        snprintf(number, sizeof number, "%ld", value);
    snprintf(text, sizeof text, "; the %s limit: %s %s", threads ? "thread" : "process",
             name ? name : "RLIMIT_NPROC", number);
    errno = err;
    return err == EAGAIN ? text : "";
}

#endif /* LADDER_BLOCKING_H */
