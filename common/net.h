/*
 * net.h - the boilerplate every rung of the ladder shares.
 *
 * Nothing in this file is what a rung teaches. It parses the common command
 * line, opens the listening socket, prints the one "listening on" line that
 * scripts wait for, and sets up signals so that every server can be stopped
 * cleanly (which is what lets the sanitizers' leak check run at all).
 * How a server waits for I/O is the lesson, so that stays in each main.c.
 *
 * Header-only on purpose: each phase folder builds with one compiler call.
 */
#ifndef LADDER_NET_H
#define LADDER_NET_H

/* glibc hides sigaction's SA_RESTART and friends under strict -std=c11. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef __APPLE__
#include <limits.h>     /* OPEN_MAX */
#include <sys/sysctl.h> /* sysctlbyname */
#endif

#define DEFAULT_PORT "9999"
#define DEFAULT_ADDR "127.0.0.1" /* loopback unless the reader asks otherwise */

/*
 * A small backlog turns a burst of connects into dropped SYNs that the client
 * retries after 1 s, 3 s, ...: fake latency in every measurement. So ask for
 * the most and let the kernel clamp it to its own setting: listen(2) silently
 * caps the backlog at net.core.somaxconn on Linux, kern.ipc.somaxconn on
 * macOS and kern.ipc.soacceptqueue on FreeBSD. Not SOMAXCONN: that constant
 * is 128 in the macOS and BSD headers (and in glibc before 2.31), well below
 * what those kernels allow. 65535 is above every default and fits the 16 bits
 * older Linux kernels kept the backlog in.
 */
#define LISTEN_BACKLOG 65535

typedef struct {
    const char *addr; /* -b: numeric address to bind */
    const char *port; /* -p: decimal port; "0" lets the kernel choose */
    bool verbose;     /* -v: log every connection on stderr */
} server_options_t;

static const char *program_name = "server";

/*
 * Set by SIGINT/SIGTERM; every loop checks it. A lock-free atomic rather than
 * volatile sig_atomic_t: C11 allows both in a signal handler, but only the
 * atomic may also be read by other threads (03's workers) without a race.
 */
static atomic_int stop_requested = 0;

/* The read end becomes readable on SIGINT/SIGTERM (the self-pipe trick). */
static int stop_pipe[2] = {-1, -1};

/* Sockets that SIGINT/SIGTERM put out of use, for the blocking rungs (-1: none). */
static volatile sig_atomic_t listener_to_shut = -1;
static volatile sig_atomic_t client_to_shut = -1;

/* ---- messages ---------------------------------------------------------- */

/*
 * "program: message[: strerror(err)]" in a single write(), so that lines
 * from many processes (02) or threads (03) never interleave mid-line.
 */
static inline void log_line(int err, const char *fmt, va_list ap)
{
    char line[512];
    snprintf(line, sizeof line, "%s: ", program_name);
    size_t len = strlen(line);
    vsnprintf(line + len, sizeof line - len, fmt, ap);
    len = strlen(line);
    if (err != 0)
        snprintf(line + len, sizeof line - len, ": %s", strerror(err));
    len = strlen(line);
    if (len == sizeof line - 1)
        len--; /* truncated: keep room for the newline */
    line[len++] = '\n';
    (void)!write(STDERR_FILENO, line, len);
}

/* Start-up failure: name the call, say why (errno), exit 1. */
static inline void die(const char *fmt, ...)
{
    int saved = errno;
    va_list ap;
    va_start(ap, fmt);
    log_line(saved, fmt, ap);
    va_end(ap);
    exit(1);
}

/* A failure while serving: one line, and the server carries on. */
static inline void warn(const char *fmt, ...)
{
    int saved = errno; /* callers may still want to look at it */
    va_list ap;
    va_start(ap, fmt);
    log_line(0, fmt, ap);
    va_end(ap);
    errno = saved;
}

/* ---- command line ------------------------------------------------------ */

