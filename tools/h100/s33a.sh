#!/usr/bin/env bash
# Session 33's (or the next session's) one call for the Vulkan backward's dQ by atomics
# (ATTNVK_VK_BWD_DQ=atomic, never yet on a GPU): its tests on the KHR and NV matrix bodies
# first, then the backward bench, kernel against atomic beside cuDNN in the same call, D=128
# and D=64, and atomic tile sweeps (K stays in shared memory: D=64's 8x32 no longer fits).
#     AVK=./build-h100b/attnvk DEADLINE=540 bash tools/h100/s33a.sh   (carry .gpu and build-h100b)
set -u
deadline=540
out=${OUT:-/tmp/s33a-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
logged vk-bwd-atomic-khr 120 env ATTNVK_VK_BWD_DQ=atomic ATTNVK_TEST_BACKWARD_ALL=1 $bin/tests/vulkan/test_vulkan_backward
echo "records on a matrix body: $(grep -c "bwd-coopmat" "$out/vk-bwd-atomic-khr.log")"
[ "$(left)" -gt 120 ] && logged vk-bwd-atomic-nv 90 env ATTNVK_VK_BWD=nv ATTNVK_VK_BWD_DQ=atomic $bin/tests/vulkan/test_vulkan_backward
export BENCH_TIMEOUT=70
b="--dtype f16 --pass bwd --min-time 0.3"
v="--api vulkan $b --impl attnvk"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
bench d128 --api vulkan,cuda $b --impl attnvk,cudnn $d128
[ "$(left)" -gt 50 ] && ATTNVK_VK_BWD_DQ=atomic bench vk-atomic-d128 $v $d128
[ "$(left)" -gt 50 ] && bench d64 --api vulkan,cuda $b --impl attnvk,cudnn $d64
[ "$(left)" -gt 50 ] && ATTNVK_VK_BWD_DQ=atomic bench vk-atomic-d64 $v $d64
for t in nsg=8,stream=16 nsg=4,stream=32 nsg=2,stream=32; do
  [ "$(left)" -gt 45 ] && ATTNVK_VK_BWD_DQ=atomic ATTNVK_VK_BWD_TILES=$t bench vk-atomic-d128-$t $v $d128
done
for t in nsg=8,stream=16 nsg=2,stream=32 nsg=4,stream=16; do
  [ "$(left)" -gt 45 ] && ATTNVK_VK_BWD_DQ=atomic ATTNVK_VK_BWD_TILES=$t bench vk-atomic-d64-$t $v $d64
done
[ "$(left)" -gt 45 ] && ATTNVK_VK_BWD_DQ=atomic ATTNVK_VK_BWD=nv bench vk-atomic-nv-d128 $v $d128
[ "$(left)" -gt 45 ] && ATTNVK_VK_BWD_DQ=atomic bench vk-atomic-d128-causal $v $d128 --causal
# OpenCL's split between its passes (pass_ms in the params): is dQ worth atomics there too?
[ "$(left)" -gt 45 ] && bench ocl-d128 --api opencl $b --impl attnvk $d128
[ "$(left)" -gt 45 ] && bench ocl-d64 --api opencl $b --impl attnvk $d64
# the OpenCL backward programs' PTX (NVIDIA's program binaries) for ptxas -v here: registers, spills
mkdir -p "$out/ptx" && grep -rl --null avk_bwd_dkdv "$ATTNVK_CACHE_DIR" 2>/dev/null | xargs -0 -r cp -t "$out/ptx"
for f in "$out"/json/*.json; do python3 -c "
import json,sys; [print(sys.argv[1].split('/')[-1], r['api'], r['status'], r.get('tflops'), r.get('backward_kernel')) for r in json.load(open(sys.argv[1]))['records']]" "$f"; done 2>/dev/null | cut -c1-240
echo "== done at $((SECONDS - start)) s"
pack_out s33a
