#!/bin/sh
# choose.sh CC [ARGS...]: the event loop and the process reader loadgen is
# built with for the system that CC compiles for, printed as "LOOP READER"
# (e.g. "epoll linux"). This is the one place they are decided: the make
# fragment (clients/loadgen.mk) and CMake (clients/CMakeLists.txt) both ask
# it, so `make wall`, the reproduction and the tests run the same client.
#   the loop: epoll on Linux, kqueue where <sys/event.h> exists (macOS, the
#             BSDs), poll(2) anywhere else (loop_LOOP.c)
#   the reader: the system's own (proc_linux.c, proc_macos.c, proc_freebsd.c),
#             else proc_portable.c, which reads ps(1)
# CC may be several words ("zig cc -target aarch64-macos"): a cross compiler
# gets the target's choice, not this machine's. POSIX sh.
[ $# -gt 0 ] || { echo "usage: choose.sh CC [ARGS...]" >&2; exit 2; }
# Words that are no predefined macro ("linux" alone is one, in GNU C).
reader=$(printf '%s\n' '#if defined(__linux__)' reader_linux '#elif defined(__APPLE__)' \
    reader_macos '#elif defined(__FreeBSD__)' reader_freebsd '#else' reader_portable '#endif' |
    "$@" -E -P -x c - 2>/dev/null | sed -n 's/^reader_//p')
[ -n "$reader" ] || { echo "choose.sh: $* does not preprocess C" >&2; exit 1; }
if [ "$reader" = linux ]; then
    loop=epoll
elif printf '#include <sys/types.h>\n#include <sys/event.h>\n' |
    "$@" -E -x c - >/dev/null 2>&1; then
    loop=kqueue
else
    loop=poll
fi
echo "$loop $reader"
