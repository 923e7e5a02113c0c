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
 *
 * One reader per system, chosen by the build beside proc.c (which holds
 * what they share): proc_linux.c, proc_macos.c, proc_freebsd.c, and
 * proc_portable.c anywhere else, which leaves the client's figures unknown
 * and reads single processes through ps(1) for the test harness. The last
 * section below is the harness's: the black-box tests watch the servers
 * through the same readers.
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

/*
 * The CPUs around a measurement, to tell a quiet window from a contended
 * one. `cpus` is how many CPUs the load client and the server may run on
 * (their affinity masks joined); idle_ns how long those CPUs were idle
 * (idle and iowait), and steal_ns the time the hypervisor gave them to
 * other guests, where steal_known says the system counts it (Linux only:
 * elsewhere steal is unknown, not 0). The rest of their time, less what the
 * server and the client used, went to someone else (or to the kernel's own
 * work for the connections that it charges to no task). The idle time is
 * the figure to use: the kernel measures it at every entry and exit of
 * idle, while its busy fields (user, system, ...) are sampled at ticks and
 * can lag a second behind. Linux reads /proc/stat, macOS
 * host_processor_info's and FreeBSD kern.cp_times' per-CPU ticks. 0, or -1:
 * not readable here (the portable reader), so the window says "not
 * measured".
 */
typedef struct {
    int cpus;
    uint64_t idle_ns, steal_ns;
    bool steal_known;
} proc_host_t;

int proc_host_cpu(long server_pid, proc_host_t *out);

/*
 * The same CPUs listed (this process's and the server's affinity masks
 * joined), at most `max` of them into `cpus`: loadgen times its speed probe
 * on each. Returns how many, or -1 where the system has no affinity to read
 * (macOS) or it is not read here.
 */
int proc_window_cpus(long server_pid, int *cpus, int max);

/*
 * Move the calling thread onto one CPU (cpu >= 0), or back onto the CPUs it
 * had before its first move (cpu < 0). 0 on success, -1 where it cannot.
 */
int proc_move_thread(int cpu);

/*
 * How long pid's threads (pid 0: this process) have been runnable but
 * waiting for a CPU, ns so far (Linux: /proc/P/task/T/schedstat). -1 when
 * the kernel does not keep it (schedstats off: every delay reads 0) or it
 * cannot be read here.
 */
long long proc_run_delay_ns(long pid);

/*
 * The CPU time of every task in a cpuacct cgroup so far (Linux, cgroup v1
 * cpuacct.usage or v2 cpu.stat's usage_usec), ns: one reading for a whole
 * server, its threads and children together. -1 when it cannot be read.
 */
long long proc_cgroup_cpu_ns(const char *dir);

/* ---- single processes, for the test harness (tests/harness.c) ----------- */

/* What some reader cannot see; proc_lacks() says why. */
typedef enum {
    PROC_THREADS,      /* a process's thread count */
    PROC_FDS,          /* its open descriptors: count, lowest free, targets */
    PROC_FD_LIMIT,     /* its RLIMIT_NOFILE, read from outside */
    PROC_SET_FD_LIMIT, /* ... and changed from outside (prlimit) */
    PROC_SIGNALS,      /* the signals it catches */
    PROC_FINE_CPU,     /* CPU time finer than a second */
    PROC_DEATH_SIGNAL, /* a child's death signal when its parent dies */
} proc_feature_t;

/* NULL when this reader reads `what`; else why not, in a few words. */
const char *proc_lacks(proc_feature_t what);

/* The reader compiled in: "/proc", "libproc", "kern.proc sysctl" or "ps(1)". */
const char *proc_reader(void);

typedef struct {
    long pid, ppid, pgid;
    char state;                 /* 'R' runs, 'S' sleeps, 'T' stopped, 'Z' zombie, ... */
    unsigned long long started; /* start time in the reader's unit: pid and
                                   start time name a process across pid reuse */
    long threads;               /* -1: unknown */
    long rss_kb;                /* -1: unknown */
    double cpu_s;               /* user + system so far, all threads; -1: unknown */
} proc_info_t;

/* One process (a zombie too, with what is left of it). false: gone or unreadable. */
bool proc_info(long pid, proc_info_t *out);

/* Every process on the machine, malloc'ed, *count of them; NULL on failure. */
proc_info_t *proc_list(size_t *count);

/* Open descriptors of pid; *lowest_free (if not NULL) the number its next
 * open() would get. -1: gone or unreadable (see PROC_FDS). */
int proc_open_fds(long pid, int *lowest_free);

/* What descriptor fd of pid refers to ("/dev/null", ...). false: unknown. */
bool proc_fd_target(long pid, int fd, char *out, size_t size);

/* pid's RLIMIT_NOFILE. false: unknown (see PROC_FD_LIMIT). */
bool proc_fd_limit(long pid, long *soft, long *hard);

/* Set it from outside: 0, or an errno (ENOSYS: no way here; EPERM: a
 * raised hard limit needs root). */
int proc_set_fd_limit(long pid, long soft, long hard);

/* 1: pid catches sig, 0: it does not, -1: unknown (see PROC_SIGNALS). */
int proc_catches(long pid, int sig);

/*
 * Process control that only some systems have. Where it is missing the
 * harness does without: a child started from the harness's fork, before
 * exec, asks to die with its parent (Linux: PR_SET_PDEATHSIG, FreeBSD:
 * PROC_PDEATHSIG_CTL; elsewhere false, see PROC_DEATH_SIGNAL, and a
 * watchdog kills its process group instead); the harness asks
 * that its children's orphans come back to it (Linux's child subreaper,
 * FreeBSD's reaper; elsewhere false, and init reaps them).
 */
bool proc_die_with_parent(int sig);
bool proc_adopt_orphans(void);

#endif /* LOADGEN_PROC_H */
