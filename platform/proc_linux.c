/*
 * proc_linux.c - proc.h's reader for Linux: /proc and CPU-time clocks.
 *
 * The server's process tree is found by reading the parent pid of every
 * process in /proc and following the links down from the server; that needs
 * no kernel option (/proc/P/task/T/children does).
 */
#define _GNU_SOURCE /* prlimit, prctl, and POSIX under strict -std=c11 */

#include "proc_os.h"

#include <ctype.h>
#include <sched.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

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

/* The next entry of a /proc folder named by a number (a pid, a thread, a
 * descriptor), that number; -1 at the end. */
static long next_number(DIR *dir)
{
    struct dirent *d;
    while ((d = readdir(dir)) != NULL)
        if (isdigit((unsigned char)d->d_name[0]))
            return atol(d->d_name);
    return -1;
}

static int by_ppid(const void *a, const void *b)
{
    const proc_info_t *x = a, *y = b;
    return (x->ppid > y->ppid) - (x->ppid < y->ppid);
}

/* Index of the first of n entries whose parent is ppid (all is sorted by ppid). */
static size_t first_child(const proc_info_t *all, size_t n, long ppid)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (all[mid].ppid < ppid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * The pids of root and all its descendants, root first, breadth-first;
 * malloc'ed. *count is 0 if root is not running, or under
 * LADDER_FORCE_PORTABLE, which reads no /proc (said once).
 */
static long *find_tree(long root, size_t *count)
{
    size_t total;
    *count = 0;
    if (proc_forced_portable()) {
        proc_note_unsupported();
        return NULL;
    }
    proc_info_t *all = proc_list(&total);
    if (!all)
        return NULL;
    qsort(all, total, sizeof *all, by_ppid);
    long *tree = malloc((total + 1) * sizeof *tree);
    size_t n = 0;
    for (size_t i = 0; tree && i < total && n == 0; i++)
        if (all[i].pid == root)
            tree[n++] = root;
    for (size_t next = 0; next < n; next++) {
        long parent = tree[next];
        for (size_t i = first_child(all, total, parent); i < total && all[i].ppid == parent; i++)
            if (n < total)
                tree[n++] = all[i].pid;
    }
    free(all);
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
    m->pss_kb = pss < 0 || m->pss_kb < 0 ? -1 : m->pss_kb + pss;
}

int proc_tree_memory(long pid, proc_memory_t *out)
{
    size_t n;
    long *tree = find_tree(pid, &n);
    *out = (proc_memory_t){.footprint_kb = -1}; /* a macOS figure */
    for (size_t i = 0; i < n; i++)
        add_memory(tree[i], out);
    free(tree);
    if (n > 0 && out->procs > 0)
        return 0;
    *out = PROC_UNKNOWN_MEMORY;
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
    *all = *forced = 0;
    for (long tid; dir && (tid = next_number(dir)) >= 0;) {
        snprintf(path, sizeof path, "/proc/%ld/task/%ld/status", pid, tid);
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
    size_t n;
    long *tree = find_tree(pid, &n);
    if (n == 0 || proc_cpu_alloc(out, n) < 0) {
        free(tree);
        *out = (proc_cpu_t){0};
        return -1;
    }
    qsort(tree, n, sizeof *tree, proc_by_pid);
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

/* This process's affinity mask joined with the server's where server_pid > 0
 * (and it can be read): 0, or -1 where this process's cannot be read. */
static int affinity_masks(long server_pid, cpu_set_t *mask)
{
    cpu_set_t theirs;
    if (proc_forced_portable() || sched_getaffinity(0, sizeof *mask, mask) != 0)
        return -1;
    if (server_pid > 0 && sched_getaffinity((pid_t)server_pid, sizeof theirs, &theirs) == 0)
        CPU_OR(mask, mask, &theirs);
    return 0;
}

/*
 * /proc/stat's line per CPU: user nice system idle iowait irq softirq steal
 * ..., in clock ticks (USER_HZ). Only the CPUs in either affinity mask.
 */
int proc_host_cpu(long server_pid, proc_host_t *out)
{
    *out = (proc_host_t){0};
    cpu_set_t mine;
    if (affinity_masks(server_pid, &mine) != 0)
        return -1;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    double ns_per_tick = 1e9 / (double)sysconf(_SC_CLK_TCK);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        int cpu;
        unsigned long long idle, iowait, steal;
        if (sscanf(line, "cpu%d %*u %*u %*u %llu %llu %*u %*u %llu", &cpu, &idle, &iowait,
                   &steal) != 4 ||
            cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &mine))
            continue;
        out->cpus++;
        out->steal_ns += (uint64_t)((double)steal * ns_per_tick);
        out->idle_ns += (uint64_t)((double)(idle + iowait) * ns_per_tick);
    }
    fclose(f);
    out->steal_known = true;
    return out->cpus > 0 ? 0 : -1;
}

int proc_window_cpus(long server_pid, int *cpus, int max)
{
    cpu_set_t mine;
    if (affinity_masks(server_pid, &mine) != 0)
        return -1;
    int n = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
        if (CPU_ISSET(cpu, &mine))
            cpus[n++] = cpu;
    return n;
}

int proc_move_thread(int cpu)
{
    static cpu_set_t before;
    static bool saved;
    cpu_set_t one;
    if (proc_forced_portable())
        return -1;
    if (cpu < 0)
        return saved && sched_setaffinity(0, sizeof before, &before) == 0 ? 0 : -1;
    if (!saved && sched_getaffinity(0, sizeof before, &before) != 0)
        return -1;
    saved = true;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof one, &one) == 0 ? 0 : -1; /* 0: this thread */
}

