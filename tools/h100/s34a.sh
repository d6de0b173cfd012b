#!/usr/bin/env bash
# Session 34's call: the Vulkan backward's dQ by atomics (ATTNVK_VK_BWD_DQ=atomic) and the OpenCL
# backward's cp.async tile copies (one or two buffers), each beside cuDNN and the kernel-dQ
# Vulkan body in the same call; the tests first on the GPU (both new paths never ran on one).
#     AVK=./build-h100b/attnvk DEADLINE=560 bash tools/h100/s34a.sh   (carry .gpu and build-h100b)
set -u
deadline=560
out=${OUT:-/tmp/s34a-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
logged vk-bwd-atomic 100 env ATTNVK_VK_BWD_DQ=atomic $bin/tests/vulkan/test_vulkan_backward
echo "records on a matrix body: $(grep -c "bwd-coopmat" "$out/vk-bwd-atomic.log")"
logged ocl-bwd 100 $bin/tests/opencl/test_opencl_backward
logged ocl-bwd-st2 100 env ATTNVK_OPENCL_BWD_TILES=stages=2,inner=16,dq_inner=16 $bin/tests/opencl/test_opencl_backward
grep -E "^(ok|FAIL)" "$out/ocl-bwd.log" | grep -c "bwd-mma " | sed 's/^/ocl records on mma: /'
export BENCH_TIMEOUT=70
b="--dtype f16 --pass bwd --min-time 0.3"
v="--api vulkan $b --impl attnvk"
o="--api opencl $b --impl attnvk"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
bench d128 --api vulkan,cuda,opencl $b --impl attnvk,cudnn $d128
[ "$(left)" -gt 50 ] && ATTNVK_VK_BWD_DQ=atomic bench vk-atomic-d128 $v $d128
[ "$(left)" -gt 50 ] && ATTNVK_OPENCL_BWD_TILES=stages=2,inner=16,dq_inner=16 bench ocl-st2-d128 $o $d128
[ "$(left)" -gt 50 ] && ATTNVK_OPENCL_BWD_TILES=warps=4,inner=16,dq_inner=16 bench ocl-w4-d128 $o $d128
[ "$(left)" -gt 50 ] && bench d64 --api vulkan,cuda,opencl $b --impl attnvk,cudnn $d64
[ "$(left)" -gt 50 ] && ATTNVK_VK_BWD_DQ=atomic bench vk-atomic-d64 $v $d64
[ "$(left)" -gt 50 ] && ATTNVK_OPENCL_BWD_TILES=stages=2 bench ocl-st2-d64 $o $d64
[ "$(left)" -gt 50 ] && ATTNVK_OPENCL_BWD_TILES=stages=2,inner=16,dq_inner=16 bench ocl-st2-16-d64 $o $d64
for t in nsg=4,stream=32 nsg=8,stream=16; do
  [ "$(left)" -gt 45 ] && ATTNVK_VK_BWD_DQ=atomic ATTNVK_VK_BWD_TILES=$t bench vk-atomic-d128-$t $v $d128
done
[ "$(left)" -gt 45 ] && ATTNVK_VK_BWD_DQ=atomic ATTNVK_VK_BWD_TILES=nsg=4,stream=16 bench vk-atomic-d64-nsg4s16 $v $d64
[ "$(left)" -gt 45 ] && ATTNVK_OPENCL_BWD_TILES=warps=2,inner=16,dq_inner=32 bench ocl-2-16-32-d128 $o $d128
# the OpenCL backward programs' PTX (NVIDIA's program binaries) for ptxas -v here: registers, spills
mkdir -p "$out/ptx" && grep -rl --null avk_bwd_dkdv "$ATTNVK_CACHE_DIR" 2>/dev/null | xargs -0 -r cp --backup=numbered -t "$out/ptx"
for f in "$out"/json/*.json; do python3 -c "
import json,sys; [print(sys.argv[1].split('/')[-1], r['api'], r['implementation'], r['status'], round(r.get('tflops') or 0, 1), (r.get('backward_kernel') or {}).get('variant'), (r.get('backward_kernel') or {}).get('params')) for r in json.load(open(sys.argv[1]))['records']]" "$f"; done 2>/dev/null | cut -c1-260
echo "== done at $((SECONDS - start)) s"
pack_out s34a
