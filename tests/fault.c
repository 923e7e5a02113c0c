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
 *   write SHORT N | AGAIN N            every Nth write() to a socket takes only half of its
 *                                      bytes (at least one), or none: EAGAIN, as a full
 *                                      socket buffer answers a non-blocking write
 *   listen SLEEP MS                    the process's first listen() waits MS ms first,
 *                                      after a line on stderr saying so (a server held
 *                                      between binding its port and listening on it)
 *   connect EAGAIN [SPARE]             connect() fails with that errno, after the first
 *                                      SPARE went through (Linux: the client short of
 *                                      local resources for a non-blocking connect)
 *   epoll_pwait2 EPERM | ENOSYS | ENOMEM
 *                                      epoll_pwait2() fails (a container's seccomp
 *                                      profile that does not know it; a kernel before 5.11;
 *                                      ENOMEM: the event loop itself failing,
 *                                      loadgen:stall-wait-fails)
 *   io_uring_setup ENOSYS | EPERM      syscall(__NR_io_uring_setup) fails (no io_uring;
 *                                      kernel.io_uring_disabled or seccomp)
 *   io_uring_register EPERM            syscall(__NR_io_uring_register) fails (a seccomp
 *                                      filter that allows only setup and enter)
 *   io_uring_enter EPERM | EAGAIN | ENOMEM [N]
 *                                      syscall(__NR_io_uring_enter) fails, every call or
 *                                      every Nth (the kernel short of memory for a moment)
 *   io_uring_enter MULTISHOT_RECV_EINVAL
 *                                      the kernel answers a multishot receive with EINVAL,
 *                                      as Linux 5.19 does (the request is made invalid)
 *   io_uring_enter LINUX_5_19          that, and a single receive into a provided buffer
 *                                      reads at most its sqe->len bytes, so 0 for 0 (the
 *                                      request becomes a no-op, which completes with 0)
 *   io_uring_enter RECV_IN_IO_WQ       multishot receives refused, and every single one
 *                                      goes to the kernel's io-wq workers (IOSQE_ASYNC),
 *                                      where an end of file still uses up the buffer it
 *                                      picked, as every one does on 5.19
 *   exit NOTE                          no fault: a process that ends through exit() (its
 *                                      exit handlers run, LeakSanitizer's among them), not
 *                                      _exit() or a signal, adds "exited PID" to the file
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
#include <sys/epoll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Not errnos: what the io_uring_enter lines make of the requests. */
enum { MULTISHOT_RECV_EINVAL = -1, LINUX_5_19 = -2, RECV_IN_IO_WQ = -3 };
/* Not errnos either: what "listen SLEEP MS" and "write SHORT N | AGAIN N" ask for. */
enum { SLEEP = -4, SHORT = -5, AGAIN = -6 };

/* The control file's line, read afresh (empty where there is none), errno
 * left as it was; the file's name, or NULL where LADDER_FAULT_FILE is unset. */
static const char *read_fault_line(char *line, size_t size)
{
    const char *path = getenv("LADDER_FAULT_FILE");
    int saved = errno, fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    line[0] = '\0';
    if (fd >= 0) {
        ssize_t n = read(fd, line, size - 1);
        line[n > 0 ? n : 0] = '\0';
        close(fd);
    }
    errno = saved;
    return path;
}

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
                 {"EHOSTUNREACH", EHOSTUNREACH}, {"ECONNABORTED", ECONNABORTED},
                 {"MULTISHOT_RECV_EINVAL", MULTISHOT_RECV_EINVAL}, {"LINUX_5_19", LINUX_5_19},
                 {"RECV_IN_IO_WQ", RECV_IN_IO_WQ}, {"SLEEP", SLEEP}, {"SHORT", SHORT},
                 {"AGAIN", AGAIN}};
    char line[64];
    read_fault_line(line, sizeof line);
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
    char line[64];
    int saved = errno;
    const char *path = read_fault_line(line, sizeof line);
    if (!strstr(line, " once"))
        return errno = saved, FAIL; /* every call fails */
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int blocking = !(fcntl(fd, F_GETFL) & O_NONBLOCK);
    int ready = poll(&p, 1, blocking ? -1 : 0);
    if (ready < 0)
        return INTERRUPTED; /* a signal, reported as accept() would */
    if (ready == 0)
        return errno = saved, PASS; /* nobody queued: a plain EAGAIN below */
    int cfd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (cfd >= 0)
        close(cfd);
    errno = saved;
    return FAIL;
}

