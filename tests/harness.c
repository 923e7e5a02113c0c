/*
 * harness.c - the machinery behind harness.h. See there for what each
 * function promises; the comments here say how and why.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ======================================================================== */
/* reporting                                                                */
/* ======================================================================== */

int harness_failures = 0;
int harness_skips = 0;

/* One line of the test's output: lead, then the text, flushed at once so that
 * it comes out in order with what the servers write. */
static void say(const char *lead, const char *fmt, va_list ap)
{
    fputs(lead, stdout);
    vprintf(fmt, ap);
    putchar('\n');
    fflush(stdout);
}

bool expect(bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(ok ? "  ok    " : "  FAIL  ", fmt, ap);
    va_end(ap);
    if (!ok)
        harness_failures++;
    return ok;
}

void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("        ", fmt, ap);
    va_end(ap);
}

bool skip_check(const char *check, const char *fmt, ...)
{
    va_list ap;
    printf("  skip  %s: ", check);
    va_start(ap, fmt);
    say("", fmt, ap);
    va_end(ap);
    harness_skips++;
    return true;
}

bool unseen(proc_feature_t what, const char *check)
{
    const char *why = proc_lacks(what);
    return why && skip_check(check, "not on this platform's path (%s reads processes: %s)",
                             proc_reader(), why);
}

void skip_test(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("skipped: ", fmt, ap);
    va_end(ap);
    exit(harness_failures ? 1 : HARNESS_SKIPPED);
}

void skip_test_unless(proc_feature_t what, const char *needs)
{
    const char *why = proc_lacks(what);
    if (why)
        skip_test("not on this platform's path: the test needs %s, and %s reads processes "
                  "here (%s)", needs, proc_reader(), why);
}

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool cpu_seen(double share)
{
    return share != CPU_UNSEEN;
}

void sleep_s(double seconds)
{
    if (seconds <= 0)
        return;
    struct timespec ts = {.tv_sec = (time_t)seconds,
                          .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Milliseconds from now until `deadline`, for poll(): never negative. */
static int ms_until(double deadline)
{
    double left = deadline - now_s();
    return left <= 0 ? 0 : (int)(left * 1000.0) + 1;
}

/* ======================================================================== */
/* payloads                                                                 */
/* ======================================================================== */

/* splitmix64's finaliser: a cheap bijection that scrambles every bit. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Byte i of a stream is byte (i % 8) of mix64(key + i / 8). */
void payload_fill(uint64_t seed, uint64_t offset, unsigned char *buf, size_t len)
{
    uint64_t key = mix64(seed);
    size_t i = 0;
    while (i < len) {
        uint64_t pos = offset + i;
        uint64_t word = mix64(key + pos / 8);
        for (unsigned b = (unsigned)(pos % 8); b < 8 && i < len; b++, i++)
            buf[i] = (unsigned char)(word >> (8 * b));
    }
}

uint64_t rng_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dULL;
}

size_t rng_between(uint64_t *state, size_t lo, size_t hi)
{
    return lo + (size_t)(rng_next(state) % (uint64_t)(hi - lo + 1));
}

/* ======================================================================== */
/* servers                                                                  */
/* ======================================================================== */

#define START_TIMEOUT_S 10.0 /* sanitized binaries start in well under 1 s */
#define MAX_ARGS 16

/* The whole of a file (or of what is left in a pipe) as a C string. */
static char *read_all_from(int fd, bool is_pipe)
{
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    if (!text)
        return NULL;
    double deadline = now_s() + 2.0; /* a pipe a stray child still holds */
    for (;;) {
        if (len + 1 >= cap) {
            char *bigger = realloc(text, cap *= 2);
            if (!bigger)
                break;
            text = bigger;
        }
        if (is_pipe) {
            struct pollfd p = {.fd = fd, .events = POLLIN};
            if (poll(&p, 1, ms_until(deadline)) <= 0)
                break;
        }
        ssize_t n = is_pipe ? read(fd, text + len, cap - len - 1)
                            : pread(fd, text + len, cap - len - 1, (off_t)len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    text[len] = '\0';
    return text;
}

const char *sanitizer_report_in(const char *text)
{
    static const char *const markers[] = {"AddressSanitizer", "LeakSanitizer",
                                          "ThreadSanitizer", "UndefinedBehaviorSanitizer",
                                          "runtime error:"};
    for (size_t i = 0; i < sizeof markers / sizeof *markers; i++)
        if (text && strstr(text, markers[i]))
            return markers[i];
    return NULL;
}

static const char *basename_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* "exited with status 0", "killed by signal 11 (Segmentation fault)". */
static const char *describe_status(int status, char *out, size_t size)
{
    if (WIFEXITED(status))
        snprintf(out, size, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(out, size, "killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(out, size, "wait status 0x%x", status);
    return out;
}

/*
 * A copy of our environment with `extra` appended to ASAN_OPTIONS, built
 * before fork() because the child may only make async-signal-safe calls.
 */
static char **environment_for_child(const char *extra, char **owned)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **envp = calloc(n + 2, sizeof *envp);
    if (!envp)
        return NULL;
    *owned = NULL;
    const char *old = getenv("ASAN_OPTIONS");
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!extra || strncmp(environ[i], "ASAN_OPTIONS=", 13) != 0)
            envp[k++] = environ[i];
    if (extra) {
        size_t len = strlen("ASAN_OPTIONS=") + (old ? strlen(old) + 1 : 0) + strlen(extra) + 1;
        *owned = malloc(len);
        if (*owned) {
            snprintf(*owned, len, "ASAN_OPTIONS=%s%s%s", old ? old : "", old ? ":" : "", extra);
            envp[k++] = *owned;
        }
    }
    envp[k] = NULL;
    return envp;
}

/* Close every descriptor >= lowest (async-signal-safe: only syscalls). */
static void close_from(int lowest)
{
#if defined(__linux__)
    if (close_range((unsigned)lowest, ~0u, 0) == 0)
        return;
#endif
    struct rlimit rl; /* elsewhere, or kernels before 5.9: close them one by one */
    long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (long)rl.rlim_cur : 65536;
    for (long fd = lowest; fd < max; fd++)
        close((int)fd);
}

/* The inherited state a launch_t asks for (after the defaults are set). */
static void inherit_stop_signals(int how)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGCHLD};
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        sigaddset(&set, sigs[i]);
        if (how == SIGNALS_IGNORED)
            signal(sigs[i], SIG_IGN);
    }
    if (how == SIGNALS_BLOCKED)
        sigprocmask(SIG_BLOCK, &set, NULL);
}

