# An aarch64 cross build of the lower layers only: base, format, tensor,
# kernels, and their test executables (test_base, test_tensor, test_kernels).
#
# Why a reduced build: the layers above kernels need pcre2, nlohmann_json,
# sqlite and CLI11 for the target, and Debian ships those for the host only
# (arm64 copies would need `dpkg --add-architecture arm64`, i.e. a change to
# the machine's package configuration that CI and fresh machines would have
# to repeat, for libraries the ARM kernels never touch). The kernel layers
# need nothing but libc, so this file declares them itself, builds GoogleTest
# for the target from Debian's sources (/usr/src/googletest, package
# libgtest-dev; the installed libgtest.a is x86 only), and the top-level
# CMakeLists.txt returns right after including it.
#
# Used by scripts/test-arm.sh with cmake/toolchain-aarch64.cmake. When the
# option is OFF (every normal build) this file does nothing.
option(KAZEIA_ARM_KERNELS_ONLY
       "Build only base/format/tensor/kernels and their tests (aarch64 cross testing)" OFF)
if(NOT KAZEIA_ARM_KERNELS_ONLY)
  return()
endif()

if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  message(WARNING "KAZEIA_ARM_KERNELS_ONLY on ${CMAKE_SYSTEM_PROCESSOR}: "
                  "use -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake")
endif()

# GCC contracts a * b + c into a fused multiply-add by default, even with
# -std=c++20, and aarch64 always has FMA; clang's `#pragma STDC FP_CONTRACT
# OFF` in the reference sources does not reach GCC. The references are meant
# to be bit-exact with ggml's x86 arithmetic (no fusing), and the activation
# quantizers must produce the same bytes on every path, so fusing stays off
# here; kernels that want FMA ask for it with an explicit intrinsic.
add_compile_options(-ffp-contract=off)

# Keep in sync with src/CMakeLists.txt (the same four layers and deps).
kazeia_layer(base    EXTRA_LIBS Threads::Threads)
kazeia_layer(format  DEPS kz_base)
kazeia_layer(tensor  DEPS kz_format kz_base)
kazeia_layer(kernels DEPS kz_tensor kz_base)

if(NOT KAZEIA_TESTS)
  return()
endif()
enable_testing()

set(KAZEIA_GTEST_SOURCE_DIR /usr/src/googletest CACHE PATH "GoogleTest sources built for the target")
if(NOT EXISTS ${KAZEIA_GTEST_SOURCE_DIR}/CMakeLists.txt)
  message(FATAL_ERROR "No GoogleTest sources in ${KAZEIA_GTEST_SOURCE_DIR} (apt-get install libgtest-dev)")
endif()
set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
add_subdirectory(${KAZEIA_GTEST_SOURCE_DIR} ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
include(GoogleTest)

# As kazeia_layer_tests() in tests/CMakeLists.txt: tests/<layer>/*.cpp ->
# test_<layer>. Tests are discovered when ctest runs (PRE_TEST), so building
# does not wait for qemu to list them.
function(kazeia_arm_layer_tests LAYER)
  cmake_parse_arguments(T "" "" "LIBS" ${ARGN})
  set(tests_dir ${CMAKE_SOURCE_DIR}/tests)
  file(GLOB srcs CONFIGURE_DEPENDS ${tests_dir}/${LAYER}/*.cpp)
  if(NOT srcs)
    return()
  endif()
  add_executable(test_${LAYER} ${srcs})
  target_link_libraries(test_${LAYER} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  target_include_directories(test_${LAYER} PRIVATE ${tests_dir})
  set_target_properties(test_${LAYER} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  # Test code is glue around the libraries (built -O3), as on x86: -O1.
  target_compile_options(test_${LAYER} PRIVATE -O1)
  # Debian's aarch64 GCC 12.2 crashes (internal compiler error in
  # vect_transform_reduction) vectorizing the tests' double-precision
  # std::fmax reductions at -O3; test loops need no vectorizing.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(test_${LAYER} PRIVATE -fno-tree-vectorize)
  endif()
  target_compile_definitions(test_${LAYER} PRIVATE KAZEIA_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
                             KAZEIA_BINARY_DIR="${CMAKE_BINARY_DIR}")
  gtest_discover_tests(test_${LAYER} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 120
                       PROPERTIES LABELS ${LAYER})
endfunction()

kazeia_arm_layer_tests(base LIBS kz_base)
kazeia_arm_layer_tests(tensor LIBS kz_tensor)
kazeia_arm_layer_tests(kernels LIBS kz_kernels)
