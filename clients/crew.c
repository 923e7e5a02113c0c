/*
 * crew.c - see crew.h. The main thread and the workers meet at one gate: the
 * main thread posts a task and bumps the gate's generation; each worker
 * runs it on its own pool and reports back; the main thread waits until all
 * have. Nothing else is shared, so a worker's event loop never waits on a
 * lock while it measures.
 */
#define _GNU_SOURCE /* sched_setaffinity, and POSIX under strict -std=c11 */

#include "crew.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    crew_t *crew;
    pthread_t thread;
    bool started;
    int cpu;              /* -1: wherever the scheduler puts it */
    target_t target;      /* its own copy: where its next socket binds from */
    pool_t pool;
    size_t connections;   /* its share */
    double window_cpu_ms; /* its thread's CPU time over the last window */
} worker_t;

struct crew {
    pthread_mutex_t lock;
    pthread_cond_t posted;   /* a new task (generation moved on) */
    pthread_cond_t finished; /* a worker finished the current one */
    unsigned long generation;
    int done;                /* workers done with the current generation */
    crew_task_t task;
    uint64_t duration_ns, deadline;
    double rate;             /* messages per second, whole crew */
    size_t total_connections;
    int count;
    worker_t *workers;
    histogram_t rtt_sum, connect_sum, lag_sum, service_sum;
};

int pin_this_thread(const int *cpus, int count)
{
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < count; i++)
        CPU_SET(cpus[i], &set);
    return sched_setaffinity(0, sizeof set, &set); /* 0: this thread, on Linux */
#else
    (void)cpus;
    (void)count;
    errno = ENOSYS;
    return -1;
#endif
}

static void do_task(crew_t *c, worker_t *w, crew_task_t task)
{
    pool_t *p = &w->pool;
    switch (task) {
    case TASK_GROW:
        pool_grow(p, w->connections, c->deadline);
        for (size_t i = 0; i < p->count; i++) /* the served ones take part in the windows */
            p->conns[i].active = p->conns[i].served;
        break;
    case TASK_WINDOW: {
        double share = c->total_connections
                           ? c->rate * (double)w->connections / (double)c->total_connections
                           : 0;
        double before = thread_cpu_ms();
        if (p->n.served > 0 && !p->timed_out)
            pool_window(p, c->duration_ns, share, c->deadline);
        else
            pool_forget_window(p); /* nothing to exchange: none of the last window stays */
        w->window_cpu_ms = thread_cpu_ms() - before;
        break;
    }
    case TASK_DRAIN: pool_drain(p, c->deadline); break;
    case TASK_TAIL: pool_tail(p, c->duration_ns, c->deadline); break;
    case TASK_EXIT: break;
    }
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    crew_t *c = w->crew;
    /* loadgen.c has tried each CPU of the list already, and refuses --cpu off Linux. */
    if (w->cpu >= 0 && pin_this_thread(&w->cpu, 1) != 0)
        fprintf(stderr, "loadgen: --cpu %d: cannot run a worker there (%s)\n", w->cpu,
                strerror(errno));
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        while (c->generation == seen)
            pthread_cond_wait(&c->posted, &c->lock);
        seen = c->generation;
        crew_task_t task = c->task;
        pthread_mutex_unlock(&c->lock);

        do_task(c, w, task);

        pthread_mutex_lock(&c->lock);
        c->done++;
        pthread_cond_signal(&c->finished);
        pthread_mutex_unlock(&c->lock);
        if (task == TASK_EXIT)
            return NULL;
    }
}

void crew_run(crew_t *c, crew_task_t task, uint64_t duration_ns, double rate, uint64_t deadline)
{
    pthread_mutex_lock(&c->lock);
    c->task = task;
    c->duration_ns = duration_ns;
    c->rate = rate;
    c->deadline = deadline;
    c->done = 0;
    c->generation++;
    pthread_cond_broadcast(&c->posted);
    int running = 0;
    for (int i = 0; i < c->count; i++)
        running += c->workers[i].started;
    while (c->done < running)
        pthread_cond_wait(&c->finished, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

crew_t *crew_start(int threads, const target_t *t, size_t connections, size_t msg_size,
                   const int *cpus, int cpu_count)
{
    crew_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->workers = calloc((size_t)threads, sizeof *c->workers);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->posted, NULL);
    pthread_cond_init(&c->finished, NULL);
    c->total_connections = connections;
    if (!c->workers) {
        crew_free(c);
        return NULL;
    }
    size_t first = 0; /* the run's number for the next worker's first connection */
    for (int i = 0; i < threads; i++) {
        worker_t *w = &c->workers[i];
        size_t share = connections / (size_t)threads + ((size_t)i < connections % (size_t)threads);
        w->crew = c;
        w->cpu = cpu_count > 0 ? cpus[i % cpu_count] : -1;
        w->target = *t;
        w->target.next_source = t->next_source + (unsigned)i * 61u; /* spread the sources */
        w->connections = share;
        if (pool_init(&w->pool, &w->target, share ? share : 1, msg_size) < 0) {
            crew_free(c);
            return NULL;
        }
        c->count = i + 1;
        w->pool.first_id = (uint32_t)first; /* a server that cross-wires two is caught */
        first += share;
        size_t window = w->pool.connect_window / (size_t)threads;
        w->pool.connect_window = window > 0 ? window : 1;
    }
    for (int i = 0; i < threads; i++) {
        worker_t *w = &c->workers[i];
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            crew_free(c);
            return NULL;
        }
        w->started = true;
    }
    return c;
}

