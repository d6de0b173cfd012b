#!/usr/bin/env bash
# Session 28, the last short call (about 150 s of device time were left):
# 1. #12: the Vulkan decode body's AHEAD steps (branch s28-vk-ahead: main plus the two AHEAD commits; stage its build as build-h100b) against
#    the session-27 body (build-h100base: cd67952), one round, B=8 H=32/8 D=128 64k.
# 2. #20: CUDA's dilated problems as strided views (ATTNVK_CUDA_DILATED_VIEWS=1, first run on a GPU)
#    against the per-element test, each checked against the float64 reference; then 1M's six-group ladder.
#     AVK=./build-h100b/attnvk DEADLINE=150 bash tools/h100/s28d.sh   (carry .gpu, build-h100b, build-h100base;
#     stage build-h100b with STAGE="attnvk tests/test_sparse")
# It did not run in session 28 (no device machine could be started before the device time ran out).
set -u
out=${OUT:-/tmp/s28d-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-150}
left() { echo $((deadline - (SECONDS - start))); }
new=$avk base=./build-h100base/attnvk
vk="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 65536 --impl attnvk --api vulkan --min-time 0.2"
for kv in q8_0 q4_0 fp8 f16; do
  kvd=$([ $kv = f16 ] && echo "" || echo "--kv-dtype $kv")
  avk=$base bench vk-$kv-base $vk $kvd
  avk=$new; for mode in ahead=1 ahead=2; do ATTNVK_VK_DECODE=$mode bench vk-$kv-$mode $vk $kvd; done
done
avk=$new
echo "== vulkan done at $((SECONDS - start)) s"
cu="--api cuda --impl attnvk --batch 1 --heads 12 --dtype f16 --min-time 0.2"
for views in 0 1; do
  export ATTNVK_CUDA_DILATED_VIEWS=$views
  BENCH_TIMEOUT=30 bench cu-v$views-32k $cu --head-dim 128 --seq 32768 --causal --dilated 2048,4096,8192:1,2,4
  BENCH_TIMEOUT=30 bench cu-v$views-odd-split3 $cu --head-dim 64 --seq 5000 --dilated 512,1024,2048:1,2,4 --split-kv 3
  BENCH_TIMEOUT=30 bench cu-v$views-gqa $cu --kv-heads 4 --head-dim 128 --seq 12000 --causal --dilated 1000,3000:2,3
done
export ATTNVK_CUDA_DILATED_VIEWS=1
# test_sparse (staged beside attnvk: STAGE="attnvk tests/test_sparse") runs every sparse case on every API,
# CUDA's dilated ones through the views, once as planned and once split 3, and a refused row range
[ -x ./build-h100b/tests/test_sparse ] && logged sparse-cuda-views 60 ./build-h100b/tests/test_sparse
[ "$(left)" -gt 35 ] && BENCH_TIMEOUT=$(( $(left) - 5 )) bench cu-v1-1m-six $cu --head-dim 128 --seq 1048576 --causal \
  --dilated 2048,4096,8192,16384,32768,65536:1,2,4,8,16,32 -r 1 --warmup 1
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s28d.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s28d.tar.gz .
