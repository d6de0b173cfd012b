#!/usr/bin/env bash
# Session 21's closing device calls (issues #12, #20), in two parts under the 600 s cap:
#   PART=a: test_sparse on every API, sparse tile skipping timed (dense beside 10% random blocks),
#           the decode suite and the models suite's decode presets beside cuDNN;
#   PART=b: Nq 1/4/16, quantized against f16, paged against contiguous, and two CUDA A/Bs.
#     PART=a bash tools/h100/s21-final.sh   (carry .gpu and build-h100; OUT set by the device tool)
set -u
out=${OUT:-/tmp/s21-out}
source tools/h100/bench-lib.sh
shape="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1"
if [ "${PART:-a}" = a ]; then
  $avk devices > "$out/devices.txt" 2>&1; grep -iE "bandwidth|GB/s" "$out/devices.txt" | head -6
  ( time timeout 200 ./build-h100/tests/test_sparse ) > "$out/test-sparse.log" 2>&1
  echo "test_sparse rc=$?: $(grep -E 'passed' "$out/test-sparse.log")"; grep -E "^FAIL" "$out/test-sparse.log" | head -8 | cut -c1-200
  sp="--impl attnvk --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --min-time 1"
  for api in opencl vulkan cuda; do
    bench sparse-$api-dense --api $api $sp
    bench sparse-$api-random0.1 --api $api $sp --block-layout random:0.1 --block-size 128x128
  done
  BENCH_TIMEOUT=180 bench decode-suite --suite decode --api cuda,opencl,vulkan --impl attnvk,cudnn
  BENCH_TIMEOUT=180 bench models-decode --suite models --case decode --api cuda,opencl,vulkan --impl attnvk,cudnn
else
  for nq in 1 4 16; do bench nq$nq-32k --api cuda,opencl,vulkan ${shape/--seq 1/--seq $nq} --seq-kv 32768 --impl attnvk,cudnn; done
  for f in dtype q8_0 q4_0 fp8; do bench quant-$f-64k --api cuda,opencl,vulkan $shape --seq-kv 65536 --impl attnvk --kv-dtype $f; done
  for f in dtype q8_0 q4_0; do bench paged-$f-32k --api cuda,opencl,vulkan $shape --seq-kv 32768 --impl attnvk --kv-dtype $f --page-size 16; done
  bench cu-64k-tile16x64 --api cuda $shape --seq-kv 65536 --impl attnvk --tile 16x64
  ATTNVK_CUDA_DEFINES=-DAVK_MERGE_BATCH=16 bench cu-b1-128k-merge16 --api cuda --batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 131072 --impl attnvk
  bench cu-b1-128k-merge8 --api cuda --batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 131072 --impl attnvk,cudnn
fi
cd "$out" && tar -czf json-${PART:-a}.tar.gz json && rm -rf json
