#!/usr/bin/env bash
# Session 36's call: the Vulkan backward with P and dS kept in the accumulators
# (ATTNVK_VK_BWD_SCORES=registers, asked for until it has run on a GPU) against them staged
# through shared memory (the default); test_vulkan_backward on the H100 with registers (its
# f16 cases run the KHR body); two strips a subgroup; OpenCL's A fragments in registers; then
# session 35's unrun CUDA switches (what s35b.sh timed: AVK_BWD_SPLIT, AVK_BWD_DQ_WARP) beside
# cuDNN and test_cuda_backward under both. SHORT=1 (a short call, DEADLINE=160 or so): the
# test's default subset, registers against staged and the D=64 strips and OpenCL only.
#     DEADLINE=440 bash tools/h100/s36a.sh   (carry .gpu and build-h100b)
set -u
deadline=440
short=${SHORT:-0}
out=${OUT:-/tmp/s36a-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
opts="--dtype f16 --pass bwd --min-time 0.3"
vb="--api vulkan $opts"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
export ATTNVK_VK_BWD_SCORES=registers ATTNVK_VK_PIPELINE_STATS=1
if [ "$short" = 1 ]; then logged test-vulkan-bwd 60 "$bin/tests/vulkan/test_vulkan_backward"
else logged test-vulkan-bwd 150 env ATTNVK_TEST_BACKWARD_ALL=1 "$bin/tests/vulkan/test_vulkan_backward"; fi
bench vk-d128 --api vulkan,cuda $opts --impl attnvk,cudnn $d128
ATTNVK_VK_BWD_SCORES=staged bench vk-d128-staged $vb --impl attnvk $d128
bench vk-d64 $vb --impl attnvk $d64
ATTNVK_VK_BWD_SCORES=staged bench vk-d64-staged $vb --impl attnvk $d64
if [ "$short" != 1 ]; then
  ATTNVK_VK_BWD=nv bench vk-d128-nv $vb --impl attnvk $d128
  ATTNVK_VK_BWD_DQ=kernel bench vk-d64-dqpass $vb --impl attnvk $d64
  bench vk-d128-causal $vb --impl attnvk $d128 --causal
  # wider tiles now that nothing is staged (registers permitting)
  for t in "nsg=4,stream=32,dq_nsg=4,dq_stream=32" "nsg=8,stream=16,dq_nsg=8,dq_stream=16" "dq_strips=2"; do
    [ "$(left)" -gt 330 ] && ATTNVK_VK_BWD_TILES=$t bench "vk-d128-$t" $vb --impl attnvk $d128 > /dev/null
  done
fi
# two strips a subgroup (each streamed matrix load serves both): D=64 dQ by atomics and both passes
for t in "nsg=4,strips=2,stream=16" "nsg=2,strips=2,stream=16" "nsg=4,strips=2,stream=32"; do
  [ "$(left)" -gt $(( short == 1 ? 60 : 320 )) ] && ATTNVK_VK_BWD_DQ=atomic ATTNVK_VK_BWD_TILES=$t bench "vk-d64-atomic-$t" $vb --impl attnvk $d64 > /dev/null
done
for t in "nsg=4,strips=2,stream=32,dq_nsg=4,dq_strips=2,dq_stream=16" "nsg=4,strips=2,stream=16,dq_nsg=2,dq_strips=2,dq_stream=32"; do
  [ "$(left)" -gt $(( short == 1 ? 50 : 310 )) ] && ATTNVK_VK_BWD_TILES=$t bench "vk-d64-$t" $vb --impl attnvk $d64 > /dev/null
done
unset ATTNVK_VK_BWD_SCORES
# OpenCL: the kept rows' A fragments in registers (afrag=2; ptxas of clang's PTX: D=64 194/236
# registers, no spills; D=128 spills) against reloading them a tile, D=64
ob="--api opencl $opts"
[ "$(left)" -gt 40 ] && bench cl-d64 $ob --impl attnvk $d64 > /dev/null
[ "$(left)" -gt 30 ] && ATTNVK_OPENCL_BWD_TILES=afrag=2 bench cl-d64-afrag2 $ob --impl attnvk $d64 > /dev/null
bwd_params
if [ "$short" != 1 ]; then # CUDA: session 35's switches beside cuDNN
  b="--api cuda $opts"
  defs() { local tag=$1 d=$2; shift 2; ATTNVK_CUDA_DEFINES="$d" bench "$tag" "$@"; }
  both="-DAVK_BWD_SPLIT=1 -DAVK_BWD_DQ_WARP=1"
  bench d128 $b --impl attnvk,cudnn $d128
  defs d128-split "-DAVK_BWD_SPLIT=1" $b --impl attnvk $d128
  defs d128-warp "-DAVK_BWD_DQ_WARP=1" $b --impl attnvk $d128
  defs d128-both "$both" $b --impl attnvk $d128
  bench d64 $b --impl attnvk,cudnn $d64
  defs d64-both "$both" $b --impl attnvk $d64
  bench d128-causal $b --impl attnvk,cudnn $d128 --causal
  defs d128-causal-both "$both" $b --impl attnvk $d128 --causal
  [ "$(left)" -gt 60 ] && TEST_TIMEOUT=$(( $(left) - 15 )) test_backward both ATTNVK_CUDA_DEFINES="$both"
fi
echo "== done at $((SECONDS - start)) s"
pack_out s36a
