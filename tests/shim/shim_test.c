/*
 * shim_test.c - unit test of the epoll-backed kqueue shim (sys/event.h here).
 *
 * Each check states one kqueue(2) rule and tests the shim against it with its
 * own kqueue and descriptors (socketpair, pipe, or a loopback TCP pair). Each
 * runs in a child process: its descriptors die with it, a crash or a
 * sanitizer report fails that check only, and a wait that never ends is
 * killed after CHECK_LIMIT_MS, so the program always ends by itself.
 *
 *   cc -std=c11 -Wall -Wextra -Werror -I../../platform/kqueue-shim shim_test.c -o shim_test && ./shim_test
 *
 * Output: "PASS name" or "FAIL name: why" per check, then "N passed, N failed";
 * the exit status is non-zero if anything failed.
 */
#define _DEFAULT_SOURCE /* sigaction, setitimer, F_DUPFD, syscall under -std=c11 */

#include <sys/event.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HIGH_FD        10007 /* past several growths of the shim's fd table (C10K) */
#define SLACK_MS       2000  /* generous upper bound on any "returns at once" */
#define CHECK_LIMIT_MS 10000 /* a check still running after this is killed */

static char why[256]; /* reason for the current check's failure */
static int tags[4];   /* distinct addresses to use as udata */

/*
 * What run() sets up in the child before each check: its own kqueue, and a
 * connected pair, either Unix stream (sv[1] has written one byte, waiting at
 * sv[0]) or loopback TCP (sv[0] the client, sv[1] the accepted side). ev
 * takes what the check's waits return.
 */
static int kq, sv[2];
static struct kevent ev[8];

/* ---- epoll_ctl, as a kernel short of memory answers it -------------------- */

/*
 * This program's own epoll_ctl(), which the shim calls instead of the C
 * library's: the kernel's, except that while failing_adds holds an errno,
 * EPOLL_CTL_ADD fails with it, as it does past fs.epoll.max_user_watches
 * (ENOSPC) or short of kernel memory (ENOMEM). It counts the ADDs made.
 * Each check runs in its own child, so these start at 0 in every check.
 */
static int failing_adds, adds_made;

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event)
{
    if (op == EPOLL_CTL_ADD && (adds_made++, failing_adds != 0)) {
        errno = failing_adds;
        return -1;
    }
    return (int)syscall(SYS_epoll_ctl, epfd, op, fd, event);
}

/* ---- helpers ------------------------------------------------------------ */

/* Record why a check failed; returns 0 so that checks can `return fail(...)`. */
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return 0;
}

/* The checks' one assertion: when `cond` holds, the check fails with this reason. */
#define FAIL_IF(cond, ...)            \
    do {                              \
        if (cond)                     \
            return fail(__VA_ARGS__); \
    } while (0)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One change, applied without waiting: kevent()'s result (0, or -1 + errno).
 * check_changes_only tests that nevents 0 does not wait even with no timeout;
 * the zero timeout here keeps the other checks from depending on it. */
static int change(int kq, int fd, int filter, int flags, void *udata)
{
    struct kevent ch;
    EV_SET(&ch, fd, filter, flags, 0, 0, udata);
    return kevent(kq, &ch, 1, NULL, 0, &(struct timespec){0, 0});
}

/* Whether kevent() refuses this change with -1 and errno `want`. */
static bool refused(int kq, int fd, int filter, int flags, int want)
{
    errno = 0;
    return change(kq, fd, filter, flags, NULL) == -1 && errno == want;
}

/* Wait up to `ms` milliseconds for at most `max` kevents. */
static int wait_events(int kq, struct kevent *out, int max, long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    return kevent(kq, NULL, 0, out, max, &ts);
}

/* Wait up to `ms` milliseconds for at most 4 kevents, into ev. */
static int wait_for(long ms)
{
    return wait_events(kq, ev, 4, ms);
}

static const struct kevent *find(const struct kevent *list, int n, int fd, int filter)
{
    for (int i = 0; i < n; i++)
        if (list[i].ident == (uintptr_t)fd && list[i].filter == filter)
            return &list[i];
    return NULL;
}

/* A connected Unix stream pair: the simplest readable/writable descriptors. */
static int unix_pair(int fds[2])
{
    return socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
}

/* A listening loopback socket on a kernel-chosen port. */
static int tcp_listener(struct sockaddr_in *addr)
{
    socklen_t len = sizeof *addr;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)addr, sizeof *addr) < 0 || listen(fd, 16) < 0 ||
        getsockname(fd, (struct sockaddr *)addr, &len) < 0)
        return -1;
    return fd;
}

/* A connected loopback TCP pair: fds[0] the client, fds[1] the accepted side. */
static int tcp_pair(int fds[2])
{
    struct sockaddr_in addr;
    int lfd = tcp_listener(&addr);
    if (lfd < 0)
        return -1;
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (fds[0] < 0 || connect(fds[0], (struct sockaddr *)&addr, sizeof addr) < 0)
        return -1;
    fds[1] = accept(lfd, NULL, NULL);
    return fds[1] < 0 ? -1 : 0;
}

static int send_bytes(int fd, size_t n)
{
    char buf[4096];
    memset(buf, 'x', sizeof buf);
    return n <= sizeof buf && write(fd, buf, n) == (ssize_t)n ? 0 : -1;
}

/* ---- the checks: each returns 1 on success, or fail(...) ---------------- */

static int check_read_write_split(void)
{
    struct kevent ch[2];
    EV_SET(&ch[0], sv[0], EVFILT_READ, EV_ADD, 0, 0, &tags[0]);
    EV_SET(&ch[1], sv[0], EVFILT_WRITE, EV_ADD, 0, 0, &tags[1]);
    int n = kevent(kq, ch, 2, ev, 4, &(struct timespec){1, 0});
    const struct kevent *r = find(ev, n, sv[0], EVFILT_READ), *w = find(ev, n, sv[0], EVFILT_WRITE);
    FAIL_IF(n != 2 || r == NULL || w == NULL,
            "expected a READ and a WRITE kevent for one fd, got %d kevents", n);
    FAIL_IF(r->udata != &tags[0] || w->udata != &tags[1], "udata not kept per filter");
    FAIL_IF(r->flags != 0 || w->flags != 0, "unexpected flags 0x%x / 0x%x on a healthy socket",
            r->flags, w->flags);
    FAIL_IF(w->data < 1, "WRITE data %ld, want >= 1", (long)w->data);
    return 1;
}

static int check_add_idempotent(void)
{
    FAIL_IF(change(kq, sv[0], EVFILT_READ, EV_ADD, &tags[0]) != 0 ||
                change(kq, sv[0], EVFILT_READ, EV_ADD, &tags[1]) != 0,
            "second EV_ADD failed: %s", strerror(errno));
    int n = wait_for(1000);
    FAIL_IF(n != 1, "%d kevents after EV_ADD twice, want 1", n);
    FAIL_IF(ev[0].udata != &tags[1], "udata not updated by the second EV_ADD");
    return 1;
}

