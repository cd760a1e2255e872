# kazeia_layer(NAME DEPS dep1 dep2 ...)
#
# Creates the static library kz_NAME from src/NAME/*.cpp (recursively). Its
# headers become visible as "NAME/header.h" only to targets that link it: the
# include root is a private directory in the build tree holding one symlink,
# NAME -> src/NAME. Layers therefore cannot include headers of layers above
# them — the compiler simply does not find them.
#
# ISA-specific sources are named *_avx2.cpp, *_avx512.cpp, *_neon.cpp; they get
# the matching -m flags on their own, so the rest of the library stays baseline.

# Which x86 kernel tables are built (1) or left out (0). The release build
# always has them all. The sanitizer build keeps only the tables the host
# can run: their files are built without instrumentation (see
# KAZEIA_SIMD_SANITIZE_OPT), so a table the host cannot run adds no
# sanitizer coverage, only compile time (CI on an AVX2-only Zen 3: the
# AVX-512 and AVX-VNNI kernels were 370 of the sanitized build's 980
# CPU-s), and the release build tests every table the host runs against
# the references. Where the host runs AVX-512 the AVX2 / AVX-VNNI tables go
# (~140 CPU-s); on a host without AVX-512 they are what the suite runs on:
# without them every kernel falls back to the instrumented scalar
# reference, ~20x slower (SmolLM2's agent test then took over 600 s in CI).
# The flags of CpuLevel::kAvx512 (src/base/cpu_features.cpp) and AVX-VNNI.
function(kazeia_host_has_flags out)
  set(${out} FALSE PARENT_SCOPE)
  if(EXISTS /proc/cpuinfo)
    file(STRINGS /proc/cpuinfo flags LIMIT_COUNT 1 REGEX "^flags")
    foreach(f ${ARGN})
      if(NOT flags MATCHES "[ \t]${f}( |$)")
        return()
      endif()
    endforeach()
    set(${out} TRUE PARENT_SCOPE)
  endif()
endfunction()
# -DKAZEIA_SANITIZE_AVX2_TABLES=ON|OFF overrides the host check for the AVX2
# and AVX-VNNI tables (to run the sanitized suite as an AVX2-only host
# would: with KAZEIA_CPU_LEVEL=avx2).
set(KAZEIA_AVX2_TABLES 1)
set(KAZEIA_AVXVNNI_TABLES 1)
set(KAZEIA_AVX512_TABLES 1)
if(CMAKE_BUILD_TYPE STREQUAL "Sanitize")
  kazeia_host_has_flags(kazeia_host_avx512 avx512f avx512bw avx512vl avx512dq avx512_vnni)
  kazeia_host_has_flags(kazeia_host_avxvnni avx_vnni)
  if(NOT kazeia_host_avx512)
    set(KAZEIA_AVX512_TABLES 0)
  endif()
  if(DEFINED KAZEIA_SANITIZE_AVX2_TABLES)
    if(NOT KAZEIA_SANITIZE_AVX2_TABLES)
      set(KAZEIA_AVX2_TABLES 0)
      set(KAZEIA_AVXVNNI_TABLES 0)
    endif()
  elseif(kazeia_host_avx512)
    set(KAZEIA_AVX2_TABLES 0)
    set(KAZEIA_AVXVNNI_TABLES 0)
  elseif(NOT kazeia_host_avxvnni)
    set(KAZEIA_AVXVNNI_TABLES 0)
  endif()
  message(STATUS "Sanitizer build: kernel tables AVX2 ${KAZEIA_AVX2_TABLES}, AVX-VNNI ${KAZEIA_AVXVNNI_TABLES}, "
                 "AVX-512 ${KAZEIA_AVX512_TABLES} (host AVX-512: ${kazeia_host_avx512}, AVX-VNNI: ${kazeia_host_avxvnni})")