/* The second field of each thread's schedstat: time spent waiting on a run queue. */
long long proc_run_delay_ns(long pid)
{
    char path[64];
    if (proc_forced_portable())
        return -1;
    if (pid > 0)
        snprintf(path, sizeof path, "/proc/%ld/task", pid);
    else
        snprintf(path, sizeof path, "/proc/self/task");
    DIR *d = opendir(path);
    if (!d)
        return -1;
    unsigned long long sum = 0;
    bool kept = false; /* without schedstats: no delay, at most one slice, on every thread */
    for (long tid; (tid = next_number(d)) >= 0;) {
        char file[384], buf[128];
        unsigned long long run, wait, count;
        snprintf(file, sizeof file, "%s/%ld/schedstat", path, tid);
        if (read_small_file(file, buf, sizeof buf) > 0 &&
            sscanf(buf, "%llu %llu %llu", &run, &wait, &count) == 3) {
            sum += wait;
            kept = kept || wait > 0 || count > 1;
        }
    }
    closedir(d);
    return kept ? (long long)sum : -1;
}

/* ---- single processes, for the test harness ---------------------------- */

const char *proc_lacks(proc_feature_t what)
{
    (void)what;
    return NULL;
}

const char *proc_reader(void)
{
    return "/proc";
}

/*
 * The fields of /proc/PID/stat the harness uses (see proc(5)); with
 * `vmrss`, the resident size from /proc/PID/status as ps and top show it
 * (stat's field 24 counts the same pages but can lag behind it by the
 * counts each thread caches; a scan of every process takes that one).
 */
static bool read_info(long pid, proc_info_t *out, bool vmrss)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (read_small_file(path, buf, sizeof buf) <= 0)
        return false;
    /* The command name is in parentheses and may itself hold spaces or ')'. */
    const char *after_name = strrchr(buf, ')');
    unsigned long utime, stime;
    long rss_pages;
    *out = (proc_info_t){.pid = pid, .threads = -1, .rss_kb = -1, .cpu_s = -1};
    if (!after_name ||
        sscanf(after_name + 2,
               "%c %ld %ld %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d %ld %*d %llu "
               "%*u %ld",
               &out->state, &out->ppid, &out->pgid, &utime, &stime, &out->threads, &out->started,
               &rss_pages) != 8)
        return false;
    out->cpu_s = (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
    out->rss_kb = rss_pages * (sysconf(_SC_PAGESIZE) / 1024);
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    long rss = vmrss && read_small_file(path, buf, sizeof buf) > 0 ? field_of(buf, "\nVmRSS:") : -1;
    if (rss >= 0)
        out->rss_kb = rss;
    return true;
}

bool proc_info(long pid, proc_info_t *out)
{
    return read_info(pid, out, true);
}

proc_info_t *proc_list(size_t *count)
{
    size_t capacity = 1024;
    proc_info_t *all = malloc(capacity * sizeof *all);
    DIR *dir = opendir("/proc");
    *count = 0;
    for (long pid; all && dir && (pid = next_number(dir)) >= 0;) {
        if (*count == capacity) {
            proc_info_t *grown = realloc(all, 2 * capacity * sizeof *grown);
            if (!grown)
                break;
            all = grown;
            capacity *= 2;
        }
        if (read_info(pid, &all[*count], false))
            (*count)++; /* one that exits meanwhile is simply missed */
    }
    if (dir)
        closedir(dir);
    else {
        free(all);
        all = NULL;
    }
    return all;
}

int proc_open_fds(long pid, int *lowest_free)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd", pid);
    DIR *dir = opendir(path);
    if (!dir)
        return -1;
    static proc_fds_seen_t seen;
    memset(&seen, 0, sizeof seen);
    int count = 0;
    for (long fd; (fd = next_number(dir)) >= 0; count++)
        proc_fd_seen(&seen, fd);
    closedir(dir);
    if (lowest_free)
        *lowest_free = proc_lowest_unseen(&seen);
    return count;
}

bool proc_fd_target(long pid, int fd, char *out, size_t size)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/%ld/fd/%d", pid, fd);
    ssize_t n = size > 0 ? readlink(link, out, size - 1) : -1;
    if (n < 0)
        return false;
    out[n] = '\0';
    return true;
}

bool proc_fd_limit(long pid, long *soft, long *hard)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/limits", pid);
    const char *line = read_small_file(path, buf, sizeof buf) < 0 ? NULL
                                                                 : strstr(buf, "\nMax open files");
    if (!line)
        return false;
    char *end;
    *soft = strtol(line + strlen("\nMax open files"), &end, 10);
    *hard = strtol(end, NULL, 10);
    return true;
}

int proc_set_fd_limit(long pid, long soft, long hard)
{
    struct rlimit rl = {.rlim_cur = (rlim_t)soft, .rlim_max = (rlim_t)hard};
    return prlimit((pid_t)pid, RLIMIT_NOFILE, &rl, NULL) == 0 ? 0 : errno;
}

/* SigCgt in /proc/PID/status: the caught signals, a hexadecimal mask. */
int proc_catches(long pid, int sig)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    const char *line = read_small_file(path, buf, sizeof buf) < 0 ? NULL : strstr(buf, "\nSigCgt:");
    if (!line)
        return -1;
    unsigned long long mask = strtoull(line + strlen("\nSigCgt:"), NULL, 16);
    return (int)((mask >> (sig - 1)) & 1);
}

bool proc_die_with_parent(int sig)
{
    return prctl(PR_SET_PDEATHSIG, sig) == 0;
}

bool proc_adopt_orphans(void)
{
    return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
}