/*
 * In the child, between fork() and exec: its own process group (so the test
 * can signal it and everything it forks without touching anyone else), death
 * with its parent (where the system has a death signal; elsewhere the
 * watchdog below kills the group), default signal dispositions (an ignored
 * SIGPIPE would survive exec and hide a server that forgot to ignore it),
 * the limits the test asked for, and no descriptor but stdin, stdout and
 * stderr.
 */
static void exec_child(const char *binary, char **argv, char **envp, int out_fd,
                       int err_fd, const launch_t *how, pid_t parent)
{
    long nofile = how->nofile;
    setpgid(0, 0);
    proc_die_with_parent(SIGTERM);
    if (getppid() != parent)
        _exit(127);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        sigaction(sig, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (nofile > 0) {
        struct rlimit rl = {.rlim_cur = (rlim_t)nofile, .rlim_max = (rlim_t)nofile};
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    inherit_stop_signals(how->stop_signals);
    dup2(out_fd, STDOUT_FILENO);
    dup2(how->stderr_fd > 0 ? how->stderr_fd : err_fd, STDERR_FILENO);
    close_from(how->std_closed ? 0 : 3); /* what our own parent left open is not the server's */
    execve(binary, argv, envp);
    static const char msg[] = "exec failed\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(127);
}

int pipe_cloexec(int fds[2])
{
    if (pipe(fds) < 0)
        return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
}

/*
 * Where a child cannot be given a death signal (macOS, and the portable
 * path), a watchdog process kills the servers' process groups when this
 * process ends, however it ends (a time-out's SIGKILL included): it holds
 * the read end of a pipe that only we can write, and our death closes the
 * write end. Each message is a group id, negative once the group is gone
 * (so that the watchdog never signals a group id the system reused).
 * It runs in a session of its own, out of reach of whatever kills ours.
 */
#define WATCHED_MAX 256
static int watchdog_fd = -1;

static void watchdog_main(int in)
{
    pid_t groups[WATCHED_MAX];
    size_t n = 0;
    pid_t msg;
    setsid();
    /* Nothing of ours kept open: not a client's socket, not ctest's pipes. */
    int null = open("/dev/null", O_RDWR);
    dup2(in, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    close_from(3);
    in = STDIN_FILENO;
    while (read(in, &msg, sizeof msg) == (ssize_t)sizeof msg) {
        if (msg > 0 && n < WATCHED_MAX)
            groups[n++] = msg;
        for (size_t i = 0; msg < 0 && i < n; i++)
            if (groups[i] == -msg)
                groups[i--] = groups[--n];
    }
    for (size_t i = 0; i < n; i++)
        kill(-groups[i], SIGKILL);
    _exit(0);
}

static void watch_group(pid_t pgrp)
{
    if (watchdog_fd < 0 && proc_lacks(PROC_DEATH_SIGNAL)) {
        int p[2];
        if (pipe_cloexec(p) < 0)
            return;
        pid_t pid = fork();
        if (pid == 0) {
            close(p[1]);
            watchdog_main(p[0]);
        }
        close(p[0]);
        if (pid < 0) {
            close(p[1]);
            return;
        }
        watchdog_fd = p[1];
        note("(no death signal here, %s: a watchdog, pid %d, kills the servers' groups if "
             "this test dies)", proc_lacks(PROC_DEATH_SIGNAL), (int)pid);
    }
    if (watchdog_fd >= 0)
        (void)!write(watchdog_fd, &pgrp, sizeof pgrp);
}

/* The group is gone: the watchdog forgets it. */
static void unwatch_group(pid_t pgrp)
{
    pid_t msg = -pgrp;
    if (watchdog_fd >= 0)
        (void)!write(watchdog_fd, &msg, sizeof msg);
}

/* fork + exec `argv` with stdout on a pipe and stderr in a temporary file:
 * s's pid, out_fd (the pipe's read end) and err_fd (the file, unlinked). */
static bool spawn(char **argv, const launch_t *how, server_t *s)
{
    int out[2];
    char path[] = "/tmp/ladder-test-stderr-XXXXXX";
    if (pipe_cloexec(out) < 0)
        return expect(false, "pipe: %s", strerror(errno));
    int err_fd = mkstemp(path);
    if (err_fd < 0) {
        close(out[0]);
        close(out[1]);
        return expect(false, "mkstemp: %s", strerror(errno));
    }
    fcntl(err_fd, F_SETFD, FD_CLOEXEC);
    unlink(path); /* nothing to clean up, whatever happens */
    char *owned = NULL;
    char **envp = environment_for_child(how->asan_options, &owned);
    pid_t parent = getpid();
    pid_t pid = envp ? fork() : -1;
    if (pid == 0)
        exec_child(argv[0], argv, envp, out[1], err_fd, how, parent);
    int saved = errno;
    free(envp);
    free(owned);
    close(out[1]);
    if (pid < 0) {
        close(out[0]);
        close(err_fd);
        return expect(false, "fork: %s", strerror(saved));
    }
    setpgid(pid, pid); /* also here, so it holds before either side runs on */
    watch_group(pid);
    s->pid = pid;
    s->out_fd = out[0];
    s->err_fd = err_fd;
    return true;
}

/* Read stdout up to the first newline, a byte at a time, within timeout_s. */
static bool read_first_line(int fd, char *line, size_t size, double timeout_s)
{
    double deadline = now_s() + timeout_s;
    size_t len = 0;
    while (len + 1 < size) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, ms_until(deadline));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || read(fd, line + len, 1) != 1)
            break;
        if (line[len++] == '\n')
            break;
    }
    line[len] = '\0';
    return len > 0 && line[len - 1] == '\n';
}

