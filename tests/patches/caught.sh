#!/bin/sh
# caught.sh PROGRAM ARG...: a break-it lab's Caught-by: test, which must fail
# against the lab's server. Exit 0 when PROGRAM fails, 1 when it passes or
# skips itself (77: a test that cannot run here catches nothing).
"$@"
rc=$?
case $rc in
0) echo "caught.sh: the test passes against the lab's server: the lab is not caught"; exit 1 ;;
77) echo "caught.sh: the test skipped itself: it catches nothing here"; exit 1 ;;
esac
echo "caught.sh: the test fails (exit $rc), as it must: the lab is caught"
exit 0
