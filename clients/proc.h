/*
 * proc.h - what the server under test costs, read from Linux's /proc.
 *
 * A server is one process (01, 04 to 07), one process with a thread per
 * client (03) or a process per client (02), so every figure is summed over
 * the server's pid and all of its descendants.
 *
 * Memory comes two ways. RSS counts a page once for every process that maps
 * it, so fork's children, which share most pages with their parent, add up
 * to far more than the machine spends. PSS (proportional set size) divides
 * each shared page among its sharers: the honest sum.
 *
 * Without /proc (macOS, the BSDs) proc_supported() is false and loadgen
 * refuses --server-pid.
 */
#ifndef LOADGEN_PROC_H
#define LOADGEN_PROC_H

#include <stdbool.h>

typedef struct {
    long procs;   /* the server process and its descendants */
    long threads; /* "Threads:" of /proc/P/status, summed */
    long rss_kb;  /* "VmRSS:" of /proc/P/status, summed */
    long pss_kb;  /* "Pss:" of /proc/P/smaps_rollup, summed; -1 if unreadable */
} proc_memory_t;

bool proc_supported(void);
bool proc_exists(long pid);

/* Memory of pid's process tree right now. 0, or -1 if pid is gone. */
int proc_tree_memory(long pid, proc_memory_t *out);

/*
 * CPU time (user + system) used so far by pid's process tree, in ms, or a
 * negative number if pid is gone. Children that already exited still count
 * once the root has reaped them (cutime and cstime), so the difference of
 * two readings is what the server spent in between. Precise to the
 * microsecond for single-threaded processes where /proc/P/sched exists,
 * otherwise to one clock tick (usually 10 ms) per process.
 */
double proc_tree_cpu_ms(long pid);

#endif /* LOADGEN_PROC_H */
