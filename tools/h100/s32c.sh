#!/usr/bin/env bash
# Session 32, one call for what is new and what never ran on a GPU: the wgmma backward's last
# changes (test_cuda_backward, in the background: NVRTC's cold compiles are CPU work) beside the
# Vulkan backward's matrix body's tests (every case in every dtype) and the OpenCL backward's
# ldmatrix body's; then the backward bench beside cuDNN's in the same call: Vulkan NV and KHR,
# OpenCL, tile sweeps, the Vulkan portable body. Guarded by DEADLINE, most wanted first.
#     AVK=./build-h100b/attnvk DEADLINE=540 bash tools/h100/s32c.sh   (carry .gpu and build-h100b)
set -u
deadline=540
out=${OUT:-/tmp/s32c-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
TEST_TIMEOUT=240 test_backward wgmma ATTNVK_CUDA_BWD_WGMMA=1 > "$out/cuda-bwd-summary.txt" 2>&1 &
cuda=$!
logged vk-bwd-nv 120 env ATTNVK_TEST_BACKWARD_ALL=1 $bin/tests/vulkan/test_vulkan_backward
echo "records on the NV body: $(grep -c "bwd-coopmat-nv" "$out/vk-bwd-nv.log")"
logged cl-bwd 100 $bin/tests/opencl/test_opencl_backward
wait $cuda
cat "$out/cuda-bwd-summary.txt"
export BENCH_TIMEOUT=70
b="--dtype f16 --pass bwd --min-time 0.3"
v="--api vulkan $b --impl attnvk"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
bench d128 --api vulkan,opencl,cuda $b --impl attnvk,cudnn $d128
[ "$(left)" -gt 50 ] && ATTNVK_VK_BWD=khr bench vk-khr-d128 $v $d128
[ "$(left)" -gt 50 ] && bench d64 --api vulkan,opencl,cuda $b --impl attnvk,cudnn $d64
for t in nsg=8,stream=16 nsg=4,stream=32 nsg=2,stream=16; do
  [ "$(left)" -gt 45 ] && ATTNVK_VK_BWD_TILES=$t bench vk-nv-d128-$t $v $d128
done
[ "$(left)" -gt 45 ] && bench d128-causal --api vulkan,opencl,cuda $b --impl attnvk,cudnn $d128 --causal
for t in nsg=8,stream=32 nsg=4,stream=64; do
  [ "$(left)" -gt 45 ] && ATTNVK_VK_BWD_TILES=$t bench vk-nv-d64-$t $v $d64
done
[ "$(left)" -gt 45 ] && ATTNVK_VK_BWD=khr bench vk-khr-d64 $v $d64
[ "$(left)" -gt 45 ] && ATTNVK_VK_BWD=portable bench vk-portable-d128 $v $d128
for f in "$out"/json/*.json; do python3 -c "
import json,sys; [print(sys.argv[1].split('/')[-1], r['api'], r['status'], r.get('backward_kernel')) for r in json.load(open(sys.argv[1]))['records']]" "$f"; done 2>/dev/null | cut -c1-240
echo "== done at $((SECONDS - start)) s"
pack_out s32c
