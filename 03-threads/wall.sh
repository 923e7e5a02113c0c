#!/bin/sh
# 03-threads' wall (make wall): every client costs a thread and its stack,
# up to the threads one process may have (threads_room, in
# scripts/lib/ladder.sh). The server is read while the clients are held,
# never during the teardown. Linux: the thread count and VmSize from
# /proc/PID/status (the stacks' address space) and RSS. macOS: the thread
# count and phys_footprint (the memory the kernel charges the process: only
# the pages the threads touched), both from loadgen --server-pid, which reads
# them with proc_pidinfo(PROC_PIDTASKINFO) and proc_pid_rusage() once every
# client is connected. Not VSZ: ps -o vsz counts the shared region every
# process maps (about 390 GiB on Apple Silicon, whatever the threads).
# Shared parts: scripts/lib/wall.sh.
. ../scripts/lib/wall.sh

demo() {
    threads_n=$(room_for 03-threads 10000)
    need_fds $((threads_n + 100))
    if [ "$threads_n" -lt 10000 ]; then
        say "03-threads: every client costs a thread and its stack. Here there is room for" \
            "$threads_n threads (the caps less room for the server's own): $threads_n clients" \
            "connect, echo once each, then idle 3 s; the server is read while they are held."
    else
        say "03-threads: every client costs a thread and its stack. 10 000 clients connect, echo" \
            "once each, then idle 3 s; the server is read while they are held."
    fi
    hold_threads "default stacks:"
    say "" "  again with 64 KiB stacks (./server-release -s 64):"
    hold_threads "64 KiB stacks: " -s 64
    expect="  expect: $((threads_n + 1)) threads, and"
    if [ "$macos" = yes ]; then
        [ "$LADDER_FORCED" = 0 ] || linux_only "the thread count and footprint"
        say "" "$expect a footprint of tens of KiB per client, with" \
            "  either stack size: a thread's 512 KiB stack is address space, and the footprint" \
            "  counts only the pages a thread touched. What stays is a kernel thread per client," \
            "  scheduled on its own, and the cap on threads per process below."
    else
        linux_only "the thread count and RSS"
        stack_kib=$(default_stack_kib)
        if is_number "$stack_kib"; then
            gib=$(calc "$threads_n * $stack_kib / 1048576")
            estimate="($stack_kib KiB each, so about $gib GiB)"
        else
            estimate="(ulimit -s: ${stack_kib:-unknown})"
        fi
        stays="What stays is a kernel task per client, scheduled on its own."
        say "" "$expect VmSize near $threads_n x the default stack size" \
            "  $estimate, although a client touches only" \
            "  a few KiB of it. With -s 64 it shrinks to well under 1 GiB while RSS barely moves:" \
            "  address space, not memory. $stays"
    fi
    wall
}

# macOS's path: the figures come from loadgen --server-pid. The off-Linux
# path (LADDER_FORCE_PORTABLE=1) takes it too, as the Mac it stands in for:
# there loadgen reads no figure, and the lines say "not measured here".
macos=no
if [ "$os" = Darwin ] || [ "$LADDER_FORCED" = 1 ]; then macos=yes; fi

# hold_threads LABEL [server options]: hold $threads_n clients, read the
# server while they are held (not after: loadgen hold closes them all when
# it ends), then stop the server and print one line. On Linux the reading
# kept is the one taken with the most threads alive.
hold_threads() {
    label=$1; shift
    port_budget "$threads_n"
    start_server free ${1+"$@"}
    pid_opt=$(server_pid_opt)
    [ "$macos" = yes ] && pid_opt="--server-pid $SERVER_PID"
    loadgen_bg hold -n "$threads_n" --duration 3 $pid_opt
    threads=0; vmsize=""
    while loadgen_running; do
        [ "$USE_PROC" = 1 ] && sample_status
        sleep 0.2
    done
    loadgen_wait
    ports_closed
    served=$(key served)
    need "$served" "served count"
    stop_server
    if [ "$USE_PROC" = 1 ]; then
        need "$vmsize" "VmSize reading while the clients were held"
        rss=$(key server_rss_kb)
        vm="VmSize $(calc "$vmsize / 1048576") GiB"
        mib=$(shown "$(ratio "$rss" 1024)" " MiB"); each=$(shown "$(ratio "$rss" "$served")" " KiB")
        say "  $label served $served; while held: $threads threads, $vm," \
            "                  resident (RSS) $mib = $each per client"
    elif [ "$macos" = yes ]; then
        threads=$(key server_threads); fp=$(key server_footprint_kb)
        [ "$LADDER_FORCED" = 1 ] ||
            need "$threads" "server thread count (proc_pidinfo) while the clients were held"
        mib=$(shown "$(ratio "$fp" 1024)" " MiB"); each=$(ratio "$fp" "$served")
        [ -n "$each" ] && mib="$mib = $each KiB per client"
        say "  $label served $served; while held: threads $(shown "$threads")," \
            "                  footprint (phys_footprint) $mib"
    else
        vsz="(ps -o vsz counts the shared region each process maps, not the stacks)"
        say "  $label served $served; while held: threads, VmSize and RSS not measured here" \
            "                  $vsz"
    fi
}

# sample_status: the thread count and VmSize now, kept if the most threads.
sample_status() {
    t=$(status_field Threads)
    if [ -n "$t" ] && [ "$t" -gt "$threads" ]; then
        threads=$t; vmsize=$(status_field VmSize)
    fi
}

# default_stack_kib: the stack a thread gets without -s. glibc takes the soft
# RLIMIT_STACK (ulimit -s); macOS's libpthread gives every thread but the
# main one 512 KiB, and FreeBSD's libthr 2 MiB on 64-bit machines
# (THR_STACK_DEFAULT), whatever ulimit -s says.
default_stack_kib() {
    case $os in
    Darwin) echo 512 ;;
    FreeBSD) echo 2048 ;;
    *) limit -s ;;
    esac
}

wall() {
    cap=$(thread_cap)
    stack_kib=$(default_stack_kib)
    if is_number "$cap"; then
        here="$cap threads per process: past it pthread_create() fails (EAGAIN)"
    elif [ "$USE_PROC" = 1 ]; then
        here="no cap per process; kernel.threads-max ="
        here="$here $(proc_figure /proc/sys/kernel/threads-max) for the system"
    else
        here="no cap per process (kernel.threads-max, in /proc, not read on this path)"
    fi
    linux_stacks="stacks of ulimit -s, often 8 MiB"
    walls "$here; a thread's default stack: $stack_kib KiB" \
        "Linux: no cap per process (kernel.threads-max for the system); $linux_stacks" \
        "macOS: kern.num_taskthreads per process (1024 x the memory scale: 2048 at 8 GB); 512 KiB" \
        "       stacks whatever ulimit -s says" \
        "FreeBSD: kern.threads.max_threads_per_proc per process; 2 MiB stacks (64-bit)"
}

wall_main