static int check_disable_enable(void)
{
    FAIL_IF(change(kq, sv[0], EVFILT_READ, EV_ADD | EV_DISABLE, NULL) != 0,
            "EV_ADD|EV_DISABLE: %s", strerror(errno));
    int n = wait_for(0);
    FAIL_IF(n != 0, "%d kevents from a pair added disabled", n);
    change(kq, sv[0], EVFILT_WRITE, EV_ADD, NULL);
    change(kq, sv[0], EVFILT_READ, EV_ENABLE, NULL);
    FAIL_IF((n = wait_for(1000)) != 2, "%d kevents after EV_ENABLE, want READ and WRITE", n);
    change(kq, sv[0], EVFILT_READ, EV_DISABLE, NULL);
    FAIL_IF((n = wait_for(0)) != 1 || ev[0].filter != EVFILT_WRITE,
            "disabling READ should leave exactly WRITE, got %d kevents", n);
    change(kq, sv[0], EVFILT_WRITE, EV_DISABLE, NULL);
    FAIL_IF((n = wait_for(0)) != 0, "%d kevents with both filters disabled", n);
    /* EV_ADD on an existing pair only modifies it: as on the BSDs, a
     * disabled pair stays disabled until EV_ENABLE. */
    change(kq, sv[0], EVFILT_READ, EV_ADD, NULL);
    FAIL_IF((n = wait_for(0)) != 0, "EV_ADD re-enabled a disabled pair (%d kevents)", n);
    change(kq, sv[0], EVFILT_READ, EV_ENABLE, NULL);
    FAIL_IF((n = wait_for(1000)) != 1 || ev[0].filter != EVFILT_READ,
            "EV_ENABLE after EV_ADD should report READ, got %d kevents", n);
    /* epoll(7) reports hang-ups even for an empty mask; a disabled pair must
     * not cut a wait short once the peer has gone. */
    change(kq, sv[0], EVFILT_READ, EV_DISABLE, NULL);
    close(sv[1]);
    double t0 = now_ms();
    FAIL_IF((n = wait_for(100)) != 0 || now_ms() - t0 < 90,
            "disabled pairs on a hung-up socket: %d kevents after %.1f ms, want 0", n,
            now_ms() - t0);
    return 1;
}

/* EV_ADD on an existing pair with EV_DISABLE or EV_ENABLE switches it; with
 * both, EV_ENABLE wins, for a new pair as for an existing one. */
static int check_add_with_enable_disable(void)
{
    change(kq, sv[0], EVFILT_READ, EV_ADD, NULL);
    change(kq, sv[0], EVFILT_READ, EV_ADD | EV_DISABLE, NULL);
    int n = wait_for(0);
    FAIL_IF(n != 0, "EV_ADD|EV_DISABLE on an enabled pair: %d kevents, want 0", n);
    change(kq, sv[0], EVFILT_READ, EV_ADD | EV_ENABLE, NULL);
    FAIL_IF((n = wait_for(1000)) != 1,
            "EV_ADD|EV_ENABLE on a disabled pair: %d kevents, want 1", n);
    change(kq, sv[0], EVFILT_READ, EV_DISABLE, NULL);
    change(kq, sv[0], EVFILT_READ, EV_ADD | EV_ENABLE | EV_DISABLE, NULL);
    FAIL_IF((n = wait_for(1000)) != 1,
            "EV_ENABLE|EV_DISABLE on a disabled pair: %d kevents, want 1", n);
    change(kq, sv[0], EVFILT_WRITE, EV_ADD | EV_ENABLE | EV_DISABLE, NULL);
    FAIL_IF((n = wait_for(1000)) != 2 || find(ev, n, sv[0], EVFILT_WRITE) == NULL,
            "a new pair added with EV_ENABLE|EV_DISABLE is not enabled (%d kevents)", n);
    return 1;
}

/* The BSDs replace udata on every change to an existing pair, not only on
 * EV_ADD; a failed change leaves it alone. */
static int check_udata_follows_changes(void)
{
    change(kq, sv[0], EVFILT_READ, EV_ADD, &tags[0]);
    change(kq, sv[0], EVFILT_READ, EV_DISABLE, &tags[1]);
    change(kq, sv[0], EVFILT_READ, EV_ENABLE, &tags[2]);
    int n = wait_for(1000);
    FAIL_IF(n != 1 || ev[0].udata != &tags[2], "udata after EV_ENABLE: want the EV_ENABLE's");
    change(kq, sv[0], EVFILT_READ, 0, &tags[3]); /* no action flag: modify only */
    FAIL_IF((n = wait_for(1000)) != 1 || ev[0].udata != &tags[3],
            "udata after a change with no flags: want that change's");
    change(kq, sv[0], EVFILT_READ, EV_DISABLE, &tags[1]);
    change(kq, sv[0], EVFILT_READ, EV_ADD | EV_ENABLE, &tags[0]);
    FAIL_IF((n = wait_for(1000)) != 1 || ev[0].udata != &tags[0],
            "udata after EV_DISABLE then EV_ADD|EV_ENABLE: want the last one's");
    FAIL_IF(change(kq, sv[0], EVFILT_READ, EV_ADD | 0x0010, &tags[1]) != -1, /* EV_ONESHOT */
            "EV_ONESHOT was accepted");
    FAIL_IF((n = wait_for(1000)) != 1 || ev[0].udata != &tags[0],
            "a rejected change replaced udata");
    return 1;
}

static int check_delete(void)
{
    struct kevent ch;
    change(kq, sv[0], EVFILT_READ, EV_ADD, NULL);
    change(kq, sv[0], EVFILT_WRITE, EV_ADD, NULL);
    FAIL_IF(change(kq, sv[0], EVFILT_READ, EV_DELETE, NULL) != 0, "EV_DELETE: %s", strerror(errno));
    int n = wait_for(1000);
    FAIL_IF(n != 1 || ev[0].filter != EVFILT_WRITE,
            "after deleting READ want only WRITE, got %d kevents", n);
    EV_SET(&ch, sv[0], EVFILT_READ, EV_DELETE, 0, 0, &tags[2]);
    n = kevent(kq, &ch, 1, ev, 4, &(struct timespec){1, 0});
    FAIL_IF(n != 1 || !(ev[0].flags & EV_ERROR) || ev[0].data != ENOENT,
            "EV_DELETE of a missing pair: n=%d flags=0x%x data=%ld, want EV_ERROR/ENOENT", n,
            n > 0 ? ev[0].flags : 0, n > 0 ? (long)ev[0].data : 0L);
    FAIL_IF(ev[0].ident != (uintptr_t)sv[0] || ev[0].filter != EVFILT_READ ||
                ev[0].udata != &tags[2],
            "the EV_ERROR event does not echo the failed change");
    errno = 0;
    FAIL_IF(kevent(kq, &ch, 1, NULL, 0, &(struct timespec){0, 0}) != -1 || errno != ENOENT,
            "with nevents 0 want -1/ENOENT, errno was %s", strerror(errno));
    FAIL_IF(!refused(kq, sv[0], EVFILT_READ, EV_ENABLE, ENOENT),
            "EV_ENABLE of a missing pair: want -1/ENOENT, errno was %s", strerror(errno));
    return 1;
}

