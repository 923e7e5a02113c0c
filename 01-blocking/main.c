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
/*
 * blocking.h, with net.h under it, parses the options, opens the listener,
 * prints the "listening on" line and sets up the stop signals: skip it on a
 * first read. Three lessons of its own are worth a look later: write_all()
 * (write() may send less than asked), shut_listener_on_stop() (how a signal
 * ends an accept() it would otherwise miss) and accept_failed() (out of
 * descriptors, retrying at once would spin). The self-pipe: net.h, stop_pipe.
 */
#include "blocking.h"

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
                log_errno("fd %d: read", fd);
            return;
        }
        if (write_all(fd, buf, (size_t)n) < 0) {
            if (!stop_requested)
                log_errno("fd %d: write", fd);
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
    announce_listening(listen_fd);
    shut_listener_on_stop(listen_fd); /* a stop wakes accept(): see blocking.h */

    while (!stop_requested) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0) {
            if (stop_requested)
                break;
            /* A signal, or a client that failed while queued: go on (net.h). */
            if (!accept_retry_at_once(errno))
                accept_failed(errno); /* EMFILE...: wait a little (blocking.h) */
            continue;
        }
        if (opts.verbose)
            log_msg("fd %d: connected", fd);
        shut_client_on_stop(fd);
        if (!stop_requested) /* a signal before the line above missed fd */
            serve(fd);
        shut_client_on_stop(-1);
        close(fd);
        if (opts.verbose)
            log_msg("fd %d: closed", fd);
    }

    close(listen_fd);
    close_stop_pipe();
    return 0;
}