/* Print the last part of the server's stderr, for a failure's post-mortem. */
static void print_stderr_tail(server_t *s, size_t max)
{
    char *text = s->err_shown ? NULL : server_stderr(s);
    if (!text)
        return;
    s->err_shown = true;
    size_t len = strlen(text);
    if (len > 0) {
        const char *from = len > max ? text + len - max : text;
        printf("        --- %s stderr%s ---\n%s%s        ---\n", basename_of(s->binary),
               len > max ? " (last part)" : "", from,
               text[len - 1] == '\n' ? "" : "\n");
    }
    free(text);
}

/* Build argv: binary [-p PORT] [args...] */
static void build_argv(char **argv, const char *binary, const char *port, const char *const *args)
{
    size_t k = 0;
    argv[k++] = (char *)binary;
    if (port) {
        argv[k++] = "-p";
        argv[k++] = (char *)port;
    }
    for (size_t i = 0; args && args[i] && k + 1 < MAX_ARGS; i++)
        argv[k++] = (char *)args[i];
    argv[k] = NULL;
}

/* The contract: exactly "listening on 127.0.0.1:PORT\n", nothing else. */
static int parse_listening_line(const char *line)
{
    int port = 0;
    char expected[64];
    if (sscanf(line, "listening on 127.0.0.1:%d", &port) != 1 || port <= 0 || port > 65535)
        return -1;
    snprintf(expected, sizeof expected, "listening on 127.0.0.1:%d\n", port);
    return strcmp(line, expected) == 0 ? port : -1;
}

int free_port(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;
    if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 &&
        bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* With no stdout to read the line from: ready once a connect() succeeds. */
static bool await_accepting(server_t *s, int port)
{
    double deadline = now_s() + START_TIMEOUT_S;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    while (now_s() < deadline && server_alive(s)) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        bool up = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
        if (fd >= 0)
            close(fd);
        if (up) {
            s->port = port;
            note("started %s (pid %d) on 127.0.0.1:%d, fds 0-2 closed", basename_of(s->binary),
                 (int)s->pid, port);
            return true;
        }
        sleep_s(0.02);
    }
    return expect(false, "%s did not accept on port %d within %.0f s", basename_of(s->binary),
                  port, START_TIMEOUT_S);
}

