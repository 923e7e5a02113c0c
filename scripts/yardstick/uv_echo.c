/*
 * uv_echo.c - the reproduction's yardstick: the same echo server written on
 * libuv, the event loop under Node.js, so that 07-epoll's cost per message
 * and its memory can be read against a widely used loop on the same machine.
 * Not a rung and not part of the CMake build: scripts/reproduce.sh compiles
 * it with `cc -O2 uv_echo.c -luv` when libuv is installed.
 *
 *   uv_echo [-p PORT] [-b ADDR] [-h]
 *
 * Same contract as the servers where scripts rely on it: `-p 0` lets the
 * kernel pick the port, it prints `listening on ADDR:PORT` once listening,
 * and SIGINT/SIGTERM close everything and exit 0.
 *
 * It is built the way 07-epoll is, so that the comparison is of the loops
 * and not of two designs: bytes are read into one buffer shared by the whole
 * loop and written straight back (uv_try_write); only what the peer did not
 * take is copied to memory owned by that write, and reading stops until it is
 * gone (backpressure). An idle connection costs its handle only.
 */
/* POSIX.1-2008: getopt, and the pthread types uv.h needs under -std=c11. */
#define _POSIX_C_SOURCE 200809L

#include <uv.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Same size as the rungs' read buffer. */
enum { READ_BUFFER_SIZE = 64 * 1024 };
/* listen(2) caps it at net.core.somaxconn; too small a backlog turns a
 * burst of 10 000 connects into 1-second SYN retries. */
enum { LISTEN_BACKLOG = 4096 };

typedef struct {
    uv_tcp_t tcp;           /* first: the handle's address is the conn's */
    uv_shutdown_t shutdown; /* sends our FIN once owed bytes are written */
    bool eof;               /* the peer has sent its FIN */
} conn_t;

/* A write of the bytes the peer did not take at once; owns a copy of them. */
typedef struct {
    uv_write_t req;
    char data[];
} pending_t;

static uv_loop_t *loop;
static uv_tcp_t listener;
static uv_signal_t on_term, on_int;
static char read_buffer[READ_BUFFER_SIZE];

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

static void on_closed(uv_handle_t *handle)
{
    if (handle->data) /* connections carry their conn_t; the rest are static */
        free(handle->data);
}

static void close_conn(conn_t *c)
{
    if (!uv_is_closing((uv_handle_t *)&c->tcp))
        uv_close((uv_handle_t *)&c->tcp, on_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)status; /* closing either way */
    close_conn(req->data);
}

static void on_written(uv_write_t *req, int status)
{
    conn_t *c = req->handle->data;
    free(req); /* the pending_t: req is its first member */
    if (status < 0) {
        close_conn(c);
        return;
    }
    /* Drained: take more bytes from this peer again. */
    if (!c->eof && !uv_is_closing((uv_handle_t *)&c->tcp) &&
        uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) == 0)
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

/* Write back what was read; keep only what the kernel did not take. */
static void echo(conn_t *c, const char *bytes, size_t len)
{
    uv_stream_t *s = (uv_stream_t *)&c->tcp;
    uv_buf_t buf = uv_buf_init((char *)bytes, (unsigned)len);
    int sent = uv_try_write(s, &buf, 1);
    if (sent == (int)len)
        return;
    if (sent < 0 && sent != UV_EAGAIN) {
        close_conn(c);
        return;
    }
    size_t done = sent > 0 ? (size_t)sent : 0;
    pending_t *p = malloc(sizeof *p + len - done);
    if (!p) {
        fprintf(stderr, "uv_echo: out of memory; closing a connection\n");
        close_conn(c);
        return;
    }
    memcpy(p->data, bytes + done, len - done);
    buf = uv_buf_init(p->data, (unsigned)(len - done));
    if (uv_write(&p->req, s, &buf, 1, on_written) < 0) {
        free(p);
        close_conn(c);
        return;
    }
    uv_read_stop(s); /* backpressure: a peer that does not read is not read */
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    (void)handle;
    (void)suggested;
    /* One buffer for the whole loop: on_read consumes it before the next read. */
    *buf = uv_buf_init(read_buffer, sizeof read_buffer);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    conn_t *c = stream->data;
    if (nread > 0) {
        echo(c, buf->base, (size_t)nread);
    } else if (nread == UV_EOF) {
        /* Half-close: finish what is owed, then FIN, then close. */
        c->eof = true;
        uv_read_stop(stream);
        c->shutdown.data = c;
        if (uv_shutdown(&c->shutdown, stream, on_shutdown) < 0)
            close_conn(c);
    } else if (nread < 0) {
        close_conn(c); /* ECONNRESET and the like: this peer only */
    }
}

