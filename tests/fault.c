/*
 * fault.c - libladder_fault.so, preloaded into a server by a few tests to
 * make one call fail the way a loaded or limited system would, on demand.
 *
 * The file named by LADDER_FAULT_FILE holds one line, "CALL WHAT [SPARE]",
 * and is read at every call of CALL, so the test can start and end the fault
 * while the server runs:
 *   accept ENOBUFS | ENOMEM | EMFILE   accept() fails with that errno
 *   accept EPROTO once                 (or ENETDOWN, EHOSTUNREACH, ECONNABORTED)
 *                                      accept() fails once, when a client is
 *                                      queued, and the file is emptied
 *   fork EAGAIN                        fork() fails (a process limit)
 *   pthread_create EAGAIN              pthread_create() fails (a thread limit)
 *   getsockname SIGTERM                SIGTERM arrives just before the first getsockname()
 *   write ENOBUFS | ENOMEM [SPARE]     write() to a socket fails with that errno, after the
 *                                      first SPARE writes to sockets went through (the
 *                                      load client's own kernel memory running short)
 *   io_uring_setup ENOSYS | EPERM      syscall(__NR_io_uring_setup) fails (no io_uring;
 *                                      kernel.io_uring_disabled or seccomp)
 * An empty or missing file: every call goes through. Linux (glibc) only;
 * it is not built with the sanitizers, and the sanitizer runtimes it sits in
 * front of need ASAN_OPTIONS=verify_asan_link_order=0.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The errno (or signal) the control file asks `call` to fail with; 0: none.
 * *spare, if asked for, gets the number after it (0 when there is none). */
static int fault_spare(const char *call, unsigned long *spare)
{
    static const struct {
        const char *name;
        int value;
    } whats[] = {{"ENOBUFS", ENOBUFS}, {"ENOMEM", ENOMEM}, {"EMFILE", EMFILE},
                 {"EAGAIN", EAGAIN},   {"SIGTERM", SIGTERM}, {"ENOSYS", ENOSYS},
                 {"EPERM", EPERM},     {"EPROTO", EPROTO},   {"ENETDOWN", ENETDOWN},
                 {"EHOSTUNREACH", EHOSTUNREACH}, {"ECONNABORTED", ECONNABORTED}};
    const char *path = getenv("LADDER_FAULT_FILE");
    char line[64] = "";
    int saved = errno, fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        ssize_t n = read(fd, line, sizeof line - 1);
        line[n > 0 ? n : 0] = '\0';
        close(fd);
    }
    errno = saved;
    size_t len = strlen(call);
    if (strncmp(line, call, len) != 0 || line[len] != ' ')
        return 0;
    for (size_t i = 0; i < sizeof whats / sizeof whats[0]; i++) {
        const char *name = whats[i].name, *rest = line + len + 1 + strlen(name);
        if (strncmp(line + len + 1, name, strlen(name)) != 0)
            continue;
        if (spare)
            *spare = *rest == ' ' ? strtoul(rest + 1, NULL, 10) : 0;
        return whats[i].value;
    }
    return 0;
}

static int fault_for(const char *call)
{
    return fault_spare(call, NULL);
}

/*
 * "... once": fail the first call that finds a client queued (a pending
 * error belongs to a connection, so a fault with nobody waiting would be
 * no test of how soon the next try comes), then empty the file. A blocking
 * listener is waited on here, as accept() would; a signal ends the wait
 * with EINTR, as it would end accept().
 */
enum { PASS, FAIL, INTERRUPTED };
static int fault_once_due(int fd)
{
    const char *path = getenv("LADDER_FAULT_FILE");
    char line[64] = "";
    int saved = errno, cfd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (cfd >= 0) {
        ssize_t n = read(cfd, line, sizeof line - 1);
        line[n > 0 ? n : 0] = '\0';
        close(cfd);
    }
    if (!strstr(line, " once"))
        return errno = saved, FAIL; /* every call fails */
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int blocking = !(fcntl(fd, F_GETFL) & O_NONBLOCK);
    int ready = poll(&p, 1, blocking ? -1 : 0);
    if (ready < 0)
        return INTERRUPTED; /* a signal, reported as accept() would */
    if (ready == 0)
        return errno = saved, PASS; /* nobody queued: a plain EAGAIN below */
    cfd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (cfd >= 0)
        close(cfd);
    errno = saved;
    return FAIL;
}

int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    static int (*next)(int, struct sockaddr *, socklen_t *);
    int err = fault_for("accept");
    int due = err ? fault_once_due(fd) : PASS;
    if (due == INTERRUPTED)
        return -1;
    if (due == PASS)
        err = 0;
    if (err) {
        errno = err;
        return -1;
    }
    if (!next)
        next = (int (*)(int, struct sockaddr *, socklen_t *))dlsym(RTLD_NEXT, "accept");
    return next(fd, addr, len);
}

pid_t fork(void)
{
    static pid_t (*next)(void);
    int err = fault_for("fork");
    if (err) {
        errno = err;
        return -1;
    }
    if (!next)
        next = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
    return next();
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static int (*next)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    int err = fault_for("pthread_create");
    if (err)
        return err;
    if (!next)
        next = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(
            RTLD_NEXT, "pthread_create");
    return next(t, attr, fn, arg);
}

int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
    static int (*next)(int, struct sockaddr *, socklen_t *);
    static int raised; /* once per process: a second SIGTERM means "now" (exit 1) */
    if (!raised && fault_for("getsockname") == SIGTERM)
        raised = raise(SIGTERM) == 0;
    if (!next)
        next = (int (*)(int, struct sockaddr *, socklen_t *))dlsym(RTLD_NEXT, "getsockname");
    return next(fd, addr, len);
}

/*
 * write() and syscall() are also called from signal handlers (a server's
 * self-pipe, say), where dlsym() may not run (it can allocate): the next
 * definitions are looked up once, when the library is loaded.
 */
static ssize_t (*next_write)(int, const void *, size_t);
static long (*next_syscall)(long, ...);
__attribute__((constructor)) static void find_next_definitions(void)
{
    next_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    next_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
}

/* Only writes to sockets count and fail: a program's stderr and files go through. */
ssize_t write(int fd, const void *buf, size_t len)
{
    static unsigned long socket_writes; /* so far, in this process */
    unsigned long spare = 0;
    int type, err = fault_spare("write", &spare);
    socklen_t type_len = sizeof type;
    if (err && getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) == 0 &&
        socket_writes++ >= spare) {
        errno = err;
        return -1;
    }
    return next_write(fd, buf, len);
}

/* 08-io_uring reaches io_uring through syscall(2). Its arguments are passed
 * on as six longs, which is how the C library's syscall() takes them. */
long syscall(long number, ...)
{
    long a[6];
    va_list ap;
    va_start(ap, number);
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    int err = number == SYS_io_uring_setup ? fault_for("io_uring_setup") : 0;
    if (err) {
        errno = err;
        return -1;
    }
    return next_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
