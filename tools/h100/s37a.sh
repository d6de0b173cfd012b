#!/usr/bin/env bash
# Session 37's call. #20: block layouts with the CTA's (work-group's) layout bytes prefetched into L1
# when it starts (AVK_PATTERN_PREFETCH, CUDA and OpenCL) against without, at N=32k and 10% beside
# dense, after test_sparse on the GPU. #16/#20: wgmma-ws as a persistent kernel
# (ATTNVK_CUDA_PERSISTENT=1: a CTA an SM taking the blocks in turn) against the grid of one CTA a
# block: the FlashAttention grid's N=4k cases beside cuDNN and the 10% layout, then
# `attnvk check --api cuda` under it. Then session 36's s36a.sh (SHORT=1 where time is short).
#     DEADLINE=540 bash tools/h100/s37a.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s37a-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
logged test-sparse 120 "$bin/tests/test_sparse"
# the persistent kernel once, small and checked, before it is timed anywhere (a hang costs 30 s, not every run's timeout)
BENCH_TIMEOUT=30 ATTNVK_CUDA_PERSISTENT=1 bench persistent-smoke --api cuda --impl attnvk --dtype f16 --batch 2 --heads 8 \
  --head-dim 128 --seq 2048 --causal --min-time 0.1
ok_all() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['records']; print(int(len(r) > 0 and all(x['status'] == 'ok' for x in r)))" "$1" 2>/dev/null || echo 0; }
persist=$(ok_all "$out/json/persistent-smoke.json")
BENCH_TIMEOUT=30 ATTNVK_CUDA_PERSISTENT=2 bench persistent2-smoke --api cuda --impl attnvk --dtype f16 --batch 2 --heads 8 \
  --head-dim 128 --seq 2048 --block-layout random:0.3 --block-size 128x128 --min-time 0.1
persist2=$(ok_all "$out/json/persistent2-smoke.json")
echo "persistent smoke ok: rounds $persist, counter $persist2"
pbench() { [ "$persist" = 1 ] && BENCH_TIMEOUT=45 ATTNVK_CUDA_PERSISTENT=1 bench "$@"; }
pbench2() { [ "$persist2" = 1 ] && BENCH_TIMEOUT=45 ATTNVK_CUDA_PERSISTENT=2 bench "$@"; }
sp="--impl attnvk --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --min-time 1"
r10="--block-layout random:0.1 --block-size 128x128"
bench sparse-cuda-dense --api cuda $sp
bench sparse-cuda-random0.1 --api cuda $sp $r10
ATTNVK_CUDA_DEFINES="-DAVK_PATTERN_PREFETCH=0" bench sparse-cuda-random0.1-noprefetch --api cuda $sp $r10
pbench sparse-cuda-random0.1-persistent --api cuda $sp $r10
pbench2 sparse-cuda-random0.1-persistent2 --api cuda $sp $r10
pbench sparse-cuda-dense-persistent --api cuda $sp
bench sparse-opencl-dense --api opencl $sp
bench sparse-opencl-random0.1 --api opencl $sp $r10
ATTNVK_OPENCL_BUILD_OPTIONS="-DAVK_PATTERN_PREFETCH=0" bench sparse-opencl-random0.1-noprefetch --api opencl $sp $r10
echo "== sparse done at $((SECONDS - start)) s"
for g in "${fa_grid[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  case $tag in *n16k*) continue ;; esac
  m="--api cuda --dtype f16 $args --min-time 0.5"
  bench $tag $m --impl attnvk,cudnn
  pbench $tag-persistent $m --impl attnvk
  pbench2 $tag-persistent2 $m --impl attnvk
done
echo "== grid done at $((SECONDS - start)) s"
[ "$persist2" = 1 ] && ATTNVK_CUDA_PERSISTENT=2 logged check-cuda-persistent2 100 $AVK check --api cuda --impl attnvk --dtype f16
[ "$persist" = 1 ] && ATTNVK_CUDA_PERSISTENT=1 logged check-cuda-persistent 150 $AVK check --api cuda --impl attnvk --dtype f16
echo "== checks done at $((SECONDS - start)) s"
[ "$(left)" -gt 120 ] && OUT=$out/s36a SHORT=1 DEADLINE=$(( $(left) - 10 )) bash tools/h100/s36a.sh
pack_out s37a