/*
 * The definitions these stand in front of (the C library's), looked up once,
 * when the library is loaded: write() and syscall() are also called from
 * signal handlers (a server's self-pipe, say), where dlsym() may not run (it
 * can allocate).
 */
#define NEXT(name) static __typeof__(name) *next_##name
#define FIND(name) (next_##name = (__typeof__(next_##name))dlsym(RTLD_NEXT, #name))
NEXT(accept);
NEXT(fork);
NEXT(pthread_create);
NEXT(getsockname);
NEXT(write);
NEXT(listen);
NEXT(connect);
NEXT(syscall);
__attribute__((constructor)) static void find_next_definitions(void)
{
    FIND(accept);
    FIND(fork);
    FIND(pthread_create);
    FIND(getsockname);
    FIND(write);
    FIND(listen);
    FIND(connect);
    FIND(syscall);
}

/* "exit NOTE": exit() runs the destructors of loaded libraries, as it runs
 * the exit handlers; _exit() and a deadly signal run neither. */
__attribute__((destructor)) static void note_exit(void)
{
    char line[64];
    const char *path = read_fault_line(line, sizeof line);
    if (!path || strncmp(line, "exit NOTE", 9) != 0)
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0) {
        char note[40];
        int len = snprintf(note, sizeof note, "\nexited %ld\n", (long)getpid());
        (void)!write(fd, note, (size_t)len);
        close(fd);
    }
}

int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
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
    return next_accept(fd, addr, len);
}

pid_t fork(void)
{
    int err = fault_for("fork");
    if (err) {
        errno = err;
        return -1;
    }
    return next_fork();
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    int err = fault_for("pthread_create");
    if (err)
        return err;
    return next_pthread_create(t, attr, fn, arg);
}

int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
    static int raised; /* once per process: a second SIGTERM means "now" (exit 1) */
    if (!raised && fault_for("getsockname") == SIGTERM)
        raised = raise(SIGTERM) == 0;
    return next_getsockname(fd, addr, len);
}

/* loadgen's epoll loop waits with epoll_pwait2 (glibc 2.35) where it can. */
int epoll_pwait2(int epfd, struct epoll_event *events, int max, const struct timespec *timeout,
                 const sigset_t *mask)
{
    static __typeof__(epoll_pwait2) *next; /* glibc before 2.35 does not declare it */
    int err = fault_for("epoll_pwait2");
    if (err) {
        errno = err;
        return -1;
    }
    if (!next)
        next = (__typeof__(next))dlsym(RTLD_NEXT, "epoll_pwait2");
    return next(epfd, events, max, timeout, mask);
}

/* Only writes to sockets count and fail: a program's stderr and files go through. */
ssize_t write(int fd, const void *buf, size_t len)
{
    static unsigned long socket_writes; /* so far, in this process */
    unsigned long spare = 0;
    int type, err = fault_spare("write", &spare);
    socklen_t type_len = sizeof type;
    if (!err || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) != 0)
        return next_write(fd, buf, len);
    socket_writes++;
    if (err == SHORT || err == AGAIN) { /* spare: N, every Nth */
        if (spare == 0 || socket_writes % spare != 0)
            return next_write(fd, buf, len);
        if (err == SHORT)
            return next_write(fd, buf, len > 1 ? len / 2 : len);
        errno = EAGAIN;
        return -1;
    }
    if (socket_writes > spare) {
        errno = err;
        return -1;
    }
    return next_write(fd, buf, len);
}

