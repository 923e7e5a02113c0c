/*
 * proc_freebsd.c - proc.h's reader for FreeBSD: the kern.proc sysctls
 * (kinfo_proc for processes, kinfo_file for descriptors, rlimit for limits)
 * and procctl(2) for a reaper and a death signal.
 */
#include "proc_os.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/param.h>
#include <sys/cpuset.h>
#include <sys/procctl.h>
#include <sys/resource.h>
#include <sys/sysctl.h>
#include <sys/user.h>
#include <unistd.h>

#include "proc_sysctl.h"

/* Every process on the machine (KERN_PROC_PROC: one entry per process, not
 * per thread); malloc'ed. */
static struct kinfo_proc *all_processes(size_t *count)
{
    int mib[3] = {CTL_KERN, KERN_PROC, KERN_PROC_PROC};
    return kinfo_table(mib, 3, count);
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

/* The table of every process with the entries of root's tree moved to its
 * front, *kept of them; malloc'ed. (A child of root is found by in_tree()'s
 * first step.) */
static struct kinfo_proc *tree_table(long root, size_t *kept)
{
    size_t n = 0;
    struct kinfo_proc *kp = all_processes(&n);
    *kept = 0;
    for (size_t i = 0; kp && i < n; i++)
        if (kp[i].ki_pid == (pid_t)root || in_tree(kp, n, kp[i].ki_ppid, (pid_t)root))
            kp[(*kept)++] = kp[i];
    return kp;
}

int proc_tree_memory(long pid, proc_memory_t *out)
{
    size_t kept;
    struct kinfo_proc *kp = tree_table(pid, &kept);
    *out = (proc_memory_t){.pss_kb = -1, .footprint_kb = -1};
    long page_kb = sysconf(_SC_PAGESIZE) / 1024;
    for (size_t i = 0; i < kept; i++) {
        out->procs++;
        out->threads += kp[i].ki_numthreads;
        out->rss_kb += (long)kp[i].ki_rssize * page_kb;
    }
    free(kp);
    if (out->procs > 0)
        return 0;
    *out = PROC_UNKNOWN_MEMORY;
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
    size_t kept;
    struct kinfo_proc *kp = tree_table(pid, &kept);
    if (kept == 0 || proc_cpu_alloc(out, kept) < 0) {
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

/* This process's affinity mask, and the server's where server_pid > 0
 * (else empty): 0, or -1 where this process's cannot be read. */
static int affinity_masks(long server_pid, cpuset_t *mine, cpuset_t *theirs)
{
    CPU_ZERO(theirs);
    if (cpuset_getaffinity(CPU_LEVEL_WHICH, CPU_WHICH_PID, -1, sizeof *mine, mine) != 0)
        return -1;
    if (server_pid > 0)
        cpuset_getaffinity(CPU_LEVEL_WHICH, CPU_WHICH_PID, (id_t)server_pid, sizeof *theirs,
                           theirs);
    return 0;
}

/*
 * kern.cp_times: per CPU, CPUSTATES tick counters (user, nice, system,
 * interrupt, idle) at the statistics clock's rate; no steal counter. Only
 * the CPUs of either affinity mask.
 */
int proc_host_cpu(long server_pid, proc_host_t *out)
{
    *out = (proc_host_t){0};
    cpuset_t mine, theirs;
    if (affinity_masks(server_pid, &mine, &theirs) != 0)
        return -1;
    struct clockinfo clock;
    size_t len = sizeof clock;
    if (sysctlbyname("kern.clockrate", &clock, &len, NULL, 0) != 0 || clock.stathz <= 0)
        return -1;
    long ticks[CPUSTATES * 256];
    len = sizeof ticks;
    if (sysctlbyname("kern.cp_times", ticks, &len, NULL, 0) != 0)
        return -1;
    size_t cpus = len / (sizeof ticks[0] * CPUSTATES);
    for (size_t cpu = 0; cpu < cpus && cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &mine) && !CPU_ISSET(cpu, &theirs))
            continue;
        out->cpus++;
        out->idle_ns += (uint64_t)ticks[cpu * CPUSTATES + CP_IDLE] * 1000000000u /
                        (uint64_t)clock.stathz;
    }
    return out->cpus > 0 ? 0 : -1;
}

int proc_window_cpus(long server_pid, int *cpus, int max)
{
    cpuset_t mine, theirs;
    if (affinity_masks(server_pid, &mine, &theirs) != 0)
        return -1;
    int n = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
        if (CPU_ISSET(cpu, &mine) || CPU_ISSET(cpu, &theirs))
            cpus[n++] = cpu;
    return n;
}

int proc_move_thread(int cpu)
{
    static cpuset_t before;
    static bool saved;
    cpuset_t one;
    if (cpu < 0)
        return saved && cpuset_setaffinity(CPU_LEVEL_WHICH, CPU_WHICH_TID, -1, sizeof before,
                                           &before) == 0 ? 0 : -1;
    if (!saved &&
        cpuset_getaffinity(CPU_LEVEL_WHICH, CPU_WHICH_TID, -1, sizeof before, &before) != 0)
        return -1;
    saved = true;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return cpuset_setaffinity(CPU_LEVEL_WHICH, CPU_WHICH_TID, -1, sizeof one, &one) == 0 ? 0 : -1;
}

long long proc_run_delay_ns(long pid)
{
    (void)pid;
    return -1;
}

/* ---- single processes, for the test harness ---------------------------- */

const char *proc_lacks(proc_feature_t what)
{
    (void)what;
    return NULL;
}

const char *proc_reader(void)
{
    return "kern.proc sysctl";
}

static char state_letter(char stat)
{
    switch (stat) {
    case SRUN: return 'R';
    case SSTOP: return 'T';
    case SZOMB: return 'Z';
    case SIDL: return 'I';
    case SLOCK: return 'D';
    default: return 'S'; /* SSLEEP, SWAIT */
    }
}

static void fill_info(const struct kinfo_proc *kp, proc_info_t *out)
{
    *out = (proc_info_t){
        .pid = kp->ki_pid, .ppid = kp->ki_ppid, .pgid = kp->ki_pgid,
        .state = state_letter(kp->ki_stat),
        .started = (unsigned long long)kp->ki_start.tv_sec * 1000000u +
                   (unsigned long long)kp->ki_start.tv_usec,
        .threads = kp->ki_numthreads,
        .rss_kb = (long)kp->ki_rssize * (sysconf(_SC_PAGESIZE) / 1024),
        .cpu_s = (double)kp->ki_runtime / 1e6};
}

bool proc_info(long pid, proc_info_t *out)
{
    struct kinfo_proc kp;
    if (!kinfo_of(pid, &kp))
        return false;
    fill_info(&kp, out);
    return true;
}

proc_info_t *proc_list(size_t *count)
{
    size_t n = 0;
    struct kinfo_proc *kp = all_processes(&n);
    return proc_infos_of(kp, n, count, fill_info);
}

/* pid's descriptors: kinfo_file records, each kf_structsize bytes long. */
static char *file_table(long pid, size_t *len)
{
    int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_FILEDESC, (int)pid};
    return sysctl_table(mib, 4, sizeof(struct kinfo_file), len);
}