endif()
# -DKAZEIA_EMULATE_AVX512=PARTIAL|FULL|OFF: build AVX-512 kernels with AVX2
# flags and src/kernels/x86/emulated_isa.h (SIMDe, libsimde-dev) forced in,
# as an extra table "avx512-emulated" the kernel tests compare with the
# references on a host without AVX-512 (the development and CI hosts have
# been AVX2-only Zen 2 / Zen 3 guests; qemu 7.2 has no AVX-512). They
# replace the real AVX-512 files (the two would define the same functions).
#   PARTIAL: the hand-written AVX-512 code, token tiles and float ops (~15
#            CPU-s to compile); the table's other slots are the references.
#   FULL:    also the strip kernels (kernels_avx512.cpp, ~4-5 CPU-min
#            emulated), so the table is the real one without AMX; and the
#            AVX-VNNI table in place of the real one, "avx2+vnni-emulated"
#            (kernels_avxvnni.cpp, vpdpbusd / vpdpwssd emulated).
# Unset: PARTIAL in the sanitizer build of a host without AVX-512 when
# SIMDe is installed, OFF otherwise.
set(KAZEIA_EMULATE_AVX512 "" CACHE STRING "Emulated AVX-512 kernel table for tests: PARTIAL, FULL or OFF (unset: auto)")
set(KAZEIA_AVX512_EMULATED 0)  # 0 off, 1 partial, 2 full (a compile definition of kz_kernels)
set(KAZEIA_EMULATED_FILES "^$")  # none
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(emulate "${KAZEIA_EMULATE_AVX512}")
  if(emulate STREQUAL "")
    set(emulate OFF)
    if(CMAKE_BUILD_TYPE STREQUAL "Sanitize" AND NOT KAZEIA_AVX512_TABLES AND EXISTS /usr/include/simde/x86/avx512.h)
      set(emulate PARTIAL)
    endif()
  endif()
  if(emulate STREQUAL "PARTIAL")
    set(KAZEIA_AVX512_EMULATED 1)
  elseif(emulate STREQUAL "FULL")
    set(KAZEIA_AVX512_EMULATED 2)
  elseif(NOT emulate STREQUAL "OFF")
    message(FATAL_ERROR "KAZEIA_EMULATE_AVX512=${emulate}: expected PARTIAL, FULL or OFF")
  endif()
  if(KAZEIA_AVX512_EMULATED)
    if(NOT EXISTS /usr/include/simde/x86/avx512.h)
      message(FATAL_ERROR "KAZEIA_EMULATE_AVX512=${emulate} needs SIMDe (libsimde-dev; scripts/setup.sh installs it)")
    endif()
    set(KAZEIA_AVX512_TABLES 0)
    # The files the emulation compiles (in place of the real ones).
    if(KAZEIA_AVX512_EMULATED EQUAL 2)
      set(KAZEIA_AVXVNNI_TABLES 0)
      set(KAZEIA_EMULATED_FILES "/((token_tiles|float_ops|kernels)_avx512|kernels_avxvnni)\\.cpp$")
      message(STATUS "AVX-512 and AVX-VNNI kernels emulated on AVX2 (FULL): tables avx512-emulated, avx2+vnni-emulated")
    else()
      set(KAZEIA_EMULATED_FILES "/(token_tiles|float_ops)_avx512\\.cpp$")
      message(STATUS "AVX-512 kernels emulated on AVX2 (PARTIAL): table avx512-emulated")
    endif()
  endif()
endif()
# The x86 SIMD files (each built with its ISA's flags, kazeia_isa_flags).
set(KAZEIA_X86_SIMD_FILES "_(avx2|avxvnni|avx512|amx)\\.cpp$")
# -DKAZEIA_SIMD_OBJECTS_DIR=DIR (sanitizer build only): link the x86 SIMD
# files' objects from the release build in DIR instead of compiling them
# again. They are built without instrumentation either way (see
# KAZEIA_SIMD_SANITIZE_OPT), so the sanitized suite then drives the shipped
# GCC -O3 code of the kernels, and the build saves clang's ~150 CPU-s on
# kernels_avx2.cpp. scripts/build.sh --sanitize sets it when build/ is a
# release build of this tree and brings the listed objects up to date there
# first (${CMAKE_BINARY_DIR}/simd_objects.txt, one ninja target a line).
set(KAZEIA_SIMD_OBJECTS_DIR "" CACHE PATH "Sanitizer build: release build whose x86 SIMD objects it links")
if(NOT CMAKE_BUILD_TYPE STREQUAL "Sanitize")
  set(KAZEIA_SIMD_OBJECTS_DIR "")
