# The compiler flags, written once, in `NAME = value` lines only: common/phase.mk
# and clients/loadgen.mk include this file, CMakeLists.txt reads it (ladder_make_var)
# and so do the scripts that call a compiler themselves (ladder_flags, scripts/lib/ladder.sh).
STD     = -std=c11
WARN    = -Wall -Wextra
WERROR  = -Werror
# -fno-sanitize-recover: UBSan otherwise reports and carries on.
ASAN    = -fsanitize=address,undefined -fno-sanitize-recover=all
TSAN    = -fsanitize=thread
FRAMES  = -fno-omit-frame-pointer
# The debug and release optimisation: make's ./server and ./server-release, and
# CMake's Debug and Release build types alike.
DEV     = -g -O1
RELEASE = -O2