static void on_connection(uv_stream_t *server, int status)
{
    if (status < 0) {
        fprintf(stderr, "uv_echo: accept: %s\n", uv_strerror(status));
        return;
    }
    conn_t *c = calloc(1, sizeof *c);
    if (!c) {
        fprintf(stderr, "uv_echo: out of memory; a connection waits in the backlog\n");
        return;
    }
    uv_tcp_init(loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0 ||
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) < 0)
        close_conn(c);
}

static void close_any(uv_handle_t *handle, void *arg)
{
    (void)arg;
    if (!uv_is_closing(handle))
        uv_close(handle, on_closed);
}

/* SIGINT/SIGTERM: close every handle; uv_run returns once they are gone. */
static void on_signal(uv_signal_t *handle, int signum)
{
    (void)handle;
    (void)signum;
    uv_walk(loop, close_any, NULL);
}

/* 10 000 connections need more than the usual soft limit of 1024 fds. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            perror("uv_echo: setrlimit RLIMIT_NOFILE");
    }
}

static void usage_exit(const char *why)
{
    if (why)
        fprintf(stderr, "uv_echo: %s\n", why);
    fprintf(why ? stderr : stdout, "usage: uv_echo [-p PORT] [-b ADDR] [-h]\n");
    exit(why ? 2 : 0);
}

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "uv_echo: %s: %s\n", what, uv_strerror(rc));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    const char *addr = "127.0.0.1";
    long port = 9999;
    int opt;
    while ((opt = getopt(argc, argv, "p:b:h")) != -1) {
        char *end;
        switch (opt) {
        case 'p':
            port = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || port < 0 || port > 65535)
                usage_exit("-p wants a port number from 0 to 65535");
            break;
        case 'b': addr = optarg; break;
        case 'h': usage_exit(NULL); break;
        default: usage_exit("unknown option");
        }
    }
    if (optind != argc)
        usage_exit("unexpected argument");

    signal(SIGPIPE, SIG_IGN); /* a vanished peer is an error return, not a signal */
    raise_fd_limit();
    loop = uv_default_loop();

    struct sockaddr_in sin;
    if (uv_ip4_addr(addr, (int)port, &sin) < 0)
        usage_exit("-b wants an IPv4 address");
    check(uv_tcp_init(loop, &listener), "uv_tcp_init");
    check(uv_tcp_bind(&listener, (const struct sockaddr *)&sin, 0), "bind");
    check(uv_listen((uv_stream_t *)&listener, LISTEN_BACKLOG, on_connection), "listen");

    struct sockaddr_in bound;
    int len = sizeof bound;
    check(uv_tcp_getsockname(&listener, (struct sockaddr *)&bound, &len), "getsockname");
    printf("listening on %s:%d\n", addr, ntohs(bound.sin_port));
    fflush(stdout);

    uv_signal_init(loop, &on_term);
    uv_signal_init(loop, &on_int);
    uv_signal_start(&on_term, on_signal, SIGTERM);
    uv_signal_start(&on_int, on_signal, SIGINT);

    uv_run(loop, UV_RUN_DEFAULT);
    check(uv_loop_close(loop), "uv_loop_close");
    return 0;
}