int listen(int fd, int backlog)
{
    static int listened; /* only the first call waits */
    unsigned long ms = 0;
    if (fault_spare("listen", &ms) == SLEEP && !listened++) {
        static const char line[] = "fault.c: listen() held\n";
        (void)!next_write(STDERR_FILENO, line, sizeof line - 1);
        struct timespec t = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
        while (nanosleep(&t, &t) < 0 && errno == EINTR)
            ;
    }
    return next_listen(fd, backlog);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    static unsigned long connects; /* so far, in this process */
    unsigned long spare = 0;
    int err = fault_spare("connect", &spare);
    if (err && connects++ >= spare) {
        errno = err;
        return -1;
    }
    return next_connect(fd, addr, len);
}

/*
 * The submission queue of the process's one ring, to rewrite requests
 * before the kernel reads them: where its offsets are (io_uring_setup's
 * answer) and where it is mapped (/proc/self/maps names the ring's
 * mappings by their offsets: IORING_OFF_SQ_RING, IORING_OFF_SQES).
 */
static struct io_sqring_offsets sq_off;
static char *sq_ring;
static struct io_uring_sqe *sqes;
#define INVALID_RECV_FLAG (1u << 15) /* no receive flag is this bit */

static void find_rings(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long start, offset;
        if (!strstr(line, "io_uring") || sscanf(line, "%lx-%*x %*s %lx", &start, &offset) != 2)
            continue;
        if (offset == IORING_OFF_SQ_RING)
            sq_ring = (char *)start;
        else if (offset == IORING_OFF_SQES)
            sqes = (struct io_uring_sqe *)start;
    }
    if (maps)
        fclose(maps);
}

/* Rewrite the receives not yet submitted, as the control file asks. */
static void rewrite_requests(int how)
{
    if (!sq_ring || !sqes)
        find_rings();
    if (!sq_ring || !sqes)
        return;
    unsigned head = *(unsigned *)(sq_ring + sq_off.head);
    unsigned tail = *(unsigned *)(sq_ring + sq_off.tail);
    unsigned mask = *(unsigned *)(sq_ring + sq_off.ring_mask);
    unsigned *array = (unsigned *)(sq_ring + sq_off.array);
    for (unsigned i = head; i != tail; i++) {
        struct io_uring_sqe *sqe = &sqes[array[i & mask] & mask];
        if (sqe->opcode != IORING_OP_RECV || sqe->ioprio == INVALID_RECV_FLAG)
            continue; /* not a receive, or made invalid already (a call may see it twice) */
        if (sqe->ioprio & IORING_RECV_MULTISHOT) {
            sqe->ioprio = INVALID_RECV_FLAG; /* the receive fails with EINVAL */
        } else if (how == LINUX_5_19 && (sqe->flags & IOSQE_BUFFER_SELECT) && sqe->len == 0) {
            uint64_t data = sqe->user_data;
            memset(sqe, 0, sizeof *sqe);
            sqe->opcode = IORING_OP_NOP; /* a receive of 0 bytes: it completes with 0 */
            sqe->user_data = data;
        } else if (how == RECV_IN_IO_WQ) {
            sqe->flags |= IOSQE_ASYNC;
        }
    }
}

/* What the control file says of io_uring_enter: fail with an errno (every
 * call or every Nth), or rewrite the requests and go on. */
static int enter_fault(void)
{
    static unsigned long calls;
    unsigned long every = 0;
    int what = fault_spare("io_uring_enter", &every);
    if (what < 0)
        rewrite_requests(what);
    calls++;
    return what > 0 && (every == 0 || calls % every == 0) ? what : 0;
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
    int err = number == SYS_io_uring_setup      ? fault_for("io_uring_setup")
              : number == SYS_io_uring_register ? fault_for("io_uring_register")
              : number == SYS_io_uring_enter    ? enter_fault()
                                                : 0;
    if (err > 0) {
        errno = err;
        return -1;
    }
    long ret = next_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (number == SYS_io_uring_setup && ret >= 0)
        sq_off = ((struct io_uring_params *)a[1])->sq_off;
    return ret;
}
