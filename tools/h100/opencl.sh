#!/usr/bin/env bash
# OpenCL backend on the H100, one call: device info, timings of the tuning
# candidates (perf_opencl checks sampled rows of every timed run against the
# float64 reference), then every variant's feature matrix on the GPU.
# Logs are written straight to $OUT (so a cut-off run still returns them);
# the table comes last.   source .gpu/gpu-env.sh && bash tools/h100/opencl.sh [build-dir]
set -u
B=${1:-build-cl}
OUT=${OUT:-/tmp/opencl-out}
mkdir -p "$OUT"
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache ATTNVK_TEST_SEED=${ATTNVK_TEST_SEED:-20261123}
P=$B/tests/opencl/perf_opencl
summary=$OUT/summary.txt
: > "$summary"
stage() { echo "== $* ($(date +%T))" | tee -a "$summary"; }
perf() { # label, timeout, perf_opencl args...
  local label=$1 t=$2; shift 2
  echo "-- $label: $*" >> "$OUT/perf.txt"
  ATTNVK_OPENCL_BUILD_OPTIONS=-cl-nv-verbose ATTNVK_OPENCL_BUILD_LOG=1 timeout "$t" "$P" "$@" >> "$OUT/perf.txt" 2>> "$OUT/build.txt"
  echo "   rc=$?" >> "$OUT/perf.txt"
}

stage devices
timeout 30 "$B/attnvk" devices > "$OUT/devices.txt" 2>&1; grep -E "opencl|NAME" "$OUT/devices.txt" | cut -c1-200 | tee -a "$summary"
(command -v clinfo > /dev/null && timeout 20 clinfo > "$OUT/clinfo.txt" 2>&1) || true

stage "f32, D=128 N=4096 B=4 H=16 (non-causal): tiled candidates"
perf f32-d128 130 --dtype f32 -b 4 --heads 16 -n 4096 -d 128 --reps 7 \
  --tune "ds=8,tm=2,bc=16" --tune "ds=8,tm=2,bc=16,async=1" --tune "ds=8,tm=2,bc=32,async=1" \
  --tune "ds=4,tm=2,bc=16" --tune "ds=4,tm=2,bc=16,async=1" --tune "ds=8,tm=4,bc=16,async=1" \
  --tune "ds=8,tm=2,bc=16,wg=256,async=1" --tune "ds=4,tm=1,bc=16,wg=256,async=1" --tune "ds=16,tm=4,bc=16,async=1" \
  --tune "ds=8,tm=3,bc=16,async=1" --tune "ds=8,tm=2,bc=8,async=1" --tune "ds=4,tm=2,bc=16,async=1,maxreg=168" \
  --tune "ds=8,tm=4,bc=8,async=1" --tune "ds=4,tm=2,bc=8,async=1"
stage "f16 tensor cores (mma), D=128 N=4096 B=4 H=16"
perf mma-d128 70 --dtype f16 -b 4 --heads 16 -n 4096 -d 128 --reps 20 \
  --tune "br=64,bc=64" --tune "br=64,bc=64,async=1" --tune "br=128,bc=64" --tune "br=128,bc=64,async=1" \
  --tune "br=64,bc=32,async=1" --tune "br=128,bc=32,async=1" --tune "br=64,bc=32" \
  --tune "br=64,bc=64,async=1,maxreg=168" --tune "br=32,bc=64,async=1"
stage "N=8192 B=2: CLBlast baseline vs attnvk f32"
perf clblast-8k 90 --impl clblast --dtype f32 -b 2 --heads 16 -n 8192 -d 128 --reps 3
perf f32-8k 40 --dtype f32 -b 2 --heads 16 -n 8192 -d 128 --reps 5 --tune "bc=16" --tune "bc=16,async=1"

stage "correctness: feature matrix on the GPU"
ATTNVK_TEST_OPENCL_VARIANTS=tiled-f32,tiled-f16,mma-f16 timeout 150 "$B/tests/opencl/test_opencl_flash" > "$OUT/test_flash.txt" 2>&1
echo "test_opencl_flash rc=$?: $(tail -1 "$OUT/test_flash.txt")" | tee -a "$summary"
grep -E "^FAIL" "$OUT/test_flash.txt" | cut -c1-300 | head -20 | tee -a "$summary"
for v in tiled-f32 tiled-f16 mma-f16; do
  awk -v v="$v" '$1=="ok" && $0 ~ (" " v " ") {for (i = 1; i < NF; ++i) if ($i == "rel_l2" && $(i+1) + 0 > w) w = $(i+1) + 0; n++}
    END {printf "%s: %d cases ok, worst rel_l2 %.2e\n", v, n, w}' "$OUT/test_flash.txt" | tee -a "$summary"
done

stage "D=64 (H=32), causal, D=256"
perf f32-d64 40 --dtype f32 -b 4 --heads 32 -n 4096 -d 64 --reps 7 --tune "bc=16" --tune "bc=16,async=1" --tune "bc=32,async=1"
perf mma-d64 30 --dtype f16 -b 4 --heads 32 -n 4096 -d 64 --reps 20 --tune "bc=64" --tune "bc=64,async=1" --tune "br=128,bc=64,async=1"
perf f32-d128-causal 30 --dtype f32 -b 4 --heads 16 -n 4096 -d 128 --causal --reps 7 --tune "bc=16" --tune "bc=16,async=1"
perf mma-d128-causal 30 --dtype f16 -b 4 --heads 16 -n 4096 -d 128 --causal --reps 20 --tune "bc=64" --tune "bc=64,async=1"
perf mma-d256 30 --dtype f16 -b 4 --heads 8 -n 4096 -d 256 --reps 10 --tune "bc=32" --tune "bc=32,async=1"
perf tiled-f16-d128 30 --dtype f16 --variant tiled-f16 -b 4 --heads 16 -n 4096 -d 128 --reps 5

stage "clblast baseline tests"
timeout 60 "$B/tests/opencl/test_opencl_clblast" > "$OUT/test_clblast.txt" 2>&1
echo "test_opencl_clblast rc=$?: $(tail -1 "$OUT/test_clblast.txt")" | tee -a "$summary"
grep -E "^FAIL" "$OUT/test_clblast.txt" | cut -c1-300 | head -10 | tee -a "$summary"

grep -E "ptxas info *: Used|spill" "$OUT/build.txt" | paste - - | cut -c1-200 | head -60 > "$OUT/registers.txt"
stage "results (median device time; TFLOP/s = 4*B*H*N^2*D / t, halved for causal)"
grep -E "^-- |^perf |rc=[1-9]" "$OUT/perf.txt" | sed -E 's/ \[[^]]*\]//; s/check rel_l2/rel/; s/ on 96 rows//' | cut -c1-170 | tee -a "$summary"
