#!/usr/bin/env bash
# The whole bench on the H100: every API's attnvk kernel beside cuDNN, cuBLAS and
# CLBlast, on the FlashAttention papers' grid, plus the correctness sweep.
# Here first: bash tools/h100/prepare.sh && bash tools/build.sh build
# Then on the GPU machine (device tool, carry .gpu and build):
#     bash tools/h100/bench.sh [grid|check|f32|all]   (default all; one part per call fits 10 minutes)
# Writes $OUT/h100-fa-grid.json (f16), $OUT/h100-fa-grid-f32.json (f32, OpenCL vs
# CLBlast), $OUT/check.log and logs; prints the tables last.
set -u
out=${OUT:-/tmp/bench-out}
build=${BUILD:-build}
mkdir -p "$out"
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
avk=./$build/attnvk
part=${1:-all}
want() { [ "$part" = all ] || [ "$part" = "$1" ]; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$out/gpu.txt" 2>&1
$avk devices >"$out/devices.txt" 2>&1
$avk devices --json >"$out/devices.json" 2>&1

# correctness on every API and implementation (no timing)
if want check; then
  timeout 400 $avk check --api cuda,vulkan,opencl >"$out/check.log" 2>&1
  echo "check exit $?" >>"$out/check.log"
  grep -E "^FAIL|passed" "$out/check.log" | tail -20
fi

# f16 grid: attnvk on cuda/vulkan/opencl with cuDNN and cuBLAS beside them (one device group)
if want grid; then
  timeout 520 $avk bench --suite fa-grid --api cuda,vulkan,opencl --min-time ${MIN_TIME:-0.3} \
    -o json --out "$out/h100-fa-grid.json" >"$out/fa-grid.txt" 2>"$out/fa-grid.err"
  echo "fa-grid exit $?" >>"$out/fa-grid.err"
  cat "$out/fa-grid.txt"; tail -3 "$out/fa-grid.err"
fi

# f32: OpenCL's f32 kernel against CLBlast's unfused baseline (the f32 rows of issue 5)
if want f32; then
  timeout 300 $avk bench --api opencl,cuda --dtype f32 --batch 2 --heads 16 --seq 4k,8k --head-dim 128 \
    --min-time ${MIN_TIME:-0.3} -o json --out "$out/h100-f32.json" >"$out/f32.txt" 2>"$out/f32.err"
  echo "f32 exit $?" >>"$out/f32.err"
  cat "$out/f32.txt"; tail -3 "$out/f32.err"
fi
true