static void add_counts(pool_counts_t *sum, const pool_counts_t *n)
{
    sum->established += n->established;
    sum->served += n->served;
    sum->connect_failed += n->connect_failed;
    sum->refused += n->refused;
    sum->unanswered += n->unanswered;
    sum->lost += n->lost;
    sum->timed_out += n->timed_out;
    sum->corrupt += n->corrupt;
    sum->untried += n->untried;
    sum->client_errors += n->client_errors;
    sum->unclosed += n->unclosed;
    sum->duplicated += n->duplicated;
    sum->bytes_verified += n->bytes_verified;
    sum->round_trips += n->round_trips;
    sum->sends += n->sends;
    sum->late_sends += n->late_sends;
    sum->in_flight_at_end += n->in_flight_at_end;
    if (n->lag_max_ns > sum->lag_max_ns)
        sum->lag_max_ns = n->lag_max_ns;
    if (n->window_ns > sum->window_ns)
        sum->window_ns = n->window_ns; /* the workers' windows are the same length */
}

static int by_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Echoes in the last window per active connection, over every worker. */
static void echoes_per_conn(const crew_t *c, crew_sum_t *out)
{
    out->echoes_min = out->echoes_median = out->echoes_max = -1;
    size_t total = 0, n = 0;
    for (int i = 0; i < c->count; i++)
        total += c->workers[i].pool.count;
    long *v = malloc((total ? total : 1) * sizeof *v);
    for (int i = 0; v && i < c->count; i++) {
        const pool_t *p = &c->workers[i].pool;
        for (size_t k = 0; k < p->count; k++)
            if (p->conns[k].active)
                v[n++] = p->conns[k].window_echoes;
    }
    if (n > 0) {
        qsort(v, n, sizeof *v, by_long);
        out->echoes_min = v[0];
        out->echoes_median = v[(n - 1) / 2];
        out->echoes_max = v[n - 1];
    }
    free(v);
}

void crew_sum(crew_t *c, crew_sum_t *out)
{
    *out = (crew_sum_t){.first_error = ""};
    hist_clear(&c->rtt_sum);
    hist_clear(&c->connect_sum);
    hist_clear(&c->lag_sum);
    hist_clear(&c->service_sum);
    for (int i = 0; i < c->count; i++) {
        const worker_t *w = &c->workers[i];
        add_counts(&out->n, &w->pool.n);
        hist_merge(&c->rtt_sum, w->pool.rtt_ns);
        hist_merge(&c->connect_sum, w->pool.connect_ns);
        hist_merge(&c->lag_sum, w->pool.lag_ns);
        hist_merge(&c->service_sum, w->pool.service_ns);
        out->connect_window += w->pool.connect_window;
        out->timed_out = out->timed_out || w->pool.timed_out;
        out->tailed = out->tailed || w->pool.tailed;
        if (!out->first_error[0])
            out->first_error = w->pool.first_error;
        out->cpu_ms += w->window_cpu_ms;
        if (w->window_cpu_ms > out->cpu_ms_busiest)
            out->cpu_ms_busiest = w->window_cpu_ms;
    }
    out->rtt_ns = &c->rtt_sum;
    out->connect_ns = &c->connect_sum;
    out->lag_ns = &c->lag_sum;
    out->service_ns = &c->service_sum;
    echoes_per_conn(c, out);
}

void crew_free(crew_t *c)
{
    if (!c)
        return;
    if (c->workers) {
        crew_run(c, TASK_EXIT, 0, 0, 0);
        for (int i = 0; i < c->count; i++) {
            if (c->workers[i].started)
                pthread_join(c->workers[i].thread, NULL);
            pool_free(&c->workers[i].pool);
        }
    }
    pthread_cond_destroy(&c->posted);
    pthread_cond_destroy(&c->finished);
    pthread_mutex_destroy(&c->lock);
    free(c->workers);
    free(c);
}
