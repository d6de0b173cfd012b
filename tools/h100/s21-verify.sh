#!/usr/bin/env bash
# Session 21's last device call: sparse tile skipping with the shared-memory window (dense beside 10%
# random 128x128 blocks, 32k, every API), test_sparse, the decode suite with one-wave plans, and split
# A/Bs around the plan (CUDA B=64 8k, Vulkan gemma3-27b local decode, OpenCL q8_0 at B=64).
#     bash tools/h100/s21-verify.sh   (carry .gpu and build-h100; OUT set by the device tool)
set -u
out=${OUT:-/tmp/s21-verify}
source tools/h100/bench-lib.sh
( time timeout 150 ./build-h100/tests/test_sparse ) > "$out/test-sparse.log" 2>&1
echo "test_sparse rc=$?: $(grep -E 'passed' "$out/test-sparse.log")"; grep -E "^FAIL" "$out/test-sparse.log" | head -8 | cut -c1-200
sp="--impl attnvk --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --min-time 1"
for api in opencl vulkan; do
  bench sparse-$api-dense --api $api $sp
  for pat in random:0.1 random:0.2 random:0.05; do bench sparse-$api-$pat --api $api $sp --block-layout $pat --block-size 128x128; done
done
BENCH_TIMEOUT=180 bench decode-suite --suite decode --api cuda,opencl,vulkan --impl attnvk,cudnn
b64="--batch 64 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 8192 --impl attnvk"
bench cu-b64-s2 --api cuda $b64 --split-kv 2
bench cl-q8-b64 --api opencl $b64 --kv-dtype q8_0
bench cl-q8-b64-s2 --api opencl $b64 --kv-dtype q8_0 --split-kv 2
bench vk-gemma3 --suite models --case gemma3-27b-local-decode --api vulkan --impl attnvk
for s in 4 8; do bench vk-gemma3-s$s --suite models --case gemma3-27b-local-decode --api vulkan --impl attnvk --split-kv $s; done
cd "$out" && tar -czf json.tar.gz json && rm -rf json
