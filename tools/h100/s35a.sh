#!/usr/bin/env bash
# Session 35's first call: the wgmma backward's dQ added by bulk reductions from a staging block
# (build-h100b) against red.v4 from every thread (build-h100a, 8e66786), both beside cuDNN, then
# its tests; session 34's unrun Vulkan dQ-by-atomics checks (s34c) after.
#     DEADLINE=400 bash tools/h100/s35a.sh   (carry .gpu, build-h100a and build-h100b)
set -u
deadline=400
out=${OUT:-/tmp/s35a-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
old=./build-h100a/attnvk
b="--dtype f16 --pass bwd --min-time 0.3"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
bench d128 --api cuda $b --impl attnvk,cudnn $d128
avk=$old bench d128-old --api cuda $b --impl attnvk $d128
bench d64 --api cuda $b --impl attnvk,cudnn $d64
avk=$old bench d64-old --api cuda $b --impl attnvk $d64
bench d128-causal --api cuda $b --impl attnvk,cudnn $d128 --causal
avk=$old bench d128-causal-old --api cuda $b --impl attnvk $d128 --causal
bench d128-again --api cuda $b --impl attnvk,cudnn $d128
bench d128-n16k --api cuda $b --impl attnvk,cudnn --batch 1 --heads 16 --head-dim 128 --seq 16384
# where the time goes now (wrong gradients: timing only): 2 without the bulk reductions, 1 without
# the dQ phase, 4 without the P/dS arithmetic
for x in 2 1 4 6; do
  [ "$(left)" -gt 200 ] && ATTNVK_CUDA_DEFINES=-DAVK_BWD_X=$x bench d128-x$x --api cuda $b --impl attnvk $d128
done
[ "$(left)" -gt 160 ] && test_backward wgmma
[ "$(left)" -gt 60 ] && logged vk-bwd-atomic 45 env ATTNVK_VK_BWD_DQ=atomic $bin/tests/vulkan/test_vulkan_backward
export BENCH_TIMEOUT=45 ATTNVK_VK_PIPELINE_STATS=1
v="--api vulkan $b --impl attnvk"
for t in kx=2 kx=1; do
  [ "$(left)" -gt 30 ] && ATTNVK_VK_BWD_DQ=atomic ATTNVK_VK_BWD_TILES=$t bench vk-atomic-d128-$t $v $d128
done
[ "$(left)" -gt 30 ] && bench vk-d128 $v $d128
[ "$(left)" -gt 30 ] && ATTNVK_VK_BWD_DQ=atomic ATTNVK_VK_BWD_TILES=kx=2 bench vk-atomic-d64-kx2 $v $d64
[ "$(left)" -gt 30 ] && bench vk-d64 $v $d64
bwd_params
echo "== done at $((SECONDS - start)) s"
pack_out s35a
