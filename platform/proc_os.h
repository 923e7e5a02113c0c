/*
 * proc_os.h - what proc.c, the part every system shares, gives the one
 * reader the build adds beside it:
 *   proc_linux.c     /proc and CPU-time clocks
 *   proc_macos.c     libproc
 *   proc_freebsd.c   the kern.proc sysctls
 *   proc_portable.c  ps(1) for the harness; the client's figures unknown
 * Each reader defines the functions proc.h leaves to it (see there).
 */
#ifndef LOADGEN_PROC_OS_H
#define LOADGEN_PROC_OS_H

#include "proc.h"

/* Every memory figure unknown. */
extern const proc_memory_t PROC_UNKNOWN_MEMORY;

/* Say once on stderr that the server's figures are left null here. */
void proc_note_unsupported(void);

/* Room for `count` readings in *r (zeroed); 0, or -1 out of memory. */
int proc_cpu_alloc(proc_cpu_t *r, size_t count);

/* The descriptors a table walk saw, for proc_open_fds()' lowest free one
 * (those past PROC_FDS_SEEN are counted, not remembered). */
enum { PROC_FDS_SEEN = 4096 };
typedef struct {
    bool used[PROC_FDS_SEEN];
} proc_fds_seen_t;
void proc_fd_seen(proc_fds_seen_t *seen, long fd);
int proc_lowest_unseen(const proc_fds_seen_t *seen);

/* qsort/bsearch order of longs (pids). */
int proc_by_pid(const void *a, const void *b);

#endif /* LOADGEN_PROC_OS_H */
