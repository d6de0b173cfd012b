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
# host libraries the command links (cJSON, SQLite) are not installed there
[ -d "$B/hostlibs" ] && export LD_LIBRARY_PATH="$PWD/$B/hostlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
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
  perf() { timeout 120 "$B/tests/cuda/cuda_perf" --iters 20 "$@" 2>&1 | tee -a "$out/perf.log" | grep -E "TFLOP|FAIL" | sed 's/ \[.*//' ; }
  {
  # D=128 sweep first, in its own cache: its cubins' SASS is summarized below
  ATTNVK_CACHE_DIR=/tmp/cc-d128 perf --dtype f16 --b 4 --h 16 --n 4096 --d 128 \
    --try "wgmma 128x128" --try "mma32-qs 128x64" --try "wgmma 128x64" --try "wgmma 192x128" --try "wgmma 64x128" --try "wgmma 128x256"
  perf --dtype f16 --b 4 --h 16 --n 4096 --d 128 --try "wgmma 128x128" --try "mma32-qs 128x64"
  perf --dtype f16 --b 4 --h 32 --n 4096 --d 64 --try "wgmma 128x128" --try "wgmma 192x128" --try "wgmma 128x64" --try "wgmma 128x256" --try "mma32 128x64"
  perf --dtype f16 --b 4 --h 16 --n 4096 --d 128 --causal --try "wgmma 128x128" --try "wgmma 128x64" --try "mma32-qs 128x64"
  perf --dtype f16 --b 4 --h 32 --n 4096 --d 64 --causal --try "wgmma 128x128" --try "wgmma 128x64" --try "mma32 128x64"
  perf --dtype bf16 --b 4 --h 16 --n 4096 --d 128
  perf --dtype bf16 --b 4 --h 16 --n 4096 --d 128 --causal
  perf --dtype bf16 --b 4 --h 32 --n 4096 --d 64
  perf --dtype f16 --b 8 --h 8 --n 2048 --d 256 --try "wgmma 128x64" --try "wgmma 64x64" --try "mma16-qs 64x32"
  perf --dtype f16 --b 1 --h 16 --n 16384 --d 128
  perf --dtype f16 --b 4 --h 16 --n 4096 --d 96
  perf --dtype f16 --b 16 --h 16 --n 1024 --d 128
  perf --dtype f16 --b 8 --h 32 --hkv 8 --nq 1 --n 8192 --d 128
  } | tee -a "$summary"
  # SASS of the D=128 sweep's kernels (cubins in creation order = --try order)
  od=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null)
  if [ -n "$od" ] && ls /tmp/cc-d128/*.cubin >/dev/null 2>&1; then
    n=0
    for f in $(ls -tr /tmp/cc-d128/*.cubin); do
      n=$((n + 1))
      "$od" -sass "$f" > /tmp/sass-$n.txt 2>&1
      echo "try $n: $(grep -cE ' HGMMA' /tmp/sass-$n.txt) HGMMA $(grep -cE ' HMMA' /tmp/sass-$n.txt) HMMA $(grep -cE ' LDSM' /tmp/sass-$n.txt) LDSM $(grep -cE ' MUFU' /tmp/sass-$n.txt) MUFU $(grep -cE ' (LDL|STL)' /tmp/sass-$n.txt) LDL/STL $(grep -cE 'BAR' /tmp/sass-$n.txt) BAR, $(grep -cE '^ +/\*[0-9a-f]{4}\*/' /tmp/sass-$n.txt) instructions" | tee -a "$summary"
    done
    cat /tmp/sass-1.txt /tmp/sass-2.txt > "$out/sass.txt"; gzip -f "$out/sass.txt"
  else
    note "no cuobjdump there"
  fi
fi
echo "==== summary ===="
cat "$summary"
