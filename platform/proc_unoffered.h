/*
 * proc_unoffered.h - the calls of proc.h that macOS and the portable path
 * answer "not offered": placing a thread on a named CPU (macOS offers
 * affinity hints only; the portable path reads nothing), so loadgen's
 * speed probe leaves its keys null there, and another process's open-file
 * limit (no call reads or sets it from outside on macOS; ps(1) has no
 * field for it), so the harness skips what needs it. Header-only, as
 * proc_sysctl.h is: included once, by proc_macos.c or proc_portable.c,
 * whichever the build compiles.
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

#endif /* LADDER_PROC_UNOFFERED_H */
