# The toolchain file of portability:freebsd-build (freebsd-build.sh): the
# project's own CMake build, configured for FreeBSD/amd64 and made by this
# machine's clang and lld against a FreeBSD sysroot (its /usr/include, start
# files, libc, libm and libthr). Given on the command line:
#   LADDER_FREEBSD_SYSROOT  the unpacked sysroot
#   LADDER_FREEBSD_TARGET   the clang target, e.g. x86_64-unknown-freebsd13.4
#   LADDER_FREEBSD_CC       the clang to use (default clang)
# CMake reads this file again for each of its own checks (try_compile), so
# what they need is passed on to them (CMAKE_TRY_COMPILE_PLATFORM_VARIABLES).
set(CMAKE_SYSTEM_NAME FreeBSD)
set(CMAKE_SYSTEM_PROCESSOR amd64)
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES
    LADDER_FREEBSD_SYSROOT LADDER_FREEBSD_TARGET LADDER_FREEBSD_CC)
if(NOT LADDER_FREEBSD_SYSROOT OR NOT LADDER_FREEBSD_TARGET)
  message(FATAL_ERROR "freebsd.cmake: give -DLADDER_FREEBSD_SYSROOT= and -DLADDER_FREEBSD_TARGET=")
endif()
if(NOT LADDER_FREEBSD_CC)
  set(LADDER_FREEBSD_CC clang)
endif()
set(CMAKE_C_COMPILER ${LADDER_FREEBSD_CC})
set(CMAKE_C_COMPILER_TARGET ${LADDER_FREEBSD_TARGET})
set(CMAKE_SYSROOT ${LADDER_FREEBSD_SYSROOT})
# Headers and libraries from the sysroot only; programs from this machine.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)

# The link: lld, FreeBSD's start files and libc by hand (-nostdlib), with the
# libraries CMake names in between. The driver would otherwise add libgcc
# and libgcc_s, which the sysroot has not got. libc.so.7 refers to symbols
# of the run-time linker (/libexec/ld-elf.so.1, not in the sysroot), hence
# --allow-shlib-undefined; an undefined symbol of the program's own is still
# an error. The checks CMake makes (FindThreads: does pthread_create link
# without a library?) link the same way, so they answer as on FreeBSD.
set(_lib ${LADDER_FREEBSD_SYSROOT}/usr/lib)
string(CONCAT CMAKE_C_LINK_EXECUTABLE
    "<CMAKE_C_COMPILER> <FLAGS> <CMAKE_C_LINK_FLAGS> <LINK_FLAGS> -fuse-ld=lld -nostdlib"
    " -Wl,--allow-shlib-undefined -Wl,--dynamic-linker=/libexec/ld-elf.so.1"
    " ${_lib}/crt1.o ${_lib}/crti.o ${_lib}/crtbegin.o <OBJECTS> -o <TARGET>"
    " -L${_lib} <LINK_LIBRARIES> -lc ${_lib}/crtend.o ${_lib}/crtn.o")
