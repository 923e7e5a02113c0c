/*
 * proc.c - see proc.h. The process tree is found by reading the parent pid
 * of every process in /proc and following the links down from the server;
 * that needs no kernel option (/proc/P/task/T/children does) and a single
 * pass over /proc also yields every process's CPU ticks.
 */
#define _GNU_SOURCE /* POSIX and Linux declarations under strict -std=c11 */

#include "proc.h"

#ifdef __linux__

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    long pid, ppid;
    long threads;
    uint64_t ticks;       /* utime + stime */
    uint64_t child_ticks; /* cutime + cstime: reaped children */
} proc_entry_t;

typedef struct {
    proc_entry_t *entries; /* every process on the machine, sorted by ppid */
    size_t count;
} proc_table_t;

bool proc_supported(void)
{
    return true;
}

bool proc_exists(long pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    return access(path, R_OK) == 0;
}

/* Whole small file into buf, NUL-terminated. Length, or -1. */
static ssize_t read_small_file(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return n;
}

/* Fields 4 (ppid), 14 to 17 (utime, stime, cutime, cstime) and 20 (num_threads) of stat. */
static bool read_stat(long pid, proc_entry_t *e)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (read_small_file(path, buf, sizeof buf) < 0)
        return false;
    /* Field 2, the command name, may itself hold spaces and ')'. */
    const char *after_name = strrchr(buf, ')');
    if (!after_name)
        return false;
    unsigned long long utime, stime;
    long long cutime, cstime;
    if (sscanf(after_name + 1,
               " %*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld %*d %*d %ld",
               &e->ppid, &utime, &stime, &cutime, &cstime, &e->threads) != 6)
        return false;
    e->pid = pid;
    e->ticks = utime + stime;
    e->child_ticks = (uint64_t)(cutime + cstime);
    return true;
}

static int by_ppid(const void *a, const void *b)
{
    const proc_entry_t *x = a, *y = b;
    return (x->ppid > y->ppid) - (x->ppid < y->ppid);
}

/* One pass over /proc. Processes that exit meanwhile are simply missed. */
static int read_table(proc_table_t *t)
{
    size_t capacity = 1024;
    t->count = 0;
    t->entries = malloc(capacity * sizeof *t->entries);
    DIR *dir = opendir("/proc");
    if (!t->entries || !dir) {
        free(t->entries);
        if (dir)
            closedir(dir);
        return -1;
    }
    struct dirent *d;
    while ((d = readdir(dir)) != NULL) {
        if (!isdigit((unsigned char)d->d_name[0]))
            continue;
        if (t->count == capacity) {
            proc_entry_t *grown = realloc(t->entries, 2 * capacity * sizeof *grown);
            if (!grown)
                break;
            t->entries = grown;
            capacity *= 2;
        }
        if (read_stat(atol(d->d_name), &t->entries[t->count]))
            t->count++;
    }
    closedir(dir);
    qsort(t->entries, t->count, sizeof *t->entries, by_ppid);
    return 0;
}

/* Index of the first entry whose parent is ppid (the table is sorted by ppid). */
static size_t first_child(const proc_table_t *t, long ppid)
{
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->entries[mid].ppid < ppid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * Breadth-first from root: fills tree[] with pointers into the table, root
 * first. Returns how many, 0 if root is not running.
 */
static size_t find_tree(const proc_table_t *t, long root, const proc_entry_t **tree)
{
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++)
        if (t->entries[i].pid == root)
            tree[n++] = &t->entries[i];
    for (size_t next = 0; next < n; next++) {
        long parent = tree[next]->pid;
        for (size_t i = first_child(t, parent); i < t->count && t->entries[i].ppid == parent; i++)
            if (n < t->count)
                tree[n++] = &t->entries[i];
    }
    return n;
}

/* The number after "key" in a "Key:   123 kB" style file; -1 if absent. */
static long field_of(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static void add_memory(long pid, proc_memory_t *m)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    if (read_small_file(path, buf, sizeof buf) < 0)
        return; /* exited meanwhile */
    m->procs++;
    long threads = field_of(buf, "\nThreads:"), rss = field_of(buf, "\nVmRSS:");
    m->threads += threads > 0 ? threads : 0;
    m->rss_kb += rss > 0 ? rss : 0;

    /* smaps_rollup (Linux 4.14+) sums smaps without listing every mapping. */
    snprintf(path, sizeof path, "/proc/%ld/smaps_rollup", pid);
    long pss = read_small_file(path, buf, sizeof buf) < 0 ? -1 : field_of(buf, "\nPss:");
    if (pss < 0 || m->pss_kb < 0)
        m->pss_kb = -1;
    else
        m->pss_kb += pss;
}

int proc_tree_memory(long pid, proc_memory_t *out)
{
    proc_table_t t;
    if (read_table(&t) < 0)
        return -1;
    const proc_entry_t **tree = malloc((t.count + 1) * sizeof *tree);
    size_t n = tree ? find_tree(&t, pid, tree) : 0;
    *out = (proc_memory_t){0};
    for (size_t i = 0; i < n; i++)
        add_memory(tree[i]->pid, out);
    free(tree);
    free(t.entries);
    return n > 0 ? 0 : -1;
}

/*
 * stat reports CPU time in whole clock ticks (usually 10 ms), rounded down
 * per process: 10 000 fork children that each ran 5 ms would sum to nothing.
 * Where the kernel offers /proc/P/sched (CONFIG_SCHED_DEBUG), its
 * se.sum_exec_runtime is the same time in ms to the nanosecond, but only for
 * the process's first thread; so it is used for single-threaded processes,
 * and stat's ticks, which cover every thread, for the rest.
 */
static double process_cpu_ms(const proc_entry_t *e)
{
    static const char key[] = "se.sum_exec_runtime";
    char path[64], buf[8192];
    snprintf(path, sizeof path, "/proc/%ld/sched", e->pid);
    if (e->threads == 1 && read_small_file(path, buf, sizeof buf) > 0) {
        const char *p = strstr(buf, key);
        if (p && (p = strchr(p + sizeof key - 1, ':')) != NULL)
            return strtod(p + 1, NULL);
    }
    return (double)e->ticks * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

double proc_tree_cpu_ms(long pid)
{
    proc_table_t t;
    if (read_table(&t) < 0)
        return -1;
    const proc_entry_t **tree = malloc((t.count + 1) * sizeof *tree);
    size_t n = tree ? find_tree(&t, pid, tree) : 0;
    double ms = 0;
    if (n > 0) /* children that exited and were reaped */
        ms = (double)tree[0]->child_ticks * 1000.0 / (double)sysconf(_SC_CLK_TCK);
    for (size_t i = 0; i < n; i++)
        ms += process_cpu_ms(tree[i]);
    free(tree);
    free(t.entries);
    return n > 0 ? ms : -1;
}

#else /* no /proc */

bool proc_supported(void)
{
    return false;
}

bool proc_exists(long pid)
{
    (void)pid;
    return false;
}

int proc_tree_memory(long pid, proc_memory_t *out)
{
    (void)pid;
    (void)out;
    return -1;
}

double proc_tree_cpu_ms(long pid)
{
    (void)pid;
    return -1;
}

#endif
