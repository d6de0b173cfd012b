#!/usr/bin/env bash
# Session 39's third call: the consumers read their tiles from the producer's slots (AVK_TILE_SLOTS,
# the default for block layouts on wgmma-ws) against their own walk of the layout (=0): test_sparse,
# `attnvk check --api cuda`, then random 10%, local:12, random:1 and dense at N=32k, two rounds, and
# a timeline of random:1 and the persistent kernels' (every block); OpenCL's walk alike (random 10%, random:1, dense).
#     DEADLINE=420 bash tools/h100/s39c.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s39c-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
logged test-sparse 150 $bin/tests/test_sparse
logged check-cuda 120 $AVK check --api cuda --impl attnvk --dtype f16
sp="--dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --impl attnvk"
bs="--block-size 128x128"
for round in 1 2; do
  for lay in random:0.1 local:12 random:1; do
    bench cuda-$lay-$round --api cuda $sp --block-layout $lay $bs --min-time 0.4
    ATTNVK_CUDA_DEFINES="-DAVK_TILE_SLOTS=0" bench cuda-$lay-walk-$round --api cuda $sp --block-layout $lay $bs --min-time 0.4
  done
  bench cuda-dense-$round --api cuda $sp --min-time 0.4
done
tl r100 --api cuda ${sp/ --impl attnvk/} --block-layout random:1 $bs
# the persistent kernels' every block (the records of s39b held each CTA's first only)
ATTNVK_CUDA_PERSISTENT=1 tl d64-causal-p1 --api cuda --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal
ATTNVK_CUDA_PERSISTENT=1 tl d128-p1 --api cuda --dtype f16 --batch 4 --heads 16 --head-dim 128 --seq 4096
ATTNVK_CUDA_PERSISTENT=2 tl d128-p2 --api cuda --dtype f16 --batch 4 --heads 16 --head-dim 128 --seq 4096
echo "== cuda done at $((SECONDS - start)) s"
for lay in random:0.1 random:1 local:12; do bench opencl-$lay --api opencl $sp --block-layout $lay $bs --min-time 0.4; done
bench opencl-dense --api opencl $sp --min-time 0.4
echo "== done at $((SECONDS - start)) s"
pack_out s39c
