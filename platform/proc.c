/*
 * proc.c - see proc.h: what every system shares. The figures themselves
 * come from the one reader the build adds (proc_os.h lists them):
 * proc_linux.c, proc_macos.c, proc_freebsd.c or proc_portable.c.
 */
#define _GNU_SOURCE /* POSIX declarations under strict -std=c11 */

#include "proc_os.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

bool proc_forced_portable(void)
{
    const char *v = getenv("LADDER_FORCE_PORTABLE");
    return v && strcmp(v, "1") == 0;
}

/* Unknown on this system, or not to be read: said once on stderr. */
void proc_note_unsupported(void)
{
    static bool said;
    if (!said)
        fprintf(stderr, "loadgen: note: --server-pid: %s; the server's CPU and memory figures "
                        "are left null\n",
                proc_forced_portable() ? "LADDER_FORCE_PORTABLE=1 reads no /proc"
                                       : "no way to read another process's CPU and memory on "
                                         "this system");
    said = true;
}

long long proc_cgroup_cpu_ns(const char *dir)
{
    char path[4096];
    unsigned long long v;
    long long ns = -1;
    if (proc_forced_portable())
        return -1;
    snprintf(path, sizeof path, "%s/cpuacct.usage", dir);
    FILE *f = fopen(path, "r");
    if (f) { /* cgroup v1: nanoseconds */
        if (fscanf(f, "%llu", &v) == 1)
            ns = (long long)v;
        fclose(f);
        return ns;
    }
    snprintf(path, sizeof path, "%s/cpu.stat", dir);
    if (!(f = fopen(path, "r")))
        return -1;
    char key[64];
    while (ns < 0 && fscanf(f, "%63s %llu", key, &v) == 2) /* cgroup v2: microseconds */
        if (strcmp(key, "usage_usec") == 0)
            ns = (long long)v * 1000;
    fclose(f);
    return ns;
}

const proc_memory_t PROC_UNKNOWN_MEMORY = {-1, -1, -1, -1, -1};

bool proc_exists(long pid)
{
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

void proc_fd_seen(proc_fds_seen_t *seen, long fd)
{
    if (fd >= 0 && fd < PROC_FDS_SEEN)
        seen->used[fd] = true;
}

int proc_lowest_unseen(const proc_fds_seen_t *seen)
{
    int fd = 0;
    while (fd < PROC_FDS_SEEN && seen->used[fd])
        fd++;
    return fd;
}

int proc_by_pid(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The caller fills pids[] and ns[] in step. */
int proc_cpu_alloc(proc_cpu_t *r, size_t count)
{
    *r = (proc_cpu_t){0};
    size_t room = count ? count : 1;
    r->pids = malloc(room * sizeof *r->pids);
    r->ns = malloc(room * sizeof *r->ns);
    r->csw = calloc(room, sizeof *r->csw);
    r->icsw = calloc(room, sizeof *r->icsw);
    if (r->pids && r->ns && r->csw && r->icsw)
        return 0;
    proc_cpu_free(r);
    return -1;
}

void proc_cpu_free(proc_cpu_t *r)
{
    free(r->pids);
    free(r->ns);
    free(r->csw);
    free(r->icsw);
    *r = (proc_cpu_t){0};
}

/* Where pid is in `before`, or -1 when it was not there yet (born since). */
static long index_before(const proc_cpu_t *before, long pid)
{
    const long *hit = before->count ? bsearch(&pid, before->pids, before->count,
                                              sizeof *before->pids, proc_by_pid)
                                    : NULL;
    return hit ? hit - before->pids : -1;
}

/*
 * One count's growth from `before` to `after` over the processes alive at
 * `after` (was[] and now[]: that count's array in each reading): a process
 * born since counts all of its own, and a count that went back (pid reuse)
 * counts 0.
 */
static uint64_t tree_growth(const proc_cpu_t *before, const proc_cpu_t *after,
                            const uint64_t *was, const uint64_t *now)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < after->count; i++) {
        long at = index_before(before, after->pids[i]);
        uint64_t base = at < 0 ? 0 : was[at];
        sum += now[i] > base ? now[i] - base : 0;
    }
    return sum;
}

double proc_cpu_ms_between(const proc_cpu_t *before, const proc_cpu_t *after)
{
    return (double)tree_growth(before, after, before->ns, after->ns) / 1e6;
}

void proc_switches_between(const proc_cpu_t *before, const proc_cpu_t *after, long long *total,
                           long long *involuntary)
{
    bool known = before->switches && after->switches && after->count > 0;
    bool forced = known && before->involuntary && after->involuntary;
    *total = known ? (long long)tree_growth(before, after, before->csw, after->csw) : -1;
    *involuntary = forced ? (long long)tree_growth(before, after, before->icsw, after->icsw) : -1;
}
