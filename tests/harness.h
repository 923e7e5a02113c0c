/*
 * harness.h - what the black-box tests need to drive a server from outside.
 *
 * The tests treat every rung as a black box: they start the real binary,
 * talk to it over loopback TCP like any client would, and look at it only
 * from outside (its descriptors, threads, memory, children and CPU time,
 * read by the load client's reader for this system, platform/proc.h) and
 * through its exit status. Nothing here knows how a rung works.
 *
 * Sections, in the order a test uses them:
 *   reporting    expect() prints one line per check and counts failures
 *   payloads     deterministic pseudo-random bytes, checkable at any offset
 *   servers      start with -p 0, read the port, stop with SIGTERM and check
 *                that it exited 0, left no process behind and no sanitizer
 *                report on stderr
 *   outside      fd count, threads, children, CPU time, resident memory
 *   clients      connect, reset, push until the peer stops reading
 *   echo engine  many connections at once, writing and reading concurrently
 *                through poll(), every byte verified
 *
 * Linux, macOS and FreeBSD. What a system's reader cannot see (proc_lacks:
 * a Mac cannot read another process's fd limit; the portable reader, ps(1),
 * sees no descriptors) turns the check into a "skip" line, never a pass;
 * a test that needs it as a whole exits 77 (ctest: skipped), saying why.
 * Where a child cannot be given a death signal, a watchdog process kills
 * the servers' process groups when the test ends, however it ends.
 * Loopback only. Every wait has a time-out, so a hung server turns into a
 * failed check rather than a hung test.
 */
#ifndef LADDER_HARNESS_H
#define LADDER_HARNESS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* close_range, and POSIX under strict -std=c11 (Linux) */
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "../platform/proc.h"

/* macOS has no MSG_NOSIGNAL: every test program ignores SIGPIPE instead. */
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

#define KIB 1024u
#define MIB (1024u * 1024u)

/* ---- reporting --------------------------------------------------------- */

/* Checks that failed so far in this run; main() turns it into the exit code. */
extern int harness_failures;