bool server_spawn(server_t *s, const char *binary, const launch_t *how)
{
    static const launch_t defaults;
    char *argv[MAX_ARGS];
    if (!how)
        how = &defaults;
    *s = (server_t){.binary = binary, .pid = -1, .out_fd = -1, .err_fd = -1};
    build_argv(argv, binary, how->port ? how->port : "0", how->extra_args);
    return spawn(argv, how, s);
}

int server_await_listening(server_t *s, double timeout_s)
{
    char line[256];
    if (!read_first_line(s->out_fd, line, sizeof line, timeout_s))
        return -1;
    s->port = parse_listening_line(line);
    return s->port;
}

bool server_start(server_t *s, const char *binary, const launch_t *how)
{
    if (!server_spawn(s, binary, how))
        return false;
    if (how && how->std_closed)
        return await_accepting(s, atoi(how->port));
    char line[256];
    if (!read_first_line(s->out_fd, line, sizeof line, START_TIMEOUT_S)) {
        expect(false, "%s printed no listening line within %.0f s (got \"%s\")",
               basename_of(binary), START_TIMEOUT_S, line);
        print_stderr_tail(s, 4096);
        return false;
    }
    s->port = parse_listening_line(line);
    if (s->port < 0) {
        line[strcspn(line, "\n")] = '\0';
        expect(false, "first stdout line is \"%s\", not \"listening on 127.0.0.1:PORT\"", line);
        return false;
    }
    note("started %s (pid %d) on 127.0.0.1:%d", basename_of(binary), (int)s->pid, s->port);
    return true;
}

bool server_alive(server_t *s)
{
    if (s->pid <= 0 || s->reaped)
        return false;
    if (waitpid(s->pid, &s->status, WNOHANG) == s->pid) {
        char how[96];
        s->reaped = true;
        note("%s %s", basename_of(s->binary), describe_status(s->status, how, sizeof how));
        return false;
    }
    return true;
}

/* Wait up to timeout_s for the server itself to exit. */
static bool wait_for_exit(server_t *s, double timeout_s)
{
    double deadline = now_s() + timeout_s;
    while (!s->reaped && now_s() < deadline) {
        if (waitpid(s->pid, &s->status, WNOHANG) == s->pid)
            s->reaped = true;
        else
            sleep_s(0.005);
    }
    return s->reaped;
}

/* Members of process group `pgrp` (for a failure message). */
static void list_group(pid_t pgrp, char *out, size_t size);

/* SIGKILL to whatever is left of a group, and a moment to reap what was ours. */
static void kill_group(pid_t pgrp)
{
    kill(-pgrp, SIGKILL);
    for (int i = 0; i < 100 && waitpid(-pgrp, NULL, WNOHANG) >= 0; i++)
        sleep_s(0.01);
}

/*
 * After the server exits, nothing it started may remain in its process group.
 * We are a child subreaper (see main), so its orphans become our children and
 * we reap them here; what is still there after 3 s is a leak.
 */
static bool check_group_gone(server_t *s)
{
    double deadline = now_s() + 3.0;
    while (kill(-s->pid, 0) == 0 && now_s() < deadline) {
        while (waitpid(-s->pid, NULL, WNOHANG) > 0)
            ;
        sleep_s(0.02);
    }
    if (kill(-s->pid, 0) < 0 && errno == ESRCH)
        return expect(true, "no process of the server outlived it");
    char who[256];
    list_group(s->pid, who, sizeof who);
    expect(false, "processes of the server still running after it exited: %s (killed)", who);
    kill_group(s->pid);
    return false;
}

static bool check_stderr_clean(server_t *s)
{
    char *text = server_stderr(s);
    const char *marker = sanitizer_report_in(text);
    size_t lines = 0;
    for (const char *p = text; p && *p; p++)
        lines += *p == '\n';
    free(text);
    if (marker)
        print_stderr_tail(s, 8192);
    return expect(!marker, "no sanitizer report on stderr (%zu line%s of stderr%s%s)", lines,
                  lines == 1 ? "" : "s", marker ? ", found " : "", marker ? marker : "");
}

bool server_stop_with(server_t *s, int sig)
{
    char how[96];
    const char *name = sig == SIGINT ? "INT" : "TERM"; /* the two stop signals */
    s->stopped = true;
    if (!server_alive(s)) {
        expect(false, "%s was running until the stop signal", basename_of(s->binary));
        check_stderr_clean(s);
        return false;
    }
    kill(s->pid, SIGCONT); /* in case a test left it stopped */
    double start = now_s();
    kill(s->pid, sig);
    bool ok;
    if (!wait_for_exit(s, STOP_TIMEOUT_S)) {
        ok = expect(false, "still running %.0f s after SIG%s (killed with SIGKILL)",
                    STOP_TIMEOUT_S, name);
        kill(-s->pid, SIGKILL);
        wait_for_exit(s, STOP_TIMEOUT_S);
    } else {
        ok = expect(WIFEXITED(s->status) && WEXITSTATUS(s->status) == 0,
                    "SIG%s -> %s after %.2f s (want status 0)", name,
                    describe_status(s->status, how, sizeof how), now_s() - start);
    }
    ok &= check_group_gone(s);
    ok &= check_stderr_clean(s);
    return ok;
}