/* Hook for a phase's own flags (03-threads adds -s); returns 0 if accepted. */
typedef int (*extra_option_fn)(int opt, const char *arg);

static inline void usage(FILE *out, const char *extra_usage)
{
    fprintf(out, "usage: %s [-p PORT] [-b ADDR] [-v] [-h]%s\n", program_name,
            extra_usage ? extra_usage : "");
}

static inline void bad_usage(const char *extra_usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", program_name);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    usage(stderr, extra_usage);
    exit(2);
}

static inline bool is_port(const char *s)
{
    size_t len = strspn(s, "0123456789");
    return len > 0 && len <= 5 && s[len] == '\0' && atol(s) <= 65535;
}

static inline bool is_address(const char *s)
{
    unsigned char addr[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, s, addr) == 1 || inet_pton(AF_INET6, s, addr) == 1;
}

static inline void parse_options(int argc, char **argv, server_options_t *opts,
                          const char *extra_flags, const char *extra_usage,
                          extra_option_fn on_extra)
{
    char optstring[32];
    const char *slash = strrchr(argv[0], '/');
    program_name = slash ? slash + 1 : argv[0];
    *opts = (server_options_t){.addr = DEFAULT_ADDR, .port = DEFAULT_PORT};

    snprintf(optstring, sizeof optstring, ":p:b:vh%s", extra_flags ? extra_flags : "");
    opterr = 0; /* we print our own one-line errors */
    int opt;
    while ((opt = getopt(argc, argv, optstring)) != -1) {
        switch (opt) {
        case 'p':
            if (!is_port(optarg))
                bad_usage(extra_usage, "bad port '%s' (want 0-65535)", optarg);
            opts->port = optarg;
            break;
        case 'b':
            if (!is_address(optarg))
                bad_usage(extra_usage, "bad address '%s' (want IPv4 or IPv6, numeric)", optarg);
            opts->addr = optarg;
            break;
        case 'v': opts->verbose = true; break;
        case 'h': usage(stdout, extra_usage); exit(0);
        case ':': bad_usage(extra_usage, "option -%s needs a value", (char[]){(char)optopt, 0}); break;
        case '?': bad_usage(extra_usage, "unknown option -%s", (char[]){(char)optopt, 0}); break;
        default:
            if (!on_extra || on_extra(opt, optarg) != 0)
                bad_usage(extra_usage, "bad value '%s'", optarg ? optarg : "");
        }
    }
    if (optind < argc)
        bad_usage(extra_usage, "unexpected argument '%s'", argv[optind]);
}

/* ---- the listening socket ---------------------------------------------- */

/* "127.0.0.1:9999" or "[::1]:9999", whatever getsockname says. */
static inline void format_address(const struct sockaddr_storage *ss, char *out, size_t size)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
        snprintf(out, size, "[%s]:%d", host, port);
    } else {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
        snprintf(out, size, "%s:%d", host, port);
    }
}

static inline int open_listener(const server_options_t *opts)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *ai;
    int rc = getaddrinfo(opts->addr, opts->port, &hints, &ai);
    if (rc != 0) {
        warn("address %s port %s: %s", opts->addr, opts->port, gai_strerror(rc));
        exit(1);
    }
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0)
        die("socket");
    /*
     * Without SO_REUSEADDR a restart fails for a minute while the previous
     * run's connections sit in TIME_WAIT. (Not SO_REUSEPORT: on Linux that
     * would let a second copy bind the same port and silently share it.)
     */
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
        die("setsockopt SO_REUSEADDR");
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0)
        die("bind %s port %s", opts->addr, opts->port);
    freeaddrinfo(ai);
    if (listen(fd, LISTEN_BACKLOG) < 0)
        die("listen");
    return fd;
}

/*
 * Say where we listen, once ready to serve. Scripts and tests start a server
 * with -p 0 and read the real port from this line, so it is flushed at once.
 */