/* kqueue(2): an error stops the call from waiting, and earlier changes stay. */
static int check_errors_and_changes_in_one_call(void)
{
    struct kevent ch[3];
    EV_SET(&ch[0], sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
    EV_SET(&ch[1], sv[0], EVFILT_WRITE, EV_DELETE, 0, 0, NULL);
    EV_SET(&ch[2], sv[1], EVFILT_WRITE, EV_ADD, 0, 0, NULL);
    int n = kevent(kq, ch, 3, ev, 4, &(struct timespec){1, 0});
    FAIL_IF(n != 1 || ev[0].flags != EV_ERROR || ev[0].filter != EVFILT_WRITE,
            "want only the WRITE EV_ERROR (flags exactly EV_ERROR), got %d kevents", n);
    FAIL_IF((n = wait_for(1000)) != 2 || find(ev, n, sv[0], EVFILT_READ) == NULL ||
                find(ev, n, sv[1], EVFILT_WRITE) == NULL,
            "the valid changes around the error were not all applied (%d kevents)", n);
    return 1;
}

/* kqueue(2): an error that finds no room left in the eventlist makes kevent()
 * fail with that errno; the errors before it are in the eventlist, and the
 * changes after it are not applied. */
static int check_errors_without_room(void)
{
    struct kevent ch[4];
    int closed = dup(sv[1]);
    FAIL_IF(closed < 0 || close(closed) < 0, "setup: %s", strerror(errno));
    EV_SET(&ch[0], sv[0], EVFILT_READ, EV_DELETE, 0, 0, NULL);  /* ENOENT */
    EV_SET(&ch[1], sv[0], EVFILT_WRITE, EV_ENABLE, 0, 0, NULL); /* ENOENT */
    EV_SET(&ch[2], closed, EVFILT_READ, EV_ADD, 0, 0, NULL);    /* EBADF, no room */
    EV_SET(&ch[3], sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);     /* never applied */
    errno = 0;
    int n = kevent(kq, ch, 4, ev, 2, &(struct timespec){1, 0});
    FAIL_IF(n != -1 || errno != EBADF, "want -1/EBADF for the error with no room, got %d (%s)",
            n, strerror(errno));
    FAIL_IF(ev[0].flags != EV_ERROR || ev[0].data != ENOENT || ev[1].flags != EV_ERROR ||
                ev[1].data != ENOENT || ev[1].filter != EVFILT_WRITE,
            "the two errors with room are not in the eventlist");
    FAIL_IF((n = wait_for(0)) != 0, "the change after the failed one was applied (%d kevents)", n);
    return 1;
}

/* EV_RECEIPT: every change comes back as EV_ERROR, data 0 on success, and
 * kevent() returns without reading pending events. */
static int check_receipt(void)
{
    struct kevent ch[2];
    EV_SET(&ch[0], sv[0], EVFILT_READ, EV_ADD | EV_RECEIPT, 0, 0, &tags[0]);
    EV_SET(&ch[1], sv[0], EVFILT_WRITE, EV_DELETE | EV_RECEIPT, 0, 0, &tags[1]);
    int n = kevent(kq, ch, 2, ev, 4, &(struct timespec){1, 0});
    FAIL_IF(n != 2 || ev[0].flags != EV_ERROR || ev[0].data != 0 || ev[0].udata != &tags[0] ||
                ev[1].flags != EV_ERROR || ev[1].data != ENOENT || ev[1].udata != &tags[1],
            "want two receipts, data 0 and ENOENT, got %d kevents", n);
    FAIL_IF((n = wait_for(1000)) != 1 || ev[0].filter != EVFILT_READ,
            "the receipted EV_ADD was not applied (%d kevents)", n);
    EV_SET(&ch[0], sv[0], EVFILT_WRITE, EV_ADD | EV_RECEIPT, 0, 0, NULL);
    FAIL_IF(kevent(kq, ch, 1, NULL, 0, NULL) != 0,
            "a receipt with no room: want 0, got an error (%s)", strerror(errno));
    FAIL_IF((n = wait_for(1000)) != 2,
            "the EV_ADD with a receipt and no room was not applied (%d kevents)", n);
    return 1;
}

static int check_unsupported(void)
{
    struct kevent ch[4];
    EV_SET(&ch[0], sv[0], EVFILT_READ, EV_ADD | 0x0080, 0, 0, NULL);  /* EV_DISPATCH */
    EV_SET(&ch[1], sv[0], EVFILT_WRITE, EV_ADD | 0x0010, 0, 0, NULL); /* EV_ONESHOT */
    EV_SET(&ch[2], sv[0], -4, EV_ADD, 0, 0, NULL);                    /* EVFILT_VNODE */
    EV_SET(&ch[3], sv[0], EVFILT_READ, EV_ADD, 0x0001, 1, NULL);      /* NOTE_LOWAT */
    int n = kevent(kq, ch, 4, ev, 4, &(struct timespec){1, 0});
    FAIL_IF(n != 4, "%d error kevents for 4 unsupported changes", n);
    for (int i = 0; i < n; i++)
        FAIL_IF(!(ev[i].flags & EV_ERROR) || ev[i].data != EINVAL,
                "change %d: flags 0x%x data %ld, want EV_ERROR/EINVAL", i, ev[i].flags,
                (long)ev[i].data);
    FAIL_IF((n = wait_for(0)) != 0, "a rejected change registered something (%d kevents)", n);
    errno = 0;
    FAIL_IF(kevent(kq, ch, 1, NULL, 0, &(struct timespec){0, 0}) != -1 || errno != EINVAL,
            "with nevents 0 want -1/EINVAL, errno was %s", strerror(errno));
    return 1;
}

/* kqueue(2): with EV_CLEAR a pair is reported when its state changes, once,
 * not for as long as it lasts (the edge-triggered 06 of the workshop). */
static int check_clear_reports_changes_once(void)
{
    FAIL_IF(change(kq, sv[0], EVFILT_READ, EV_ADD | EV_CLEAR, &tags[0]) != 0,
            "EV_ADD | EV_CLEAR on READ: %s", strerror(errno));
    int n = wait_for(1000);
    FAIL_IF(n != 1 || ev[0].filter != EVFILT_READ || ev[0].udata != &tags[0] || ev[0].data != 1,
            "the first byte: want one READ kevent with data 1, got %d kevents", n);
    FAIL_IF((n = wait_for(0)) != 0,
            "the byte left unread was reported again (%d kevents): level, not edge", n);
    FAIL_IF(send_bytes(sv[1], 2) < 0 || (n = wait_for(1000)) != 1 ||
                ev[0].data != 3,
            "more bytes: want one READ kevent with data 3, got %d kevents", n);
    /* Later changes keep EV_CLEAR. */
    change(kq, sv[0], EVFILT_READ, EV_DISABLE, &tags[0]);
    change(kq, sv[0], EVFILT_READ, EV_ENABLE, &tags[0]);
    wait_for(0); /* whether re-enabling reports the bytes again is not the point */
    FAIL_IF(send_bytes(sv[1], 1) < 0 || (n = wait_for(1000)) != 1,
            "after EV_DISABLE, EV_ENABLE, one more byte: %d kevents, want 1", n);
    FAIL_IF((n = wait_for(0)) != 0,
            "EV_ENABLE dropped EV_CLEAR: the unread bytes come again (%d kevents)", n);
    /* WRITE too: writable is reported once, then only when it changes. */
    FAIL_IF(change(kq, sv[1], EVFILT_WRITE, EV_ADD | EV_CLEAR, &tags[1]) != 0,
            "EV_ADD | EV_CLEAR on WRITE: %s", strerror(errno));
    FAIL_IF((n = wait_for(1000)) != 1 || ev[0].filter != EVFILT_WRITE,
            "a writable socket: want one WRITE kevent, got %d", n);
    FAIL_IF((n = wait_for(0)) != 0, "a socket still writable was reported again (%d kevents)", n);
    return 1;
}

/* The shim's limit (not kqueue's): EPOLLET is one bit per fd, so an fd's two
 * pairs are both EV_CLEAR or neither; the mismatch is EINVAL, not ignored. */
static int check_clear_is_per_fd(void)
{
    struct kevent ch[2];
    EV_SET(&ch[0], sv[0], EVFILT_READ, EV_ADD | EV_CLEAR, 0, 0, NULL);
    EV_SET(&ch[1], sv[0], EVFILT_WRITE, EV_ADD | EV_CLEAR, 0, 0, NULL);
    int n = kevent(kq, ch, 2, ev, 4, &(struct timespec){1, 0});
    FAIL_IF(n != 2 || !find(ev, n, sv[0], EVFILT_READ) || !find(ev, n, sv[0], EVFILT_WRITE),
            "both filters with EV_CLEAR: want READ and WRITE once, got %d kevents", n);
    FAIL_IF((n = wait_for(0)) != 0, "both filters with EV_CLEAR: reported again (%d kevents)", n);
    change(kq, sv[0], EVFILT_WRITE, EV_DELETE, NULL);
    FAIL_IF(!refused(kq, sv[0], EVFILT_WRITE, EV_ADD, EINVAL),
            "WRITE without EV_CLEAR beside a cleared READ: want EINVAL, got %s", strerror(errno));
    change(kq, sv[0], EVFILT_READ, EV_DELETE, NULL);
    FAIL_IF(change(kq, sv[0], EVFILT_WRITE, EV_ADD, NULL) != 0,
            "WRITE without EV_CLEAR, READ deleted: %s", strerror(errno));
    for (int i = 0; i < 2; i++)
        FAIL_IF((n = wait_for(1000)) != 1 || ev[0].filter != EVFILT_WRITE,
                "the level-triggered WRITE, wait %d: %d kevents, want 1", i + 1, n);
    return 1;
}

/* kqueue(2): EV_EOF may arrive while data is still pending. */
static int check_eof_with_pending_data(void)
{
    char buf[64];
    FAIL_IF(send_bytes(sv[0], 5) < 0 || shutdown(sv[0], SHUT_WR) < 0, "setup: %s", strerror(errno));
    change(kq, sv[1], EVFILT_READ, EV_ADD, NULL);
    int n = wait_for(1000);
    FAIL_IF(n != 1 || !(ev[0].flags & EV_EOF) || ev[0].data != 5,
            "want EV_EOF with data 5, got n=%d flags=0x%x data=%ld", n, n > 0 ? ev[0].flags : 0,
            n > 0 ? (long)ev[0].data : 0L);
    FAIL_IF(ev[0].fflags != 0, "fflags %u after a clean shutdown, want 0", ev[0].fflags);
    FAIL_IF(read(sv[1], buf, sizeof buf) != 5, "the 5 pending bytes could not be read");
    FAIL_IF((n = wait_for(1000)) != 1 || !(ev[0].flags & EV_EOF) || ev[0].data != 0 ||
                read(sv[1], buf, sizeof buf) != 0,
            "after draining want EV_EOF, data 0 and read() == 0");
    return 1;
}

/* Both filters of the accepted side sv[1] registered, and their kevents
 * looked up in one wait: the checks of a TCP peer that has gone. */
static int wait_both_filters(const struct kevent **r, const struct kevent **w)
{
    change(kq, sv[1], EVFILT_READ, EV_ADD, NULL);
    change(kq, sv[1], EVFILT_WRITE, EV_ADD, NULL);
    int n = wait_for(1000);
    *r = find(ev, n, sv[1], EVFILT_READ);
    *w = find(ev, n, sv[1], EVFILT_WRITE);
    return n;
}

/* The peer's FIN ends only the read direction: EV_EOF on READ, not on WRITE. */
static int check_half_close_eof_read_only(void)
{
    const struct kevent *r, *w;
    FAIL_IF(shutdown(sv[0], SHUT_WR) < 0, "setup: %s", strerror(errno));
    int n = wait_both_filters(&r, &w);
    FAIL_IF(n != 2 || r == NULL || w == NULL, "want READ and WRITE kevents, got %d", n);
    FAIL_IF(!(r->flags & EV_EOF) || (w->flags & EV_EOF),
            "READ flags 0x%x, WRITE flags 0x%x: want EV_EOF on READ only", r->flags, w->flags);
    return 1;
}

/* A reset connection: EV_EOF on both filters, and the error left for read(). */
static int check_eof_error_on_reset(void)
{
    const struct kevent *r, *w;
    struct linger hard = {1, 0};
    FAIL_IF(setsockopt(sv[0], SOL_SOCKET, SO_LINGER, &hard, sizeof hard) < 0, "setup: %s",
            strerror(errno));
    close(sv[0]); /* SO_LINGER {1, 0}: close() sends a reset */
    int n = wait_both_filters(&r, &w);
    FAIL_IF(n != 2 || r == NULL || w == NULL || !(r->flags & EV_EOF) || !(w->flags & EV_EOF),
            "want EV_EOF on READ and WRITE after a reset, got %d kevents", n);
    char byte;
    FAIL_IF(read(sv[1], &byte, 1) != -1 || errno != ECONNRESET,
            "read after the reset: want ECONNRESET, the shim must not consume it");
    return 1;
}

static int check_write_eof_on_pipe(void)
{
    int p[2];
    FAIL_IF(pipe(p) < 0, "setup: %s", strerror(errno));
    change(kq, p[1], EVFILT_WRITE, EV_ADD, &tags[3]);
    int n = wait_for(1000);
    FAIL_IF(n != 1 || (ev[0].flags & EV_EOF) || ev[0].data != 1,
            "a writable pipe: want no EV_EOF and data 1 (no send buffer to ask)");
    close(p[0]);
    FAIL_IF((n = wait_for(1000)) != 1 || !(ev[0].flags & EV_EOF) || ev[0].udata != &tags[3],
            "WRITE on a pipe with no reader: want EV_EOF, got n=%d", n);
    return 1;
}

static int check_data_is_fionread(void)
{
    int avail = -1;
    FAIL_IF(send_bytes(sv[0], 1234) < 0, "setup: %s", strerror(errno));
    change(kq, sv[1], EVFILT_READ, EV_ADD, NULL);
    int n = wait_for(1000);
    ioctl(sv[1], FIONREAD, &avail);
    FAIL_IF(n != 1 || ev[0].data != 1234 || ev[0].data != avail || (ev[0].flags & EV_EOF),
            "data %ld, FIONREAD %d, want 1234 and no EV_EOF", n > 0 ? (long)ev[0].data : -1L,
            avail);
    /* WRITE data is a hint: the send buffer's free space, at most SO_SNDBUF. */
    int sndbuf = 0;
    socklen_t len = sizeof sndbuf;
    change(kq, sv[1], EVFILT_READ, EV_DELETE, NULL);
    change(kq, sv[0], EVFILT_WRITE, EV_ADD, NULL);
    FAIL_IF((n = wait_for(1000)) != 1 ||
                getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) < 0 ||
                ev[0].filter != EVFILT_WRITE || ev[0].data < 2 || ev[0].data > sndbuf,
            "WRITE data %ld on an idle socket, want 2..SO_SNDBUF (%d)",
            n > 0 ? (long)ev[0].data : -1L, sndbuf);
    return 1;
}