bool server_stop(server_t *s)
{
    return server_stop_with(s, SIGTERM);
}

void server_cleanup(server_t *s)
{
    if (s->pid > 0) {
        if (!s->reaped) {
            kill(-s->pid, SIGKILL);
            wait_for_exit(s, STOP_TIMEOUT_S);
        }
        if (harness_failures > 0)
            print_stderr_tail(s, 4096);
        if (kill(-s->pid, 0) == 0)
            kill_group(s->pid);
    }
    if (s->pid > 0 && kill(-s->pid, 0) < 0 && errno == ESRCH)
        unwatch_group(s->pid);
    if (s->out_fd >= 0)
        close(s->out_fd);
    if (s->err_fd >= 0)
        close(s->err_fd);
    s->out_fd = s->err_fd = -1;
    s->pid = -1;
}

char *server_stderr(const server_t *s)
{
    return s->err_fd >= 0 ? read_all_from(s->err_fd, false) : NULL;
}

bool run_to_exit(const char *binary, const char *const *args, double timeout_s,
                 run_result_t *r)
{
    static const launch_t defaults;
    char *argv[MAX_ARGS];
    build_argv(argv, binary, NULL, args);

    *r = (run_result_t){0};
    server_t s = {.binary = binary, .pid = -1, .out_fd = -1, .err_fd = -1,
                  .err_shown = true}; /* its output is the caller's to show */
    if (!spawn(argv, &defaults, &s))
        return false;
    if (wait_for_exit(&s, timeout_s) && WIFEXITED(s.status)) {
        r->exited = true;
        r->code = WEXITSTATUS(s.status);
    }
    r->out = read_all_from(s.out_fd, true);
    r->err = server_stderr(&s);
    server_cleanup(&s); /* kills it if it is still running (a server that did start) */
    return r->out && r->err;
}

void run_result_free(run_result_t *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* ======================================================================== */
/* the server seen from outside                                             */
/* ======================================================================== */

/* Everything here goes through platform/proc.h's reader for this system. */

int seen_fd_count(pid_t pid)
{
    return proc_open_fds(pid, NULL);
}

int seen_lowest_free_fd(pid_t pid)
{
    int lowest;
    return proc_open_fds(pid, &lowest) < 0 ? -1 : lowest;
}

int seen_thread_count(pid_t pid)
{
    proc_info_t p;
    return proc_info(pid, &p) ? (int)p.threads : -1;
}

long seen_rss_kib(pid_t pid)
{
    proc_info_t p;
    return proc_info(pid, &p) ? p.rss_kb : -1;
}

double seen_cpu_s(pid_t pid)
{
    proc_info_t p;
    return proc_info(pid, &p) ? p.cpu_s : -1;
}

char seen_state(pid_t pid)
{
    proc_info_t p;
    return proc_info(pid, &p) ? p.state : 0;
}

typedef struct {
    int live, zombies, listed;
    long max_rss;
} child_scan_t;

/* One pass over the process table for parent's children. */
static child_scan_t scan_children(pid_t parent, seen_id_t *list, int max)
{
    child_scan_t scan = {0};
    size_t n;
    proc_info_t *all = proc_list(&n);
    if (!all || n == 0) { /* never empty: we are in it; so unreadable */
        free(all);
        return (child_scan_t){.live = -1, .zombies = -1, .listed = 0, .max_rss = -1};
    }
    for (size_t i = 0; i < n; i++) {
        if (all[i].ppid != parent)
            continue;
        if (all[i].state == 'Z') {
            scan.zombies++;
            continue;
        }
        scan.live++;
        if (list && scan.listed < max)
            list[scan.listed++] =
                (seen_id_t){.pid = (pid_t)all[i].pid, .start_time = all[i].started};
        if (all[i].rss_kb > scan.max_rss)
            scan.max_rss = all[i].rss_kb;
    }
    free(all);
    return scan;
}

int seen_live_children(pid_t parent)
{
    return scan_children(parent, NULL, 0).live;
}

int seen_zombie_children(pid_t parent)
{
    return scan_children(parent, NULL, 0).zombies;
}

int seen_children(pid_t parent, seen_id_t *out, int max)
{
    return scan_children(parent, out, max).listed;
}

bool seen_still_exists(const seen_id_t *p)
{
    proc_info_t now;
    return proc_info(p->pid, &now) && now.started == p->start_time;
}

long seen_max_rss_kib_with_children(pid_t pid)
{
    long own = seen_rss_kib(pid);
    long children = scan_children(pid, NULL, 0).max_rss;
    return own > children ? own : children;
}

/* "pid(state) ..." for the members of process group pgrp. */
static void list_group(pid_t pgrp, char *out, size_t size)
{
    size_t n, len = 0;
    proc_info_t *all = proc_list(&n);
    out[0] = '\0';
    for (size_t i = 0; all && i < n; i++)
        if (all[i].pgid == pgrp && len + 16 < size)
            len += (size_t)snprintf(out + len, size - len, "%s%ld(%c)", len ? " " : "",
                                    all[i].pid, all[i].state);
    free(all);
}

int settle(int (*probe)(pid_t), pid_t pid, int target, double timeout_s)
{
    return settle_or_still(probe, pid, target, timeout_s, timeout_s);
}

int settle_or_still(int (*probe)(pid_t), pid_t pid, int target, double timeout_s,
                    double still_s)
{
    double deadline = now_s() + timeout_s, moved = now_s();
    int value = probe(pid);
    while (value != target && value != -1 && now_s() < deadline && now_s() - moved < still_s) {
        sleep_s(0.02); /* -1: gone, or unseen */
        int next = probe(pid);
        moved = next != value ? now_s() : moved;
        value = next;
    }
    return value;
}

double cpu_share_over(pid_t pid, double seconds)
{
    if (unseen(PROC_FINE_CPU, "a CPU share")) {
        sleep_s(seconds); /* the wait itself may be part of the test */
        return CPU_UNSEEN;
    }
    double cpu0 = seen_cpu_s(pid), t0 = now_s();
    sleep_s(seconds);
    double cpu1 = seen_cpu_s(pid), t1 = now_s();
    if (cpu0 < 0 || cpu1 < 0)
        return -1;
    return (cpu1 - cpu0) / (t1 - t0);
}

/* ======================================================================== */
/* clients                                                                  */
/* ======================================================================== */

#define CONNECT_TIMEOUT_S 10.0 /* a full backlog costs 1 s, then 3 s, of SYN retries */

int client_connect(int port, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        note("socket: %s", strerror(errno));
        return -1;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int err = 0;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
        err = errno;
        if (err == EINPROGRESS) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            socklen_t len = sizeof err;
            err = poll(&p, 1, (int)(CONNECT_TIMEOUT_S * 1000)) == 1
                      ? (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len), err)
                      : ETIMEDOUT;
        }
    }
    if (err != 0) {
        note("connect to 127.0.0.1:%d: %s", port, strerror(err));
        close(fd);
        return -1;
    }
    return fd;
}

