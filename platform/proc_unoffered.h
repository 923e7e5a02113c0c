/*
 * proc_unoffered.h - the calls of proc.h that macOS and the portable path
 * answer "not offered": placing a thread on a named CPU (macOS offers
 * affinity hints only; the portable path reads nothing), so loadgen's
 * speed probe leaves its keys null there; another process's open-file
 * limit (no call reads or sets it from outside on macOS; ps(1) has no
 * field for it), so the harness skips what needs it; the kernel's memory
 * and the run delay (Linux's figures alone); and the harness's process
 * control (a death signal, a reaper), which it then does without.
 * Header-only, as proc_sysctl.h is: included once, by proc_macos.c or
 * proc_portable.c, whichever the build compiles.
 */
#ifndef LADDER_PROC_UNOFFERED_H
#define LADDER_PROC_UNOFFERED_H

#include <errno.h>

#include "proc_os.h"

int proc_window_cpus(long server_pid, int *cpus, int max)
{
    (void)server_pid, (void)cpus, (void)max;
    return -1;
}

int proc_move_thread(int cpu)
{
    (void)cpu;
    return -1;
}

bool proc_fd_limit(long pid, long *soft, long *hard)
{
    (void)pid, (void)soft, (void)hard;
    return false;
}

int proc_set_fd_limit(long pid, long soft, long hard)
{
    (void)pid, (void)soft, (void)hard;
    return ENOSYS;
}

void proc_kernel_memory(proc_kernel_t *out)
{
    *out = (proc_kernel_t){-1, -1, -1};
}

long long proc_run_delay_ns(long pid)
{
    (void)pid;
    return -1;
}

bool proc_die_with_parent(int sig)
{
    (void)sig;
    return false;
}

bool proc_adopt_orphans(void)
{
    return false;
}

#endif /* LADDER_PROC_UNOFFERED_H */
