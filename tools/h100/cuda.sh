#!/usr/bin/env bash
# One call on the H100: CUDA backend correctness (feature matrix against the
# CPU reference), `attnvk run --api cuda --check`, then timings of several
# variants/tiles. Full logs under $OUT; a short table last.
#   source .gpu/gpu-env.sh && bash tools/h100/cuda.sh [tests|perf|all]
set -u
what=${1:-all}
B=${BUILD:-build-cuda}
out=${OUT:-/tmp/cuda-out}
mkdir -p "$out"
export ATTNVK_CACHE_DIR=/tmp/attnvk-cuda-cache
summary="$out/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

"$B/attnvk" devices > "$out/devices.txt" 2>&1; grep -i cuda "$out/devices.txt" | tee -a "$summary"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$out/smi.txt" 2>&1
note "gpu: $(tail -1 "$out/smi.txt")"

if [ "$what" != perf ]; then
  "$B/tests/cuda/test_cuda_host" > "$out/host.log" 2>&1
  note "test_cuda_host: $(tail -1 "$out/host.log") (rc $?)"
  timeout 300 "$B/tests/cuda/test_cuda_features" > "$out/features.log" 2>&1
  rc=$?
  note "test_cuda_features: $(tail -1 "$out/features.log") (rc $rc)"
  grep -E "^FAIL" "$out/features.log" | head -25 | tee -a "$summary"
  # the command-line path, against the reference
  w=/tmp/cuda-run; rm -rf $w; mkdir -p $w
  for c in "gqa 2 8 2 300 300 128 bhsd --causal" "dec 2 8 2 1 2000 64 bshd" "d256 1 4 4 100 140 256 bhsd"; do
    set -- $c
    mkdir -p $w/$1
    python3 tests/cli/npy_tool.py make $w/$1 $2 $3 $4 $5 $6 $7 $8 7 >/dev/null 2>&1 || { note "npy_tool make failed"; continue; }
    for dt in f16 bf16 f32; do
      r=$("$B/attnvk" run --api cuda --dtype $dt --layout $8 ${9:-} --q $w/$1/q.npy --k $w/$1/k.npy --v $w/$1/v.npy --out $w/$1/o.npy --check 2>&1)
      note "run $1 $dt (rc $?): $r"
    done
  done
fi

if [ "$what" != tests ]; then
  perf() { timeout 60 "$B/tests/cuda/cuda_perf" --iters 20 "$@" 2>&1 | tee -a "$out/perf.log" | grep -E "TFLOP|FAIL" | sed 's/ \[.*//' ; }
  {
  # D=128, B=4, H=16, N=4096 (the headline), variants and tiles
  for v in "mma16 128x64" "mma16 128x128" "mma16 64x64" "mma16 128x32" "mma16-qs 128x64" "mma32-qs 128x64" "mma32-qs 128x32" "mma32-qs 64x64"; do
    set -- $v; perf --dtype f16 --b 4 --h 16 --n 4096 --d 128 --variant $1 --tile $2
  done
  # D=64, B=4, H=32
  for v in "mma32 128x64" "mma32 128x128" "mma16 128x64" "mma16 128x128" "mma32-qs 128x64" "mma32 64x64"; do
    set -- $v; perf --dtype f16 --b 4 --h 32 --n 4096 --d 64 --variant $1 --tile $2
  done
  perf --dtype f16 --b 4 --h 16 --n 4096 --d 128 --causal
  perf --dtype bf16 --b 4 --h 16 --n 4096 --d 128
  perf --dtype f16 --b 4 --h 32 --n 4096 --d 64 --causal
  perf --dtype bf16 --b 4 --h 32 --n 4096 --d 64
  perf --dtype f16 --b 16 --h 16 --n 1024 --d 128
  perf --dtype f16 --b 8 --h 8 --n 2048 --d 256
  perf --dtype f16 --b 8 --h 32 --hkv 8 --nq 1 --n 8192 --d 128
  perf --dtype f32 --b 4 --h 16 --n 2048 --d 128
  } | tee -a "$summary"
fi
echo "==== summary ===="
cat "$summary"