/* EOF only from the kernel's hang-up bits: a zero-length datagram leaves
 * FIONREAD at 0 on a readable socket that is nowhere near its end. */
static int check_no_eof_from_empty_read(void)
{
    int dg[2];
    FAIL_IF(socketpair(AF_UNIX, SOCK_DGRAM, 0, dg) < 0, "setup: %s", strerror(errno));
    FAIL_IF(send(dg[1], "", 0, 0) != 0, "send: %s", strerror(errno));
    change(kq, dg[0], EVFILT_READ, EV_ADD, NULL);
    int n = wait_for(1000);
    FAIL_IF(n != 1 || ev[0].data != 0 || (ev[0].flags & EV_EOF),
            "want one kevent, data 0, no EV_EOF; got n=%d flags=0x%x", n, n > 0 ? ev[0].flags : 0);
    return 1;
}

/* Linux cannot tell the accept queue's length; the shim reports 1. */
static int check_listener_data(void)
{
    struct sockaddr_in addr;
    int lfd = tcp_listener(&addr);
    FAIL_IF(lfd < 0, "setup: %s", strerror(errno));
    for (int i = 0; i < 2; i++) {
        int c = socket(AF_INET, SOCK_STREAM, 0);
        FAIL_IF(c < 0 || connect(c, (struct sockaddr *)&addr, sizeof addr) < 0, "connect: %s",
                strerror(errno));
    }
    change(kq, lfd, EVFILT_READ, EV_ADD, NULL);
    int n = wait_for(1000);
    FAIL_IF(n != 1 || ev[0].data != 1 || (ev[0].flags & EV_EOF),
            "listener: want one kevent, data 1, no EV_EOF; got n=%d", n);
    return 1;
}

