# The load client built with make alone, for `make wall` (common/phase.mk)
# and for scripts/reproduce.sh on a machine without CMake. Plain make syntax
# (POSIX, GNU make, BSD make); the event loop is chosen when the recipe runs.
#
#   make -f clients/loadgen.mk [LADDER_TOP=.] [LOADGEN_DIR=build/wall] TARGET
#     $(LOADGEN_DIR)/loadgen         the loop clients/choose.sh picks, for
#                                    make and CMake alike: epoll on Linux,
#                                    kqueue where <sys/event.h> exists,
#                                    poll(2) elsewhere
#     $(LOADGEN_DIR)/loadgen-kqueue  the kqueue loop, through platform/'s
#                                    epoll-backed shim where the system has
#                                    no <sys/event.h>: what the scripts run
#                                    under LADDER_FORCE_PORTABLE=1
#
# Release flags (common/flags.mk: -O2, warnings as errors, no sanitizers), as
# the figures need; CFLAGS and LDFLAGS are added after them. Each target is
# rebuilt when a source or header changed.
LADDER_TOP   = .
LOADGEN_DIR  = $(LADDER_TOP)/build/wall
C            = $(LADDER_TOP)/clients
P            = $(LADDER_TOP)/platform
SHIM         = $(P)/kqueue-shim
# The sources, for this file and clients/CMakeLists.txt alike (CMake reads
# this line): the modes, what they share, then the machinery under them.
LOADGEN_SRCS = $(C)/loadgen.c $(C)/stall.c $(C)/c10k.c $(C)/hold.c $(C)/scan.c \
               $(C)/measure.c $(C)/speed.c $(C)/options.c $(C)/crew.c $(C)/pool.c $(C)/stats.c \
               $(C)/report.c $(P)/proc.c
LOADGEN_HDRS = $(C)/crew.h $(C)/loop.h $(C)/modes.h $(C)/options.h $(C)/pool.h $(C)/report.h \
               $(C)/stats.h $(P)/proc.h $(P)/proc_os.h $(P)/proc_sysctl.h \
               $(P)/proc_unoffered.h
LOADGEN_READERS = $(P)/proc_linux.c $(P)/proc_macos.c $(P)/proc_freebsd.c $(P)/proc_portable.c
LOADGEN_LOOPS = $(C)/loop_epoll.c $(C)/loop_kqueue.c $(C)/loop_poll.c
include $(LADDER_TOP)/common/flags.mk
LOADGEN_FLAGS = $(STD) $(RELEASE) $(WARN) $(WERROR) -I$(P)
LOADGEN_LIBS  = -lm -pthread
LOADGEN_DEPS  = $(LOADGEN_SRCS) $(LOADGEN_HDRS) $(LOADGEN_LOOPS) $(LOADGEN_READERS) \
                $(SHIM)/sys/event.h

# The event loop and the process reader for what CC compiles for (the
# target: a cross compiler such as `zig cc -target aarch64-macos` makes it
# another system than this one) come from clients/choose.sh, which CMake
# asks too: "LOOP READER", decided there and nowhere else.
CHOOSE = sh $(C)/choose.sh $(CC)

# loadgen-kqueue: the kqueue loop whatever the system, through the kqueue shim
# (platform/kqueue-shim) where the target has no kqueue of its own.
$(LOADGEN_DIR)/loadgen $(LOADGEN_DIR)/loadgen-kqueue: $(LOADGEN_DEPS) $(C)/choose.sh
	@set -- `$(CHOOSE)` && loop=$$1 reader=$$2 && shim="" how="" && \
	case $@ in *-kqueue) [ "$$loop" = kqueue ] || \
	    { shim="-idirafter $(SHIM)"; how=", through the kqueue shim"; }; loop=kqueue;; esac && \
	echo "building the load client ($$loop event loop$$how): $@" && \
	mkdir -p $(LOADGEN_DIR) && \
	$(CC) $(LOADGEN_FLAGS) $(CFLAGS) $$shim -o $@ $(LOADGEN_SRCS) $(C)/loop_$$loop.c \
	    $(P)/proc_$$reader.c $(LDFLAGS) $(LOADGEN_LIBS)
