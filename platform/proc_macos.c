/*
 * proc_macos.c - proc.h's reader for macOS: libproc (proc_pidinfo,
 * proc_pid_rusage, proc_listchildpids) and, for what libproc leaves out
 * (a zombie's state, caught signals), the kern.proc sysctl's kinfo_proc.
 */
#define _DARWIN_C_SOURCE /* libproc and sysctl under strict -std=c11 */

#include "proc_os.h"
#include "proc_unoffered.h"

#include <errno.h>
#include <libproc.h>
#include <mach/mach.h>
#include <mach/mach_time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/proc_info.h>
#include <sys/resource.h>
#include <sys/sysctl.h>
#include <sys/types.h>
#include <unistd.h>

#include "proc_sysctl.h"

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
    *out = PROC_UNKNOWN_MEMORY;
    return -1;
}

/* pti_total_user and pti_total_system are in Mach time units, not always ns. */
int proc_tree_cpu(long pid, proc_cpu_t *out)
{
    mach_timebase_info_data_t tb;
    size_t n;
    long *tree = find_tree(pid, &n);
    if (n == 0 || mach_timebase_info(&tb) != KERN_SUCCESS || proc_cpu_alloc(out, n) < 0) {
        free(tree);
        *out = (proc_cpu_t){0};
        return -1;
    }
    qsort(tree, n, sizeof *tree, proc_by_pid);
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

/*
 * host_processor_info: per CPU, tick counters (user, system, idle, nice)
 * at the clock's rate. macOS binds no process to a CPU, so every CPU is
 * measured; no steal counter.
 */
int proc_host_cpu(long server_pid, proc_host_t *out)
{
    (void)server_pid;
    *out = (proc_host_t){0};
    natural_t cpus = 0;
    processor_info_array_t info;
    mach_msg_type_number_t words;
    if (host_processor_info(mach_host_self(), PROCESSOR_CPU_LOAD_INFO, &cpus, &info, &words) !=
        KERN_SUCCESS)
        return -1;
    processor_cpu_load_info_t load = (processor_cpu_load_info_t)info;
    long hz = sysconf(_SC_CLK_TCK);
    for (natural_t cpu = 0; cpu < cpus; cpu++)
        out->idle_ns += (uint64_t)load[cpu].cpu_ticks[CPU_STATE_IDLE] * 1000000000u /
                        (uint64_t)(hz > 0 ? hz : 100);
    out->cpus = (int)cpus;
    vm_deallocate(mach_task_self(), (vm_address_t)info, words * sizeof(integer_t));
    return out->cpus > 0 ? 0 : -1;
}

/* ---- single processes, for the test harness ---------------------------- */

const char *proc_lacks(proc_feature_t what)
{
    switch (what) {
    case PROC_FD_LIMIT:
    case PROC_SET_FD_LIMIT:
        return "macOS has no way to read or set another process's RLIMIT_NOFILE";
    case PROC_DEATH_SIGNAL:
        return "macOS has no death signal for a child";
    default:
        return NULL;
    }
}

const char *proc_reader(void)
{
    return "libproc";
}

/*
 * The BSD layer marks a process stopped or a zombie; a live one is
 * "running" there whether or not it sleeps, so, as ps(1) does, it runs when
 * one of its threads does.
 */
static char state_of(long pid, const struct kinfo_proc *kp)
{
    switch (kp->kp_proc.p_stat) {
    case SZOMB: return 'Z';
    case SSTOP: return 'T';
    case SIDL: return 'I';
    default: break;
    }
    uint64_t threads[512];
    int bytes = proc_pidinfo((int)pid, PROC_PIDLISTTHREADS, 0, threads, (int)sizeof threads);
    for (int i = 0; bytes > 0 && i < bytes / (int)sizeof *threads; i++) {
        struct proc_threadinfo th;
        if (proc_pidinfo((int)pid, PROC_PIDTHREADINFO, threads[i], &th, sizeof th) ==
                (int)sizeof th &&
            th.pth_run_state == TH_STATE_RUNNING)
            return 'R';
    }
    return 'S';
}

static void fill_info(const struct kinfo_proc *kp, proc_info_t *out)
{
    long pid = kp->kp_proc.p_pid;
    const struct timeval *t = &kp->kp_proc.p_starttime;
    *out = (proc_info_t){.pid = pid, .ppid = kp->kp_eproc.e_ppid, .pgid = kp->kp_eproc.e_pgid,
                         .started = (unsigned long long)t->tv_sec * 1000000u +
                                    (unsigned long long)t->tv_usec,
                         .threads = -1, .rss_kb = -1, .cpu_s = -1};
    out->state = state_of(pid, kp);
    struct proc_taskinfo ti;
    mach_timebase_info_data_t tb;
    if (out->state != 'Z' && task_info_of(pid, &ti) && mach_timebase_info(&tb) == KERN_SUCCESS) {
        out->threads = ti.pti_threadnum;
        out->rss_kb = (long)(ti.pti_resident_size / 1024);
        uint64_t mach = ti.pti_total_user + ti.pti_total_system;
        out->cpu_s = (double)(mach * tb.numer / tb.denom) / 1e9;
    } else if (out->state == 'Z') {
        out->threads = 0;
        out->rss_kb = 0;
    }
}

bool proc_info(long pid, proc_info_t *out)
{
    struct kinfo_proc kp;
    if (!kinfo_of(pid, &kp) || kp.kp_proc.p_pid != pid)
        return false;
    fill_info(&kp, out);
    return true;
}

proc_info_t *proc_list(size_t *count)
{
    int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_ALL, 0};
    size_t n = 0;
    struct kinfo_proc *kp = kinfo_table(mib, 4, &n);
    return proc_infos_of(kp, n, count, fill_info);
}

int proc_open_fds(long pid, int *lowest_free)
{
    int bytes = proc_pidinfo((int)pid, PROC_PIDLISTFDS, 0, NULL, 0);
    if (bytes <= 0)
        return -1;
    bytes += 16 * (int)sizeof(struct proc_fdinfo); /* room for a few opened meanwhile */
    struct proc_fdinfo *fds = malloc((size_t)bytes);
    int got = fds ? proc_pidinfo((int)pid, PROC_PIDLISTFDS, 0, fds, bytes) : -1;
    if (got < 0) {
        free(fds);
        return -1;
    }
    int n = got / (int)sizeof *fds;
    if (lowest_free) {
        int low = 0;
        for (bool taken = true; taken; low += taken) {
            taken = false;
            for (int i = 0; i < n && !taken; i++)
                taken = fds[i].proc_fd == low;
        }
        *lowest_free = low;
    }
    free(fds);
    return n;
}

bool proc_fd_target(long pid, int fd, char *out, size_t size)
{
    struct vnode_fdinfowithpath vi;
    if (size == 0 || proc_pidfdinfo((int)pid, fd, PROC_PIDFDVNODEPATHINFO, &vi, sizeof vi) !=
                         (int)sizeof vi)
        return false;
    snprintf(out, size, "%s", vi.pvip.vip_path);
    return true;
}

int proc_catches(long pid, int sig)
{
    struct kinfo_proc kp;
    if (!kinfo_of(pid, &kp) || kp.kp_proc.p_pid != pid)
        return -1;
    return (kp.kp_proc.p_sigcatch & sigmask(sig)) != 0;
}