static int check_timeout_zero(void)
{
    double t0 = now_ms();
    int n = wait_for(0);
    double took = now_ms() - t0;
    FAIL_IF(n != 0 || took > SLACK_MS, "timeout 0: returned %d after %.1f ms", n, took);
    return 1;
}

static int check_timeout_waits(void)
{
    double t0 = now_ms();
    int n = wait_for(100);
    double took = now_ms() - t0;
    FAIL_IF(n != 0 || took < 90 || took > 100 + SLACK_MS,
            "100 ms timeout: returned %d after %.1f ms", n, took);
    t0 = now_ms(); /* 1 ns must round up to 1 ms, not down to a busy 0 */
    n = kevent(kq, NULL, 0, ev, 2, &(struct timespec){0, 1});
    took = now_ms() - t0;
    FAIL_IF(n != 0 || took < 0.5, "1 ns timeout: returned %d after %.3f ms, want a 1 ms sleep",
            n, took);
    return 1;
}

static int check_nevents_limit(void)
{
    int b[2];
    FAIL_IF(unix_pair(b) < 0 || send_bytes(b[1], 1) < 0, "setup: %s", strerror(errno));
    int fds[2] = {sv[0], b[0]};
    for (int i = 0; i < 2; i++) {
        change(kq, fds[i], EVFILT_READ, EV_ADD, NULL);
        change(kq, fds[i], EVFILT_WRITE, EV_ADD, NULL);
    }
    int want[] = {1, 3, 4}, max[] = {1, 3, 8};
    for (int i = 0; i < 3; i++) {
        int n = wait_events(kq, ev, max[i], 1000);
        FAIL_IF(n != want[i], "nevents %d with 4 ready: got %d, want %d", max[i], n, want[i]);
    }
    return 1;
}

/* sv[0], readable (one byte) and writable, with both filters registered
 * (udata tags[0], tags[1]). */
static void both_ready(void)
{
    change(kq, sv[0], EVFILT_READ, EV_ADD, &tags[0]);
    change(kq, sv[0], EVFILT_WRITE, EV_ADD, &tags[1]);
}

/*
 * kqueue(2) returns what did not fit in the eventlist on a later call. epoll
 * reports the fd as one event, which the shim splits into READ and WRITE:
 * with room for one kevent the second must come next time, not be dropped
 * (then the same one would be dropped on every call, WRITE never seen).
 */
static int check_full_eventlist_keeps_rest(void)
{
    struct kevent first, second;
    both_ready();
    FAIL_IF(wait_events(kq, &first, 1, 1000) != 1 || wait_events(kq, &second, 1, 1000) != 1,
            "nevents 1 with two kevents ready: a call returned none");
    FAIL_IF(first.filter == second.filter,
            "two calls with room for one: filter %d twice, the other never", first.filter);
    const struct kevent *w = first.filter == EVFILT_WRITE ? &first : &second;
    const struct kevent *r = w == &first ? &second : &first;
    FAIL_IF(r->udata != &tags[0] || w->udata != &tags[1] || r->data != 1,
            "the kevent kept for the next call has the wrong udata or data");
    int n = wait_for(1000); /* nothing left over: both, once each */
    FAIL_IF(n != 2 || !find(ev, n, sv[0], EVFILT_READ) || !find(ev, n, sv[0], EVFILT_WRITE),
            "room for four after that: got %d kevents, want READ and WRITE once", n);
    return 1;
}

/*
 * A kevent kept for the next call is for a pair that may change meanwhile:
 * one deleted or disabled is not returned, nor one no longer ready (kqueue
 * checks a level-triggered filter again before returning it).
 */
