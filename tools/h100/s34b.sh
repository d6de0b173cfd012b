#!/usr/bin/env bash
# Session 34's second call: the Vulkan dQ-by-atomics dK/dV with K's matrices read from shared
# memory per tile (xsh=1, the D=128 row of the atomic table) against holding them (xsh=0) and
# against the dQ pass, D=128 and D=64, twice each; the OpenCL backward's tiles with cp.async
# copies (session 34's first call: 71.4 at D=128 with the old table's 2 warps 32/32); cuDNN
# beside them in the same call.
#     AVK=./build-h100b/attnvk DEADLINE=330 bash tools/h100/s34b.sh   (carry .gpu and build-h100b)
set -u
deadline=330
out=${OUT:-/tmp/s34b-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
logged vk-bwd-atomic 100 env ATTNVK_VK_BWD_DQ=atomic $bin/tests/vulkan/test_vulkan_backward
export BENCH_TIMEOUT=60 ATTNVK_VK_PIPELINE_STATS=1 # the dK/dV pass's registers and spills in the params
b="--dtype f16 --pass bwd --min-time 0.3"
v="--api vulkan $b --impl attnvk"
o="--api opencl $b --impl attnvk"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
bench d128 --api vulkan,cuda $b --impl attnvk,cudnn $d128
for round in 1 2; do
  for t in kx=2 kx=1 nsg=2,kx=2; do
    [ "$(left)" -gt 40 ] && ATTNVK_VK_BWD_DQ=atomic ATTNVK_VK_BWD_TILES=$t bench vk-atomic-d128-$t-r$round $v $d128
  done
  [ "$(left)" -gt 40 ] && ATTNVK_VK_BWD_DQ=kernel bench vk-kernel-d128-r$round $v $d128
done
[ "$(left)" -gt 40 ] && bench d64 --api vulkan,cuda $b --impl attnvk,cudnn $d64
for round in 1 2; do
  for t in kx=1 kx=2; do
    [ "$(left)" -gt 40 ] && ATTNVK_VK_BWD_DQ=atomic ATTNVK_VK_BWD_TILES=$t bench vk-atomic-d64-$t-r$round $v $d64
  done
  [ "$(left)" -gt 40 ] && ATTNVK_VK_BWD_DQ=kernel bench vk-kernel-d64-r$round $v $d64
done
for t in warps=2,inner=32,dq_inner=32 warps=1,inner=64,dq_inner=64 warps=1,inner=32,dq_inner=32 warps=2,inner=32,dq_inner=16 warps=4,inner=16,dq_inner=32; do
  [ "$(left)" -gt 40 ] && ATTNVK_OPENCL_BWD_TILES=$t bench ocl-d128-$t $o $d128
done
for t in warps=4,inner=32,dq_inner=32 warps=4,inner=64,dq_inner=64 warps=2,inner=64,dq_inner=64 warps=2,inner=32,dq_inner=32 warps=8,inner=32,dq_inner=32 warps=4,inner=32,dq_inner=64; do
  [ "$(left)" -gt 40 ] && ATTNVK_OPENCL_BWD_TILES=$t bench ocl-d64-$t $o $d64
done
bwd_params
echo "== done at $((SECONDS - start)) s"
pack_out s34b
