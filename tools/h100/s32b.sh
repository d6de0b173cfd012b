#!/usr/bin/env bash
# Session 32: the Vulkan backward's matrix body (shaders/flash_bwd_cm_body.glsl) on the H100.
# test_vulkan_backward with every case in every dtype (f16 runs the NV body where head dims
# suit it), again through KHR; then the backward grid beside cuDNN's (same call): NV, KHR,
# the portable body, and the tile sweeps at D=128.
#     AVK=./build-h100b/attnvk DEADLINE=540 bash tools/h100/s32b.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s32b-out}
export AVK=${AVK:-./build-h100b/attnvk}
bin=$(dirname "$AVK")
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-540}
logged vk-bwd-nv 150 env ATTNVK_TEST_BACKWARD_ALL=1 $bin/tests/vulkan/test_vulkan_backward
grep -cE "bwd-coopmat-nv" "$out/vk-bwd-nv.log"
logged vk-bwd-khr 120 env ATTNVK_VK_BWD=khr ATTNVK_TEST_BACKWARD_ALL=1 $bin/tests/vulkan/test_vulkan_backward
grep -cE "bwd-coopmat-khr" "$out/vk-bwd-khr.log"
export BENCH_TIMEOUT=100
v="--api vulkan --dtype f16 --pass bwd --min-time 0.3 --impl attnvk"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
bench cudnn-d128 --api cuda --dtype f16 --pass bwd --min-time 0.3 --impl cudnn,attnvk $d128
bench cudnn-d64 --api cuda --dtype f16 --pass bwd --min-time 0.3 --impl cudnn $d64
bench vk-nv-d128 $v $d128
ATTNVK_VK_BWD=khr bench vk-khr-d128 $v $d128
bench vk-nv-d64 $v $d64
ATTNVK_VK_BWD=khr bench vk-khr-d64 $v $d64
bench vk-nv-d128-causal $v $d128 --causal
for t in nsg=2,stream=16 nsg=8,stream=16 nsg=4,stream=32 nsg=2,stream=32; do
  [ "$(left)" -gt 60 ] && ATTNVK_VK_BWD_TILES=$t bench vk-nv-d128-$t $v $d128
done
for t in nsg=8,stream=32 nsg=4,stream=64 nsg=2,stream=64; do
  [ "$(left)" -gt 60 ] && ATTNVK_VK_BWD_TILES=$t bench vk-nv-d64-$t $v $d64
done
[ "$(left)" -gt 60 ] && ATTNVK_VK_BWD=portable bench vk-portable-d128 $v $d128
for f in "$out"/json/vk-*.json; do python3 -c "
import json,sys; [print(sys.argv[1].split('/')[-1], r['status'], r.get('backward_kernel')) for r in json.load(open(sys.argv[1]))['records']]" "$f"; done 2>/dev/null | cut -c1-260
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s32b.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s32b.tar.gz .
