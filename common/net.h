/*
 * net.h - what every rung shares, and is not what a rung teaches: the
 * command line, the listening socket and its "listening on" line, one-line
 * log messages, the open-file limit, the stop signals, and the start-up
 * state it inherits (descriptors 0-2, signal mask and dispositions).
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

/* glibc hides sigaction's SA_RESTART and friends under strict -std=c11.
 * Spelt as -D_DEFAULT_SOURCE spells it, so that both may be given. */
#define _DEFAULT_SOURCE 1

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#if defined(__APPLE__) || defined(__FreeBSD__)
#include <sys/sysctl.h> /* sysctlbyname: the BSDs' limits */
#endif

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

static inline long long monotonic_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/*
 * A flood of clients that reset, or vanish mid-write, must neither fill the
 * log nor stall the loop, so lines that give a reason (log_errno(): a peer's
 * or accept()'s failure, once the server runs) are held to LOG_LINES_PER_S
 * a second; fatal() lines and log_msg() lines (-v, refusals) are not. The
 * lines left out are counted and the count is printed with the next line
 * that goes out.
 */
#define LOG_LINES_PER_S 10

/*
 * The second and its count share one word: kept apart, the thread that
 * starts a new second would have to zero the count after it, and could wipe
 * lines another thread had counted in the new second in between.
 */
#define LOG_COUNT_BITS 16 /* the count, saturating; the second's start above it */
#define LOG_COUNT_MAX ((1ULL << LOG_COUNT_BITS) - 1)

typedef struct {
    _Atomic unsigned long long second; /* its start in monotonic_ms(), shifted, and its count */
    atomic_int left_out;               /* lines not written since the last one that was */
} log_budget_t;

/* In memory shared with 02's children (take_start_up_state()), so that a
 * thousand children with one reset each still make one budget; lock-free
 * atomics work across processes. NULL until then: no limit. */
static log_budget_t *log_budget;

static inline bool log_budget_allows(void)
{
    if (!log_budget)
        return true;
    unsigned long long now = (unsigned long long)monotonic_ms();
    unsigned long long seen = atomic_load(&log_budget->second), next;
    do {
        unsigned long long began = seen >> LOG_COUNT_BITS, lines = seen & LOG_COUNT_MAX;
        next = now >= began + 1000 ? now << LOG_COUNT_BITS | 1 : seen + (lines < LOG_COUNT_MAX);
    } while (!atomic_compare_exchange_weak(&log_budget->second, &seen, next));
    return (next & LOG_COUNT_MAX) <= LOG_LINES_PER_S;
}

/*
 * Would a line written to stderr now go out without blocking? stderr may be
 * a pipe that nobody reads, and then a write() blocks the event loop's only
 * thread for good. Setting O_NONBLOCK on fd 2 would change the open file
 * description we share with whoever started us (a shell's 2>&1 makes it
 * stdout's too, and the next program in the pipeline inherits it), so ask
 * poll() instead: POLLOUT on a pipe means room for at least one write of
 * PIPE_BUF bytes, more than our longest line. Files and terminals are always
 * ready. (Two threads or children that both see room can still fill the
 * last of it; the later one then waits, which stalls one client, not the
 * loop.)
 */
static inline bool stderr_takes_a_line(void)
{
    struct pollfd p = {.fd = STDERR_FILENO, .events = POLLOUT};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT);
}

/*
 * One line on stderr, "program: message", in a single write() so that lines
 * from many processes (02) or threads (03) never interleave mid-line; with
 * errno, ": reason" is added. strerror_r, not strerror: POSIX does not
 * require strerror() to be thread-safe, and 03's workers log concurrently.
 * With the name cut at 48 characters and the message at 255, the buffer
 * holds the longest line the parts can make, newline included, and the count
 * of lines left out before it. errno is left as it was. (Named apart from
 * BSD's warn(3) and err(3).)
 */
__attribute__((format(printf, 3, 4)))
static inline void log_line(bool limited, bool with_errno, const char *fmt, ...)
{
    int err = errno;
    if ((limited && !log_budget_allows()) || !stderr_takes_a_line()) {
        if (log_budget)
            atomic_fetch_add(&log_budget->left_out, 1);
        errno = err;
        return;
    }
    char message[256], reason[128] = "", line[128 + 64 + sizeof message + sizeof reason];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    if (with_errno)
        strerror_r(err, reason, sizeof reason); /* the XSI one, returning int */
    int left = log_budget ? atomic_exchange(&log_budget->left_out, 0) : 0, len = 0;
    if (left > 0)
        len = snprintf(line, sizeof line, "%.48s: %d line%s left out (more than %d a second, "
                       "or stderr full)\n", program_name, left, left == 1 ? "" : "s", LOG_LINES_PER_S);
    len += snprintf(line + len, sizeof line - (size_t)len, "%.48s: %s%s%s\n", program_name,
                    message, with_errno ? ": " : "", reason);
    (void)!write(STDERR_FILENO, line, (size_t)len);
    errno = err;
}
#define log_msg(...) log_line(false, false, __VA_ARGS__)
#define log_errno(...) log_line(true, true, __VA_ARGS__)
/* Start-up failure: name the call, say why (errno), exit 1. */
#define fatal(...) (log_line(false, true, __VA_ARGS__), exit(1))