void client_reset(int fd)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
}

size_t client_push_until_blocked(int fd, uint64_t seed, size_t max, double quiet_s)
{
    unsigned char buf[16 * KIB];
    size_t sent = 0;
    double deadline = now_s() + 30.0;
    while (sent < max && now_s() < deadline) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int r = poll(&p, 1, (int)(quiet_s * 1000));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break; /* quiet: the peer stopped taking bytes */
        size_t chunk = max - sent < sizeof buf ? max - sent : sizeof buf;
        payload_fill(seed, sent, buf, chunk);
        ssize_t n = send(fd, buf, chunk, MSG_NOSIGNAL);
        if (n > 0)
            sent += (size_t)n;
        else if (n < 0 && errno != EAGAIN && errno != EINTR)
            break;
    }
    return sent;
}

int client_await_close(int fd, double timeout_s)
{
    unsigned char buf[16 * KIB];
    double deadline = now_s() + timeout_s;
    while (now_s() < deadline) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, ms_until(deadline)) <= 0)
            continue;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n == 0)
            return 0;
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return errno;
    }
    return -1;
}

int wait_readable(int fd, double timeout_s)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    double deadline = now_s() + timeout_s;
    for (;;) {
        int r = poll(&p, 1, ms_until(deadline));
        if (r >= 0 || errno != EINTR)
            return r < 0 ? -1 : r;
    }
}

long raise_own_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -1;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    return (long)rl.rlim_cur;
}

/* ======================================================================== */
/* echo engine                                                              */
/* ======================================================================== */

#define READ_CHUNK (64 * KIB)
#define DEFAULT_MAX_CHUNK (64 * KIB)

void echo_init(echo_t *e, int fd, uint64_t seed, size_t length, echo_end_t end)
{
    *e = (echo_t){.fd = fd, .seed = seed, .length = length, .max_chunk = DEFAULT_MAX_CHUNK,
                  .end = end, .rng = mix64(seed) | 1, .result = ECHO_PENDING};
}

const char *echo_result_name(echo_result_t r)
{
    static const char *const names[] = {"pending", "ok", "closed", "corrupt", "timeout", "failed"};
    return (unsigned)r < sizeof names / sizeof *names ? names[r] : "?";
}