static int check_kept_kevent_follows_changes(void)
{
    both_ready();
    for (int round = 0; round < 3; round++) {
        FAIL_IF(wait_events(kq, ev, 1, 1000) != 1 || ev[0].filter != EVFILT_READ,
                "round %d: room for one: want READ first, as epoll reports it", round);
        /* WRITE is now kept over; take it away three ways. */
        if (round == 0)
            change(kq, sv[0], EVFILT_WRITE, EV_DELETE, NULL);
        else if (round == 1)
            change(kq, sv[0], EVFILT_WRITE, EV_DISABLE, NULL);
        else if (fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0)
            return fail("O_NONBLOCK: %s", strerror(errno));
        else
            while (send_bytes(sv[0], 4096) == 0) /* fill the send buffer: not writable */
                ;
        int n = wait_for(0);
        FAIL_IF(n != 1 || ev[0].filter != EVFILT_READ,
                "round %d (%s): got %d kevents, want READ alone", round,
                round == 0 ? "deleted" : round == 1 ? "disabled" : "no longer ready", n);
        if (round == 0)
            change(kq, sv[0], EVFILT_WRITE, EV_ADD, &tags[1]);
        else if (round == 1)
            change(kq, sv[0], EVFILT_WRITE, EV_ENABLE, &tags[1]);
    }
    return 1;
}

static int check_high_fd(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur <= HIGH_FD && rl.rlim_max > HIGH_FD) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    FAIL_IF(send_bytes(sv[1], 6) < 0 || send_bytes(sv[0], 9) < 0, "setup: %s", strerror(errno));
    /* Register a low fd first: its entry must survive the table growing. */
    change(kq, sv[1], EVFILT_READ, EV_ADD, &tags[0]);
    int high = fcntl(sv[0], F_DUPFD, HIGH_FD);
    FAIL_IF(high < HIGH_FD, "cannot get fd >= %d (RLIMIT_NOFILE too low?): %s", HIGH_FD,
            strerror(errno));
    FAIL_IF(change(kq, high, EVFILT_READ, EV_ADD, &tags[1]) != 0, "EV_ADD of fd %d: %s", high,
            strerror(errno));
    int n = wait_for(1000);
    const struct kevent *h = find(ev, n, high, EVFILT_READ), *l = find(ev, n, sv[1], EVFILT_READ);
    FAIL_IF(n != 2 || h == NULL || l == NULL || h->udata != &tags[1] || l->udata != &tags[0] ||
                h->data != 7,
            "fd %d and fd %d: got %d kevents, udata or data wrong", high, sv[1], n);
    FAIL_IF(change(kq, high, EVFILT_READ, EV_DELETE, NULL) != 0, "EV_DELETE of fd %d: %s", high,
            strerror(errno));
    return 1;
}

static void on_alarm(int sig)
{
    (void)sig;
}

/* kevent(2) fails with EINTR when a signal arrives, and is not restarted; with
 * a NULL timeout it must really wait for that signal. */
static int check_eintr(void)
{
    struct sigaction sa;
    struct itimerval tick = {{0, 0}, {0, 100000}}; /* once, after 100 ms */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    FAIL_IF(sigaction(SIGALRM, &sa, NULL) < 0 || setitimer(ITIMER_REAL, &tick, NULL) < 0,
            "setup: %s", strerror(errno));
    double t0 = now_ms();
    errno = 0;
    int n = kevent(kq, NULL, 0, ev, 2, NULL);
    int err = errno;
    double took = now_ms() - t0;
    FAIL_IF(n != -1 || err != EINTR || took < 90,
            "want -1/EINTR after the 100 ms signal, got %d (%s) after %.1f ms", n, strerror(err),
            took);
    return 1;
}

/* kqueue(2): with nevents 0 the changes are applied and kevent() returns at
 * once, even with no timeout (the common "just apply changes" call). */
