#!/bin/bash
# Vulkan backend on the H100 (one `run` call): device listing, the full
# correctness test (coopmat-nv included) and vk_perf timings of the issue's
# cases over several tiles. Full logs under $OUT; a short table last.
#   run: source .gpu/gpu-env.sh && bash tools/h100/vulkan.sh [phase]
set -o pipefail
cd "$(dirname "$0")/../.."
B=${B:-build-vk}
OUT=${OUT:-/tmp/attnvk-out}
mkdir -p "$OUT"
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
P=$B/tests/vulkan/vk_perf
PHASE=${1:-all}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv 2>&1 | tee "$OUT/gpu.txt"
$B/attnvk devices 2>&1 | tee "$OUT/devices.txt"

if [ "$PHASE" = all ] || [ "$PHASE" = test ] || [ "$PHASE" = final ]; then
  timeout 200 $B/tests/vulkan/test_vulkan > "$OUT/test_vulkan.txt" 2>&1
  echo "test_vulkan rc=$?"
  grep -E "^FAIL|passed|worst|^skip|^device" "$OUT/test_vulkan.txt" | head -30
fi

if [ "$PHASE" = all ] || [ "$PHASE" = perf ]; then
  {
    # D=128, B=4, H=16, N=4096 (16k tokens, H*D = 2048); env: tuning aids of vk_variants.c
    export ATTNVK_VK_PIPELINE_STATS=1
    S128="--shape 4x16x4096x128 --reps 10"
    S64="--shape 4x32x4096x64 --reps 10"
    ATTNVK_VK_KV_STAGES=1 $P $S128 --tile 128x16 --tile 64x16 --tile 64x32
    ATTNVK_VK_KV_STAGES=1 ATTNVK_VK_S_CHAINS=1 $P $S128 --tile 128x16
    $P $S128 --tile 64x16 --tile 128x16
    ATTNVK_VK_KV_STAGES=1 ATTNVK_VK_WORKGROUP=256 $P $S128 --tile 128x32 --tile 128x16
    ATTNVK_VK_KV_STAGES=1 ATTNVK_VK_WORKGROUP=256 ATTNVK_VK_S_CHAINS=1 $P $S128 --tile 128x32
    ATTNVK_VK_KV_STAGES=1 $P $S128 --causal 1 --tile 128x16 --tile 64x16
    $P $S128 --causal 1 --tile 64x16
    ATTNVK_VK_KV_STAGES=1 ATTNVK_VK_WORKGROUP=256 $P $S128 --causal 1 --tile 128x32
    # D=64, B=4, H=32, N=4096
    $P $S64 --tile 128x16 --tile 128x32
    ATTNVK_VK_KV_STAGES=1 $P $S64 --tile 128x16 --tile 128x32
    ATTNVK_VK_S_CHAINS=1 $P $S64 --tile 128x16
    ATTNVK_VK_KV_STAGES=1 ATTNVK_VK_WORKGROUP=256 $P $S64 --tile 256x32 --tile 256x16
    $P $S64 --causal 1 --tile 128x16
    ATTNVK_VK_KV_STAGES=1 $P $S64 --causal 1 --tile 128x16
    # the portable variants, for scale
    $P --shape 4x16x4096x128 --variant f16 --variant scalar --reps 3
  } 2>&1 | tee "$OUT/perf.txt"
fi

if [ "$PHASE" = final ]; then
  {
    # the table's defaults for the issue's cases, then two alternatives
    $P --shape 4x16x4096x128 --causal 0 --causal 1 --reps 20
    $P --shape 4x32x4096x64 --causal 0 --causal 1 --reps 20
    ATTNVK_VK_WORKGROUP=256 ATTNVK_VK_S_CHAINS=1 $P --shape 4x16x4096x128 --causal 1 --tile 128x32 --reps 20
    ATTNVK_VK_KV_STAGES=2 $P --shape 4x16x4096x128 --tile 128x16 --reps 20
  } 2>&1 | tee "$OUT/perf.txt"
  # attnvk run --check against the cpu API on the same .npy inputs
  N=$B/npy
  for api in vulkan cpu; do
    $B/attnvk run --api $api --q $N/q.npy --k $N/k.npy --v $N/v.npy --out /tmp/o_$api.npy --causal --dtype f16 --check
  done 2>&1 | tee "$OUT/run_check.txt"
  python3 $N/npy.py cmp /tmp/o_vulkan.npy /tmp/o_cpu.npy | tee -a "$OUT/run_check.txt"
fi

echo "==== summary (median ms, TFLOP/s) ===="
grep -h "TFLOP/s" "$OUT/perf.txt" 2>/dev/null | sed -E 's/ +\(min.*rel_l2 ([0-9.e+-]+) ([A-Z ok]+) .*/  rel_l2 \1 \2/' | cut -c1-150
