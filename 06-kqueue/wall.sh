#!/bin/sh
# 06-kqueue's wall (make wall): O(ready), then C10K; on Linux through the
# teaching shim over epoll. The demonstration is flat_demo, shared with
# 07-epoll, in scripts/lib/wall.sh.
. ../scripts/lib/wall.sh

demo() { flat_demo "kevent()"; }

wall_main
