#!/usr/bin/env bash
# Session 32, last call: the Vulkan matrix body's double-buffered tiles (the default where they
# fit) against one stage, its tests on the GPU, and the new OpenCL D=128 default, beside cuDNN.
#     AVK=./build-h100b/attnvk DEADLINE=200 bash tools/h100/s32h.sh   (carry .gpu and build-h100b)
set -u
deadline=200
out=${OUT:-/tmp/s32h-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
logged vk-bwd 60 $bin/tests/vulkan/test_vulkan_backward
echo "records on the KHR body: $(grep -c "bwd-coopmat-khr" "$out/vk-bwd.log")"
export BENCH_TIMEOUT=50
b="--dtype f16 --pass bwd --min-time 0.3 --impl attnvk"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
bench d128 --api vulkan,opencl,cuda --dtype f16 --pass bwd --min-time 0.3 --impl attnvk,cudnn $d128
[ "$(left)" -gt 30 ] && ATTNVK_VK_BWD_TILES=stages=1 bench vk-d128-stages1 --api vulkan $b $d128 | tail -1
[ "$(left)" -gt 30 ] && bench d64 --api vulkan,cuda --dtype f16 --pass bwd --min-time 0.3 --impl attnvk,cudnn $d64
[ "$(left)" -gt 30 ] && ATTNVK_VK_BWD_TILES=stages=1 bench vk-d64-stages1 --api vulkan $b $d64 | tail -1
[ "$(left)" -gt 30 ] && bench vk-d128-causal --api vulkan $b $d128 --causal | tail -1
for f in "$out"/json/*.json; do python3 -c "
import json,sys; [print(sys.argv[1].split('/')[-1], r['api'], r['status'], (r.get('backward_kernel') or {}).get('params')) for r in json.load(open(sys.argv[1]))['records']]" "$f"; done 2>/dev/null | cut -c1-220
echo "== done at $((SECONDS - start)) s"
pack_out s32h
