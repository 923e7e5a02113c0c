/*
 * fake_server - an echo server that misbehaves on purpose, to test loadgen.
 *
 *   fake_server [-p PORT] --mode MODE [--every K] [--after BYTES]
 *
 * It echoes like the real rungs, except that every K-th connection it
 * accepts (the K-th, 2K-th, ...; K defaults to 1: all of them) meets MODE
 * once BYTES bytes of it have been echoed (default 0):
 *
 *   echo     nothing: a correct echo server
 *   corrupt  byte number BYTES of the echo is flipped; the rest is echoed
 *   reset    the connection is reset (RST: SO_LINGER 0, then close)
 *   close    the connection is closed (FIN)
 *   stall    the connection is neither read nor answered again, but kept open
 *   silent   every connection is read and never answered (K and BYTES unused)
 *   exit     the whole server exits, status 0, once BYTES bytes have been
 *            echoed over all connections together (K unused)
 *
 * Exact byte offsets make every outcome independent of timing: with -n 20,
 * --every 10 and --after 1000, two connections break a little into the
 * ping-pong, after their first echo, whatever the speed of the machine.
 *
 * Like the rungs it prints "listening on 127.0.0.1:PORT" once it listens,
 * and exits 0 on SIGTERM. One thread and poll(2); accepted sockets block,
 * which is enough for loadgen's small messages.
 */
#define _GNU_SOURCE /* POSIX declarations under strict -std=c11 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Connections open at once; loadgen's tests use a few dozen. */
#define MAX_CONNS 1024

typedef enum { MODE_ECHO, MODE_CORRUPT, MODE_RESET, MODE_CLOSE, MODE_STALL, MODE_SILENT,
               MODE_EXIT } fault_mode_t;

static const char *const MODE_NAMES[] = {"echo",  "corrupt", "reset", "close",
                                         "stall", "silent",  "exit"};

typedef struct {
    int fd;            /* -1: slot free */
    bool targeted;     /* one of every K-th: MODE applies to it */
    bool stalled;      /* stall: no longer watched */
    unsigned long echoed; /* bytes of it echoed so far */
} conn_t;

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static _Noreturn void usage(const char *why)
{
    fprintf(stderr, "fake_server: %s\nusage: fake_server [-p PORT] --mode "
                    "echo|corrupt|reset|close|stall|silent|exit [--every K] [--after BYTES]\n",
            why);
    exit(2);
}

static int listen_on(int port)
{
    int one = 1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, SOMAXCONN) < 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &len) < 0) {
        perror("fake_server: listen");
        exit(1);
    }
    printf("listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
    fflush(stdout);
    return fd;
}

static bool write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        buf += n;
        len -= (size_t)n;
    }
    return true;
}

static void drop(conn_t *c, bool reset)
{
    if (reset) {
        struct linger hard = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    }
    close(c->fd);
    c->fd = -1;
}

/* What happens to a targeted connection once `after` bytes are echoed. */
static void meet_mode(conn_t *c, fault_mode_t mode)
{
    if (mode == MODE_RESET || mode == MODE_CLOSE)
        drop(c, mode == MODE_RESET);
    else if (mode == MODE_STALL)
        c->stalled = true;
}

static unsigned long total_echoed;

/* Read what the client sent (never past the trigger offset) and echo it. */
static void on_readable(conn_t *c, fault_mode_t mode, unsigned long after)
{
    char buf[4096];
    size_t want = sizeof buf;
    bool at_trigger = c->targeted && (mode == MODE_RESET || mode == MODE_CLOSE ||
                                      mode == MODE_STALL);
    if (at_trigger && after - c->echoed < want)
        want = after - c->echoed;
    ssize_t n = read(c->fd, buf, want);
    if (n < 0 && errno == EINTR)
        return;
    if (n <= 0) {
        drop(c, false);
        return;
    }
    if (mode == MODE_SILENT)
        return;
    if (c->targeted && mode == MODE_CORRUPT && c->echoed <= after &&
        after < c->echoed + (unsigned long)n)
        buf[after - c->echoed] ^= 0x5a;
    if (!write_all(c->fd, buf, (size_t)n)) {
        drop(c, false);
        return;
    }
    c->echoed += (unsigned long)n;
    total_echoed += (unsigned long)n;
    if (mode == MODE_EXIT && total_echoed >= after)
        exit(0); /* the kernel closes every connection, as when a server dies */
    if (at_trigger && c->echoed >= after)
        meet_mode(c, mode);
}

static void on_accept(int listen_fd, conn_t *conns, fault_mode_t mode, unsigned long every,
                      unsigned long after, unsigned long *accepted)
{
    int fd = accept(listen_fd, NULL, NULL);
    if (fd < 0)
        return;
    for (int i = 0; i < MAX_CONNS; i++) {
        if (conns[i].fd >= 0)
            continue;
        ++*accepted;
        conns[i] = (conn_t){.fd = fd, .targeted = *accepted % every == 0};
        if (conns[i].targeted && after == 0 && mode != MODE_CORRUPT && mode != MODE_EXIT)
            meet_mode(&conns[i], mode);
        return;
    }
    close(fd); /* full: more than the tests ever open */
}

static fault_mode_t parse_mode(const char *s)
{
    for (size_t i = 0; i < sizeof MODE_NAMES / sizeof MODE_NAMES[0]; i++)
        if (strcmp(s, MODE_NAMES[i]) == 0)
            return (fault_mode_t)i;
    usage("unknown mode");
}

static unsigned long parse_number(const char *s, unsigned long min)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s ? s : "", &end, 10);
    if (!s || *s == '\0' || *end != '\0' || errno || v < min)
        usage("bad number");
    return v;
}

int main(int argc, char **argv)
{
    int port = 9999;
    fault_mode_t mode = MODE_ECHO;
    unsigned long every = 1, after = 0, accepted = 0;
    for (int i = 1; i < argc; i += 2) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "-p") == 0)
            port = (int)parse_number(value, 0);
        else if (strcmp(argv[i], "--mode") == 0 && value)
            mode = parse_mode(value);
        else if (strcmp(argv[i], "--every") == 0)
            every = parse_number(value, 1);
        else if (strcmp(argv[i], "--after") == 0)
            after = parse_number(value, 0);
        else
            usage("unknown argument");
    }
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: poll() must wake */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    static conn_t conns[MAX_CONNS];
    static struct pollfd fds[MAX_CONNS + 1];
    for (int i = 0; i < MAX_CONNS; i++)
        conns[i].fd = -1;
    int listen_fd = listen_on(port);
    while (!stop_requested) {
        fds[0] = (struct pollfd){.fd = listen_fd, .events = POLLIN};
        for (int i = 0; i < MAX_CONNS; i++) /* negative fds are skipped by poll */
            fds[i + 1] = (struct pollfd){.fd = conns[i].stalled ? -1 : conns[i].fd,
                                         .events = POLLIN};
        if (poll(fds, MAX_CONNS + 1, -1) < 0)
            continue; /* EINTR: the loop condition decides */
        if (fds[0].revents)
            on_accept(listen_fd, conns, mode, every, after, &accepted);
        for (int i = 0; i < MAX_CONNS; i++)
            if (fds[i + 1].revents && conns[i].fd >= 0)
                on_readable(&conns[i], mode, after);
    }
    for (int i = 0; i < MAX_CONNS; i++)
        if (conns[i].fd >= 0)
            close(conns[i].fd);
    close(listen_fd);
    return 0;
}
