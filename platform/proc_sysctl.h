/*
 * proc_sysctl.h - the kern.proc tables and one process's record, read the
 * same way by the two readers that have them: proc_macos.c and
 * proc_freebsd.c. Header-only, as common/ is: each reader is compiled
 * alone, and Linux has no sysctl(2) to build a shared file against.
 * Include it after the headers that define struct kinfo_proc
 * (<sys/sysctl.h> on macOS, <sys/user.h> on FreeBSD).
 */
#ifndef LADDER_PROC_SYSCTL_H
#define LADDER_PROC_SYSCTL_H

#include "proc_os.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/sysctl.h>

/*
 * The table the sysctl `mib` (`depth` names) gives, malloc'ed, its size in
 * *len bytes; NULL if it cannot be read. The table can grow between asking
 * its size and reading it (a process or a descriptor more), hence a margin
 * of a quarter plus `slack` bytes (one record), and a new try on ENOMEM.
 */
static void *sysctl_table(int *mib, unsigned depth, size_t slack, size_t *len)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        *len = 0;
        if (sysctl(mib, depth, NULL, len, NULL, 0) < 0)
            return NULL;
        *len += *len / 4 + slack;
        void *table = malloc(*len);
        if (!table)
            return NULL;
        if (sysctl(mib, depth, table, len, NULL, 0) == 0)
            return table;
        free(table);
        if (errno != ENOMEM)
            return NULL;
    }
    return NULL;
}

/* The kinfo_proc records the sysctl `mib` gives, malloc'ed, *count of them. */
static struct kinfo_proc *kinfo_table(int *mib, unsigned depth, size_t *count)
{
    size_t len = 0;
    struct kinfo_proc *kp = sysctl_table(mib, depth, sizeof *kp, &len);
    *count = kp ? len / sizeof *kp : 0;
    return kp;
}

/* One process's kinfo_proc (KERN_PROC_PID), a zombie's too; false when there is none. */
static bool kinfo_of(long pid, struct kinfo_proc *kp)
{
    int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_PID, (int)pid};
    size_t len = sizeof *kp;
    return sysctl(mib, 4, kp, &len, NULL, 0) == 0 && len == sizeof *kp;
}

/* proc_list()'s answer from a table of n records, which it frees: each
 * record as the reader's fill() reads it. */
static proc_info_t *proc_infos_of(struct kinfo_proc *kp, size_t n, size_t *count,
                                  void (*fill)(const struct kinfo_proc *, proc_info_t *))
{
    proc_info_t *all = kp ? malloc((n ? n : 1) * sizeof *all) : NULL;
    for (size_t i = 0; all && i < n; i++)
        fill(&kp[i], &all[i]);
    free(kp);
    *count = all ? n : 0;
    return all;
}

#endif /* LADDER_PROC_SYSCTL_H */