/* The next record, or NULL at the end. */
static const struct kinfo_file *next_file(const char *buf, size_t len, size_t *at)
{
    if (*at + sizeof(int) > len)
        return NULL;
    const struct kinfo_file *kf = (const struct kinfo_file *)(const void *)(buf + *at);
    if (kf->kf_structsize <= 0 || *at + (size_t)kf->kf_structsize > len)
        return NULL;
    *at += (size_t)kf->kf_structsize;
    return kf;
}

int proc_open_fds(long pid, int *lowest_free)
{
    size_t len, at = 0;
    char *buf = file_table(pid, &len);
    if (!buf)
        return -1;
    static proc_fds_seen_t seen;
    memset(&seen, 0, sizeof seen);
    int count = 0;
    for (const struct kinfo_file *kf; (kf = next_file(buf, len, &at)) != NULL;)
        if (kf->kf_fd >= 0) { /* the negative ones: cwd, root, text, ... */
            count++;
            proc_fd_seen(&seen, kf->kf_fd);
        }
    free(buf);
    if (lowest_free)
        *lowest_free = proc_lowest_unseen(&seen);
    return count;
}

bool proc_fd_target(long pid, int fd, char *out, size_t size)
{
    size_t len, at = 0;
    char *buf = file_table(pid, &len);
    bool found = false;
    for (const struct kinfo_file *kf; buf && !found && (kf = next_file(buf, len, &at)) != NULL;)
        if (kf->kf_fd == fd && size > 0) {
            snprintf(out, size, "%s", kf->kf_path);
            found = true;
        }
    free(buf);
    return found;
}

bool proc_fd_limit(long pid, long *soft, long *hard)
{
    int mib[5] = {CTL_KERN, KERN_PROC, KERN_PROC_RLIMIT, (int)pid, RLIMIT_NOFILE};
    struct rlimit rl;
    size_t len = sizeof rl;
    if (sysctl(mib, 5, &rl, &len, NULL, 0) < 0)
        return false;
    *soft = (long)rl.rlim_cur;
    *hard = (long)rl.rlim_max;
    return true;
}

/* The same sysctl, written: raising a hard limit needs root, as with prlimit. */
int proc_set_fd_limit(long pid, long soft, long hard)
{
    int mib[5] = {CTL_KERN, KERN_PROC, KERN_PROC_RLIMIT, (int)pid, RLIMIT_NOFILE};
    struct rlimit rl = {.rlim_cur = (rlim_t)soft, .rlim_max = (rlim_t)hard};
    return sysctl(mib, 5, NULL, NULL, &rl, sizeof rl) == 0 ? 0 : errno;
}

int proc_catches(long pid, int sig)
{
    struct kinfo_proc kp;
    if (sig <= 0 || !kinfo_of(pid, &kp))
        return -1;
    unsigned bit = (unsigned)(sig - 1);
    return (kp.ki_sigcatch.__bits[bit / 32] >> (bit % 32)) & 1;
}

bool proc_die_with_parent(int sig)
{
    return procctl(P_PID, 0, PROC_PDEATHSIG_CTL, &sig) == 0;
}

bool proc_adopt_orphans(void)
{
    return procctl(P_PID, getpid(), PROC_REAP_ACQUIRE, NULL) == 0;
}
