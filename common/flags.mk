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
# The debug and release optimisation: make's ./server and ./server-release; CMake's
# Release build type takes RELEASE too (its Debug keeps -g: see CMakeLists.txt).
DEV     = -g -O1
RELEASE = -O2
