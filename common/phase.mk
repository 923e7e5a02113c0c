# Shared by every phase Makefile. Plain make syntax (POSIX, GNU make, BSD make).
#
#   make         ./server from main.c with AddressSanitizer and UBSan, warnings
#                as errors: the build for poking at the code and finding bugs
#   make wall    ./server-release (-O2, no sanitizers: the build whose figures
#                mean something), then the rung's demonstration, its own
#                ./wall.sh: it builds the load client with make
#                (clients/loadgen.mk, into build/wall/), prints each figure
#                beside what to expect, and stops the server it started
#   make clean   removes both servers
#
# The project's flags always apply; CFLAGS, CPPFLAGS and LDFLAGS from the
# environment or the command line are added after them, so a CFLAGS set in
# the shell cannot silently drop -std=c11, -Werror or the sanitizers (and
# leave the link asking for ASan). `make SAN=` builds ./server without them.
include $(UP)../common/flags.mk
SAN           = $(ASAN)
DEV_CFLAGS    = $(STD) $(WARN) $(WERROR) $(DEV) $(FRAMES) $(SAN)
RELEASE_FLAGS = $(STD) $(WARN) $(WERROR) $(RELEASE)
PHASE_CPPFLAGS = -I$(UP)../common $(SHIM_CPPFLAGS)

PHASE_DEPS    = main.c $(UP)../common/net.h $(UP)../common/blocking.h \
                $(UP)../common/events.h $(EXTRA_DEPS)

PHASE_LINK    = $(LDFLAGS) $(LDLIBS)

server: $(PHASE_DEPS)
	$(CC) $(PHASE_CPPFLAGS) $(CPPFLAGS) $(DEV_CFLAGS) $(CFLAGS) -o server main.c $(SAN) $(PHASE_LINK)

server-release: $(PHASE_DEPS)
	$(CC) $(PHASE_CPPFLAGS) $(CPPFLAGS) $(RELEASE_FLAGS) $(CFLAGS) -o $@ main.c $(PHASE_LINK)

# wall.sh is POSIX sh; WALL_SH picks the shell that runs it (the tests run it
# with posh and dash, strict POSIX shells, to keep it portable). MAKE is
# passed on so that the load client is built by this same make.
WALL_SH       = sh

wall: server-release
	MAKE="$(MAKE)" CC="$(CC)" $(WALL_SH) ./wall.sh

clean:
	rm -f server server-release

.PHONY: wall clean
