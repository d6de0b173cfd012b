#!/usr/bin/env bash
# Session 32, third call: the backward's dQ tiles apart from dK/dV's, Vulkan (KHR, the new
# defaults first) and OpenCL (mma.sync), beside cuDNN in the same call.
#     AVK=./build-h100b/attnvk DEADLINE=330 bash tools/h100/s32g.sh   (carry .gpu and build-h100b)
set -u
deadline=330
out=${OUT:-/tmp/s32g-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
export BENCH_TIMEOUT=60
b="--dtype f16 --pass bwd --min-time 0.3 --impl attnvk"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
bench d128 --api vulkan,opencl,cuda --dtype f16 --pass bwd --min-time 0.3 --impl attnvk,cudnn $d128
bench d64 --api vulkan,opencl,cuda --dtype f16 --pass bwd --min-time 0.3 --impl attnvk,cudnn $d64
for t in dq_nsg=4,dq_stream=32 dq_nsg=2,dq_stream=32 dq_nsg=8,dq_stream=16 dq_nsg=2,dq_stream=16; do
  [ "$(left)" -gt 40 ] && ATTNVK_VK_BWD_TILES=$t bench vk-d128-$t --api vulkan $b $d128 | tail -1
done
for t in dq_nsg=4,dq_stream=32 dq_nsg=8,dq_stream=16 dq_nsg=4,dq_stream=16; do
  [ "$(left)" -gt 40 ] && ATTNVK_VK_BWD_TILES=$t bench vk-d64-$t --api vulkan $b $d64 | tail -1
done
for t in warps=2,inner=16,dq_inner=16 warps=2,inner=32,dq_inner=32 warps=2,inner=16,dq_inner=32; do
  [ "$(left)" -gt 40 ] && ATTNVK_OPENCL_BWD_TILES=$t bench cl-d128-$t --api opencl $b $d128 | tail -1
done
for t in dq_inner=64 warps=8 warps=8,inner=16,dq_inner=16 warps=8,dq_inner=16; do
  [ "$(left)" -gt 40 ] && ATTNVK_OPENCL_BWD_TILES=$t bench cl-d64-$t --api opencl $b $d64 | tail -1
done
for f in "$out"/json/*.json; do python3 -c "
import json,sys; [print(sys.argv[1].split('/')[-1], r['api'], r['status'], (r.get('backward_kernel') or {}).get('params')) for r in json.load(open(sys.argv[1]))['records']]" "$f"; done 2>/dev/null | cut -c1-200
echo "== done at $((SECONDS - start)) s"
pack_out s32g
