#!/usr/bin/env bash
# Session 22's second device call: the OpenCL tile search again (the windowed loop search in the
# tile loop, only the first window filled by the lanes' walk), the CUDA merge with a group per 8
# splits; test_sparse, attnvk check on CUDA, and the session-21 binary beside each timing.
#     bash tools/h100/s22b.sh   (carry .gpu and build-h100 with attnvk-s21 beside attnvk; OUT set by the tool)
set -u
out=${OUT:-/tmp/s22b-out}
source tools/h100/bench-lib.sh
new=$avk base=./build-h100/attnvk-s21
logged test-sparse 150 ./build-h100/tests/test_sparse
logged check-cuda 200 $avk check --api cuda --impl attnvk
sp="--impl attnvk --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --min-time 1"
for bin in new base; do
  avk=${!bin}
  bench sparse-opencl-dense-$bin --api opencl $sp
  for pat in random:0.1 random:0.05 random:0.2 local:4; do bench sparse-opencl-$pat-$bin --api opencl $sp --block-layout $pat --block-size 128x128; done
done
b1="--batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 131072 --min-time 2"
for round in 1 2; do
  avk=$new; bench cu-b1-128k-new-$round --api cuda $b1 --impl attnvk,cudnn
  avk=$base; bench cu-b1-128k-base-$round --api cuda $b1 --impl attnvk
done
for round in 1 2; do
  avk=$new; BENCH_TIMEOUT=120 bench decode-suite-new-$round --suite decode --api cuda --impl attnvk,cudnn
  avk=$base; BENCH_TIMEOUT=120 bench decode-suite-base-$round --suite decode --api cuda --impl attnvk
done
cd "$out" && tar -czf json.tar.gz json && rm -rf json
