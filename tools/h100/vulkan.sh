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

# coopmat-nv-rs (register softmax): the layout probe's verdict, then a sweep of
# workgroups x tiles x K/V stages x Q placement (tuning aids of vk_variants.c)
rs() { # rs ENV... -- ARGS: vk_perf of coopmat-nv-rs with the given environment
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env ATTNVK_VK_PIPELINE_STATS=1 "${envs[@]}" timeout 60 $P --variant coopmat-nv-rs "$@"
}
if [ "$PHASE" = rs1 ] || [ "$PHASE" = rs2 ]; then
  ATTNVK_VK_RS_PROBE_DUMP=1 $B/attnvk devices > "$OUT/probe.txt" 2>&1
  grep -v "^  lane" "$OUT/probe.txt" | head -8
  # a probe that disagrees: time and test the kernel anyway (the tests judge its outputs)
  grep -q "coopmat-nv-rs:" "$OUT/probe.txt" && export ATTNVK_VK_RS_FORCE=1 && echo "PROBE DISAGREES: forcing coopmat-nv-rs" 
  {
    S128="--shape 4x16x4096x128 --reps 10"
    rs ATTNVK_VK_WORKGROUP=128 -- $S128 --tile 64x64 --tile 64x32 --tile 128x16 --tile 128x32
    rs ATTNVK_VK_WORKGROUP=128 ATTNVK_VK_Q_SHARED=1 -- $S128 --tile 64x32 --tile 64x16 --tile 128x16
    rs ATTNVK_VK_WORKGROUP=128 ATTNVK_VK_KV_STAGES=1 -- $S128 --tile 64x32 --tile 128x16
    rs ATTNVK_VK_WORKGROUP=256 -- $S128 --tile 128x64 --tile 128x32 --tile 256x32 --tile 256x16
    rs ATTNVK_VK_WORKGROUP=256 ATTNVK_VK_KV_STAGES=1 -- $S128 --tile 128x32
    rs ATTNVK_VK_WORKGROUP=256 ATTNVK_VK_Q_SHARED=1 -- $S128 --tile 128x16 --tile 128x32
    rs ATTNVK_VK_WORKGROUP=64 -- $S128 --tile 32x64 --tile 64x64 --tile 64x32
    ATTNVK_VK_PIPELINE_STATS=1 $P $S128
    S64="--shape 4x32x4096x64 --reps 10"
    rs ATTNVK_VK_WORKGROUP=128 -- $S64 --tile 64x64 --tile 128x64 --tile 64x128 --tile 128x32
    rs ATTNVK_VK_WORKGROUP=256 -- $S64 --tile 128x64 --tile 256x64 --tile 256x32
    rs ATTNVK_VK_WORKGROUP=128 ATTNVK_VK_Q_SHARED=1 -- $S64 --tile 128x32 --tile 64x64
    ATTNVK_VK_PIPELINE_STATS=1 $P $S64
    rs ATTNVK_VK_WORKGROUP=128 -- $S128 --causal 1 --tile 64x64 --tile 64x32
    rs ATTNVK_VK_WORKGROUP=256 -- $S128 --causal 1 --tile 128x64
  } 2>&1 | tee "$OUT/perf.txt"
  timeout 120 $B/tests/vulkan/test_vulkan --only coopmat-nv-rs > "$OUT/test_vulkan.txt" 2>&1
  echo "test_vulkan rc=$?"
  grep -E "^FAIL|passed|worst|^skip|^device" "$OUT/test_vulkan.txt" | head -30
fi

# the table's defaults (coopmat-nv-rs where the probe passed) against coopmat-nv, a few neighbours
if [ "$PHASE" = rs-final ]; then
  timeout 100 $B/tests/vulkan/test_vulkan --only coopmat-nv-rs > "$OUT/test_vulkan.txt" 2>&1
  echo "test_vulkan rc=$?"
  grep -E "^FAIL|passed|worst|^skip|^device" "$OUT/test_vulkan.txt" | head -30
  {
    export ATTNVK_VK_PIPELINE_STATS=1
    $P --shape 4x16x4096x128 --causal 0 --causal 1 --reps 20
    $P --shape 4x32x4096x64 --causal 0 --causal 1 --reps 20
    $P --shape 4x16x4096x128 --variant coopmat-nv --causal 0 --causal 1 --reps 20
    $P --shape 4x32x4096x64 --variant coopmat-nv --causal 0 --causal 1 --reps 20
    ATTNVK_VK_WORKGROUP=256 $P --shape 4x16x4096x128 --variant coopmat-nv-rs --tile 128x48 --tile 128x32 --tile 256x32 --reps 20
    ATTNVK_VK_WORKGROUP=256 ATTNVK_VK_KV_STAGES=1 $P --shape 4x32x4096x64 --variant coopmat-nv-rs --tile 256x64 --reps 20
    ATTNVK_VK_WORKGROUP=256 $P --shape 4x32x4096x64 --variant coopmat-nv-rs --tile 256x48 --tile 256x32 --reps 20
  } 2>&1 | tee "$OUT/perf.txt"
fi

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
grep -h "TFLOP/s" "$OUT/perf.txt" 2>/dev/null | sed -E 's/ +\(min.*rel_l2 ([0-9.e+-]+) ([A-Z ok]+) +\[(.*)\]/ \1 \2 \3/; s/subgroup=32 mma=16x16x16 //; s/shared=[0-9]+ split_len=[0-9]+//; s/kv_stages=/st/; s/q_shared=/q/; s/s_chains=/ch/; s/B4 H[0-9]+ N4096 //; s/split 1 +//; s/  +/ /g' | cut -c1-150
grep -h "unavailable\|failed" "$OUT/perf.txt" 2>/dev/null | cut -c1-200 | head
