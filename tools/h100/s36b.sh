#!/usr/bin/env bash
# Session 36's short call (s36a's Vulkan half, for the device time left): test_vulkan_backward
# with P and dS in the accumulators (ATTNVK_VK_BWD_SCORES=registers), then the backward with
# them against staged (the default) at D=128 and D=64, and two strips a subgroup at D=64.
#     DEADLINE=300 bash tools/h100/s36b.sh   (carry .gpu and build-h100b; TEST_ALL=0 for a short call)
set -u
deadline=300
out=${OUT:-/tmp/s36b-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
opts="--dtype f16 --pass bwd --min-time 0.3"
vb="--api vulkan $opts"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
export ATTNVK_VK_BWD_SCORES=registers ATTNVK_VK_PIPELINE_STATS=1
# TEST_ALL=0: the test's default subset (3 f16 cases on the matrix body) for a short call
if [ "${TEST_ALL:-1}" = 1 ]; then logged test-vulkan-bwd 100 env ATTNVK_TEST_BACKWARD_ALL=1 "$bin/tests/vulkan/test_vulkan_backward"
else logged test-vulkan-bwd 60 "$bin/tests/vulkan/test_vulkan_backward"; fi
bench vk-d128 --api vulkan,cuda $opts --impl attnvk,cudnn $d128
ATTNVK_VK_BWD_SCORES=staged bench vk-d128-staged $vb --impl attnvk $d128
bench vk-d64 $vb --impl attnvk $d64
ATTNVK_VK_BWD_SCORES=staged bench vk-d64-staged $vb --impl attnvk $d64
for t in "nsg=4,strips=2,stream=16" "nsg=2,strips=2,stream=16"; do
  [ "$(left)" -gt 60 ] && ATTNVK_VK_BWD_DQ=atomic ATTNVK_VK_BWD_TILES=$t bench "vk-d64-atomic-$t" $vb --impl attnvk $d64 > /dev/null
done
[ "$(left)" -gt 50 ] && ATTNVK_VK_BWD_TILES="nsg=4,strips=2,stream=32,dq_nsg=4,dq_strips=2,dq_stream=16" bench vk-d64-strips $vb --impl attnvk $d64 > /dev/null
[ "$(left)" -gt 40 ] && ATTNVK_VK_BWD_TILES="nsg=4,stream=32,dq_nsg=4,dq_stream=32" bench vk-d128-4x32 $vb --impl attnvk $d128 > /dev/null
# OpenCL: the kept rows' A fragments in registers (afrag=2; ptxas of clang's PTX: D=64 194/236
# registers, no spills; D=128 spills) against reloading them a tile, D=64
ob="--api opencl --dtype f16 --pass bwd --min-time 0.3"
[ "$(left)" -gt 40 ] && bench cl-d64 $ob --impl attnvk $d64 > /dev/null
[ "$(left)" -gt 30 ] && ATTNVK_OPENCL_BWD_TILES=afrag=2 bench cl-d64-afrag2 $ob --impl attnvk $d64 > /dev/null
bwd_params
echo "== done at $((SECONDS - start)) s"
pack_out s36b
