/*
 * 02-fork: one process per client.
 *
 * The idea: keep 01's plain blocking serve(), but run it in a child process
 * made by fork() for each accepted connection. The parent only accepts; an
 * idle client now blocks nobody but its own child.
 *
 * The wall: every client costs a whole process: a fork (page tables copied,
 * a pid, a kernel task), its own stack and heap, and a context switch to
 * reach it. The memory and setup time per connection grow with the number of
 * clients, and the pid and process limits cap them:
 *
 *     make wall      (runs: loadgen hold -n 1000 --server-pid PID)
 *
 * reports the server's memory summed over all its processes.
 *
 * Next: 03-threads shares one address space between the clients.
 */
#include "blocking.h"

#include <sys/wait.h>

#define BUF_SIZE 16384

/*
 * The parent remembers its children so that on SIGTERM it signals only
 * processes it created. pid_max is 32768 by default on Linux; a client
 * arriving while the table is full is refused, like a failed fork().
 */
#define MAX_CHILDREN 16384

static pid_t children[MAX_CHILDREN]; /* live child pids, 0 = free slot */

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

static int free_slot(void)
{
    for (int i = 0; i < MAX_CHILDREN; i++)
        if (children[i] == 0)
            return i;
    return -1;
}

static void forget_child(pid_t pid)
{
    for (int i = 0; i < MAX_CHILDREN; i++)
        if (children[i] == pid) {
            children[i] = 0;
            return;
        }
}

/*
 * Several children can exit while one SIGCHLD is pending, and signals do not
 * queue, so reap in a loop until none is left. waitpid() may clobber errno
 * under the code we interrupted: save and restore it.
 */
static void on_sigchld(int sig)
{
    (void)sig;
    int saved = errno;
    pid_t pid;
    while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
        forget_child(pid);
    errno = saved;
}

/*
 * No SA_RESTART: a child exiting then interrupts accept() with EINTR, and the
 * loop, which takes that as "go round", checks stop_requested on the way. A
 * restarted accept() would not: a SIGTERM caught while this handler runs
 * would wait for the next client (net.h's shut_listener_on_stop() also
 * covers that case, but there is no need to widen the gap).
 */
static void install_reaper(void)
{
    struct sigaction sa = {.sa_handler = on_sigchld};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NOCLDSTOP;
    if (sigaction(SIGCHLD, &sa, NULL) < 0)
        fatal("sigaction SIGCHLD");
}

/* In the child: serve one client with the default signal dispositions. */
static void run_child(int listen_fd, int fd, const sigset_t *old_mask)
{
    signal(SIGINT, SIG_DFL); /* the parent's stop flag means nothing here */
    signal(SIGTERM, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    sigprocmask(SIG_SETMASK, old_mask, NULL);
    close(listen_fd); /* only the parent accepts */
    close_stop_pipe();
    serve(fd);
    close(fd);
    exit(0);
}

/*
 * Block SIGCHLD (and the stop signals) from choosing a slot until the pid is
 * in it: otherwise a child that exits at once could be reaped, and its pid
 * recycled, before we record it.
 */
static void spawn_child(int listen_fd, int fd)
{
    sigset_t block, old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old_mask);

    int slot = free_slot();
    pid_t pid = slot < 0 ? -1 : fork();
    if (pid == 0)
        run_child(listen_fd, fd, &old_mask);
    if (slot < 0)
        log_msg("fd %d: %d children already (client dropped)", fd, MAX_CHILDREN);
    else if (pid < 0)
        log_errno("fd %d: fork (client dropped%s)", fd, task_limit(errno, false));
    else
        children[slot] = pid;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
}

/* On SIGTERM: end the children we made and wait until every one is gone. */
static void stop_children(void)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, NULL); /* the table is ours alone now */
    for (int i = 0; i < MAX_CHILDREN; i++)
        if (children[i] > 0)
            kill(children[i], SIGTERM);
    for (int i = 0; i < MAX_CHILDREN; i++)
        if (children[i] > 0) {
            waitpid(children[i], NULL, 0);
            children[i] = 0;
        }
}

int main(int argc, char **argv)
{
    server_options_t opts;
    parse_options(argc, argv, &opts, NULL, NULL, NULL);
    install_signal_handlers();
    install_reaper();
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
        spawn_child(listen_fd, fd);
        close(fd); /* the child has its own copy; ours would keep the client open */
    }

    stop_children();
    close(listen_fd);
    close_stop_pipe();
    return 0;
}