static int check_changes_only(void)
{
    struct kevent ch;
    char byte;
    /* Nothing readable during the call: a kevent() that waited would hang here. */
    FAIL_IF(read(sv[0], &byte, 1) != 1, "setup: %s", strerror(errno));
    EV_SET(&ch, sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
    FAIL_IF(kevent(kq, &ch, 1, NULL, 0, NULL) != 0, "kevent: %s", strerror(errno));
    FAIL_IF(send_bytes(sv[1], 1) < 0 || wait_events(kq, ev, 1, 1000) != 1,
            "the change was not applied");
    return 1;
}

/* A kqueue whose fd number is reused must start empty. */
static int check_recycled_kqueue(void)
{
    change(kq, sv[0], EVFILT_READ, EV_ADD, NULL);
    close(kq);
    int again = kqueue();
    FAIL_IF(again != kq, "kqueue() did not reuse fd %d (got %d); cannot check", kq, again);
    FAIL_IF(!refused(again, sv[0], EVFILT_READ, EV_ENABLE, ENOENT),
            "the old registration survived into the new kqueue");
    FAIL_IF(wait_events(again, ev, 2, 0) != 0, "the new kqueue reports events nobody asked for");
    FAIL_IF(change(again, sv[0], EVFILT_READ, EV_ADD, NULL) != 0 ||
                wait_events(again, ev, 2, 1000) != 1,
            "the new kqueue does not work: %s", strerror(errno));
    return 1;
}

/* Closing without EV_DELETE is the caller's mistake, but EV_ADD on the
 * recycled number must still work (epoll forgot the old registration). */
static int check_add_after_close(void)
{
    int b[2], old = sv[0];
    change(kq, old, EVFILT_READ, EV_ADD, NULL);
    close(old);
    FAIL_IF(unix_pair(b) < 0 || (b[0] != old && b[1] != old),
            "fd %d was not reused; cannot check", old);
    int fd = b[0] == old ? b[0] : b[1];
    FAIL_IF(change(kq, fd, EVFILT_READ, EV_ADD, &tags[0]) != 0,
            "EV_ADD on the recycled fd %d: %s", fd, strerror(errno));
    FAIL_IF(send_bytes(fd == b[0] ? b[1] : b[0], 1) < 0, "write: %s", strerror(errno));
    int n = wait_for(1000);
    FAIL_IF(n != 1 || ev[0].udata != &tags[0], "the recycled fd is not watched (%d kevents)", n);
    return 1;
}

static int check_bad_arguments(void)
{
    FAIL_IF(!refused(-1, 0, EVFILT_READ, EV_ADD, EBADF),
            "kevent on kq -1: want -1/EBADF, errno %s", strerror(errno));
    FAIL_IF(!refused(kq, 19999, EVFILT_READ, EV_ADD, EBADF),
            "EV_ADD of a closed fd: want -1/EBADF, errno %s", strerror(errno));
    /* a huge ident must be refused, not grow the table to it */
    FAIL_IF(!refused(kq, 2000000000, EVFILT_READ, EV_ADD, EBADF),
            "EV_ADD of fd 2000000000: want -1/EBADF, errno %s", strerror(errno));
    errno = 0;
    FAIL_IF(kevent(kq, NULL, 0, ev, 1, &(struct timespec){0, 1000000000L}) != -1 ||
                errno != EINVAL,
            "tv_nsec of 1e9: want -1/EINVAL, errno %s", strerror(errno));
    /* The changes are applied even when the time limit is then refused. */
    struct kevent ch;
    EV_SET(&ch, sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
    errno = 0;
    FAIL_IF(kevent(kq, &ch, 1, ev, 1, &(struct timespec){-1, 0}) != -1 || errno != EINVAL,
            "a negative timeout: want -1/EINVAL, errno %s", strerror(errno));
    FAIL_IF(wait_events(kq, ev, 1, 1000) != 1,
            "the change given with a bad timeout was not applied");
    close(sv[1]);
    FAIL_IF(!refused(kq, sv[1], EVFILT_WRITE, EV_ADD, EBADF),
            "EV_ADD of closed fd %d: want -1/EBADF, errno %s", sv[1], strerror(errno));
    return 1;
}

/* A change that fails leaves nothing behind: epoll(7) refuses regular files
 * (EPERM), after the shim has looked the pair up and grown its table. */
static int check_failed_add_leaves_nothing(void)
{
    FILE *tmp = tmpfile();
    FAIL_IF(tmp == NULL, "setup: %s", strerror(errno));
    int fd = fileno(tmp);
    FAIL_IF(!refused(kq, fd, EVFILT_READ, EV_ADD, EPERM),
            "EV_ADD of a regular file: want -1/EPERM from epoll, errno %s", strerror(errno));
    FAIL_IF(!refused(kq, fd, EVFILT_READ, EV_ENABLE, ENOENT),
            "the failed EV_ADD left a registration behind (errno %s)", strerror(errno));
    fclose(tmp);
    return 1;
}

/* kqueue(2) checks the descriptor before the pair: a closed fd is EBADF,
 * also for EV_DELETE. Native kqueue forgets an fd's pairs at close(); the
 * shim learns it at the next change that reaches epoll, then forgets both. */
static int check_closed_fd(void)
{
    int b[2], fd = sv[0];
    FAIL_IF(unix_pair(b) < 0, "setup: %s", strerror(errno));
    FAIL_IF(!refused(kq, b[0], EVFILT_READ, EV_DELETE, ENOENT),
            "EV_DELETE of an open fd's missing pair: want ENOENT, errno %s", strerror(errno));
    change(kq, fd, EVFILT_READ, EV_ADD, NULL);
    change(kq, fd, EVFILT_WRITE, EV_ADD | EV_DISABLE, NULL);
    close(fd); /* without EV_DELETE */
    FAIL_IF(!refused(kq, fd, EVFILT_READ, EV_DELETE, EBADF),
            "EV_DELETE of a closed fd's pair: want -1/EBADF, errno %s", strerror(errno));
    FAIL_IF(!refused(kq, fd, EVFILT_WRITE, EV_DELETE, EBADF),
            "the closed fd's other pair: want -1/EBADF, errno %s", strerror(errno));
    int never = dup(b[1]); /* a closed fd that never had a pair */
    FAIL_IF(never < 0 || close(never) < 0, "setup: %s", strerror(errno));
    FAIL_IF(!refused(kq, never, EVFILT_READ, EV_ENABLE, EBADF),
            "EV_ENABLE of a closed fd with no pair: want EBADF before ENOENT, errno %s",
            strerror(errno));
    /* the number is open again: nothing may survive */
    FAIL_IF(dup2(b[0], fd) != fd, "dup2: %s", strerror(errno));
    FAIL_IF(!refused(kq, fd, EVFILT_WRITE, EV_ENABLE, ENOENT),
            "a pair of the closed fd survived (errno %s)", strerror(errno));
    return 1;
}

/* 06-kqueue's watch(): both filters of fd in one call, one enabled and the
 * other disabled, in the order it gives them (READ first). */
static int switch_to(int fd, bool writing)
{
    struct kevent ch[2];
    EV_SET(&ch[0], fd, EVFILT_READ, writing ? EV_DISABLE : EV_ENABLE, 0, 0, &tags[0]);
    EV_SET(&ch[1], fd, EVFILT_WRITE, writing ? EV_ENABLE : EV_DISABLE, 0, 0, &tags[1]);
    return kevent(kq, ch, 2, NULL, 0, NULL);
}

/*
 * A connection switched from reading to writing and back, as 06-kqueue
 * does, stays watched, also while epoll would refuse to add an fd (ENOSPC,
 * ENOMEM): switching READ off before WRITE on leaves nothing enabled for a
 * moment, and the switch must not take the fd out of epoll and back in.
 */
static int check_switch_keeps_watching(void)
{
    char byte;
    FAIL_IF(read(sv[0], &byte, 1) != 1, "setup: %s", strerror(errno)); /* start with none */
    FAIL_IF(change(kq, sv[0], EVFILT_READ, EV_ADD | EV_ENABLE, &tags[0]) != 0 ||
                change(kq, sv[0], EVFILT_WRITE, EV_ADD | EV_DISABLE, &tags[1]) != 0,
            "EV_ADD: %s", strerror(errno));
    for (int round = 0; round < 4; round++) {
        failing_adds = round % 2 == 0 ? ENOSPC : ENOMEM;
        adds_made = 0;
        FAIL_IF(switch_to(sv[0], true) != 0, "round %d: the switch to writing failed: %s", round,
                strerror(errno));
        int n = wait_for(1000);
        FAIL_IF(n != 1 || ev[0].filter != EVFILT_WRITE,
                "round %d: after the switch to writing, %d kevents (want WRITE)", round, n);
        FAIL_IF(send_bytes(sv[1], 1) < 0 || switch_to(sv[0], false) != 0,
                "round %d: the switch back to reading failed: %s", round, strerror(errno));
        FAIL_IF((n = wait_for(1000)) != 1 || ev[0].filter != EVFILT_READ ||
                    read(sv[0], &byte, 1) != 1,
                "round %d: after the switch to reading, %d kevents (want READ)", round, n);
        FAIL_IF(adds_made != 0, "round %d: %d epoll ADDs to switch a watched fd (want none)",
                round, adds_made);
    }
    return 1;
}

/* A listener whose READ is disabled (06-kqueue's pause at the fd limit) and
 * enabled again is watched again, however short of memory epoll is. */
static int check_paused_listener_comes_back(void)
{
    struct sockaddr_in addr;
    int lfd = tcp_listener(&addr), client = socket(AF_INET, SOCK_STREAM, 0);
    FAIL_IF(lfd < 0 || client < 0, "setup: %s", strerror(errno));
    FAIL_IF(change(kq, lfd, EVFILT_READ, EV_ADD, NULL) != 0, "EV_ADD: %s", strerror(errno));
    failing_adds = ENOSPC;
    FAIL_IF(change(kq, lfd, EVFILT_READ, EV_DISABLE, NULL) != 0, "EV_DISABLE: %s", strerror(errno));
    FAIL_IF(connect(client, (struct sockaddr *)&addr, sizeof addr) < 0, "connect: %s",
            strerror(errno));
    FAIL_IF(wait_for(50) != 0, "a disabled listener reported a client");
    FAIL_IF(change(kq, lfd, EVFILT_READ, EV_ENABLE, NULL) != 0,
            "EV_ENABLE with epoll ADDs failing: %s", strerror(errno));
    FAIL_IF(wait_for(1000) != 1 || ev[0].ident != (uintptr_t)lfd,
            "the listener is not watched again after EV_ENABLE");
    return 1;
}

/* One thread waits in its kqueue while another makes kqueues, which grows
 * (moves) the shim's table of them. Under ThreadSanitizer (the tsan build
 * runs this test too) a table read and moved without a lock is a report. */
#define MORE_KQUEUES 300

static void *wait_in_turn(void *arg)
{
    struct kevent one;
    for (int i = 0; i < 20000; i++)
        if (kevent(*(int *)arg, NULL, 0, &one, 1, &(struct timespec){0, 0}) < 0)
            return (void *)1;
    return NULL;
}

static int check_kqueues_from_threads(void)
{
    int made[MORE_KQUEUES];
    pthread_t waiter;
    void *failed = NULL;
    FAIL_IF(pthread_create(&waiter, NULL, wait_in_turn, &kq) != 0, "setup: %s", strerror(errno));
    int n = 0;
    while (n < MORE_KQUEUES && (made[n] = kqueue()) >= 0)
        n++;
    pthread_join(waiter, &failed);
    for (int i = 0; i < n; i++)
        close(made[i]);
    FAIL_IF(n < MORE_KQUEUES, "kqueue() number %d: %s", n + 1, strerror(errno));
    return failed ? fail("kevent() failed in the waiting thread") : 1;
}

/* ---- main --------------------------------------------------------------- */

/* Wait for the child, killing it after CHECK_LIMIT_MS; its wait status, or -1. */
static int reap(pid_t pid)
{
    int status;
    for (int waited = 0; waited < CHECK_LIMIT_MS; waited += 10) {
        pid_t done = waitpid(pid, &status, WNOHANG);
        if (done != 0)
            return done == pid ? status : -1;
        nanosleep(&(struct timespec){0, 10000000L}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

/* Run one check in a child, with its kq and sv pair made (TCP when `tcp`);
 * the child sends its reason for failing up a pipe. */
static int run(const char *name, int (*check)(void), bool tcp)
{
    int up[2] = {-1, -1};
    pid_t pid = pipe(up) == 0 ? fork() : -1;
    if (pid == 0) {
        close(up[0]);
        kq = kqueue();
        bool made = kq >= 0 && (tcp ? tcp_pair(sv) == 0
                                    : unix_pair(sv) == 0 && send_bytes(sv[1], 1) == 0);
        int ok = made ? check() : fail("setup: %s", strerror(errno));
        if (!ok && write(up[1], why, strlen(why)) < 0)
            ok = 0;
        exit(ok ? 0 : 1); /* exit(), not _exit(): LeakSanitizer checks the child */
    }
    int status = pid > 0 ? reap(pid) : -1;
    close(up[1]);
    ssize_t len = read(up[0], why, sizeof why - 1);
    close(up[0]);
    why[len > 0 ? len : 0] = '\0';
    if (status == 0) {
        printf("PASS %s\n", name);
        return 1;
    }
    if (pid < 0)
        printf("FAIL %s: pipe or fork: %s\n", name, strerror(errno));
    else if (status == -1)
        printf("FAIL %s: still running after %d ms, killed\n", name, CHECK_LIMIT_MS);
    else if (WIFSIGNALED(status))
        printf("FAIL %s: killed by signal %d\n", name, WTERMSIG(status));
    else if (WEXITSTATUS(status) == 1 && why[0] != '\0')
        printf("FAIL %s: %s\n", name, why);
    else
        printf("FAIL %s: exit status %d (a sanitizer report above?)\n", name, WEXITSTATUS(status));
    return 0;
}

/* Most checks leave `tcp` out (false). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct {
    const char *name;
    int (*check)(void);
    bool tcp; /* sv is a loopback TCP pair, not a Unix one with a byte to read */
} checks[] = {
    {"read and write are two kevents with their own udata", check_read_write_split},
    {"EV_ADD twice is idempotent and updates udata", check_add_idempotent},
    {"EV_DISABLE stops reports, EV_ENABLE restores, EV_ADD does not", check_disable_enable},
    {"EV_ADD with EV_ENABLE / EV_DISABLE; EV_ENABLE wins", check_add_with_enable_disable},
    {"every change to a pair replaces its udata", check_udata_follows_changes},
    {"EV_DELETE removes; a missing pair is ENOENT", check_delete},
    {"an error stops the wait, the other changes stay", check_errors_and_changes_in_one_call},
    {"an error with no room: -1, later changes not applied", check_errors_without_room},
    {"EV_RECEIPT reports every change", check_receipt},
    {"unsupported flags, fflags and filters are EINVAL", check_unsupported},
    {"EV_CLEAR reports a change once, and changes keep it", check_clear_reports_changes_once},
    {"EV_CLEAR: both pairs of an fd or neither (EPOLLET)", check_clear_is_per_fd},
    {"EV_EOF while data is pending after SHUT_WR", check_eof_with_pending_data, true},
    {"the peer's FIN: EV_EOF on READ, not on WRITE", check_half_close_eof_read_only, true},
    {"EV_EOF after a reset, the error left for read()", check_eof_error_on_reset, true},
    {"EV_EOF on WRITE to a pipe without reader", check_write_eof_on_pipe},
    {"READ data is FIONREAD, WRITE data the free space", check_data_is_fionread, true},
    {"no EV_EOF from FIONREAD 0 alone", check_no_eof_from_empty_read},
    {"READ data on a listener is 1", check_listener_data},
    {"timeout 0 returns at once", check_timeout_zero},
    {"nevents 0 applies changes and does not wait", check_changes_only},
    {"a timeout waits, 1 ns rounds up", check_timeout_waits},
    {"nevents caps the kevents returned", check_nevents_limit},
    {"what the eventlist had no room for comes next call", check_full_eventlist_keeps_rest},
    {"a kept kevent is dropped if deleted, disabled or not ready",
     check_kept_kevent_follows_changes},
    {"fd above 10000 works and the table grows", check_high_fd},
    {"a signal interrupts a NULL-timeout wait with EINTR", check_eintr},
    {"a recycled kqueue fd starts clean", check_recycled_kqueue},
    {"EV_ADD works on an fd number closed without EV_DELETE", check_add_after_close},
    {"bad kqueue, closed or huge fd, bad timeout", check_bad_arguments},
    {"a failed EV_ADD leaves nothing behind", check_failed_add_leaves_nothing},
    {"a closed fd is EBADF before ENOENT, and forgotten", check_closed_fd},
    {"read <-> write switches keep the fd watched, epoll ADD failing", check_switch_keeps_watching},
    {"a disabled listener enabled again is watched, epoll ADD failing",
     check_paused_listener_comes_back},
    {"kqueues made in one thread while another waits in its own", check_kqueues_from_threads},
};

int main(void)
{
    int passed = 0, failed = 0;
    setvbuf(stdout, NULL, _IOLBF, 0); /* nothing left buffered to fork */
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        if (run(checks[i].name, checks[i].check, checks[i].tcp))
            passed++;
        else
            failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