static void decide(echo_t *e, echo_result_t result, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void decide(echo_t *e, echo_result_t result, const char *fmt, ...)
{
    va_list ap;
    e->result = result;
    va_start(ap, fmt);
    vsnprintf(e->why, sizeof e->why, fmt, ap);
    va_end(ap);
}

/* Send our FIN once the chosen moment has come. */
static void maybe_shut(echo_t *e)
{
    bool due = (e->end == ECHO_SHUT_AFTER_SEND && e->sent == e->length) ||
               (e->end == ECHO_SHUT_AFTER_ECHO && e->received == e->length);
    if (e->shut || !due || e->result != ECHO_PENDING)
        return;
    if (shutdown(e->fd, SHUT_WR) < 0)
        decide(e, ECHO_CLOSED, "shutdown(SHUT_WR): %s", strerror(errno));
    e->shut = true;
}

/* One write of a random size, continuing the payload at e->sent. */
static void send_some(echo_t *e, unsigned char *scratch)
{
    size_t chunk = rng_between(&e->rng, 1, e->max_chunk);
    if (chunk > e->length - e->sent)
        chunk = e->length - e->sent;
    payload_fill(e->seed, e->sent, scratch, chunk);
    ssize_t n = send(e->fd, scratch, chunk, MSG_NOSIGNAL);
    if (n > 0) {
        e->sent += (size_t)n;
        maybe_shut(e);
    } else if (errno == EPIPE || errno == ECONNRESET) {
        decide(e, ECHO_CLOSED, "write: %s after %zu of %zu bytes sent, %zu echoed",
               strerror(errno), e->sent, e->length, e->received);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        decide(e, ECHO_FAILED, "write: %s", strerror(errno));
    }
}

/* Check n freshly received bytes against the payload at e->received. */
static void check_received(echo_t *e, const unsigned char *got, size_t n, unsigned char *want)
{
    if (e->received + n > e->length) {
        decide(e, ECHO_CORRUPT, "%zu bytes came back beyond the %zu sent",
               e->received + n - e->length, e->length);
        return;
    }
    payload_fill(e->seed, e->received, want, n);
    if (memcmp(got, want, n) != 0) {
        size_t i = 0;
        while (got[i] == want[i])
            i++;
        decide(e, ECHO_CORRUPT, "byte %zu of %zu differs: got 0x%02x, sent 0x%02x",
               e->received + i, e->length, got[i], want[i]);
        return;
    }
    e->received += n;
    if (e->received == e->length && e->end == ECHO_KEEP_OPEN)
        decide(e, ECHO_OK, "all %zu bytes echoed", e->length);
    maybe_shut(e);
}

/* One read of at most cap bytes; returns how many arrived. */
static size_t receive_some(echo_t *e, size_t cap, unsigned char *in, unsigned char *want)
{
    ssize_t n = recv(e->fd, in, cap, 0);
    if (n > 0) {
        check_received(e, in, (size_t)n, want);
        return (size_t)n;
    }
    if (n == 0 && e->received == e->length && e->end != ECHO_KEEP_OPEN)
        decide(e, ECHO_OK, "all %zu bytes echoed, then EOF", e->length);
    else if (n == 0)
        decide(e, ECHO_CLOSED, "EOF after %zu of %zu bytes echoed (%zu sent)", e->received,
               e->length, e->sent);
    else if (errno == ECONNRESET)
        decide(e, ECHO_CLOSED, "reset (ECONNRESET) after %zu of %zu bytes echoed (%zu sent)",
               e->received, e->length, e->sent);
    else if (errno != EAGAIN && errno != EINTR)
        decide(e, ECHO_FAILED, "read: %s", strerror(errno));
    return 0;
}

typedef struct {
    struct pollfd *pfd;
    size_t *index;     /* pfd[k] belongs to e[index[k]] */
    size_t *allowance; /* bytes each may still read this tick */
    unsigned char *out, *in, *want;
} engine_t;

static bool engine_alloc(engine_t *g, const echo_t *e, size_t n)
{
    size_t out_size = 1;
    for (size_t i = 0; i < n; i++)
        if (e[i].max_chunk > out_size)
            out_size = e[i].max_chunk;
    g->pfd = calloc(n, sizeof *g->pfd);
    g->index = calloc(n, sizeof *g->index);
    g->allowance = calloc(n, sizeof *g->allowance);
    g->out = malloc(out_size);
    g->in = malloc(READ_CHUNK);
    g->want = malloc(READ_CHUNK);
    return g->pfd && g->index && g->allowance && g->out && g->in && g->want;
}

static void engine_free(engine_t *g)
{
    free(g->pfd);
    free(g->index);
    free(g->allowance);
    free(g->out);
    free(g->in);
    free(g->want);
}

/* Fill pfd with what each undecided exchange waits for; return the count. */
static size_t engine_interest(engine_t *g, echo_t *e, size_t n)
{
    size_t live = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].result != ECHO_PENDING)
            continue;
        short events = 0;
        if (e[i].sent < e[i].length)
            events |= POLLOUT;
        if (g->allowance[i] > 0)
            events |= POLLIN;
        g->pfd[live] = (struct pollfd){.fd = e[i].fd, .events = events};
        g->index[live++] = i;
    }
    return live;
}

