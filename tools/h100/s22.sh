#!/usr/bin/env bash
# Session 22's device call (issues #12, #20, CI time): test_sparse with the OpenCL search that has
# no barrier in a loop; OpenCL sparse timed (dense beside 5/10/20% random 128x128 blocks, 32k), the
# session-21 binary beside it; the CUDA split-KV merge with a group of lanes per split (B=1 128k and
# the decode suite), the session-21 binary and cuDNN in the same run; attnvk check on CUDA.
#     bash tools/h100/s22.sh   (carry .gpu and build-h100 with attnvk-s21 beside attnvk; OUT set by the tool)
set -u
out=${OUT:-/tmp/s22-out}
source tools/h100/bench-lib.sh
new=$avk base=./build-h100/attnvk-s21
( time timeout 150 ./build-h100/tests/test_sparse ) > "$out/test-sparse.log" 2>&1
echo "test_sparse rc=$?: $(grep -E 'passed' "$out/test-sparse.log")"; grep -E "^FAIL" "$out/test-sparse.log" | head -8 | cut -c1-200
( time timeout 200 $avk check --api cuda --impl attnvk ) > "$out/check-cuda.log" 2>&1
echo "check cuda rc=$?: $(tail -2 "$out/check-cuda.log" | head -1)"; grep -E "FAIL" "$out/check-cuda.log" | head -5 | cut -c1-200
sp="--impl attnvk --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --min-time 1"
for bin in new base; do
  avk=${!bin}
  bench sparse-opencl-dense-$bin --api opencl $sp
  for pat in random:0.1 random:0.05 random:0.2; do bench sparse-opencl-$pat-$bin --api opencl $sp --block-layout $pat --block-size 128x128; done
done
b1="--batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 131072 --min-time 2"
for round in 1 2; do
  avk=$new; bench cu-b1-128k-new-$round --api cuda $b1 --impl attnvk,cudnn
  avk=$base; bench cu-b1-128k-base-$round --api cuda $b1 --impl attnvk
done
avk=$new; BENCH_TIMEOUT=120 bench decode-suite-new --suite decode --api cuda --impl attnvk,cudnn
avk=$base; BENCH_TIMEOUT=120 bench decode-suite-base --suite decode --api cuda --impl attnvk
# Vulkan's gemma3-27b local decode (window 1024, 0.64 of cuDNN in s21): splits, and back-to-back launches
g3="--suite models --case gemma3-27b-local-decode"
avk=$new; bench g3-all $g3 --api cuda,vulkan,opencl --impl attnvk,cudnn
for s in 1 2; do bench g3-vk-s$s $g3 --api vulkan --impl attnvk --split-kv $s; done
bench g3-l20 $g3 --api cuda,vulkan --impl attnvk,cudnn --launches 20
cd "$out" && tar -czf json.tar.gz json && rm -rf json
