# Shared by every phase Makefile. Plain make syntax (POSIX, GNU make, BSD make).
# `make` builds ./server from main.c with AddressSanitizer and UBSan on,
# warnings as errors. For numbers, build the Release configuration with CMake.
#
# The project's flags always apply; CFLAGS, CPPFLAGS and LDFLAGS from the
# environment or the command line are added after them, so a CFLAGS set in
# the shell cannot silently drop -std=c11, -Werror or the sanitizers (and
# leave the link asking for ASan). `make SAN=` builds without the sanitizers.
SAN           = -fsanitize=address,undefined -fno-sanitize-recover=all
WARN          = -std=c11 -Wall -Wextra -Werror
DEV_CFLAGS    = $(WARN) -g -O1 -fno-omit-frame-pointer $(SAN)
PHASE_CPPFLAGS = -I../common $(SHIM_CPPFLAGS)

server: main.c ../common/net.h $(EXTRA_DEPS)
	$(CC) $(PHASE_CPPFLAGS) $(CPPFLAGS) $(DEV_CFLAGS) $(CFLAGS) -o server main.c $(SAN) $(LDFLAGS) $(LDLIBS)

clean:
	rm -f server

.PHONY: clean
