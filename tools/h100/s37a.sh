#!/usr/bin/env bash
# Session 37's call: #20's block layouts with the CTA's (work-group's) layout bytes prefetched into
# L1 when it starts (AVK_PATTERN_PREFETCH, CUDA and OpenCL) against without, at N=32k and 10%
# beside dense, after test_sparse on the GPU; then session 36's s36a.sh (the Vulkan backward's
# registers and strips, OpenCL's afrag, CUDA's backward switches) in the time left.
#     DEADLINE=540 bash tools/h100/s37a.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s37a-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
logged test-sparse 120 "$bin/tests/test_sparse"
sp="--impl attnvk --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --min-time 1"
r10="--block-layout random:0.1 --block-size 128x128"
bench sparse-cuda-dense --api cuda $sp
bench sparse-cuda-random0.1 --api cuda $sp $r10
ATTNVK_CUDA_DEFINES="-DAVK_PATTERN_PREFETCH=0" bench sparse-cuda-random0.1-noprefetch --api cuda $sp $r10
bench sparse-opencl-dense --api opencl $sp
bench sparse-opencl-random0.1 --api opencl $sp $r10
ATTNVK_OPENCL_BUILD_OPTIONS="-DAVK_PATTERN_PREFETCH=0" bench sparse-opencl-random0.1-noprefetch --api opencl $sp $r10
bench sparse-vulkan-dense --api vulkan $sp
bench sparse-vulkan-random0.1 --api vulkan $sp $r10
for d in 0.05 0.2; do [ "$(left)" -gt 420 ] && bench sparse-cuda-random$d --api cuda $sp --block-layout random:$d --block-size 128x128; done
echo "== sparse done at $((SECONDS - start)) s"
OUT=$out/s36a DEADLINE=$(( $(left) - 10 )) bash tools/h100/s36a.sh
pack_out s37a
