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
 *     platform's load-balancing option;
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
#include "events.h"

#include <netinet/in.h> /* sockaddr_in(6): glibc's <arpa/inet.h> brings it, FreeBSD's not */
#include <pthread.h>

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

static inline int bind_listener(const server_options_t *opts, const char *port, bool share)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *ai;
    int rc = getaddrinfo(opts->addr, port, &hints, &ai);
    if (rc != 0)
        log_msg("address %s port %s: %s", opts->addr, port, gai_strerror(rc)), exit(1);
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0)
        fatal("socket");
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
        fatal("setsockopt SO_REUSEADDR");
    if (share && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0)
        fatal("setsockopt SO_REUSEPORT");
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0)
        fatal("bind %s port %s", opts->addr, port);
    freeaddrinfo(ai);
    return fd;
}

/*
 * Claim the port alone (a port held by another server, shared or not,
 * fails here with "bind ... in use"), note the number the kernel gave for
 * -p 0, and let go of it: each loop then binds and listens on its own
 * socket there with open_shared_listener().
 */
static char shared_port[8];

static inline void claim_port(server_options_t *opts)
{
    int fd = bind_listener(opts, opts->port, false);
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
        fatal("getsockname");
    int port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
    snprintf(shared_port, sizeof shared_port, "%d", port);
    close(fd);
}

static inline int open_shared_listener(const server_options_t *opts)
{
    int fd = bind_listener(opts, shared_port, true);
    if (listen(fd, LISTEN_BACKLOG) < 0)
        fatal("listen");
    return fd;
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

/* Run loop(0) here and loop(1 .. n-1) in threads that never take
 * SIGINT/SIGTERM; returns when all have ended. A loop that cannot start is
 * a start-up failure: its listener would take a share of the clients and
 * never accept them. */
static inline void run_loops(int n, void *(*loop)(void *))
{
    static pthread_t threads[MAX_LOOPS];
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, &old);
    for (int i = 1; i < n; i++) {
        int err = pthread_create(&threads[i], NULL, loop, (void *)(intptr_t)i);
        if (err)
            errno = err, fatal("pthread_create: loop %d of %d", i + 1, n);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    loop((void *)(intptr_t)0);
    for (int i = 1; i < n; i++)
        pthread_join(threads[i], NULL);
}

#endif /* LADDER_REUSEPORT_H */
