/*
 * proc_portable.c - proc.h's reader where the build knows no better one
 * (and, with LADDER_FORCE_PORTABLE at configure time, in the test suite on
 * Linux, to run it the way it runs off Linux).
 *
 * The client's figures (a server's CPU and memory over a window) are left
 * unknown, as before: reading them through ps(1) would cost a process per
 * reading in the middle of a measurement. The harness's single-process
 * readings come from ps(1), with only the output fields that the ps of
 * Linux (procps), macOS and FreeBSD all have: pid, ppid, pgid, state, rss
 * (KiB), time (CPU time, [dd-]hh:mm:ss on procps, m:ss.cc on the BSDs) and
 * lstart (the start time, to the second). Threads, descriptors, limits and
 * caught signals have no field common to the three: proc_lacks says so.
 */
#define _GNU_SOURCE /* POSIX declarations under strict -std=c11 */

#include "proc_os.h"
#include "proc_unoffered.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- the client's figures: unknown, said once --------------------------- */

int proc_tree_memory(long pid, proc_memory_t *out)
{
    (void)pid;
    proc_note_unsupported();
    *out = PROC_UNKNOWN_MEMORY;
    return -1;
}

int proc_tree_cpu(long pid, proc_cpu_t *out)
{
    (void)pid;
    proc_note_unsupported();
    *out = (proc_cpu_t){0};
    return -1;
}

int proc_host_cpu(long server_pid, proc_host_t *out)
{
    (void)server_pid;
    *out = (proc_host_t){0};
    return -1;
}

/* ---- single processes, for the test harness: ps(1) ---------------------- */

static bool fine_cpu_seen; /* a time field with a fraction: CPU time to 1/100 s */

/* The output fields parse_line() reads, in its order; "=": no header line. */
static const char *const FIELDS[] = {"-o", "pid=", "-o", "ppid=", "-o", "pgid=", "-o", "state=",
                                     "-o", "rss=", "-o", "time=", "-o", "lstart="};
#define NFIELDS (sizeof FIELDS / sizeof *FIELDS)

/* ps asked for FIELDS of the processes `select` and `arg` name ("-A" and
 * NULL, or "-p" and a pid); its stdout, malloc'ed. */
static char *run_ps(const char *select, const char *arg)
{
    const char *argv[NFIELDS + 4] = {"ps"}; /* ends in NULL, after arg or in its place */
    memcpy(argv + 1, FIELDS, sizeof FIELDS);
    argv[NFIELDS + 1] = select;
    argv[NFIELDS + 2] = arg;
    int out[2];
    if (pipe(out) < 0)
        return NULL;
    fcntl(out[0], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, out[1]);
    pid_t pid;
    int err = posix_spawnp(&pid, "ps", &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    size_t cap = 64 * 1024, len = 0;
    char *text = err == 0 ? malloc(cap) : NULL;
    ssize_t n;
    while (text && (n = read(out[0], text + len, cap - len - 1)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        len += (size_t)n;
        if (len + 1 == cap) {
            char *grown = realloc(text, cap * 2);
            if (!grown)
                break;
            text = grown;
            cap *= 2;
        }
    }
    close(out[0]);
    if (err == 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    if (text)
        text[len] = '\0';
    return text;
}

/* "[dd-]hh:mm:ss", "mm:ss.cc" and the like, in seconds; -1 if unreadable. */
static double cpu_seconds(const char *field)
{
    double total = 0, part;
    const char *p = field, *dash = strchr(field, '-');
    char *end;
    if (dash) {
        total = strtod(field, &end) * 86400.0;
        p = dash + 1;
    }
    double clock = 0;
    for (;;) {
        part = strtod(p, &end);
        if (end == p)
            return -1;
        clock = clock * 60.0 + part;
        if (*end != ':')
            break;
        p = end + 1;
    }
    if (strchr(p, '.'))
        fine_cpu_seen = true;
    return total + clock;
}

/* A cheap fingerprint of the start time's text (equal texts, equal numbers). */
static unsigned long long fingerprint(const char *s)
{
    unsigned long long h = 1469598103934665603ULL;
    for (; *s && *s != '\n'; s++)
        if (*s != ' ')
            h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* One line of "pid ppid pgid state rss time lstart..."; false if malformed. */
static bool parse_line(const char *line, proc_info_t *out)
{
    char state[16], time[32];
    int used = 0;
    *out = (proc_info_t){.threads = -1};
    if (sscanf(line, " %ld %ld %ld %15s %ld %31s %n", &out->pid, &out->ppid, &out->pgid, state,
               &out->rss_kb, time, &used) < 6 ||
        used == 0)
        return false;
    /* BSD ps: 'I' is a process asleep for over 20 s, 'U' an uninterruptible wait. */
    out->state = state[0] == 'I' ? 'S' : state[0] == 'U' ? 'D' : state[0];
    out->cpu_s = cpu_seconds(time);
    out->started = fingerprint(line + used);
    return true;
}

bool proc_info(long pid, proc_info_t *out)
{
    char id[24];
    snprintf(id, sizeof id, "%ld", pid);
    char *text = run_ps("-p", id);
    bool ok = text && parse_line(text, out) && out->pid == pid;
    free(text);
    return ok;
}

proc_info_t *proc_list(size_t *count)
{
    char *text = run_ps("-A", NULL);
    size_t lines = 1;
    for (const char *p = text; p && *p; p++)
        lines += *p == '\n';
    proc_info_t *all = text ? malloc(lines * sizeof *all) : NULL;
    *count = 0;
    for (char *line = text; all && line && *line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (parse_line(line, &all[*count]))
            (*count)++;
        line = next;
    }
    free(text);
    return all;
}

const char *proc_lacks(proc_feature_t what)
{
    switch (what) {
    case PROC_THREADS: return "ps(1) has no thread count common to Linux, macOS and FreeBSD";
    case PROC_FDS: return "ps(1) shows no descriptors";
    case PROC_FD_LIMIT: return "ps(1) shows no limits";
    case PROC_SET_FD_LIMIT: return "no portable way to set another process's limit";
    case PROC_SIGNALS: return "ps(1) has no caught-signal field common to Linux, macOS and FreeBSD";
    case PROC_DEATH_SIGNAL: return "no portable death signal for a child";
    case PROC_FINE_CPU: {
        proc_info_t me;
        if (!fine_cpu_seen)
            proc_info(getpid(), &me); /* learn the format of the time field */
        return fine_cpu_seen ? NULL : "ps(1) here shows CPU time in whole seconds";
    }
    }
    return "unknown";
}

const char *proc_reader(void)
{
    return "ps(1)";
}

int proc_open_fds(long pid, int *lowest_free)
{
    (void)pid, (void)lowest_free;
    return -1;
}

bool proc_fd_target(long pid, int fd, char *out, size_t size)
{
    (void)pid, (void)fd, (void)out, (void)size;
    return false;
}

int proc_catches(long pid, int sig)
{
    (void)pid, (void)sig;
    return -1;
}
