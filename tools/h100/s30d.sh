#!/usr/bin/env bash
# Session 30, #20 and #16: block layouts through the overlap and the ping-pong (a layout's list walked
# by the producer and every consumer warp), checked (test_sparse, `attnvk check --api cuda`) and timed at
# N=32k beside dense and beside the plain ring (-DAVK_WG_OVERLAP=0 -DAVK_PINGPONG=0); OpenCL and
# Vulkan's 10% case again; D=64's schedules (192 rows plain, with the overlap, with the ping-pong of
# three; 128 rows with both) beside cuDNN.
#     bash tools/h100/s30d.sh   (carry .gpu and build-h100; DEADLINE seconds, default 570)
set -u
out=${OUT:-/tmp/s30d-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-570}
left() { echo $((deadline - (SECONDS - start))); }
build=$(dirname "$avk")
logged test-sparse 120 $build/tests/test_sparse
[ "$(left)" -gt 300 ] && logged check-cuda 160 $avk check --api cuda --impl attnvk --dtype f16,bf16
echo "== checks done at $((SECONDS - start)) s"
sp="--impl attnvk --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --min-time 1"
bench sparse-cuda-dense --api cuda $sp
for d in 0.1 0.05 0.2; do bench sparse-cuda-random$d --api cuda $sp --block-layout random:$d --block-size 128x128; done
ATTNVK_CUDA_DEFINES="-DAVK_WG_OVERLAP=0 -DAVK_PINGPONG=0" bench sparse-cuda-random0.1-plain --api cuda $sp --block-layout random:0.1 --block-size 128x128
for api in opencl vulkan; do
  bench sparse-$api-dense --api $api $sp
  bench sparse-$api-random0.1 --api $api $sp --block-layout random:0.1 --block-size 128x128
done
echo "== sparse done at $((SECONDS - start)) s"
d64=("n4k:--batch 4 --heads 32 --head-dim 64 --seq 4096"
     "n4k-causal:--batch 4 --heads 32 --head-dim 64 --seq 4096 --causal"
     "n16k:--batch 1 --heads 32 --head-dim 64 --seq 16384")
for g in "${d64[@]}"; do
  tag=d64-${g%%:*}; args=${g#*:}
  [ "$(left)" -gt 60 ] || { echo "skip $tag: $(left) s left"; break; }
  m="--api cuda --dtype f16 $args --min-time 0.5"
  bench $tag-192 $m --impl attnvk,cudnn
  bench $tag-128 $m --impl attnvk --tile 128x128
  ATTNVK_CUDA_DEFINES="-DAVK_WG_OVERLAP=1" bench $tag-192-ov $m --impl attnvk
  ATTNVK_CUDA_DEFINES="-DAVK_WG_OVERLAP=1 -DAVK_PINGPONG=1" bench $tag-192-pp $m --impl attnvk
done
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s30d.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s30d.tar.gz .
