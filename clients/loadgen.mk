# The load client built with make alone, for `make wall` (common/phase.mk)
# and for scripts/reproduce.sh on a machine without CMake. Plain make syntax
# (POSIX, GNU make, BSD make); the event loop is chosen when the recipe runs.
#
#   make -f clients/loadgen.mk [LADDER_TOP=.] [LOADGEN_DIR=build/wall] TARGET
#     $(LOADGEN_DIR)/loadgen         the loop clients/CMakeLists.txt picks as
#                                    well: epoll on Linux, kqueue where
#                                    <sys/event.h> exists, poll(2) elsewhere
#     $(LOADGEN_DIR)/loadgen-kqueue  the kqueue loop, through 06-kqueue's
#                                    epoll-backed shim where the system has
#                                    no <sys/event.h>: what the scripts run
#                                    under LADDER_FORCE_PORTABLE=1
#
# Release flags (-O2, warnings as errors, no sanitizers), as the figures
# need; CFLAGS and LDFLAGS are added after them. Each target is rebuilt when
# a source or header changed.
LADDER_TOP   = .
LOADGEN_DIR  = $(LADDER_TOP)/build/wall
C            = $(LADDER_TOP)/clients
SHIM         = $(LADDER_TOP)/06-kqueue/linux-shim
LOADGEN_SRCS = $(C)/loadgen.c $(C)/options.c $(C)/crew.c $(C)/pool.c $(C)/stats.c \
               $(C)/report.c $(C)/proc.c
LOADGEN_HDRS = $(C)/crew.h $(C)/loop.h $(C)/options.h $(C)/pool.h $(C)/proc.h \
               $(C)/proc_os.h $(C)/report.h $(C)/stats.h
LOADGEN_READERS = $(C)/proc_linux.c $(C)/proc_macos.c $(C)/proc_freebsd.c $(C)/proc_portable.c
LOADGEN_LOOPS = $(C)/loop_epoll.c $(C)/loop_kqueue.c $(C)/loop_poll.c
LOADGEN_FLAGS = -std=c11 -O2 -Wall -Wextra -Werror
LOADGEN_LIBS  = -lm -pthread
LOADGEN_DEPS  = $(LOADGEN_SRCS) $(LOADGEN_HDRS) $(LOADGEN_LOOPS) $(LOADGEN_READERS) \
                $(SHIM)/sys/event.h

# Shell tests of what CC compiles for (the target, which a cross compiler
# such as `zig cc -target aarch64-macos` makes another system than this
# one): FOR_LINUX, true for Linux; HAS_EVENT_H, true where <sys/event.h>
# exists. These two decide the event loop, here and nowhere else in the
# scripts; CMake decides the same way in clients/CMakeLists.txt. READER
# names the process reader for the target (clients/proc_<os>.c), as CMake
# picks it by system name.
FOR_LINUX   = printf '\#ifndef __linux__\n\#error not Linux\n\#endif\n' | \
              $(CC) -E -x c - >/dev/null 2>&1
HAS_EVENT_H = printf '\#include <sys/types.h>\n\#include <sys/event.h>\n' | \
              $(CC) -E -x c - >/dev/null 2>&1

READER      = printf '%s\n' '\#if defined(__linux__)' proc_linux.c '\#elif defined(__APPLE__)' \
              proc_macos.c '\#elif defined(__FreeBSD__)' proc_freebsd.c '\#else' \
              proc_portable.c '\#endif' | $(CC) -E -P -x c - 2>/dev/null | grep '^proc_'

$(LOADGEN_DIR)/loadgen: $(LOADGEN_DEPS)
	@if $(FOR_LINUX); then loop=epoll; \
	elif $(HAS_EVENT_H); then loop=kqueue; else loop=poll; fi; \
	reader=`$(READER)`; \
	echo "building the load client ($$loop event loop): $@"; \
	mkdir -p $(LOADGEN_DIR) && \
	$(CC) $(LOADGEN_FLAGS) $(CFLAGS) -o $@ $(LOADGEN_SRCS) $(C)/loop_$$loop.c \
	    $(C)/$$reader $(LDFLAGS) $(LOADGEN_LIBS)

$(LOADGEN_DIR)/loadgen-kqueue: $(LOADGEN_DEPS)
	@if $(HAS_EVENT_H); then shim=""; how=""; \
	else shim="-idirafter $(SHIM)"; how=", through the kqueue shim"; fi; \
	reader=`$(READER)`; \
	echo "building the load client (kqueue event loop$$how): $@"; \
	mkdir -p $(LOADGEN_DIR) && \
	$(CC) $(LOADGEN_FLAGS) $(CFLAGS) $$shim -o $@ $(LOADGEN_SRCS) $(C)/loop_kqueue.c \
	    $(C)/$$reader $(LDFLAGS) $(LOADGEN_LIBS)
