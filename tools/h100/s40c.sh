#!/usr/bin/env bash
# Session 40: the OpenCL backward with its one buffer's copies slid into the loop (AVK_BWD_SLIDE, the
# new default with one buffer) against the copies waited at the loop's top (-DAVK_BWD_SLIDE=0), beside
# cuDNN; test_opencl_backward on the H100; a few tiles the slide may now favour.
#     DEADLINE=150 bash tools/h100/s40c.sh   (carry .gpu and build-h100b, staged with test_opencl_backward)
set -u
out=${OUT:-/tmp/s40c-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
opts="--api opencl --dtype f16 --pass bwd --impl attnvk --min-time 0.3"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
bench cl-d128 $opts $d128
ATTNVK_OPENCL_BUILD_OPTIONS=-DAVK_BWD_SLIDE=0 bench cl-d128-top $opts $d128
bench cl-d64 $opts $d64
ATTNVK_OPENCL_BUILD_OPTIONS=-DAVK_BWD_SLIDE=0 bench cl-d64-top $opts $d64
bench cl-d128-cudnn --api cuda --dtype f16 --pass bwd --impl cudnn --min-time 0.3 $d128
[ -x $bin/tests/opencl/test_opencl_backward ] && [ "$(left)" -gt 40 ] && logged test-opencl-bwd $(( $(left) - 10 )) $bin/tests/opencl/test_opencl_backward
for t in "warps=2,inner=32,dq_inner=32" "warps=4,inner=16,dq_inner=16" "warps=2,inner=16,dq_inner=16"; do
  [ "$(left)" -gt 20 ] && ATTNVK_OPENCL_BWD_TILES=$t bench "cl-d128-$t" $opts $d128
done
for t in "warps=2,inner=32,dq_inner=32" "warps=4,inner=32,dq_inner=16"; do
  [ "$(left)" -gt 20 ] && ATTNVK_OPENCL_BWD_TILES=$t bench "cl-d64-$t" $opts $d64
done
echo "== s40c done at $((SECONDS - start)) s"
