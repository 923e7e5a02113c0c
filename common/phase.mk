# Shared by every phase Makefile: `make` builds ./server from main.c with
# AddressSanitizer and UndefinedBehaviorSanitizer on, warnings as errors.
# For numbers, build the Release configuration with CMake instead.
CC      ?= cc
SAN     ?= -fsanitize=address,undefined -fno-sanitize-recover=all
CFLAGS  ?= -std=c11 -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror $(SAN)
CPPFLAGS += -I../common
LDFLAGS += $(SAN)

server: main.c ../common/net.h $(EXTRA_DEPS)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ main.c $(LDFLAGS) $(LDLIBS)

clean:
	rm -f server

.PHONY: clean
