/*
 * reuseport.h - for beyond/09-reuseport, on top of events.h: one epoll
 * loop per thread, each with its own listening socket on the same port.
 *
 * What lives here is none of the lesson:
 *   - LOOP_LOCAL: _Thread_local, so that 07's globals (and events.h's pause
 *     state) become one copy per loop;
 *   - how many loops: -t, else one per online CPU;
 *   - the listeners: the port is claimed first by a socket without
 *     SO_REUSEPORT, so that a second copy of the server fails to bind as
 *     every rung does (pitfall 8), then each loop binds its own with the
 *     platform's load-balancing option, and once they listen the port is
 *     checked to hold no listener but ours (a copy started at the same
 *     moment could have joined);
 *   - one pause at the fd limit for all the loops: a client leaving any loop
 *     ends the pause of every loop (events.h's hooks);
 *   - starting the loops with SIGINT/SIGTERM blocked, so that only the
 *     main thread takes them (the others wake through the stop pipe).
 *
 * The option: Linux's SO_REUSEPORT (3.9, socket(7)) spreads incoming
 * connections over the sockets bound to a port by a hash of the addresses.
 * 09 is Linux-only: its loop is 07's, epoll, and CMake builds it only where
 * <sys/epoll.h> exists. A port to the BSDs would need a kqueue loop and,
 * on FreeBSD, SO_REUSEPORT_LB (FreeBSD 12, setsockopt(2)): FreeBSD's plain
 * SO_REUSEPORT predates Linux's and does not spread connections. macOS has
 * nothing that spreads them: its SO_REUSEPORT only lets the sockets bind,
 * and new connections go to one of them (the last bound, as observed).
 */
#ifndef LADDER_REUSEPORT_H
#define LADDER_REUSEPORT_H

#define LOOP_LOCAL _Thread_local
#define LOOPS_SHARE_FDS 1 /* events.h: these three come from here */
#include <stdbool.h>
static inline void accept_pause_noted(bool paused);
static inline void resume_other_loops(void);
static inline bool resumed_by_other_loop(void);
#include "events.h"

#include <netinet/in.h> /* sockaddr_in(6): glibc's <arpa/inet.h> brings it, FreeBSD's not */
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/stat.h>

#define MAX_LOOPS 256

/* How many loops: -t, else one per online CPU. */
static int loops;

static inline int default_loops(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_LOOPS ? MAX_LOOPS : (int)n;
}

/* parse_options()' hook for -t LOOPS, 1 to MAX_LOOPS. */
static inline int on_loops_option(int opt, const char *arg)
{
    char *end;
    long n = strtol(arg, &end, 10);
    if (opt != 't' || *end != '\0' || n < 1 || n > MAX_LOOPS)
        return -1;
    loops = (int)n;
    return 0;
}

/*
 * Claim the port alone (a port held by another server, shared or not,
 * fails here with "bind ... in use") and note the number the kernel gave
 * for -p 0; each loop then binds and listens on its own socket there with
 * open_shared_listener(). The claim is kept until they listen, so that the
 * number stays ours meanwhile.
 */
static char shared_port[8];
static int claim_fd = -1;

static inline void claim_port(server_options_t *opts)
{
    claim_fd = bind_socket(opts, opts->port, false);
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(claim_fd, (struct sockaddr *)&ss, &len) < 0)
        fatal("getsockname");
    int port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
    snprintf(shared_port, sizeof shared_port, "%d", port);
}

/*
 * The claim cannot keep out a second copy started at the same moment. A
 * socket without SO_REUSEPORT is refused a port only where another is
 * listening (both set SO_REUSEADDR, which lets sockets share a port while
 * none listens); so from our claim to our first listen(), another copy's
 * claim binds too, and its listeners then join ours: SO_REUSEPORT lets any
 * socket of the same user join (socket(7)), and no order of binding
 * prevents that. So once ours listen, the port is checked the other way
 * round: every listener on our address and port must be one of ours. Of
 * two copies, the one that checks second sees the other's listeners and
 * exits as a port in use (both do, if both listen before either checks):
 * neither serves a share of the other's clients unawares.
 *
 * Linux lists each listening socket of the network namespace in
 * /proc/net/tcp (tcp6): its address and port in hex as the kernel holds
 * them, its state (0A: listening) and its inode, which fstat() gives for
 * our own sockets. Where that file cannot be read, the check is not made.
 */
static int shared_fds[MAX_LOOPS], shared_count;

static inline bool is_our_socket(unsigned long inode)
{
    struct stat st;
    for (int i = 0; i < shared_count; i++)
        if (fstat(shared_fds[i], &st) == 0 && (unsigned long)st.st_ino == inode)
            return true;
    return false;
}