static inline void announce_listening(int listen_fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char where[INET6_ADDRSTRLEN + 16];
    if (getsockname(listen_fd, (struct sockaddr *)&ss, &len) < 0)
        die("getsockname");
    format_address(&ss, where, sizeof where);
    printf("listening on %s\n", where);
    fflush(stdout);
}

/* ---- descriptors ------------------------------------------------------- */

/* On a non-blocking socket these mean "not now", never "this peer failed". */
static inline bool is_transient(int err)
{
    return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}

static inline int set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/*
 * The soft open-file limit is often 1024 (256 on macOS); a server meant for
 * 10 000 clients raises it towards the hard limit, and the event rungs size
 * their table of connections to the result. The hard limit can be huge
 * (2^30 in some containers, or LimitNOFILE=infinity) and a table that large
 * would cost gigabytes, so stop at OPEN_FILES_CEILING: C10K six times over.
 */
#define OPEN_FILES_CEILING 65536

/*
 * macOS reports the hard limit as RLIM_INFINITY, yet its setrlimit() refuses
 * a soft limit above kern.maxfilesperproc (setrlimit(2): use at most
 * OPEN_MAX). Elsewhere the hard limit is the real one.
 */
static inline rlim_t platform_open_file_max(void)
{
#ifdef __APPLE__
    int max = 0;
    size_t len = sizeof max;
    if (sysctlbyname("kern.maxfilesperproc", &max, &len, NULL, 0) == 0 && max > 0)
        return (rlim_t)max;
    return OPEN_MAX;
#else
    return RLIM_INFINITY;
#endif
}

/* Soft limit := the least of the hard limit, the platform's, the ceiling.
 * Returns the limit now in force. */
static inline long raise_open_file_limit(bool verbose)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        die("getrlimit RLIMIT_NOFILE");
    rlim_t want = rl.rlim_max < OPEN_FILES_CEILING ? rl.rlim_max : OPEN_FILES_CEILING;
    if (want > platform_open_file_max())
        want = platform_open_file_max();
    if (rl.rlim_cur != want) {
        rl.rlim_cur = want; /* lowered, too, if it was above the ceiling */
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            warn("setrlimit RLIMIT_NOFILE %ld: %s", (long)want, strerror(errno));
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (verbose && rl.rlim_cur < rl.rlim_max)
        warn("open-file limit: %ld (capped below the hard limit by %s)", (long)rl.rlim_cur,
             want == OPEN_FILES_CEILING ? "OPEN_FILES_CEILING in net.h" : "the platform's maximum");
    else if (verbose)
        warn("open-file limit: %ld", (long)rl.rlim_cur);
    return (long)rl.rlim_cur;
}

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

/* ---- the event rungs' table and listener (04-07) ------------------------- */

/*
 * 05-07 find a connection by its fd in a table with one slot for every fd
 * the open-file limit allows (raised first, and capped). Returns the zeroed
 * table and its number of slots.
 */
static inline void *new_fd_table(size_t slot_size, long *slots, bool verbose)
{
    *slots = raise_open_file_limit(verbose);
    void *table = calloc((size_t)*slots, slot_size);
    if (!table)
        die("calloc: a table of %ld connections", *slots);
    return table;
}

/*
 * An fd past the end of the table (04: FD_SETSIZE) must be refused: FD_SET()
 * or conns[fd] would write past the end. For 05-07 that happens when the
 * limit is raised while the server runs (prlimit --pid, as root). One line
 * per refused connection.
 */
static inline bool refuse_past(int fd, long slots, const char *table)
{
    if (fd < slots)
        return false;
    warn("fd %d: at or above %s (%ld): connection refused", fd, table, slots);
    close(fd);
    return true;
}

/*
 * Out of descriptors, accept() fails (EMFILE: our limit; ENFILE: the
 * system's) but leaves the client queued, so a level-triggered listener stays
 * ready and the loop would spin. The event rungs stop watching it until one
 * of their clients leaves; and since the fd may be freed elsewhere (another
 * process, for ENFILE) they also retry accept() ACCEPT_RETRY_MS later. The
 * retry is due at a fixed time, checked at every wakeup: a time-out that
 * restarts with each wait would never run out while a client chatters.
 */
