/*
 * proc.h - what the server under test costs: its CPU time and memory.
 *
 * A server is one process (01, 04 to 07), one process with a thread per
 * client (03) or a process per client (02), so every figure is summed over
 * the server's pid and its descendants, each process with all its threads.
 *
 * CPU time is read in nanoseconds from each process's CPU-time clock
 * (clock_getcpuclockid(3) and clock_gettime(2) on Linux, which cover every
 * thread), never from 10 ms clock ticks. The process tree is found through
 * /proc. A process that exits between two readings takes its CPU time with
 * it (the kernel's count for reaped children is in ticks only and is not
 * mixed in), so the CPU spent between two readings is a sum over the
 * processes alive at the second one:
 *   - a process seen in both readings: the difference;
 *   - a process born after the first reading: all it has used;
 *   - a process that exited in between: nothing.
 * No term can be negative. For 02-fork this is exact while its clients stay
 * connected (c10k, hold, scan keep them all open through the window); a
 * child whose client leaves mid-window is missed, so the sum is then a
 * lower bound.
 *
 * Memory comes two ways. RSS counts a page once for every process that maps
 * it, so fork's children, which share most pages with their parent, add up
 * to far more than the machine spends. PSS (proportional set size) divides
 * each shared page among its sharers: the honest sum (Linux only).
 *
 * Off Linux: on macOS libproc gives each process's total CPU time
 * (proc_pidinfo PROC_PIDTASKINFO), resident size and physical footprint
 * (proc_pid_rusage's ri_phys_footprint: the memory the kernel charges the
 * process, shared pages not divided, what Activity Monitor shows as
 * "Memory"), for the server and its direct children; there is no PSS. On
 * FreeBSD the kern.proc sysctl's kinfo_proc gives CPU time (ki_runtime, in
 * microseconds), resident pages and threads, for the whole tree. Elsewhere
 * the figures are unknown. Either way the run goes on and stderr says once
 * what is missing.
 *
 * LADDER_FORCE_PORTABLE=1 in the environment makes a Linux build take the
 * off-Linux path of the whole client (proc_forced_portable): here, no
 * /proc-derived figure at all, every one null.
 */
#ifndef LOADGEN_PROC_H
#define LOADGEN_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every count is -1 when it could not be read. */
typedef struct {
    long procs;   /* the server process and its descendants */
    long threads; /* their threads, summed */
    long rss_kb;  /* resident set, summed */
    long pss_kb;  /* proportional set size, summed (Linux) */
    long footprint_kb; /* physical footprint, summed (macOS) */
} proc_memory_t;

/* LADDER_FORCE_PORTABLE=1: behave as off Linux (see above). */
bool proc_forced_portable(void);

/* Whether a process with this id exists (also one we may not signal). */
bool proc_exists(long pid);

/* Memory of pid's process tree right now. 0, or -1 if nothing could be read. */
int proc_tree_memory(long pid, proc_memory_t *out);

/*
 * One reading of the CPU time and context switches of every process of a
 * tree. A context switch is the process giving up its CPU: voluntarily
 * (it went to sleep: one per wakeup of a server that sleeps in the kernel)
 * or involuntarily (the scheduler took the CPU away).
 */
typedef struct {
    long *pids;       /* ascending */
    uint64_t *ns;     /* ns[i]: CPU time pids[i] has used so far, all threads */
    uint64_t *csw;    /* its context switches so far, all threads, both kinds */
    uint64_t *icsw;   /* the involuntary ones among them */
    size_t count;
    bool switches;    /* csw is known (Linux, macOS, FreeBSD) */
    bool involuntary; /* icsw is known (Linux, FreeBSD; macOS counts only the total) */
} proc_cpu_t;

/* Read it now. 0, or -1 (pid gone, or no way to read it here): *out is then empty. */
int proc_tree_cpu(long pid, proc_cpu_t *out);

/* CPU time in ms the tree spent from `before` to `after` (see above); never negative. */
double proc_cpu_ms_between(const proc_cpu_t *before, const proc_cpu_t *after);

/*
 * Context switches from `before` to `after`, counted like CPU time (a
 * process born since counts all of its own; one that exited, none). -1 when
 * unknown: *total without switch counts, *involuntary also on macOS.
 */
void proc_switches_between(const proc_cpu_t *before, const proc_cpu_t *after, long long *total,
                           long long *involuntary);

void proc_cpu_free(proc_cpu_t *r);

/*
 * The kernel's own memory on the whole machine, KiB (-1: unknown; Linux
 * only, from /proc/meminfo): kernel stacks (one per thread), page tables
 * (per process) and the slab allocator (sockets, tasks, files, epoll
 * items...). Read before and after opening connections, the growth is what
 * those connections cost the kernel, on both ends of each loopback
 * connection and for anything else the machine did meanwhile.
 */
typedef struct {
    long stack_kb, page_tables_kb, slab_kb;
} proc_kernel_t;

void proc_kernel_memory(proc_kernel_t *out);

#endif /* LOADGEN_PROC_H */
