/*
 * net.h - what every rung shares, and is not what a rung teaches: the
 * command line, the listening socket and its "listening on" line, one-line
 * log messages, the open-file limit, and the stop signals.
 *
 * Two smaller headers sit on top of this one, and each rung includes
 * exactly one of them:
 *   blocking.h  01-03: write_all() (short writes), the stop that wakes a
 *               thread blocked in accept(), read() or write(), waiting out
 *               a failing accept(), and the process and thread limits;
 *   events.h    04-07: non-blocking sockets, the table of connections and
 *               its bound, and pausing accept() when it keeps failing.
 * The split follows the ladder's one real fork in the road, blocking calls
 * versus an event loop: a reader of 01 meets this file and blocking.h and
 * can skip all of events.h, and no header holds code its rung never runs.
 *
 * One lesson does live here, because every rung relies on it: a signal
 * handler may do almost nothing (signal-safety(7)), so SIGINT/SIGTERM only
 * set stop_requested and write a byte to stop_pipe, the self-pipe that the
 * event loops watch (see install_signal_handlers() for why); for 01-03 the
 * handler also runs blocking.h's shut_blocked_calls().
 *
 * Platform differences (macOS, FreeBSD) are confined to these headers, so
 * that no main.c needs an #ifdef. Header-only on purpose: each rung builds
 * with one compiler call.
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
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#if defined(__APPLE__) || defined(__FreeBSD__)
#include <sys/sysctl.h> /* sysctlbyname: the BSDs' limits */
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

/* After an accept() failure that a retry at once would only repeat (EMFILE,
 * ENOBUFS...), how long every rung waits before the next try. */
#define ACCEPT_RETRY_MS 100

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

/* The self-pipe: its read end becomes readable on SIGINT/SIGTERM. */
static int stop_pipe[2] = {-1, -1};

/* blocking.h's extra step for the blocking rungs; NULL for 04-07. A
 * lock-free atomic, which a signal handler may read (C11 7.14.1.1). */
static _Atomic(void (*)(void)) on_stop_hook;

/* ---- messages ---------------------------------------------------------- */

/*
 * One line on stderr, "program: message", in a single write() so that lines
 * from many processes (02) or threads (03) never interleave mid-line; with
 * errno, ": reason" is added. strerror_r, not strerror: POSIX does not
 * require strerror() to be thread-safe, and 03's workers log concurrently.
 * errno is left as it was. (Named apart from BSD's warn(3) and err(3).)
 */
__attribute__((format(printf, 2, 3)))
static inline void log_line(bool with_errno, const char *fmt, ...)
{
    int err = errno;
    char line[512], reason[128] = "";
    va_list ap;
    va_start(ap, fmt);
    int len = snprintf(line, sizeof line, "%s: ", program_name);
    vsnprintf(line + len, sizeof line - (size_t)len, fmt, ap);
    va_end(ap);
    if (with_errno)
        strerror_r(err, reason, sizeof reason); /* the XSI one, returning int */
    len = (int)strlen(line);
    snprintf(line + len, sizeof line - (size_t)len, "%s%s\n", with_errno ? ": " : "", reason);
    len = (int)strlen(line);
    line[len - 1] = '\n'; /* truncated or not, the line ends */
    (void)!write(STDERR_FILENO, line, (size_t)len);
    errno = err;
}
#define log_msg(...) log_line(false, __VA_ARGS__)
#define log_errno(...) log_line(true, __VA_ARGS__)
/* Start-up failure: name the call, say why (errno), exit 1. */
#define fatal(...) (log_line(true, __VA_ARGS__), exit(1))

static inline long long monotonic_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* ---- command line ------------------------------------------------------ */

/* Hook for a phase's own flags (03-threads adds -s); returns 0 if accepted. */
typedef int (*extra_option_fn)(int opt, const char *arg);

/* With a complaint (fmt, arg): on stderr, exit 2. Without (-h): stdout, 0. */
static inline void usage(const char *extra_usage, const char *fmt, const char *arg)
{
    FILE *out = fmt ? stderr : stdout;
    if (fmt) {
        fprintf(out, "%s: ", program_name);
        fprintf(out, fmt, arg);
        fputc('\n', out);
    }
    fprintf(out, "usage: %s [-p PORT] [-b ADDR] [-v] [-h]%s\n", program_name,
            extra_usage ? extra_usage : "");
    exit(fmt ? 2 : 0);
}

static inline bool is_port(const char *s)
{
    size_t len = strspn(s, "0123456789");
    return len > 0 && len <= 5 && s[len] == '\0' && atol(s) <= 65535;
}