#define ACCEPT_RETRY_MS 100

static struct timespec accept_retry_at; /* CLOCK_MONOTONIC */
static bool pause_logged;               /* until accept() next empties the queue */

/* accept() failed for want of a descriptor: log once per episode, not per
 * retry or per departing client, and set when to try again. */
static inline void note_out_of_fds(int err)
{
    if (!pause_logged)
        warn("accept: %s: pausing until a client leaves", strerror(err));
    pause_logged = true;
    clock_gettime(CLOCK_MONOTONIC, &accept_retry_at);
    accept_retry_at.tv_nsec += ACCEPT_RETRY_MS * 1000000L;
    accept_retry_at.tv_sec += accept_retry_at.tv_nsec / 1000000000L;
    accept_retry_at.tv_nsec %= 1000000000L;
}

/* accept() said EAGAIN: everyone queued was taken, the episode is over. */
static inline void note_queue_empty(void)
{
    pause_logged = false;
}

/* Milliseconds until the retry is due, rounded up; 0 once it is. */
static inline int ms_until_accept_retry(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long ns = (long long)(accept_retry_at.tv_sec - now.tv_sec) * 1000000000LL +
                   (accept_retry_at.tv_nsec - now.tv_nsec);
    return ns <= 0 ? 0 : (int)((ns + 999999) / 1000000);
}

/* ---- signals ----------------------------------------------------------- */

static inline void on_stop_signal(int sig)
{
    (void)sig;
    int saved = errno; /* a handler must not disturb the errno it interrupted */
    if (stop_requested)
        _exit(1); /* a second Ctrl-C means "now" */
    stop_requested = 1;
    if (stop_pipe[1] >= 0)
        (void)!write(stop_pipe[1], "x", 1);
    if (listener_to_shut >= 0)
        dup2(stop_pipe[0], listener_to_shut); /* see shut_listener_on_stop() */
    if (client_to_shut >= 0)
        shutdown(client_to_shut, SHUT_RDWR);
    errno = saved;
}

/*
 * SIGPIPE's default action kills the process when it writes to a peer that
 * has gone; ignored, the write fails with EPIPE and only that peer is closed.
 *
 * SIGINT/SIGTERM are installed without SA_RESTART: the blocked call (accept,
 * read, select, poll, kevent, epoll_wait) returns EINTR and the loop sees
 * stop_requested. The event loops also watch stop_pipe[0], which closes the
 * gap between checking the flag and going to sleep.
 */
static inline void install_signal_handlers(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (pipe(stop_pipe) < 0 || set_nonblocking(stop_pipe[0]) < 0 ||
        set_nonblocking(stop_pipe[1]) < 0)
        die("pipe");
    struct sigaction sa = {.sa_handler = on_stop_signal};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0)
        die("sigaction");
}

/*
 * For a loop blocked in accept(). EINTR tells it about a signal that arrives
 * during the call, but one that lands just before (after the loop checked
 * stop_requested, or inside another handler whose SA_RESTART restarts the
 * call) would leave accept() waiting for the next client. So the handler
 * also puts the stop pipe in the listener's place with dup2(), which closes
 * the listening socket: any later accept() on that fd number fails at once
 * (ENOTSOCK), and the number stays ours to close. (shutdown() of a listening
 * socket wakes accept() on Linux, but macOS refuses it, ENOTCONN, and leaves
 * accept() waiting.)
 * dup2() is async-signal-safe (POSIX, signal-safety(7)).
 */
static inline void shut_listener_on_stop(int listen_fd)
{
    listener_to_shut = listen_fd;
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

static inline void close_stop_pipe(void)
{
    close(stop_pipe[0]);
    close(stop_pipe[1]);
}

#endif /* LADDER_NET_H */