/* ---- command line ------------------------------------------------------ */

/* Hook for a phase's own flags (03-threads adds -s); returns 0 if accepted. */
typedef int (*extra_option_fn)(int opt, const char *arg);

static const char *extra_usage_text = ""; /* 03-threads: " [-s STACK_KIB ...]" */

/* -h: the usage on stdout, exit 0. Bad arguments: stderr, exit 2. */
_Noreturn static inline void usage(FILE *out, int status)
{
    fprintf(out, "usage: %s [-p PORT] [-b ADDR] [-v] [-h]%s\n", program_name, extra_usage_text);
    exit(status);
}

/* The contract for bad arguments: one line saying what is wrong, the usage. */
#define bad_arguments(...) (log_msg(__VA_ARGS__), usage(stderr, 2))

/*
 * -p and -b are checked once all options are read (of a repeated one, the
 * last counts), so that open_listener() meets only the system's refusals.
 */
static inline void parse_options(int argc, char **argv, server_options_t *opts,
                                 const char *extra_flags, const char *extra_usage,
                                 extra_option_fn on_extra)
{
    const char *slash = strrchr(argv[0], '/');
    program_name = slash ? slash + 1 : argv[0];
    extra_usage_text = extra_usage ? extra_usage : "";
    /* Loopback unless the reader asks otherwise. */
    *opts = (server_options_t){.addr = "127.0.0.1", .port = "9999"};

    char optstring[32];
    /* The leading ':' keeps getopt() quiet (we print our own one-line
     * errors) and makes a missing value ':' rather than '?'. */
    snprintf(optstring, sizeof optstring, ":p:b:vh%s", extra_flags ? extra_flags : "");
    int opt;
    while ((opt = getopt(argc, argv, optstring)) != -1) {
        switch (opt) {
        case 'p': opts->port = optarg; break;
        case 'b': opts->addr = optarg; break;
        case 'v': opts->verbose = true; break;
        case 'h': usage(stdout, 0);
        case ':': bad_arguments("option -%c needs a value", optopt);
        case '?': bad_arguments("unknown option -%c", optopt);
        default:
            if (!on_extra || on_extra(opt, optarg) != 0)
                bad_arguments("bad value '%s' for -%c", optarg ? optarg : "", opt);
        }
    }
    if (optind < argc)
        bad_arguments("unexpected argument '%s'", argv[optind]);
    /* A port is 1 to 5 decimal digits, at most 65535; an address is numeric. */
    size_t digits = strspn(opts->port, "0123456789");
    if (digits == 0 || digits > 5 || opts->port[digits] != '\0' || atol(opts->port) > 65535)
        bad_arguments("bad port '%s' (want 0-65535)", opts->port);
    unsigned char addr[16]; /* room for an IPv6 address */
    if (inet_pton(AF_INET, opts->addr, addr) != 1 && inet_pton(AF_INET6, opts->addr, addr) != 1)
        bad_arguments("bad address '%s' (want IPv4 or IPv6, numeric)", opts->addr);
}

/* ---- the listening socket ---------------------------------------------- */

/*
 * A TCP socket bound to opts->addr and `port`, not yet listening; with
 * `share`, one of several sockets on that port (SO_REUSEPORT: 09-reuseport's
 * loops, each with its own). Fatal at start-up, like every failure here.
 */
static inline int bind_socket(const server_options_t *opts, const char *port, bool share)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *ai;
    int rc = getaddrinfo(opts->addr, port, &hints, &ai);
    if (rc != 0) /* both numeric and checked: the system lacks that family, or memory */
        log_msg("address %s port %s: %s", opts->addr, port, gai_strerror(rc)), exit(1);
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0)
        fatal("socket");
    /*
     * Without SO_REUSEADDR a restart fails for a minute while the previous
     * run's connections sit in TIME_WAIT. (Not SO_REUSEPORT unless asked: on
     * Linux that would let a second copy bind the same port and silently
     * share it.)
     */
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

