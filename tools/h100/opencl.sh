#!/usr/bin/env bash
# OpenCL backend on the H100 in one call: device info, every variant's
# feature matrix on the GPU (tests/opencl, one process per variant so a
# faulting kernel cannot take the others down), and timings (perf_opencl
# checks sampled rows of each timed run against the float64 reference).
# Logs go straight to $OUT, so a cut-off run still returns them; the table
# comes last.
#   source .gpu/gpu-env.sh && bash tools/h100/opencl.sh [build-dir] [sweep|final]
set -u
B=${1:-build-cl}
MODE=${2:-final}
OUT=${OUT:-/tmp/opencl-out}
mkdir -p "$OUT"
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache ATTNVK_TEST_SEED=${ATTNVK_TEST_SEED:-20261123}
P=$B/tests/opencl/perf_opencl
summary=$OUT/summary.txt
: > "$summary"
stage() { echo "== $* ($(date +%T))" | tee -a "$summary"; }
perf() { # label, timeout, perf_opencl args... (one process)
  local label=$1 t=$2; shift 2
  echo "-- $label: $*" >> "$OUT/perf.txt"
  ATTNVK_OPENCL_BUILD_OPTIONS=-cl-nv-verbose ATTNVK_OPENCL_BUILD_LOG=1 timeout "$t" "$P" "$@" >> "$OUT/perf.txt" 2>> "$OUT/build.txt"
  echo "   rc=$?" >> "$OUT/perf.txt"
}
perf_each() { # label, timeout, "tune1;tune2;...", perf_opencl args...: one process per tune
  local label=$1 t=$2 tunes=$3; shift 3
  IFS=';' read -ra list <<< "$tunes"
  for tu in "${list[@]}"; do perf "$label" "$t" "$@" --tune "$tu"; done
}
flash_test() { # label, tune, variants: one process each, all output in tests.txt
  local log=$OUT/test_flash_$1.log
  ATTNVK_OPENCL_TUNE=$2 ATTNVK_TEST_OPENCL_VARIANTS=$3 timeout 120 "$B/tests/opencl/test_opencl_flash" > "$log" 2>&1
  local rc=$?
  { echo "==== test_opencl_flash [$1] rc=$rc"; cat "$log"; } >> "$OUT/tests.txt"
  echo "test_opencl_flash [$1] rc=$rc: $(tail -1 "$log")" | tee -a "$summary"
  grep -E "^FAIL" "$log" | cut -c1-260 | head -6 | tee -a "$summary"
  awk '$1 == "ok" && / rel_l2 / && !/skipping/ { d = ($0 ~ / f32 /) ? "f32" : "f16"; n[d]++
         for (i = 1; i < NF; ++i) if ($i == "rel_l2" && $(i+1) + 0 > w[d]) w[d] = $(i+1) + 0 }
       END { for (d in n) printf "   %s: %d checked cases ok, worst rel_l2 %.2e\n", d, n[d], w[d] }' "$log" | tee -a "$summary"
  rm -f "$log"
}

stage devices
timeout 30 "$B/attnvk" devices > "$OUT/devices.txt" 2>&1; grep -E "opencl" "$OUT/devices.txt" | cut -c1-200 | tee -a "$summary"

stage "correctness on the GPU: feature matrix per variant"
flash_test mma "" mma-f16
[ "$MODE" = sweep ] && flash_test mma-sync "async=0" mma-f16
flash_test tiled-f32 "" tiled-f32
flash_test tiled-f16 "" tiled-f16

if [ "$MODE" = sweep ]; then
  stage "f16 tensor cores, D=128 N=4096 B=4 H=16"
  perf_each mma-d128 25 "br=64,bc=64;br=64,bc=64,async=1;br=128,bc=64;br=128,bc=64,async=1;br=64,bc=32;br=64,bc=32,async=1;br=128,bc=32,async=1;br=32,bc=64,async=1;br=64,bc=128,async=1" \
    --dtype f16 -b 4 --heads 16 -n 4096 -d 128 --reps 20
  stage "f32 around the table entry (8 lanes x 4 rows, bc 16, cp.async)"
  perf f32-d128 90 --dtype f32 -b 4 --heads 16 -n 4096 -d 128 --reps 7 --tune "" --tune "bc=16,async=0" \
    --tune "tm=4,bc=16,wg=64" --tune "tm=4,bc=16,wg=256" --tune "tm=5,bc=16" --tune "tm=4,bc=24" --tune "tm=4,bc=32" \
    --tune "tm=4,bc=12" --tune "tm=4,bc=16,maxreg=255" --tune "tm=6,bc=8"
  stage "D=64, D=256, causal"
  perf f32-d64 40 --dtype f32 -b 4 --heads 32 -n 4096 -d 64 --reps 7 --tune "" --tune "tm=2" --tune "ds=2,tm=2" --tune "tm=4,bc=32"
  perf f32-d256 40 --dtype f32 -b 4 --heads 8 -n 4096 -d 256 --reps 5 --tune "" --tune "bc=16,async=0" --tune "ds=8,tm=2,bc=8" --tune "tm=4,bc=8"
  perf_each mma-d64 25 "bc=64;bc=64,async=1;br=128,bc=64,async=1" --dtype f16 -b 4 --heads 32 -n 4096 -d 64 --reps 20
  perf_each mma-d256 25 "bc=32;bc=32,async=1" --dtype f16 -b 4 --heads 8 -n 4096 -d 256 --reps 10
  perf f32-causal 30 --dtype f32 -b 4 --heads 16 -n 4096 -d 128 --causal --reps 7
  perf_each mma-causal 25 "bc=64;bc=64,async=1" --dtype f16 -b 4 --heads 16 -n 4096 -d 128 --causal --reps 20
