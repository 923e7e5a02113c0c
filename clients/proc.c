/*
 * proc.c - see proc.h. Sections: what every system shares, then Linux
 * (/proc and CPU-time clocks), macOS (libproc), and everything else
 * (figures unknown).
 *
 * On Linux the process tree is found by reading the parent pid of every
 * process in /proc and following the links down from the server; that needs
 * no kernel option (/proc/P/task/T/children does).
 */
#define _GNU_SOURCE /* POSIX and Linux declarations under strict -std=c11 */

#include "proc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* ---- every system ------------------------------------------------------ */

bool proc_forced_portable(void)
{
    const char *v = getenv("LADDER_FORCE_PORTABLE");
    return v && strcmp(v, "1") == 0;
}

/* Unknown on this system, or not to be read: said once on stderr. */
__attribute__((unused)) static void note_unsupported(void)
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

static const proc_memory_t UNKNOWN_MEMORY = {-1, -1, -1, -1, -1};

bool proc_exists(long pid)
{
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

static int by_pid(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

#if defined(__linux__) || defined(__APPLE__) || defined(__FreeBSD__) /* they read CPU time */
/* Room for `count` readings; the caller fills pids[] and ns[] in step. */
static int cpu_alloc(proc_cpu_t *r, size_t count)
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
#endif

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
                                              sizeof *before->pids, by_pid)
                                    : NULL;
    return hit ? hit - before->pids : -1;
}

/* after - before, 0 for a count that went back (pid reuse) */
static uint64_t growth(uint64_t before, uint64_t after)
{
    return after > before ? after - before : 0;
}

double proc_cpu_ms_between(const proc_cpu_t *before, const proc_cpu_t *after)
{
    uint64_t ns = 0;
    for (size_t i = 0; i < after->count; i++) {
        long was = index_before(before, after->pids[i]);
        ns += growth(was < 0 ? 0 : before->ns[was], after->ns[i]);
    }
    return (double)ns / 1e6;
}

void proc_switches_between(const proc_cpu_t *before, const proc_cpu_t *after, long long *total,
                           long long *involuntary)
{
    uint64_t all = 0, forced = 0;
    for (size_t i = 0; i < after->count; i++) {
        long was = index_before(before, after->pids[i]);
        all += growth(was < 0 ? 0 : before->csw[was], after->csw[i]);
        forced += growth(was < 0 ? 0 : before->icsw[was], after->icsw[i]);
    }
    bool known = before->switches && after->switches && after->count > 0;
    *total = known ? (long long)all : -1;
    *involuntary = known && before->involuntary && after->involuntary ? (long long)forced : -1;
}

#if defined(__linux__)
/* ---- Linux: /proc and CPU-time clocks ---------------------------------- */

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>

typedef struct {
    long pid, ppid;
} proc_link_t;

typedef struct {
    proc_link_t *links; /* every process on the machine, sorted by ppid */
    size_t count;
} proc_table_t;

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

/* Field 4 of /proc/P/stat, the parent pid. */
static bool read_ppid(long pid, proc_link_t *l)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (read_small_file(path, buf, sizeof buf) < 0)
        return false;
    /* Field 2, the command name, may itself hold spaces and ')'. */
    const char *after_name = strrchr(buf, ')');
    if (!after_name || sscanf(after_name + 1, " %*c %ld", &l->ppid) != 1)
        return false;
    l->pid = pid;
    return true;
}

static int by_ppid(const void *a, const void *b)
{
    const proc_link_t *x = a, *y = b;
    return (x->ppid > y->ppid) - (x->ppid < y->ppid);
}

/* One pass over /proc. Processes that exit meanwhile are simply missed. */
static int read_table(proc_table_t *t)
{
    size_t capacity = 1024;
    t->count = 0;
    t->links = malloc(capacity * sizeof *t->links);
    DIR *dir = opendir("/proc");
    if (!t->links || !dir) {
        free(t->links);
        if (dir)
            closedir(dir);
        return -1;
    }
    struct dirent *d;
    while ((d = readdir(dir)) != NULL) {
        if (!isdigit((unsigned char)d->d_name[0]))
            continue;
        if (t->count == capacity) {
            proc_link_t *grown = realloc(t->links, 2 * capacity * sizeof *grown);
            if (!grown)
                break;
            t->links = grown;
            capacity *= 2;
        }
        if (read_ppid(atol(d->d_name), &t->links[t->count]))
            t->count++;
    }
    closedir(dir);
    qsort(t->links, t->count, sizeof *t->links, by_ppid);
    return 0;
}