/* Print "  ok    <what>" or "  FAIL  <what>", count a failure; return ok. */
bool expect(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print a figure or a step, indented under the checks. */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Checks left out on this platform so far: each printed as a "skip" line. */
extern int harness_skips;

/*
 * True if this system's reader cannot see `what`: then it prints
 * "  skip  <check>: ... (why)" and the caller leaves the check out.
 */
bool unseen(proc_feature_t what, const char *check);

/* Print "  skip  <check>: <why>" and return true, for other reasons. */
bool skip_check(const char *check, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The whole test cannot run here: print "skipped: <why>" and exit 77
 * (ctest's SKIP_RETURN_CODE), or 1 if a check has failed already. Call it
 * before starting a server (else the death signal or watchdog ends it).
 */
#define HARNESS_SKIPPED 77
void skip_test(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* skip_test() where this system's reader lacks `what`; `needs` says what for. */
void skip_test_unless(proc_feature_t what, const char *needs);

/* pipe(2), both ends close-on-exec (pipe2 is not on macOS). */
int pipe_cloexec(int fds[2]);

double now_s(void); /* CLOCK_MONOTONIC, in seconds */
void sleep_s(double seconds);

/* ---- payloads ---------------------------------------------------------- */

/*
 * Byte i of stream `seed` is a pure function of (seed, i), so a reader can
 * check what arrives at any offset without keeping a copy, and two streams
 * with different seeds never look alike: a connection that receives another
 * connection's bytes fails at the first one.
 */
void payload_fill(uint64_t seed, uint64_t offset, unsigned char *buf, size_t len);

/* A small generator for sizes and choices (xorshift64*; state must be != 0). */
uint64_t rng_next(uint64_t *state);
size_t rng_between(uint64_t *state, size_t lo, size_t hi); /* lo..hi inclusive */

/* ---- servers ----------------------------------------------------------- */

/* How to start a server; a zeroed struct means "-p 0, inherited limits". */
typedef struct {
    const char *port;               /* value for -p; NULL means "0" */
    const char *const *extra_args;  /* more arguments, NULL-terminated, or NULL */
    long nofile;                    /* > 0: soft and hard RLIMIT_NOFILE */
    const char *asan_options;       /* appended to ASAN_OPTIONS, or NULL */
    /* Inherited state a server must take in hand (common/net.h): */
    bool std_closed;                /* fds 0-2 closed: port must be set (see
                                       free_port()); ready once it accepts */
    int stop_signals;               /* SIGINT, SIGTERM, SIGCHLD: 0 default,
                                       SIGNALS_BLOCKED or SIGNALS_IGNORED */
    int stderr_fd;                  /* > 0: the server's stderr (a pipe, say),
                                       instead of a temporary file */
} launch_t;
#define SIGNALS_BLOCKED 1
#define SIGNALS_IGNORED 2

/* A port on 127.0.0.1 that nothing listened on a moment ago, or -1. */
int free_port(void);

typedef struct {
    const char *binary;
    pid_t pid;      /* also the id of its process group, made for it */
    int port;       /* from its "listening on" line */
    int out_fd;     /* read end of its stdout */
    int err_fd;     /* its stderr: an unlinked temporary file */
    bool reaped;    /* waitpid() has collected it */
    int status;     /* waitpid() status once reaped */
    bool err_shown; /* its stderr has been printed for a failure */
    bool stopped;   /* server_stop_with() has been called */
} server_t;

/* Start and wait (10 s at most) for "listening on 127.0.0.1:PORT". */
bool server_start(server_t *s, const char *binary, const launch_t *how);

/* The same in two steps, for a test that acts while a server starts: start
 * it, then wait for its line; the port, or -1 if it printed none in time
 * (it may have exited: server_alive() says). */
bool server_spawn(server_t *s, const char *binary, const launch_t *how);
int server_await_listening(server_t *s, double timeout_s);

/* True while the process runs; reports how it ended otherwise. */
bool server_alive(server_t *s);

/*
 * The contract's shutdown: send `sig` (SIGTERM or SIGINT), then check exit
 * status 0 within STOP_TIMEOUT_S, no process of its group left behind (fork
 * children included) and no sanitizer report on stderr.
 */
#define STOP_TIMEOUT_S 5.0
bool server_stop_with(server_t *s, int sig);
bool server_stop(server_t *s); /* with SIGTERM */

/* Whatever happened: kill -9 anything left in its group, close our ends. */
void server_cleanup(server_t *s);

/* Everything it wrote to stderr so far; malloc'ed, NUL-terminated. */
char *server_stderr(const server_t *s);

/* Run binary with exactly `args` (NULL-terminated) to completion. */
typedef struct {
    bool exited;  /* false: killed after the time-out, or by a signal */
    int code;     /* exit status when exited */
    char *out;    /* stdout and stderr, malloc'ed, NUL-terminated */
    char *err;
} run_result_t;
bool run_to_exit(const char *binary, const char *const *args, double timeout_s,
                 run_result_t *r);
void run_result_free(run_result_t *r);

/* "AddressSanitizer", "runtime error:", ... if text holds a report, else NULL. */
const char *sanitizer_report_in(const char *text);

/* ---- the server seen from outside --------------------------------------- */

/* Each returns -1 if the process is gone or this system's reader cannot
 * see the figure (see unseen()). */
int seen_fd_count(pid_t pid);
int seen_lowest_free_fd(pid_t pid);  /* the fd number its next open() would get */
int seen_thread_count(pid_t pid);
long seen_rss_kib(pid_t pid);
double seen_cpu_s(pid_t pid);          /* utime + stime */
char seen_state(pid_t pid);            /* 'R', 'S', 'T', 'Z', ... or 0 */
int seen_live_children(pid_t parent);  /* children not yet exited */
int seen_zombie_children(pid_t parent);/* exited, not yet reaped */

/* A process identity that survives pid reuse: pid plus start time. */
typedef struct {
    pid_t pid;
    unsigned long long start_time;
} seen_id_t;
int seen_children(pid_t parent, seen_id_t *out, int max);
bool seen_still_exists(const seen_id_t *p);

/* Largest VmRSS among pid and its direct children (a fork server's memory). */
long seen_max_rss_kib_with_children(pid_t pid);

/*
 * Poll probe(pid) every 20 ms until it returns target or timeout_s passes;
 * return the last value seen. For "returns to baseline" checks, where the
 * server needs a moment to notice closed connections.
 */
int settle(int (*probe)(pid_t), pid_t pid, int target, double timeout_s);
/* The same, but a value that has not changed for still_s is the last: for
 * what a server releases one at a time, where a leak stays put and a
 * release moves the count at once (zombies reaped, descriptors closed). */
int settle_or_still(int (*probe)(pid_t), pid_t pid, int target, double timeout_s,
                    double still_s);

/*
 * Share of one CPU the process used over the next `seconds` (0.0 .. n), -1
 * if it is gone. CPU_UNSEEN where this system's reader counts CPU time in
 * whole seconds (the portable one on Linux: procps' ps): it has then
 * printed a skip line and slept `seconds`, and the caller leaves its check
 * out (cpu_seen()).
 */
#define CPU_UNSEEN (-2.0)
double cpu_share_over(pid_t pid, double seconds);
bool cpu_seen(double share);

/* Signals caught and RLIMIT_NOFILE, read and set: proc.h's proc_catches,
 * proc_fd_limit and proc_set_fd_limit, which the tests call by those names. */

/* ---- clients ----------------------------------------------------------- */

/*
 * A connected, non-blocking, close-on-exec socket to 127.0.0.1:port, or -1
 * (the reason printed). rcvbuf > 0 sets SO_RCVBUF before connecting, which is
 * when it decides the window the client advertises.
 */
int client_connect(int port, int rcvbuf);

/* Close with SO_LINGER {1, 0}: the kernel sends RST instead of FIN. */
void client_reset(int fd);

/*
 * Write payload bytes without reading until max bytes are out or the socket
 * stays unwritable for quiet_s (the peer stopped reading). Returns bytes sent.
 */
size_t client_push_until_blocked(int fd, uint64_t seed, size_t max, double quiet_s);

/* Discard input until EOF or an error. 0: EOF, errno value, or -1: time-out. */
int client_await_close(int fd, double timeout_s);

/* 1: readable (or closed), 0: nothing within timeout_s, -1: poll failed. */
int wait_readable(int fd, double timeout_s);

/* Raise our own soft RLIMIT_NOFILE to the hard limit; return it. */
long raise_own_fd_limit(void);

/* ---- echo engine ------------------------------------------------------- */

/* What the client does once the payload has been written. */
typedef enum {
    ECHO_KEEP_OPEN,       /* done when every byte is back; stays open */
    ECHO_SHUT_AFTER_SEND, /* shutdown(SHUT_WR) right after the last byte */
    ECHO_SHUT_AFTER_ECHO, /* shutdown(SHUT_WR) once every byte is back */
} echo_end_t;             /* (both SHUT_ modes then require a clean EOF) */

typedef enum {
    ECHO_PENDING, /* still running */
    ECHO_OK,      /* every byte back, in order, nothing extra (and EOF) */
    ECHO_CLOSED,  /* EOF, RST or EPIPE before the echo was complete */
    ECHO_CORRUPT, /* a wrong byte, or bytes beyond the payload */
    ECHO_TIMEOUT, /* no verdict within the run's time-out */
    ECHO_FAILED,  /* any other socket error */
} echo_result_t;

typedef struct {
    /* set by echo_init() */
    int fd;
    uint64_t seed;     /* which payload stream */
    size_t length;     /* payload bytes to send and get back */
    size_t max_chunk;  /* each write is 1..max_chunk bytes, chosen at random */
    echo_end_t end;
    /* progress and verdict */
    size_t sent, received;
    bool shut;         /* we have sent our FIN */
    uint64_t rng;      /* picks the chunk sizes */
    echo_result_t result;
    char why[128];     /* the verdict in words */
} echo_t;

void echo_init(echo_t *e, int fd, uint64_t seed, size_t length, echo_end_t end);

typedef struct {
    double timeout_s;          /* for the whole run (default 30 s) */
    double stall_s;            /* > 0: give up sooner, once no byte has moved
                                  on any connection for this long */
    size_t read_per_tick;      /* > 0: read at most this much per connection
                                  per tick (a slow reader); 0: all there is */
    int tick_ms;               /* on_tick period (default 100 ms) */
    void (*on_tick)(void *ctx);/* called every tick while the run lasts */
    void *ctx;
} echo_opts_t;

/*
 * Drive all n exchanges at once until each has a verdict or the time-out
 * passes. Returns how many ended ECHO_OK. Exchanges already decided are left
 * alone; one that ended ECHO_TIMEOUT may be run again to carry on, which is
 * how a test reads slowly for a while (short runs with read_per_tick) and
 * then at full speed.
 */
size_t echo_run(echo_t *e, size_t n, const echo_opts_t *opts);

/* Still undecided, or only out of time in an earlier run. */
bool echo_unfinished(const echo_t *e);

const char *echo_result_name(echo_result_t r);

/* One connection, one payload, every byte checked; prints why on failure. */
bool echo_once(int fd, uint64_t seed, size_t length, echo_end_t end, double timeout_s);
/* The same, giving up once no byte or EOF has come for still_s (0: never). */
bool echo_once_or_still(int fd, uint64_t seed, size_t length, echo_end_t end, double timeout_s,
                        double still_s);

#endif /* LADDER_HARNESS_H */