fi
if [ "$MODE" = final ]; then
  stage "clblast baseline tests; attnvk run --api opencl --check vs --api cpu"
  timeout 60 "$B/tests/opencl/test_opencl_clblast" > "$OUT/clblast.log" 2>&1
  echo "test_opencl_clblast rc=$?: $(tail -1 "$OUT/clblast.log")" | tee -a "$summary"
  { echo "==== test_opencl_clblast"; cat "$OUT/clblast.log"; } >> "$OUT/tests.txt"; rm -f "$OUT/clblast.log"
  ATTNVK="$B/attnvk" ATTNVK_TEST_SEED=7 timeout 90 bash tests/opencl/test_opencl_cli.sh /tmp/cl-cli > "$OUT/cli.log" 2>&1
  echo "test_opencl_cli rc=$?: $(tail -1 "$OUT/cli.log")" | tee -a "$summary"
  grep -E "^(ok|FAIL)" "$OUT/cli.log" | cut -c1-200 | tee -a "$summary"
  { echo "==== test_opencl_cli.sh"; cat "$OUT/cli.log"; } >> "$OUT/tests.txt"; rm -f "$OUT/cli.log"
  stage "table defaults at D=64 / D=256 / causal"
  perf f32-d64 30 --dtype f32 -b 4 --heads 32 -n 4096 -d 64 --reps 10
  perf f32-d256 30 --dtype f32 -b 4 --heads 8 -n 4096 -d 256 --reps 10
  perf f32-causal 30 --dtype f32 -b 4 --heads 16 -n 4096 -d 128 --causal --reps 10
  perf f16-d64 30 --dtype f16 -b 4 --heads 32 -n 4096 -d 64 --reps 20
  perf f16-d256 30 --dtype f16 -b 4 --heads 8 -n 4096 -d 256 --reps 20
  perf f16-causal 30 --dtype f16 -b 4 --heads 16 -n 4096 -d 128 --causal --reps 20
  perf_each f16-d128-more 25 "br=96,bc=64;br=64,bc=48;br=48,bc=64" --dtype f16 -b 4 --heads 16 -n 4096 -d 128 --reps 20
  perf f16-decode 30 --dtype f16 -b 4 --heads 16 -n 1 --nk 8192 -d 128 --reps 20
  perf f32-decode 30 --dtype f32 -b 4 --heads 16 -n 1 --nk 8192 -d 128 --reps 20
fi
stage "N=8192 B=2 H=16 D=128: CLBlast baseline vs attnvk"
perf clblast-8k 90 --impl clblast --dtype f32 -b 2 --heads 16 -n 8192 -d 128 --reps 3
perf f32-8k 40 --dtype f32 -b 2 --heads 16 -n 8192 -d 128 --reps 5
perf mma-8k 40 --dtype f16 -b 2 --heads 16 -n 8192 -d 128 --reps 10
stage "table defaults, D=128 N=4096 B=4 H=16"
perf f32-table 40 --dtype f32 -b 4 --heads 16 -n 4096 -d 128 --reps 10
perf f16-table 40 --dtype f16 -b 4 --heads 16 -n 4096 -d 128 --reps 20
perf tiled-f16 40 --dtype f16 --variant tiled-f16 -b 4 --heads 16 -n 4096 -d 128 --reps 5

echo "registers (build order): $(grep -oE "Used [0-9]+ registers" "$OUT/build.txt" | grep -oE "[0-9]+" | tr "\n" " ")" >> "$summary"
stage "results (median device time; TFLOP/s = 4*B*H*N^2*D / t, halved for causal)"
grep -E "^-- |^perf |rc=[1-9]" "$OUT/perf.txt" | sed -E 's/ \[[^]]*\]//; s/check rel_l2/rel/; s/ on 96 rows//; s/ split 1 ws 0.0 MiB//' | cut -c1-170 | tee -a "$summary"
