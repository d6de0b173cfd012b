#!/usr/bin/env bash
# Session 34's third call (s34b's atomic runs died of a host division by zero, fixed since):
# the Vulkan dQ-by-atomics dK/dV, K's matrices from shared memory (kx=2, D=128's atomic row)
# against held in registers (kx=1) and against the dQ pass, D=128 and D=64, with the driver's
# register counts; OpenCL's new D=128 row (2 warps, 32/16); cuDNN beside them.
#     AVK=./build-h100b/attnvk DEADLINE=110 bash tools/h100/s34c.sh   (carry .gpu and build-h100b)
set -u
deadline=110
out=${OUT:-/tmp/s34c-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
logged vk-bwd-atomic 40 env ATTNVK_VK_BWD_DQ=atomic $bin/tests/vulkan/test_vulkan_backward
export BENCH_TIMEOUT=45 ATTNVK_VK_PIPELINE_STATS=1 # the dK/dV pass's registers and spills in the params
b="--dtype f16 --pass bwd --min-time 0.3"
v="--api vulkan $b --impl attnvk"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
bench d128 --api vulkan,cuda,opencl $b --impl attnvk,cudnn $d128
[ "$(left)" -gt 30 ] && ATTNVK_VK_BWD_DQ=atomic bench vk-atomic-d64 $v $d64
for t in kx=2 kx=1 nsg=2,kx=2; do
  [ "$(left)" -gt 30 ] && ATTNVK_VK_BWD_DQ=atomic ATTNVK_VK_BWD_TILES=$t bench vk-atomic-d128-$t $v $d128
done
[ "$(left)" -gt 30 ] && bench d64 --api vulkan,cuda,opencl $b --impl attnvk,cudnn $d64
[ "$(left)" -gt 30 ] && ATTNVK_VK_BWD_DQ=kernel bench vk-kernel-d64 $v $d64
[ "$(left)" -gt 30 ] && ATTNVK_VK_BWD_DQ=atomic ATTNVK_VK_BWD_TILES=kx=2 bench vk-atomic-d64-kx2 $v $d64
[ "$(left)" -gt 30 ] && bench d64-causal --api vulkan $b --impl attnvk $d64 --causal
[ "$(left)" -gt 30 ] && ATTNVK_VK_BWD_DQ=kernel bench vk-kernel-d64-causal $v $d64 --causal
bwd_params
echo "== done at $((SECONDS - start)) s"
pack_out s34c