/* Index of the first entry whose parent is ppid (the table is sorted by ppid). */
static size_t first_child(const proc_table_t *t, long ppid)
{
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->links[mid].ppid < ppid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * The pids of root and all its descendants, root first, breadth-first;
 * malloc'ed. *count is 0 if root is not running.
 */
static long *find_tree(long root, size_t *count)
{
    proc_table_t t;
    *count = 0;
    if (read_table(&t) < 0)
        return NULL;
    long *tree = malloc((t.count + 1) * sizeof *tree);
    size_t n = 0;
    for (size_t i = 0; tree && i < t.count && n == 0; i++)
        if (t.links[i].pid == root)
            tree[n++] = root;
    for (size_t next = 0; next < n; next++) {
        long parent = tree[next];
        for (size_t i = first_child(&t, parent); i < t.count && t.links[i].ppid == parent; i++)
            if (n < t.count)
                tree[n++] = t.links[i].pid;
    }
    free(t.links);
    *count = n;
    return tree;
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
    if (proc_forced_portable()) {
        note_unsupported();
        *out = UNKNOWN_MEMORY;
        return -1;
    }
    size_t n;
    long *tree = find_tree(pid, &n);
    *out = (proc_memory_t){.footprint_kb = -1}; /* a macOS figure */
    for (size_t i = 0; i < n; i++)
        add_memory(tree[i], out);
    free(tree);
    if (n > 0 && out->procs > 0)
        return 0;
    *out = UNKNOWN_MEMORY;
    return -1;
}

/*
 * A process's CPU-time clock counts all its threads, in nanoseconds, with
 * no kernel option needed (unlike /proc/P/sched's sum_exec_runtime, which
 * needs CONFIG_SCHED_DEBUG and covers one thread).
 */
static bool process_cpu_ns(long pid, uint64_t *ns)
{
    clockid_t clock;
    struct timespec ts;
    if (clock_getcpuclockid((pid_t)pid, &clock) != 0 || clock_gettime(clock, &ts) != 0)
        return false; /* exited since the tree was read */
    *ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
    return true;
}

/*
 * Context switches of every thread of pid: /proc/P/status counts only the
 * thread it names, so the threads' own files under /proc/P/task are summed
 * (10 000 of them for 03-threads at C10K: read outside measured windows).
 */
static void process_switches(long pid, uint64_t *all, uint64_t *forced)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/task", pid);
    DIR *dir = opendir(path);
    struct dirent *d;
    *all = *forced = 0;
    while (dir && (d = readdir(dir)) != NULL) {
        if (!isdigit((unsigned char)d->d_name[0]))
            continue;
        snprintf(path, sizeof path, "/proc/%ld/task/%.20s/status", pid, d->d_name);
        if (read_small_file(path, buf, sizeof buf) < 0)
            continue; /* the thread exited meanwhile */
        long voluntary = field_of(buf, "\nvoluntary_ctxt_switches:");
        long involuntary = field_of(buf, "\nnonvoluntary_ctxt_switches:");
        *all += (uint64_t)(voluntary > 0 ? voluntary : 0) + (uint64_t)(involuntary > 0 ? involuntary : 0);
        *forced += (uint64_t)(involuntary > 0 ? involuntary : 0);
    }
    if (dir)
        closedir(dir);
}

int proc_tree_cpu(long pid, proc_cpu_t *out)
{
    if (proc_forced_portable()) {
        note_unsupported();
        *out = (proc_cpu_t){0};
        return -1;
    }
    size_t n;
    long *tree = find_tree(pid, &n);
    if (n == 0 || cpu_alloc(out, n) < 0) {
        free(tree);
        *out = (proc_cpu_t){0};
        return -1;
    }
    qsort(tree, n, sizeof *tree, by_pid);
    for (size_t i = 0; i < n; i++)
        if (process_cpu_ns(tree[i], &out->ns[out->count])) {
            process_switches(tree[i], &out->csw[out->count], &out->icsw[out->count]);
            out->pids[out->count++] = tree[i];
        }
    out->switches = out->involuntary = true;
    free(tree);
    return 0;
}

