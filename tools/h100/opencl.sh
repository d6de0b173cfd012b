#!/usr/bin/env bash
# OpenCL backend on the H100, one call: device info, every variant's
# correctness on the GPU (tests/opencl), then timings (perf_opencl) of the
# tuning candidates. Full logs go to $OUT/opencl-h100.tar.gz, a table last.
#   source .gpu/gpu-env.sh && bash tools/h100/opencl.sh [build-dir]
set -u
B=${1:-build-cl}
OUT=${OUT:-/tmp/opencl-out}
L=/tmp/opencl-logs
rm -rf "$L" && mkdir -p "$L" "$OUT"
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache ATTNVK_TEST_SEED=${ATTNVK_TEST_SEED:-20261123}
P=$B/tests/opencl/perf_opencl
summary=$L/summary.txt
: > "$summary"
stage() { echo "== $* ($(date +%T))" | tee -a "$summary"; }

stage devices
timeout 30 "$B/attnvk" devices > "$L/devices.txt" 2>&1; grep -E "opencl|NAME" "$L/devices.txt" | tee -a "$summary"
(command -v clinfo > /dev/null && timeout 20 clinfo > "$L/clinfo.txt" 2>&1) || true

stage "correctness: feature matrix on the GPU"
ATTNVK_TEST_OPENCL_VARIANTS=tiled-f32,tiled-f16,mma-f16 timeout 200 "$B/tests/opencl/test_opencl_flash" > "$L/test_flash.txt" 2>&1
echo "test_opencl_flash rc=$?: $(tail -1 "$L/test_flash.txt")" | tee -a "$summary"
grep -E "^FAIL" "$L/test_flash.txt" | head -20 | tee -a "$summary"
timeout 90 "$B/tests/opencl/test_opencl_clblast" > "$L/test_clblast.txt" 2>&1
echo "test_opencl_clblast rc=$?: $(tail -1 "$L/test_clblast.txt")" | tee -a "$summary"
grep -E "^FAIL" "$L/test_clblast.txt" | head -10 | tee -a "$summary"
for v in tiled-f32 tiled-f16 mma-f16; do
  awk -v v="$v" '$1=="ok" && $0 ~ (" " v " ") {for (i = 1; i < NF; ++i) if ($i == "rel_l2" && $(i+1) + 0 > w) w = $(i+1) + 0; n++}
    END {printf "%s: %d cases ok, worst rel_l2 %.2e\n", v, n, w}' "$L/test_flash.txt" | tee -a "$summary"
done

perf() { # label, timeout, perf_opencl args...
  local label=$1 t=$2; shift 2
  echo "-- $label: $*" >> "$L/perf.txt"
  ATTNVK_OPENCL_BUILD_OPTIONS=-cl-nv-verbose ATTNVK_OPENCL_BUILD_LOG=1 timeout "$t" "$P" "$@" >> "$L/perf.txt" 2>> "$L/build.txt"
  echo "   rc=$?" >> "$L/perf.txt"
}
stage "f32, D=128 N=4096 B=4 H=16 (non-causal): tiled candidates"
perf f32-d128 150 --dtype f32 -b 4 --heads 16 -n 4096 -d 128 --reps 10 \
  --tune "ds=8,tm=2,bc=16" --tune "ds=8,tm=2,bc=16,async=1" --tune "ds=8,tm=2,bc=32" --tune "ds=8,tm=2,bc=32,async=1" \
  --tune "ds=4,tm=2,bc=16" --tune "ds=4,tm=2,bc=16,async=1" --tune "ds=8,tm=4,bc=16,async=1" \
  --tune "ds=8,tm=2,bc=16,wg=256,async=1" --tune "ds=4,tm=1,bc=16,wg=256,async=1" --tune "ds=16,tm=4,bc=16,async=1" \
  --tune "ds=8,tm=3,bc=16,async=1" --tune "ds=8,tm=2,bc=8,async=1" --tune "ds=4,tm=2,bc=16,async=1,maxreg=168" \
  --tune "ds=8,tm=4,bc=8,async=1" --tune "ds=4,tm=2,bc=8,async=1"
stage "f16 tensor cores (mma), D=128 N=4096 B=4 H=16"
perf mma-d128 100 --dtype f16 -b 4 --heads 16 -n 4096 -d 128 --reps 20 \
  --tune "br=64,bc=64" --tune "br=64,bc=64,async=1" --tune "br=128,bc=64" --tune "br=128,bc=64,async=1" \
  --tune "br=64,bc=32,async=1" --tune "br=128,bc=32,async=1" --tune "br=64,bc=32" --tune "br=128,bc=32" \
  --tune "br=64,bc=64,async=1,maxreg=168" --tune "br=32,bc=64,async=1"
perf tiled-f16-d128 40 --dtype f16 --variant tiled-f16 -b 4 --heads 16 -n 4096 -d 128 --reps 5
stage "D=64 (H=32) and causal"
perf f32-d64 60 --dtype f32 -b 4 --heads 32 -n 4096 -d 64 --reps 10 --tune "bc=16" --tune "bc=16,async=1" --tune "bc=32,async=1"
perf mma-d64 40 --dtype f16 -b 4 --heads 32 -n 4096 -d 64 --reps 20 --tune "bc=64" --tune "bc=64,async=1" --tune "br=128,bc=64,async=1"
perf f32-d128-causal 60 --dtype f32 -b 4 --heads 16 -n 4096 -d 128 --causal --reps 10 --tune "bc=16" --tune "bc=16,async=1"
perf mma-d128-causal 40 --dtype f16 -b 4 --heads 16 -n 4096 -d 128 --causal --reps 20 --tune "bc=64" --tune "bc=64,async=1"
perf mma-d256 40 --dtype f16 -b 4 --heads 8 -n 4096 -d 256 --reps 10 --tune "bc=32" --tune "bc=32,async=1"
stage "N=8192 B=2: CLBlast baseline vs attnvk f32"
perf clblast-8k 150 --impl clblast --dtype f32 -b 2 --heads 16 -n 8192 -d 128 --reps 3
perf f32-8k 80 --dtype f32 -b 2 --heads 16 -n 8192 -d 128 --reps 5 --tune "bc=16" --tune "bc=16,async=1"

grep -E "ptxas info *: (Used|Compiling)|spill" "$L/build.txt" | paste - - - 2>/dev/null | head -80 > "$L/registers.txt"
tar -C /tmp -czf "$OUT/opencl-h100.tar.gz" opencl-logs
stage "results (median device time; TFLOP/s = 4*B*H*N^2*D / t, halved for causal)"
grep -E "^-- |^perf " "$L/perf.txt" | sed -E 's/ \[[^]]*\]//; s/check rel_l2/rel/' | cut -c1-190 | tee -a "$summary"
cp "$summary" "$OUT/summary.txt"
