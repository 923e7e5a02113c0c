/*
 * crew.h - c10k's connections spread over several event loops (--threads N).
 *
 * One loadgen thread keeps one core busy at most, and a single-threaded
 * server on a fast core can outpace it: the run then measures the client.
 * A crew is N workers, each a thread with its own pool (its own event loop,
 * connections, histograms and counters: nothing shared, no lock on the hot
 * path), each on its own CPU when --cpu lists several. The main thread
 * drives them in lockstep, one task at a time (open the connections, run a
 * window, drain it, the tail), so the server's CPU can be read between
 * tasks while no worker is measuring; then their counters are summed and
 * their histograms merged, and the results read as one client's.
 *
 * Worker i holds the i-th of N contiguous blocks of the requested count
 * (as near equal as they divide: the first count % N one connection
 * larger), numbered on from the previous worker's, opens its block itself,
 * and offers its share of the rate, in proportion to its connections, so
 * the schedule of the whole crew is the same fixed rate per connection a
 * single loop would keep. The connect
 * window (at most somaxconn connections between connect() and their first
 * echo) is divided among the workers, so together they never overflow the
 * server's accept queue.
 */
#ifndef LOADGEN_CREW_H
#define LOADGEN_CREW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pool.h"
#include "stats.h"

typedef enum { TASK_GROW, TASK_WINDOW, TASK_DRAIN, TASK_TAIL, TASK_EXIT } crew_task_t;

typedef struct crew crew_t;

/*
 * Start `threads` workers sharing `connections` connections of msg_size
 * bytes to t; cpus[0..cpu_count) are the CPUs to put them on (none: 0).
 * NULL when out of memory or threads.
 */
crew_t *crew_start(int threads, const target_t *t, size_t connections, size_t msg_size,
                   const int *cpus, int cpu_count);

/*
 * Every worker does `task` and the call returns when all have: TASK_GROW
 * opens each worker's share (and marks the served ones active), TASK_WINDOW
 * runs a window of duration_ns at `rate` messages per second for the whole
 * crew (0: closed loop), TASK_DRAIN and TASK_TAIL as pool_drain and
 * pool_tail. Returns after the slowest worker.
 */
void crew_run(crew_t *c, crew_task_t task, uint64_t duration_ns, double rate, uint64_t deadline);

/* The crew as one pool: counters summed, histograms merged (valid until the next call). */
typedef struct {
    pool_counts_t n;
    histogram_t *rtt_ns, *connect_ns, *lag_ns, *service_ns;
    size_t connect_window; /* summed over the workers */
    bool timed_out;        /* any worker */
    bool tailed;           /* the tail ran: n.unclosed is known */
    const char *first_error; /* the first worker's that has one ("" if none) */
    long echoes_min, echoes_median, echoes_max; /* per active connection, last window */
    double cpu_ms;         /* the workers' own CPU time over the last window, summed */
    double cpu_ms_busiest; /* ...and that of the busiest worker */
} crew_sum_t;

void crew_sum(crew_t *c, crew_sum_t *out);

/* Stops the workers, closes every connection, frees everything. */
void crew_free(crew_t *c);

/*
 * Lets the calling thread run on cpus[0..count) only: 0, or -1 with errno
 * (ENOSYS off Linux, where loadgen does not pin).
 */
int pin_this_thread(const int *cpus, int count);

#endif /* LOADGEN_CREW_H */