static inline bool is_address(const char *s)
{
    unsigned char addr[16]; /* an IPv6 address */
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
                usage(extra_usage, "bad port '%s' (want 0-65535)", optarg);
            opts->port = optarg;
            break;
        case 'b':
            if (!is_address(optarg))
                usage(extra_usage, "bad address '%s' (want IPv4 or IPv6, numeric)", optarg);
            opts->addr = optarg;
            break;
        case 'v': opts->verbose = true; break;
        case 'h': usage(extra_usage, NULL, NULL); break;
        case ':': usage(extra_usage, "option -%s needs a value", (char[]){(char)optopt, 0}); break;
        case '?': usage(extra_usage, "unknown option -%s", (char[]){(char)optopt, 0}); break;
        default:
            if (!on_extra || on_extra(opt, optarg) != 0)
                usage(extra_usage, "bad value '%s'", optarg ? optarg : "");
        }
    }
    if (optind < argc)
        usage(extra_usage, "unexpected argument '%s'", argv[optind]);
}

/* ---- the listening socket ---------------------------------------------- */

static inline int open_listener(const server_options_t *opts)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *ai;
    int rc = getaddrinfo(opts->addr, opts->port, &hints, &ai);
    if (rc != 0) {
        log_msg("address %s port %s: %s", opts->addr, opts->port, gai_strerror(rc));
        exit(1);
    }
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0)
        fatal("socket");
    /*
     * Without SO_REUSEADDR a restart fails for a minute while the previous
     * run's connections sit in TIME_WAIT. (Not SO_REUSEPORT: on Linux that
     * would let a second copy bind the same port and silently share it.)
     */
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
        fatal("setsockopt SO_REUSEADDR");
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0)
        fatal("bind %s port %s", opts->addr, opts->port);
    freeaddrinfo(ai);
    if (listen(fd, LISTEN_BACKLOG) < 0)
        fatal("listen");
    return fd;
}

/*
 * Say where we listen, once ready to serve: "127.0.0.1:9999" or
 * "[::1]:9999". Scripts and tests start a server with -p 0 and read the real
 * port from this line, so it is flushed at once.
 */
static inline void announce_listening(int listen_fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char host[NI_MAXHOST], port[NI_MAXSERV];
    if (getsockname(listen_fd, (struct sockaddr *)&ss, &len) < 0 ||
        getnameinfo((struct sockaddr *)&ss, len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        fatal("getsockname");
    printf(ss.ss_family == AF_INET6 ? "listening on [%s]:%s\n" : "listening on %s:%s\n", host, port);
    fflush(stdout);
}

/* ---- the open-file limit ----------------------------------------------- */

/*
 * The soft open-file limit is often 1024 (256 on macOS); a server meant for
 * 10 000 clients raises it towards the hard limit, and the event rungs size
 * their table of connections to the result. The hard limit can be huge
 * (2^30 in some containers, or LimitNOFILE=infinity) and a table that large
 * would cost gigabytes, so stop at OPEN_FILES_CEILING: C10K six times over.
 */
#define OPEN_FILES_CEILING 65536

/* Soft limit := the least of the hard limit, the platform's, the ceiling.
 * Returns the limit now in force. */
static inline long raise_open_file_limit(bool verbose)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        fatal("getrlimit RLIMIT_NOFILE");
    rlim_t want = rl.rlim_max < OPEN_FILES_CEILING ? rl.rlim_max : OPEN_FILES_CEILING;
#ifdef __APPLE__
    /* macOS reports the hard limit as RLIM_INFINITY, yet its setrlimit()
     * refuses a soft limit above kern.maxfilesperproc (setrlimit(2)). */
    int max = OPEN_MAX;
    size_t len = sizeof max;
    sysctlbyname("kern.maxfilesperproc", &max, &len, NULL, 0);
    want = want < (rlim_t)max ? want : (rlim_t)max;
#endif
    if (rl.rlim_cur != want) {
        rl.rlim_cur = want; /* lowered, too, if it was above the ceiling */
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            log_errno("setrlimit RLIMIT_NOFILE %ld", (long)want);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (verbose)
        log_msg("open-file limit: %ld%s", (long)rl.rlim_cur,
                rl.rlim_cur < rl.rlim_max ? " (capped below the hard limit)" : "");
    return (long)rl.rlim_cur;
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
    if (on_stop_hook)
        on_stop_hook();
    errno = saved;
}

/*
 * SIGPIPE's default action kills the process when it writes to a peer that
 * has gone; ignored, the write fails with EPIPE and only that peer is closed.
 *
 * SIGINT/SIGTERM are installed without SA_RESTART: the blocked call (accept,
 * read, select, poll, kevent, epoll_wait) returns EINTR and the loop sees
 * stop_requested. But a signal that lands after the loop checked the flag
 * and before it went to sleep would leave it asleep: so the event loops
 * also watch stop_pipe[0], which stays readable (the self-pipe trick), and
 * the blocking rungs close that gap another way (blocking.h).
 */
static inline void install_signal_handlers(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (pipe(stop_pipe) < 0 || fcntl(stop_pipe[1], F_SETFL, O_NONBLOCK) < 0)
        fatal("pipe");
    struct sigaction sa = {.sa_handler = on_stop_signal}; /* sa_flags 0 */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0)
        fatal("sigaction");
}

static inline void close_stop_pipe(void)
{
    close(stop_pipe[0]);
    close(stop_pipe[1]);
}

#endif /* LADDER_NET_H */
