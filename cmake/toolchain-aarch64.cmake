# Cross-compiling for aarch64 Linux on an x86-64 host with Debian's
# g++-aarch64-linux-gnu; test binaries run under qemu-user.
#
#   cmake -G Ninja -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake \
#         -DKAZEIA_ARM_KERNELS_ONLY=ON
#
# (scripts/test-arm.sh does this.) The emulator line makes ctest and
# gtest_discover_tests run every target binary through qemu. `-cpu max`
# enables every extension qemu implements (ASIMD dot product, I8MM, FP16, ...),
# so the highest ARM kernel level is reachable; KAZEIA_CPU_LEVEL then forces
# lower levels at run time. `-L` points the loader at the aarch64 sysroot.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(KAZEIA_AARCH64_SYSROOT /usr/aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Libraries, headers and CMake packages only from the target sysroot (the
# host's x86 ones would link but not run); programs (tools) from the host.
set(CMAKE_FIND_ROOT_PATH ${KAZEIA_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-cpu;max;-L;${KAZEIA_AARCH64_SYSROOT})