endif()
file(REMOVE ${CMAKE_BINARY_DIR}/simd_objects.txt)

function(kazeia_layer NAME)
  cmake_parse_arguments(L "" "" "DEPS;EXTRA_LIBS" ${ARGN})
  set(dir ${CMAKE_SOURCE_DIR}/src/${NAME})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${dir}/*.cpp ${dir}/*.c)
  set(emulated "")
  if(KAZEIA_AVX512_EMULATED)
    set(emulated ${srcs})
    list(FILTER emulated INCLUDE REGEX "${KAZEIA_EMULATED_FILES}")
  endif()
  # The sanitizer build leaves out the kernel tables the host cannot run
  # (KAZEIA_*_TABLES, above).
  if(NOT KAZEIA_AVX2_TABLES)
    list(FILTER srcs EXCLUDE REGEX "_avx2\\.cpp$")
  endif()
  if(NOT KAZEIA_AVXVNNI_TABLES)
    list(FILTER srcs EXCLUDE REGEX "_avxvnni\\.cpp$")
  endif()
  if(NOT KAZEIA_AVX512_TABLES)
    list(FILTER srcs EXCLUDE REGEX "_(avx512|amx)\\.cpp$")
  endif()
  list(APPEND srcs ${emulated})
  if(KAZEIA_SIMD_OBJECTS_DIR AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    set(kept "")
    foreach(s ${srcs})
      if(s MATCHES "${KAZEIA_X86_SIMD_FILES}" AND NOT (KAZEIA_AVX512_EMULATED AND s MATCHES "${KAZEIA_EMULATED_FILES}"))
        # Where the release build (Ninja, same tree) puts the object.
        file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR}/src ${s})
        set(target_path src/CMakeFiles/kz_${NAME}.dir/${rel}.o)
        set(obj ${KAZEIA_SIMD_OBJECTS_DIR}/${target_path})
        set_source_files_properties(${obj} PROPERTIES EXTERNAL_OBJECT ON GENERATED ON)
        list(APPEND kept ${obj})
        file(APPEND ${CMAKE_BINARY_DIR}/simd_objects.txt "${target_path}\n")
      else()
        list(APPEND kept ${s})
      endif()
    endforeach()
    set(srcs ${kept})
  endif()
  set(inc_root ${CMAKE_BINARY_DIR}/layer_include/${NAME})
  file(MAKE_DIRECTORY ${inc_root})
  if(NOT EXISTS ${inc_root}/${NAME})
    file(CREATE_LINK ${dir} ${inc_root}/${NAME} SYMBOLIC)
  endif()
  if(NOT srcs)
    # A layer with no sources yet: an interface library keeps the link graph.
    add_library(kz_${NAME} INTERFACE)
    target_include_directories(kz_${NAME} INTERFACE ${inc_root})
    target_link_libraries(kz_${NAME} INTERFACE ${L_DEPS} ${L_EXTRA_LIBS})
    return()
  endif()
  add_library(kz_${NAME} STATIC ${srcs})
  # Of the public API, inner layers see only kazeia/status.h (the error type
  # shared by every layer); the rest of include/ is for the api layer and apps.
  set(status_root ${CMAKE_BINARY_DIR}/layer_include/_status)
  if(NOT EXISTS ${status_root}/kazeia/status.h)
    file(MAKE_DIRECTORY ${status_root}/kazeia)
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/include/kazeia/status.h ${status_root}/kazeia/status.h SYMBOLIC)
  endif()
  target_include_directories(kz_${NAME} PUBLIC ${inc_root} ${status_root})
  target_link_libraries(kz_${NAME} PUBLIC ${L_DEPS} ${L_EXTRA_LIBS})
  kazeia_isa_flags(kz_${NAME} "${srcs}")
endfunction()

# The x86 SIMD files in the sanitizer build: their policies are thin
# wrappers around intrinsics that clang's -O1 leaves as calls (the kernels
# then run ~50x slower under ASan), and instrumenting them at -O2 takes clang
# over ten minutes per file. They are built -O2 without sanitizers; their
# callers, the dispatch and the scalar references stay instrumented, and the
# kernel tests compare them with the references in every build.
set(KAZEIA_SIMD_SANITIZE_OPT "$<$<CONFIG:Sanitize>:-O2;-fno-sanitize=all>")
# GCC's combine pass on the strip-kernel files' flattened kernels (a few
# thousand instructions in a block) spends most of its time trying 3- and
# 4-insn combinations that never apply: with 2, their quantized strip kernels
# come out instruction for instruction the same (objdump, per function; the
# float-weight strips differ by one or two instructions, AVX-512's f32 GEMM
# tile orders two the other way) and the three files compile in 424 CPU-s
# instead of 558, of a release build of ~1,100. Only those three: in the
# token tiles and float ops (~10 CPU-s each) it changed hot code (AVX-512
# Q4_0 tiles, AVX2 online softmax) for no time worth having.
set(KAZEIA_STRIP_KERNELS_GCC_OPT "$<$<AND:$<CXX_COMPILER_ID:GNU>,$<NOT:$<CONFIG:Sanitize>>>:--param=max-combine-insns=2>")

function(kazeia_isa_flags target srcs)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    foreach(s ${srcs})
      if(s MATCHES "_avx2\\.cpp$")
        set_source_files_properties(${s} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mbmi2;${KAZEIA_SIMD_SANITIZE_OPT}")
      elseif(KAZEIA_AVX512_EMULATED AND s MATCHES "${KAZEIA_EMULATED_FILES}")
        # SIMDE_NO_INLINE: SIMDe's functions out of line (kernels_avx512.cpp
        # at GCC -O1: 199 s; with them forced inline into the flattened
        # strips, 455 s).
        set_source_files_properties(${s} PROPERTIES COMPILE_OPTIONS
          "-mavx2;-mfma;-mf16c;-mbmi2;-Wno-psabi;-DSIMDE_NO_INLINE;-include;${CMAKE_SOURCE_DIR}/src/kernels/x86/emulated_isa.h;${KAZEIA_SIMD_SANITIZE_OPT}")
      elseif(s MATCHES "_avx512\\.cpp$")
        set_source_files_properties(${s} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mbmi2;-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;${KAZEIA_SIMD_SANITIZE_OPT}")
      elseif(s MATCHES "_amx\\.cpp$")
        set_source_files_properties(${s} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mbmi2;-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;-mamx-tile;-mamx-int8;${KAZEIA_SIMD_SANITIZE_OPT}")
      elseif(s MATCHES "_avxvnni\\.cpp$")
        set_source_files_properties(${s} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mbmi2;-mavxvnni;${KAZEIA_SIMD_SANITIZE_OPT}")
      elseif(s MATCHES "_neon\\.cpp$|_dotprod\\.cpp$|_i8mm\\.cpp$")
        set_source_files_properties(${s} PROPERTIES HEADER_FILE_ONLY ON)
      endif()
      if(s MATCHES "/kernels_(avx2|avxvnni|avx512)\\.cpp$")
        set_property(SOURCE ${s} APPEND PROPERTY COMPILE_OPTIONS "${KAZEIA_STRIP_KERNELS_GCC_OPT}")
      endif()
    endforeach()
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
    foreach(s ${srcs})
      if(s MATCHES "${KAZEIA_X86_SIMD_FILES}")
        set_source_files_properties(${s} PROPERTIES HEADER_FILE_ONLY ON)
      elseif(s MATCHES "_dotprod\\.cpp$")
        set_source_files_properties(${s} PROPERTIES COMPILE_OPTIONS "-march=armv8.2-a+dotprod+fp16")
      elseif(s MATCHES "_i8mm\\.cpp$")
        set_source_files_properties(${s} PROPERTIES COMPILE_OPTIONS "-march=armv8.6-a+dotprod+i8mm+fp16")
      endif()
    endforeach()
  endif()
endfunction()