static void engine_handle(engine_t *g, echo_t *e, size_t live)
{
    for (size_t k = 0; k < live; k++) {
        short rev = g->pfd[k].revents;
        size_t i = g->index[k];
        if ((rev & POLLOUT) && e[i].result == ECHO_PENDING)
            send_some(&e[i], g->out);
        if ((rev & (POLLIN | POLLHUP | POLLERR)) && e[i].result == ECHO_PENDING) {
            /* An error or hang-up is read at once, allowance or not, so it
             * cannot make poll() return immediately forever. */
            size_t cap = g->allowance[i] < READ_CHUNK ? g->allowance[i] : READ_CHUNK;
            size_t got = receive_some(&e[i], cap ? cap : READ_CHUNK, g->in, g->want);
            g->allowance[i] -= got < g->allowance[i] ? got : g->allowance[i];
        }
    }
}

static void engine_refill(engine_t *g, size_t n, size_t per_tick)
{
    for (size_t i = 0; i < n; i++)
        g->allowance[i] = per_tick ? per_tick : SIZE_MAX;
}

bool echo_unfinished(const echo_t *e)
{
    return e->result == ECHO_PENDING || e->result == ECHO_TIMEOUT;
}

/* Bytes moved and verdicts reached so far: grows while anything happens. */
static size_t echo_progress(const echo_t *e, size_t n)
{
    size_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += e[i].sent + e[i].received + (e[i].result != ECHO_PENDING);
    return sum;
}

size_t echo_run(echo_t *e, size_t n, const echo_opts_t *opts)
{
    echo_opts_t o = opts ? *opts : (echo_opts_t){0};
    if (o.timeout_s <= 0)
        o.timeout_s = 30.0;
    if (o.tick_ms <= 0)
        o.tick_ms = 100;
    engine_t g;
    if (!engine_alloc(&g, e, n)) {
        engine_free(&g);
        expect(false, "out of memory for %zu connections", n);
        return 0;
    }
    double deadline = now_s() + o.timeout_s;
    double tick = o.tick_ms / 1000.0, next_tick = now_s() + tick;
    engine_refill(&g, n, o.read_per_tick);
    for (size_t i = 0; i < n; i++)
        if (e[i].result == ECHO_TIMEOUT)
            e[i].result = ECHO_PENDING; /* run again: keep waiting */
    for (size_t i = 0; i < n; i++)
        maybe_shut(&e[i]);

    size_t live, moved = echo_progress(e, n);
    double last_move = now_s();
    bool stalled = false;
    while ((live = engine_interest(&g, e, n)) > 0 && now_s() < deadline) {
        double wake = next_tick < deadline ? next_tick : deadline;
        if (poll(g.pfd, live, ms_until(wake)) < 0 && errno != EINTR)
            break;
        engine_handle(&g, e, live);
        double t = now_s();
        if (t >= next_tick) {
            /* Progress is a walk over every exchange: once a tick, not per wakeup. */
            if (o.stall_s > 0) {
                size_t now_moved = echo_progress(e, n);
                if (now_moved != moved)
                    moved = now_moved, last_move = t;
                else if (t - last_move >= o.stall_s) {
                    stalled = true;
                    break;
                }
            }
            engine_refill(&g, n, o.read_per_tick);
            if (o.on_tick)
                o.on_tick(o.ctx);
            next_tick = t + tick;
        }
    }
    size_t ok = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].result == ECHO_PENDING && stalled)
            decide(&e[i], ECHO_TIMEOUT, "no verdict, nothing moved anywhere for %.1f s: %zu of %zu bytes sent, %zu echoed",
                   o.stall_s, e[i].sent, e[i].length, e[i].received);
        else if (e[i].result == ECHO_PENDING)
            decide(&e[i], ECHO_TIMEOUT, "no verdict within %.1f s: %zu of %zu bytes sent, %zu echoed",
                   o.timeout_s, e[i].sent, e[i].length, e[i].received);
        ok += e[i].result == ECHO_OK;
    }
    engine_free(&g);
    return ok;
}

bool echo_once(int fd, uint64_t seed, size_t length, echo_end_t end, double timeout_s)
{
    return echo_once_or_still(fd, seed, length, end, timeout_s, 0);
}

bool echo_once_or_still(int fd, uint64_t seed, size_t length, echo_end_t end, double timeout_s,
                        double still_s)
{
    echo_t e;
    echo_init(&e, fd, seed, length, end);
    echo_run(&e, 1, &(echo_opts_t){.timeout_s = timeout_s, .stall_s = still_s});
    if (e.result != ECHO_OK)
        note("echo of %zu bytes: %s: %s", length, echo_result_name(e.result), e.why);
    return e.result == ECHO_OK;
}
