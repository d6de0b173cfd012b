#!/usr/bin/env bash
# Session 30, #16 and #20 on the new defaults (build-h100b: the producer ring with the split release,
# the intra-warpgroup overlap and the ping-pong with two consumer warpgroups; block layouts on wgmma-ws):
# 1. test_sparse on every API and `attnvk check --api cuda`;
# 2. block layouts at N=32k (B=1, H=16, D=128, f16, 128x128 blocks, 5/10/20%) beside dense, CUDA;
# 3. the schedule against its opt-out (-DAVK_WG_OVERLAP=0 -DAVK_PINGPONG=0) where s30b did not
#    measure it: D=256, MLA 192/128, split-KV, D=64 on 128 rows;
# 4. the FlashAttention grid beside cuDNN, and fp8 at D=128 N=8k.
#     bash tools/h100/s30c.sh   (carry .gpu and build-h100b; DEADLINE seconds, default 575)
set -u
out=${OUT:-/tmp/s30c-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-575}
left() { echo $((deadline - (SECONDS - start))); }
build=$(dirname "$avk")
logged test-sparse 120 $build/tests/test_sparse
logged check-cuda 200 $avk check --api cuda --impl attnvk --dtype f16,bf16
echo "== checks done at $((SECONDS - start)) s"
sp="--api cuda --impl attnvk --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --min-time 1"
bench sparse-dense $sp
for d in 0.1 0.05 0.2; do bench sparse-random$d $sp --block-layout random:$d --block-size 128x128; done
off="-DAVK_WG_OVERLAP=0 -DAVK_PINGPONG=0"
ab=("d256-n4k:--batch 4 --heads 8 --head-dim 256 --seq 4096"
    "mla-n4k:--batch 4 --heads 16 --head-dim 192 --head-dim-v 128 --seq 4096"
    "d128-split:--batch 1 --heads 16 --head-dim 128 --seq 8192 --split-kv 2"
    "d64-128rows:--batch 4 --heads 32 --head-dim 64 --seq 4096 --tile 128x128")
for g in "${ab[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  [ "$(left)" -gt 150 ] || { echo "skip $tag: $(left) s left"; break; }
  bench ab-$tag --api cuda --dtype f16 $args --impl attnvk --min-time 0.5
  ATTNVK_CUDA_DEFINES="$off" bench ab-$tag-off --api cuda --dtype f16 $args --impl attnvk --min-time 0.5
done
for g in "${fa_grid[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  [ "$(left)" -gt 30 ] || { echo "skip $tag: $(left) s left"; break; }
  bench fa-$tag --api cuda --dtype f16 $args --impl attnvk,cudnn --min-time 0.5
done
[ "$(left)" -gt 30 ] && bench fp8-d128-n8k --api cuda --dtype fp8 --batch 2 --heads 16 --head-dim 128 --seq 8192 --impl attnvk --min-time 0.5
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s30c.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s30c.tar.gz .