void proc_kernel_memory(proc_kernel_t *out)
{
    char buf[8192];
    *out = (proc_kernel_t){-1, -1, -1};
    if (proc_forced_portable() || read_small_file("/proc/meminfo", buf, sizeof buf) < 0)
        return;
    out->stack_kb = field_of(buf, "\nKernelStack:");
    out->page_tables_kb = field_of(buf, "\nPageTables:");
    out->slab_kb = field_of(buf, "\nSlab:");
}

#elif defined(__APPLE__)
/* ---- macOS: libproc ---------------------------------------------------- */

#include <libproc.h>
#include <mach/mach_time.h>
#include <sys/proc_info.h>
#include <sys/resource.h>

/* Enough for a forking server at C10K. */
#define MAX_TREE 20000

/*
 * The server and its direct children (02-fork's are all direct), unsorted;
 * malloc'ed. *count is 0 if the server is gone.
 */
static long *find_tree(long root, size_t *count)
{
    *count = 0;
    pid_t *children = calloc(MAX_TREE, sizeof *children);
    long *tree = malloc((MAX_TREE + 1) * sizeof *tree);
    if (!children || !tree || !proc_exists(root)) {
        free(children);
        free(tree);
        return NULL;
    }
    tree[(*count)++] = root;
    int found = proc_listchildpids((pid_t)root, children, MAX_TREE * (int)sizeof *children);
    for (int i = 0; i < found && i < MAX_TREE; i++)
        if (children[i] > 0)
            tree[(*count)++] = children[i];
    free(children);
    return tree;
}

static bool task_info_of(long pid, struct proc_taskinfo *ti)
{
    return proc_pidinfo((int)pid, PROC_PIDTASKINFO, 0, ti, sizeof *ti) == (int)sizeof *ti;
}

int proc_tree_memory(long pid, proc_memory_t *out)
{
    size_t n;
    long *tree = find_tree(pid, &n);
    *out = (proc_memory_t){.pss_kb = -1};
    static bool said;
    if (!said)
        fprintf(stderr, "loadgen: note: --server-pid on macOS: no PSS (server_pss_kb is null); "
                        "the server and its direct children are counted\n");
    said = true;
    for (size_t i = 0; i < n; i++) {
        struct proc_taskinfo ti;
        if (!task_info_of(tree[i], &ti))
            continue;
        out->procs++;
        out->threads += ti.pti_threadnum;
        out->rss_kb += (long)(ti.pti_resident_size / 1024);
        /* rusage_info_t is a void *: the buffer is passed through a pointer to it. */
        struct rusage_info_v2 ri;
        if (proc_pid_rusage((int)tree[i], RUSAGE_INFO_V2, (rusage_info_t *)&ri) == 0)
            out->footprint_kb += (long)(ri.ri_phys_footprint / 1024);
    }
    free(tree);
    if (out->procs > 0)
        return 0;
    *out = UNKNOWN_MEMORY;
    return -1;
}

/* pti_total_user and pti_total_system are in Mach time units, not always ns. */
int proc_tree_cpu(long pid, proc_cpu_t *out)
{
    mach_timebase_info_data_t tb;
    size_t n;
    long *tree = find_tree(pid, &n);
    if (n == 0 || mach_timebase_info(&tb) != KERN_SUCCESS || cpu_alloc(out, n) < 0) {
        free(tree);
        *out = (proc_cpu_t){0};
        return -1;
    }
    qsort(tree, n, sizeof *tree, by_pid);
    for (size_t i = 0; i < n; i++) {
        struct proc_taskinfo ti;
        if (!task_info_of(tree[i], &ti))
            continue;
        out->pids[out->count] = tree[i];
        out->csw[out->count] = (uint64_t)ti.pti_csw; /* both kinds, not told apart */
        out->ns[out->count++] = (ti.pti_total_user + ti.pti_total_system) * tb.numer / tb.denom;
    }
    out->switches = true;
    free(tree);
    return 0;
}

void proc_kernel_memory(proc_kernel_t *out)
{
    *out = (proc_kernel_t){-1, -1, -1};
}

#elif defined(__FreeBSD__)
/* ---- FreeBSD: the kern.proc sysctl ------------------------------------- */

#include <sys/sysctl.h>
#include <sys/user.h>

/*
 * Every process on the machine (KERN_PROC_PROC: one entry per process, not
 * per thread); malloc'ed. The table can grow between the two calls, hence
 * the margin and the retry on ENOMEM.
 */
