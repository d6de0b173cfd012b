#!/usr/bin/env bash
# Session 32, one call for what is new and what never ran on a GPU: the wgmma backward's last
# changes (test_cuda_backward, in the background: NVRTC's cold compiles are CPU work) beside the
# Vulkan backward's matrix body's tests (every case in every dtype; NV, then KHR); then the
# backward bench beside cuDNN's in the same call: Vulkan NV, KHR, tile sweeps, the portable body.
#     AVK=./build-h100b/attnvk DEADLINE=540 bash tools/h100/s32c.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s32c-out}
export AVK=${AVK:-./build-h100b/attnvk}
bin=$(dirname "$AVK")
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-540}
TEST_TIMEOUT=270 test_backward wgmma ATTNVK_CUDA_BWD_WGMMA=1 > "$out/cuda-bwd-summary.txt" 2>&1 &
cuda=$!
logged vk-bwd-nv 150 env ATTNVK_TEST_BACKWARD_ALL=1 $bin/tests/vulkan/test_vulkan_backward
echo "records on the NV body: $(grep -c "bwd-coopmat-nv" "$out/vk-bwd-nv.log")"
logged vk-bwd-khr 100 env ATTNVK_VK_BWD=khr ATTNVK_TEST_BACKWARD_ALL=1 $bin/tests/vulkan/test_vulkan_backward
echo "records on the KHR body: $(grep -c "bwd-coopmat-khr" "$out/vk-bwd-khr.log")"
wait $cuda
cat "$out/cuda-bwd-summary.txt"
export BENCH_TIMEOUT=80
v="--api vulkan --dtype f16 --pass bwd --min-time 0.3 --impl attnvk"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
bench cudnn-d128 --api cuda --dtype f16 --pass bwd --min-time 0.3 --impl cudnn,attnvk $d128
bench vk-nv-d128 $v $d128
ATTNVK_VK_BWD=khr bench vk-khr-d128 $v $d128
[ "$(left)" -gt 60 ] && bench cudnn-d64 --api cuda --dtype f16 --pass bwd --min-time 0.3 --impl cudnn $d64
[ "$(left)" -gt 60 ] && bench vk-nv-d64 $v $d64
[ "$(left)" -gt 60 ] && ATTNVK_VK_BWD=khr bench vk-khr-d64 $v $d64
for t in nsg=8,stream=16 nsg=4,stream=32 nsg=2,stream=16; do
  [ "$(left)" -gt 50 ] && ATTNVK_VK_BWD_TILES=$t bench vk-nv-d128-$t $v $d128
done
for t in nsg=8,stream=32 nsg=4,stream=64; do
  [ "$(left)" -gt 50 ] && ATTNVK_VK_BWD_TILES=$t bench vk-nv-d64-$t $v $d64
done
[ "$(left)" -gt 50 ] && bench vk-nv-d128-causal $v $d128 --causal
[ "$(left)" -gt 50 ] && ATTNVK_VK_BWD=portable bench vk-portable-d128 $v $d128
for f in "$out"/json/vk-*.json; do python3 -c "
import json,sys; [print(sys.argv[1].split('/')[-1], r['status'], r.get('backward_kernel')) for r in json.load(open(sys.argv[1]))['records']]" "$f"; done 2>/dev/null | cut -c1-260
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s32c.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s32c.tar.gz .
