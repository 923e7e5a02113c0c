/*
 * loadgen - the load client that reproduces the I/O ladder's measurements.
 *
 *   loadgen stall [-p PORT] [--hold SECONDS]
 *       Client A connects and sends nothing for --hold seconds; client B
 *       connects right after it and sends one line. How long does B wait
 *       for its echo, and how close to A's leaving does it come? A blocking
 *       server answers B only once A has gone.
 *   loadgen c10k  [-p PORT] -n CONNECTIONS [--duration S] [--size BYTES] [--rate R]
 *       Open N connections, keep them all open, and let every one of them
 *       ping-pong --size-byte messages for --duration seconds: closed-loop
 *       ("how many can it hold"), or with --rate open-loop, R messages per
 *       second on a fixed schedule, each round trip timed from when it was
 *       due (pool.h).
 *   loadgen scan  [-p PORT] --idle 0,100,1000,10000 [--duration S]
 *       One active connection's round trip beside each number of idle
 *       ones: it grows with the idle count under select and poll (O(n) per
 *       wakeup) and stays flat under kqueue and epoll (O(ready)).
 *   loadgen hold  [-p PORT] -n CONNECTIONS [--duration S]
 *       Open N connections, one echo each, then all sit idle: what does an
 *       idle connection cost the server in memory and CPU?
 *
 * Every echoed byte is checked against what was sent. The exit status is 0
 * when the run measured what it was asked to, 1 when it could not (refused,
 * reset, timed out, bytes differed; one line on stderr says why), 2 for a
 * bad command line.
 *
 * Each event loop (loop.h) is one thread with non-blocking sockets, so it
 * reads while it writes and cannot deadlock against a correct server; the
 * client is one such thread, or with c10k's --threads N, N of them
 * (crew.h). It reports its own CPU time, its busiest thread's too, so a
 * reader can see that it was not the bottleneck.
 *
 * This file parses the command line and sets up; each mode is a file of its
 * own (stall.c, c10k.c, hold.c, scan.c), what they share is in measure.c
 * (modes.h), and the connections they drive are pool.c's.
 */
#define _GNU_SOURCE /* POSIX under strict -std=c11 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "modes.h"

/* Descriptors beyond the connections and event loops: stdio, /proc files, the speed file. */
#define FD_MARGIN 32

/* ---- set-up ------------------------------------------------------------ */

/*
 * Every connection is a descriptor, and so is each thread's event loop
 * (--threads: epoll and kqueue are one each), and the soft limit is often
 * 1024. Raise it to the hard limit (no privilege needed), and if even that
 * is too small say what is needed now rather than fail half way through.
 */
static bool raise_fd_limit(long connections, int loops)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)connections + (rlim_t)loops + FD_MARGIN;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return true; /* nothing to go on; let socket() report EMFILE */
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit raised = {rl.rlim_max, rl.rlim_max};
        /* macOS refuses RLIM_INFINITY as a soft limit; then ask for what is needed. */
        if (setrlimit(RLIMIT_NOFILE, &raised) < 0 && need < rl.rlim_max)
            raised.rlim_cur = need;
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
            rl.rlim_cur = raised.rlim_cur;
    }
    if (rl.rlim_cur >= need)
        return true;
    fprintf(stderr,
            "loadgen: %ld connections on %d event loop(s) need about %llu open files, but "
            "the limit is %llu; "
            "raise it first (`ulimit -n %llu` in the shell that runs loadgen, or on Linux as "
            "root `prlimit --nofile=%llu --pid $$`)\n",
            connections, loops, (unsigned long long)need, (unsigned long long)rl.rlim_cur,
            (unsigned long long)need, (unsigned long long)need);
    return false;
}

/* The most connections a mode holds open at once. */
static long connections_needed(const options_t *o)
{
    long most = 2; /* stall */
    if (o->mode & (MODE_C10K | MODE_HOLD))
        most = o->connections;
    for (int i = 0; o->mode == MODE_SCAN && i < o->idle_count; i++)
        if (o->idle[i] + 1 > most)
            most = o->idle[i] + 1;
    return most;
}

/*
 * --cpu: with the server pinned to the same CPU (taskset -c 0 server) a round
 * trip is two context switches on one warm core, the steadiest figure a
 * shared machine gives. Each CPU of a list is tried alone first, so the one
 * loadgen may not use is named; then this thread runs on all of them (each
 * of c10k's workers then pins itself to one, crew.c). Its mask is what
 * proc_host_cpu reads as the client's CPUs, so every worker's is measured.
 */
static void pin_to_cpus(const options_t *o)
{
    for (int i = 0; i < o->cpu_count; i++)
        if (pin_this_thread(&o->cpus[i], 1) != 0) {
            if (errno == ENOSYS)
                usage_error("--cpu is supported on Linux only");
            usage_error("--cpu %d: cannot run there (%s)", o->cpus[i], strerror(errno));
        }
    if (o->cpu_count > 1 && pin_this_thread(o->cpus, o->cpu_count) != 0)
        usage_error("--cpu: cannot run on the list's CPUs together (%s)", strerror(errno));
}

/* ---- main -------------------------------------------------------------- */

int main(int argc, char **argv)
{
    options_t o;
    parse_options(argc, argv, &o);

    target_t target;
    const char *why;
    if (target_resolve(&target, o.addr, o.port, &why) < 0)
        usage_error("bad address '%s' (%s)", o.addr, why);
    pin_to_cpus(&o);
    if (!raise_fd_limit(connections_needed(&o), o.threads))
        return 1;
    /* A write to a connection the server reset fails with EPIPE instead of killing us. */
    signal(SIGPIPE, SIG_IGN);

    uint64_t deadline = now_ns() + (uint64_t)(o.timeout_s * NS_PER_S);
    switch (o.mode) {
    case MODE_STALL: return run_stall(&o, &target, deadline);
    case MODE_C10K: return run_c10k(&o, &target, deadline);
    case MODE_SCAN: return run_scan(&o, &target, deadline);
    case MODE_HOLD: return run_hold(&o, &target, deadline);
    }
    return 2;
}