static struct kinfo_proc *all_processes(size_t *count)
{
    int mib[3] = {CTL_KERN, KERN_PROC, KERN_PROC_PROC};
    for (int attempt = 0; attempt < 3; attempt++) {
        size_t len = 0;
        if (sysctl(mib, 3, NULL, &len, NULL, 0) < 0)
            return NULL;
        len += len / 4 + sizeof(struct kinfo_proc);
        struct kinfo_proc *kp = malloc(len);
        if (!kp)
            return NULL;
        if (sysctl(mib, 3, kp, &len, NULL, 0) == 0) {
            *count = len / sizeof *kp;
            return kp;
        }
        free(kp);
        if (errno != ENOMEM)
            return NULL;
    }
    return NULL;
}

/* Whether pid is root or descends from it, following ki_ppid up the table. */
static bool in_tree(const struct kinfo_proc *kp, size_t n, pid_t pid, pid_t root)
{
    for (int depth = 0; depth < 64 && pid > 1; depth++) {
        if (pid == root)
            return true;
        pid_t parent = -1;
        for (size_t i = 0; i < n && parent < 0; i++)
            if (kp[i].ki_pid == pid)
                parent = kp[i].ki_ppid;
        pid = parent;
    }
    return pid == root;
}

/* The tree's entries, moved to the front of the table; how many. */
static size_t select_tree(struct kinfo_proc *kp, size_t n, long root)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        bool mine = kp[i].ki_pid == (pid_t)root || kp[i].ki_ppid == (pid_t)root ||
                    in_tree(kp, n, kp[i].ki_ppid, (pid_t)root);
        if (mine) {
            struct kinfo_proc keep = kp[i];
            kp[kept++] = keep;
        }
    }
    return kept;
}

int proc_tree_memory(long pid, proc_memory_t *out)
{
    size_t n = 0;
    struct kinfo_proc *kp = all_processes(&n);
    *out = (proc_memory_t){.pss_kb = -1, .footprint_kb = -1};
    size_t kept = kp ? select_tree(kp, n, pid) : 0;
    long page_kb = sysconf(_SC_PAGESIZE) / 1024;
    for (size_t i = 0; i < kept; i++) {
        out->procs++;
        out->threads += kp[i].ki_numthreads;
        out->rss_kb += (long)kp[i].ki_rssize * page_kb;
    }
    free(kp);
    if (out->procs > 0)
        return 0;
    *out = UNKNOWN_MEMORY;
    return -1;
}

static int by_ki_pid(const void *a, const void *b)
{
    pid_t x = ((const struct kinfo_proc *)a)->ki_pid, y = ((const struct kinfo_proc *)b)->ki_pid;
    return (x > y) - (x < y);
}

/* ki_runtime: the process's run time over all its threads, in microseconds. */
int proc_tree_cpu(long pid, proc_cpu_t *out)
{
    size_t n = 0;
    struct kinfo_proc *kp = all_processes(&n);
    size_t kept = kp ? select_tree(kp, n, pid) : 0;
    if (kept == 0 || cpu_alloc(out, kept) < 0) {
        free(kp);
        *out = (proc_cpu_t){0};
        return -1;
    }
    qsort(kp, kept, sizeof *kp, by_ki_pid);
    for (size_t i = 0; i < kept; i++) {
        out->pids[i] = kp[i].ki_pid;
        out->ns[i] = (uint64_t)kp[i].ki_runtime * 1000u;
        out->icsw[i] = (uint64_t)kp[i].ki_rusage.ru_nivcsw;
        out->csw[i] = (uint64_t)kp[i].ki_rusage.ru_nvcsw + out->icsw[i];
    }
    out->count = kept;
    out->switches = out->involuntary = true;
    free(kp);
    return 0;
}

void proc_kernel_memory(proc_kernel_t *out)
{
    *out = (proc_kernel_t){-1, -1, -1};
}

#else
/* ---- elsewhere: unknown, said once ------------------------------------- */

int proc_tree_memory(long pid, proc_memory_t *out)
{
    (void)pid;
    note_unsupported();
    *out = UNKNOWN_MEMORY;
    return -1;
}

int proc_tree_cpu(long pid, proc_cpu_t *out)
{
    (void)pid;
    note_unsupported();
    *out = (proc_cpu_t){0};
    return -1;
}

void proc_kernel_memory(proc_kernel_t *out)
{
    *out = (proc_kernel_t){-1, -1, -1};
}

#endif
