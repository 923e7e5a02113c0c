#!/bin/sh
# 07-epoll's wall (make wall): O(ready), then C10K. The demonstration is
# flat_demo, shared with 06-kqueue, in scripts/lib/wall.sh.
. ../scripts/lib/wall.sh

demo() { flat_demo "epoll_wait()"; }

wall_main
