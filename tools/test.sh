#!/usr/bin/env bash
# The whole test suite from a clean clone: install what is missing, build,
# run ctest; then the same under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ATTNVK_WITH_CHROMIUM=${ATTNVK_WITH_CHROMIUM:-1} bash "$root/tools/install-deps.sh"
jobs=$(nproc)
# kernel caches go to a fresh folder: tests must not depend on an old cache
export ATTNVK_CACHE_DIR=${ATTNVK_CACHE_DIR:-$(mktemp -d /tmp/attnvk-cache.XXXXXX)}

# lavapipe's shader compiles are most of the Vulkan tests' time (LLVM, ~70% of their CPU):
# without LLVM's optimization passes they take 25-55% less (the tests pass the same)
export GALLIVM_PERF=${GALLIVM_PERF:-nopt}

bash "$root/tools/build.sh" build
(cd "$root/build" && ctest --output-on-failure -j "$jobs" --timeout 900)

# Drivers (lavapipe, PoCL's LLVM) keep allocations alive at exit: leaks are not ours to judge.
# The sanitizers watch host C: the emulated cooperative-matrix shaders (the forward's and the
# backward's: lavapipe running GPU code on the CPU) and NVRTC's kernel compiles drive the same host
# paths as the tests that stay, at 5-10x the time, so they run in the plain pass only (as does
# test_hip_isa: hipcc and objdump, no host C of ours, ~20 s); so do
# four of the five Vulkan profile runs (`small` stays: no subgroup ops, no fp16, 16 KiB).
# opencl_backward (PoCL building ten programs cold, ~50 s) runs in the plain pass only too, and so
# does vulkan_validation: the Khronos layer watches our Vulkan calls in the plain pass, and the
# host paths it drives are vulkan_correctness's (under ASan it took 182 s, 4x the plain pass).
# vulkan_correctness_decode (the decode bodies' pipelines, minutes on lavapipe) too: its host
# paths are vulkan_correctness's, and under ASan with a cold cache it ran past 900 s (session 42).
# (the HIP code objects, device code the sanitizers do not see, are the plain build's)
hip_objects=()
[ -d "$root/build/runtime/hip/co" ] && hip_objects=(-DATTNVK_HIP_CODE_OBJECTS_FROM="$root/build/runtime/hip/co")
# -O1: the usual level for the sanitizers, half the time of -O0 in the CLI tests
bash "$root/tools/build.sh" build-asan -DATTNVK_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g -O1" "${hip_objects[@]}"
(cd "$root/build-asan" && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j "$jobs" --timeout 1200 -E '^(vulkan_correctness_(coopmat-(rs-)?emu|decode-rs-emu|decode)|vulkan_backward_matrix_emu|test_cuda_nvrtc|test_hip_isa|opencl_backward|vulkan_validation|vulkan_profile_(intel-gen12|arm-mali|adreno|apple-moltenvk))$')

# libFuzzer over the .npy reader, the results-JSON reader and the option parsers
# (ASan+UBSan): the seed corpus replays issue #11's regressions, then 30 s each (CI's 25 minutes).
bash "$root/tools/fuzz.sh" "${ATTNVK_FUZZ_SECONDS:-30}"
