/*
 * 01-blocking: one client at a time.
 *
 * The idea: accept a connection, echo everything it sends until it hangs up,
 * then accept the next. Every call blocks, so the code is as plain as C gets
 * and the kernel does all the waiting for us.
 *
 * The wall: while the server sits in read() for one client, nobody else is
 * served. The kernel still completes other clients' handshakes (connect()
 * succeeds from the listen backlog), so they look connected, yet their bytes
 * wait until the first client leaves. One idle client freezes everyone:
 *
 *     make wall      (runs: loadgen stall --hold 1.5)
 *
 * reports client B waiting about 1.5 s, answered right after A closes.
 *
 * Next: 02-fork gives each client its own process, so one can idle while
 * another is served.
 */
#include "net.h"

/* One read's worth; larger only costs stack, smaller only costs syscalls. */
#define BUF_SIZE 16384

/* Echo until the peer finishes sending (read returns 0) or fails. */
static void serve(int fd)
{
    char buf[BUF_SIZE];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n == 0)
            return; /* the peer shut down its side; we owe it nothing more */
        if (n < 0) {
            if (errno == EINTR && !stop_requested)
                continue;
            if (errno != EINTR)
                warn("fd %d: read: %s", fd, strerror(errno));
            return;
        }
        if (write_all(fd, buf, (size_t)n) < 0) {
            if (!stop_requested)
                warn("fd %d: write: %s", fd, strerror(errno));
            return;
        }
    }
}

int main(int argc, char **argv)
{
    server_options_t opts;
    parse_options(argc, argv, &opts, NULL, NULL, NULL);
    install_signal_handlers();
    raise_open_file_limit(opts.verbose);
    int listen_fd = open_listener(&opts);
    shut_listener_on_stop(listen_fd);
    announce_listening(listen_fd);

    while (!stop_requested) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0) {
            if (stop_requested)
                break;
            /* A signal, or a client that gave up while queued: keep going. */
            if (errno != EINTR && errno != ECONNABORTED)
                warn("accept: %s", strerror(errno));
            continue;
        }
        if (opts.verbose)
            warn("fd %d: connected", fd);
        shut_client_on_stop(fd);
        if (!stop_requested) /* a signal before the line above missed fd */
            serve(fd);
        shut_client_on_stop(-1);
        close(fd);
        if (opts.verbose)
            warn("fd %d: closed", fd);
    }

    close(listen_fd);
    close_stop_pipe();
    return 0;
}
