/*
 * 03-threads: one thread per client.
 *
 * The idea: 02's fork() copied a whole process for each client. A thread is
 * lighter: it shares the server's memory and file table, and costs a stack
 * and a kernel task. serve() is 01's, unchanged; only the way it is started
 * differs.
 *
 * The wall: each thread reserves a stack (glibc's default is the soft
 * RLIMIT_STACK, 8 MiB of address space on most Linux systems; macOS gives
 * 512 KiB), needs a kernel task, and is scheduled on its own. At 10 000
 * clients and 8 MiB that is 80 GB of virtual memory, thousands of context
 * switches, and limits such as vm.max_map_count and kernel.threads-max:
 *
 *     make wall      (runs: loadgen hold -n 10000 --server-pid PID)
 *
 * reports memory and threads; -s STACK_KIB shows how much is the stack.
 *
 * Next: 04-select serves every client from one thread, which only wakes up
 * when some socket is ready.
 */
#include "blocking.h"

#include <limits.h>
#include <pthread.h>

#define BUF_SIZE 16384

/* serve() keeps BUF_SIZE on its stack; below this a thread would overflow. */
#define MIN_STACK_KIB 64

/* One per live connection, on a list so that SIGTERM can reach them all. */
typedef struct conn {
    int fd;
    struct conn *prev, *next;
} conn_t;

static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conns_changed = PTHREAD_COND_INITIALIZER;
static conn_t *conns;     /* live connections, guarded by conns_lock */
static size_t stack_size; /* -s, in bytes; 0: the system default */
static pthread_attr_t thread_attr; /* how every client thread is made */

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

/*
 * Unlink, close and free under the lock: once main sees the list empty, no
 * worker holds memory or touches anything shared, so main may exit() (and
 * the leak checker run) while the last ones are still returning.
 */
static void remove_conn(conn_t *conn)
{
    pthread_mutex_lock(&conns_lock);
    if (conn->prev)
        conn->prev->next = conn->next;
    else
        conns = conn->next;
    if (conn->next)
        conn->next->prev = conn->prev;
    close(conn->fd); /* under the lock: main never shuts down a recycled fd */
    free(conn);
    pthread_cond_broadcast(&conns_changed);
    pthread_mutex_unlock(&conns_lock);
}

/*
 * The thread owns its conn_t. Handing it a pointer to the accept loop's fd
 * variable instead would race: the loop may overwrite it with the next
 * client's fd before this thread has read it.
 */
static void *client_thread(void *arg)
{
    conn_t *conn = arg;
    serve(conn->fd);
    remove_conn(conn);
    return NULL;
}

/* On the list before the thread starts (it may finish at once), but the
 * lock is not held across pthread_create(), which can take a while. */
static void spawn_thread(int fd)
{
    conn_t *conn = malloc(sizeof *conn);
    if (!conn) {
        log_msg("fd %d: out of memory (client dropped)", fd);
        close(fd);
        return;
    }
    pthread_mutex_lock(&conns_lock);
    *conn = (conn_t){.fd = fd, .next = conns};
    if (conns)
        conns->prev = conn;
    conns = conn;
    pthread_mutex_unlock(&conns_lock);

    pthread_t tid;
    int err = pthread_create(&tid, &thread_attr, client_thread, conn);
    if (err != 0) {
        /* EAGAIN here is the wall: the thread limit, max_map_count, memory. */
        errno = err;
        log_errno("fd %d: pthread_create (client dropped%s)", fd, task_limit(err, true));
        remove_conn(conn);
    }
}

/*
 * Shutting a socket down wakes the thread blocked in read() or write() on it,
 * which then cleans up as if the client had left. Wait until all have.
 */
static void stop_threads(void)
{
    pthread_mutex_lock(&conns_lock);
    for (conn_t *c = conns; c; c = c->next)
        shutdown(c->fd, SHUT_RDWR);
    while (conns)
        pthread_cond_wait(&conns_changed, &conns_lock);
    pthread_mutex_unlock(&conns_lock);
}

/*
 * Only the main thread may take SIGINT/SIGTERM, and this is load-bearing,
 * not tidiness: the stop works by the handler interrupting the accept() of
 * the thread it runs on (blocking.h, shut_listener_on_stop). Run on a
 * worker, it would leave main blocked in accept(). Threads inherit the mask
 * in force when they are created, so it is set around pthread_create().
 */
static void block_stop_signals(sigset_t *old_mask)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, old_mask);
}

/*
 * Every thread is detached (nobody joins it) and, with -s, gets that stack,
 * rounded up to whole pages: glibc takes any size from PTHREAD_STACK_MIN up,
 * but some systems (macOS) refuse one that is not a page multiple.
 */
static void init_thread_attr(void)
{
    pthread_attr_init(&thread_attr);
    pthread_attr_setdetachstate(&thread_attr, PTHREAD_CREATE_DETACHED);
    if (stack_size == 0)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t rounded = (stack_size + page - 1) / page * page;
    int err = pthread_attr_setstacksize(&thread_attr, rounded);
    if (err != 0) {
        errno = err;
        fatal("pthread_attr_setstacksize %zu", rounded);
    }
}

static int on_stack_option(int opt, const char *arg)
{
    char *end;
    long kib = strtol(arg, &end, 10);
    if (opt != 's' || *end != '\0' || kib < MIN_STACK_KIB || kib > 1024 * 1024)
        return -1;
    stack_size = (size_t)kib * 1024;
    if (stack_size < PTHREAD_STACK_MIN)
        stack_size = PTHREAD_STACK_MIN;
    return 0;
}

int main(int argc, char **argv)
{
    server_options_t opts;
    parse_options(argc, argv, &opts, "s:", " [-s STACK_KIB (64 or more)]", on_stack_option);
    install_signal_handlers();
    init_thread_attr();
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
        sigset_t old_mask;
        block_stop_signals(&old_mask);
        spawn_thread(fd);
        pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    }

    stop_threads();
    pthread_attr_destroy(&thread_attr);
    close(listen_fd);
    close_stop_pipe();
    return 0;
}