static inline int open_listener(const server_options_t *opts)
{
    int fd = bind_socket(opts, opts->port, false);
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

/*
 * The most open files the platform itself lets a process have. macOS
 * reports the hard limit as RLIM_INFINITY, yet its setrlimit() refuses a
 * soft limit above kern.maxfilesperproc (setrlimit(2)); on Linux and FreeBSD
 * the hard limit is the whole story.
 */
static inline rlim_t platform_open_file_max(void)
{
#ifdef __APPLE__
    int max = 10240; /* OPEN_MAX, should the lookup fail */
    size_t len = sizeof max;
    sysctlbyname("kern.maxfilesperproc", &max, &len, NULL, 0);
    return (rlim_t)max;
#else
    return RLIM_INFINITY;
#endif
}

/* Soft limit := the least of the hard limit, the platform's, the ceiling
 * (lowered, too, if it was above). Returns the limit now in force. Raising
 * the soft limit is the process's own business (setrlimit(2) lets anyone go
 * up to the hard limit), so a small inherited soft limit (ulimit -Sn 32)
 * costs nothing; a small hard one is a wall the server meets as designed:
 * it pauses accept() at the limit and keeps serving whom it has. */
static inline long raise_open_file_limit(bool verbose)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rlim_t want = rl.rlim_max < OPEN_FILES_CEILING ? rl.rlim_max : OPEN_FILES_CEILING;
    rl.rlim_cur = want < platform_open_file_max() ? want : platform_open_file_max();
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        log_errno("setrlimit RLIMIT_NOFILE %ld", (long)rl.rlim_cur);
    getrlimit(RLIMIT_NOFILE, &rl);
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
    /* The only byte ever written (a second signal exits above), so the pipe
     * cannot fill and its write end may stay blocking. */
    (void)!write(stop_pipe[1], "x", 1);
    if (on_stop_hook)
        on_stop_hook();
    errno = saved;
}

/* ---- start-up state ---------------------------------------------------- */

/*
 * A server may be started by anything: a shell, a supervisor, a test, a
 * program that forgot to tidy up before exec(). Whatever it inherits and
 * relies on, it sets itself:
 *
 * Descriptors 0-2 may be closed. The next pipe() or socket() would then get
 * one of them: the stop pipe as stdout, say, so that the "listening on" line
 * lands in the pipe and the event loop wakes for it forever, or the
 * listener as stderr. So /dev/null goes in each closed one, before any pipe
 * or socket is made. (open() takes the lowest free number: with 0..fd-1
 * open, that is fd.)
 */
static inline void open_missing_standard_fds(void)
{
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        int null = open("/dev/null", O_RDWR);
        if (null != fd)
            exit(1); /* no /dev/null (a bare chroot): and nowhere to say so */
    }
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
 *
 * Inherited dispositions and masks survive exec(): SIGINT/SIGTERM may come
 * ignored (sigaction() below replaces that) or blocked, which would leave
 * the server deaf to them, so they are unblocked once their handler is in
 * place (one already pending is delivered then, and the loop ends at once).
 * SIGCHLD too may come ignored, which makes the kernel reap children by
 * itself, or blocked: it is set to the default and unblocked, and 02-fork
 * then installs its reaper. This is also where the rest of the inherited
 * state is taken in hand: descriptors 0-2 first, and the budget of log
 * lines, in memory that 02's children share.
 */
static inline void install_signal_handlers(void)
{
    open_missing_standard_fds();
    void *shared = mmap(NULL, sizeof *log_budget, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    log_budget = shared == MAP_FAILED ? NULL : shared; /* NULL: lines unlimited */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_DFL);
    if (pipe(stop_pipe) < 0) /* before the handler, which writes to it */
        fatal("pipe");
    struct sigaction sa = {.sa_handler = on_stop_signal}; /* sa_flags 0 */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0)
        fatal("sigaction");
    sigset_t relied_on;
    sigemptyset(&relied_on);
    sigaddset(&relied_on, SIGINT);
    sigaddset(&relied_on, SIGTERM);
    sigaddset(&relied_on, SIGCHLD);
    sigprocmask(SIG_UNBLOCK, &relied_on, NULL);
}

/*
 * accept(2), "Error handling": a connection that failed while it waited in
 * the queue (ECONNABORTED; on Linux the pending network errors ENETDOWN,
 * EPROTO, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH, EOPNOTSUPP,
 * ENETUNREACH) says nothing about the next one, and neither does a signal
 * (EINTR): try again at once. Only running out of descriptors or memory is
 * worth a pause (accept_failed(), in blocking.h and events.h).
 */
static inline bool accept_retry_at_once(int err)
{
    switch (err) {
    case EINTR: case ECONNABORTED: case EPROTO: case ENETDOWN: case ENOPROTOOPT:
    case EHOSTDOWN: case EHOSTUNREACH: case EOPNOTSUPP: case ENETUNREACH:
#ifdef ENONET /* Linux only */
    case ENONET:
#endif
        return true;
    default:
        return false;
    }
}

static inline void close_stop_pipe(void)
{
    close(stop_pipe[0]);
    close(stop_pipe[1]);
}

#endif /* LADDER_NET_H */