static inline bool port_has_other_listener(void)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char want[40], addr[40], line[256];
    uint32_t a[4] = {0}; /* the address in 32-bit words, each printed as the kernel does */
    if (getsockname(shared_fds[0], (struct sockaddr *)&ss, &len) < 0)
        fatal("getsockname");
    bool v6 = ss.ss_family == AF_INET6;
    if (v6) {
        memcpy(a, &((struct sockaddr_in6 *)&ss)->sin6_addr, sizeof a);
        snprintf(want, sizeof want, "%08X%08X%08X%08X", a[0], a[1], a[2], a[3]);
    } else {
        memcpy(a, &((struct sockaddr_in *)&ss)->sin_addr, sizeof a[0]);
        snprintf(want, sizeof want, "%08X", a[0]);
    }
    FILE *f = fopen(v6 ? "/proc/net/tcp6" : "/proc/net/tcp", "r");
    bool other = false;
    unsigned port, state;
    unsigned long inode;
    while (f && !other && fgets(line, sizeof line, f))
        other = sscanf(line, " %*d: %39[0-9A-F]:%X %*s %X %*s %*s %*s %*s %*s %lu", addr, &port,
                       &state, &inode) == 4 &&
                state == 0x0A && port == (unsigned)atoi(shared_port) &&
                strcmp(addr, want) == 0 && !is_our_socket(inode);
    if (f)
        fclose(f);
    return other;
}

/* Each loop's listener; once the last listens, the check above, and the
 * claim has done its part. */
static inline int open_shared_listener(const server_options_t *opts)
{
    int fd = bind_socket(opts, shared_port, true);
    if (listen(fd, LISTEN_BACKLOG) < 0)
        fatal("listen");
    shared_fds[shared_count++] = fd;
    if (shared_count == loops && port_has_other_listener())
        log_msg("bind %s port %s: in use (another server started on it at the same time)",
                opts->addr, shared_port), exit(1);
    if (shared_count == loops)
        close(claim_fd);
    return fd;
}

/* ---- one pause at the fd limit for every loop ---------------------------- */

/*
 * The descriptors a loop runs out of are the process's: when a client of
 * any loop leaves, every loop paused at the limit (events.h) may accept
 * again. So each loop has a bell, an eventfd in its own epoll set,
 * edge-triggered (a ring wakes it once, read or not); a loop that frees a
 * descriptor rings the paused ones, and each reads its bell at the start of
 * its next turn and retries at once, instead of waiting out ACCEPT_RETRY_MS.
 * (Pausing stays each loop's own: a loop whose queue is empty does not spin,
 * and one with a client waiting meets EMFILE at its first try. A pause that
 * begins just as another loop frees a descriptor can miss the ring; its
 * retry comes ACCEPT_RETRY_MS later, as before.)
 */
static int bells[MAX_LOOPS];
static atomic_bool loop_paused[MAX_LOOPS];
static atomic_int loops_paused;
static LOOP_LOCAL int loop_id; /* which loop this thread runs: set by run_loops() */

/* This loop's bell, for its epoll set. */
static inline int loop_bell(void)
{
    return bells[loop_id];
}

static inline void accept_pause_noted(bool paused)
{
    atomic_store(&loop_paused[loop_id], paused);
    atomic_fetch_add(&loops_paused, paused ? 1 : -1);
}

static inline void resume_other_loops(void)
{
    uint64_t ring = 1;
    if (atomic_load(&loops_paused) == 0)
        return;
    for (int i = 0; i < loops; i++)
        if (i != loop_id && atomic_load(&loop_paused[i]))
            (void)!write(bells[i], &ring, sizeof ring);
}

static inline bool resumed_by_other_loop(void)
{
    uint64_t rings;
    return read(bells[loop_id], &rings, sizeof rings) == (ssize_t)sizeof rings;
}

/*
 * The listening line promises a server that is set up: the first loop
 * prints it only once every loop has its interest list (a test that counts
 * the server's descriptors right after it would otherwise race the others).
 */
static pthread_mutex_t loops_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t loops_cond = PTHREAD_COND_INITIALIZER;
static int loops_ready;

static inline void loop_is_ready(void)
{
    pthread_mutex_lock(&loops_lock);
    loops_ready++;
    pthread_cond_broadcast(&loops_cond);
    pthread_mutex_unlock(&loops_lock);
}

static inline void wait_for_loops(int n)
{
    pthread_mutex_lock(&loops_lock);
    while (loops_ready < n)
        pthread_cond_wait(&loops_cond, &loops_lock);
    pthread_mutex_unlock(&loops_lock);
}

static void *(*loop_body)(void *); /* run_loops()' loop */

static inline void *start_loop(void *arg)
{
    loop_id = (int)(intptr_t)arg;
    return loop_body(arg);
}

/* Run loop(0) here and loop(1 .. n-1) in threads that never take
 * SIGINT/SIGTERM, each with its bell; returns when all have ended. A loop
 * that cannot start is a start-up failure: its listener would take a share
 * of the clients and never accept them. */
static inline void run_loops(int n, void *(*loop)(void *))
{
    static pthread_t threads[MAX_LOOPS];
    sigset_t stop, old;
    for (int i = 0; i < n; i++)
        if ((bells[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
            fatal("eventfd: loop %d of %d", i + 1, n);
    loop_body = loop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, &old);
    for (int i = 1; i < n; i++) {
        int err = pthread_create(&threads[i], NULL, start_loop, (void *)(intptr_t)i);
        if (err)
            errno = err, fatal("pthread_create: loop %d of %d", i + 1, n);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    start_loop((void *)(intptr_t)0);
    for (int i = 1; i < n; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < n; i++)
        close(bells[i]);
}

#endif /* LADDER_REUSEPORT_H */
