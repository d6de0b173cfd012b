#!/usr/bin/env bash
# Session 38, after the 96-key tiles: the persistent kernel (ATTNVK_CUDA_PERSISTENT=1, blocks
# dealt in rounds; ptxas at D=64 192x96: 20 bytes of spills, against 88-176 at 128 keys in session
# 37) against the grid of one CTA a block, D=64 beside cuDNN.
#     DEADLINE=120 bash tools/h100/s38h.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s38h-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
BENCH_TIMEOUT=30 ATTNVK_CUDA_PERSISTENT=1 bench smoke --api cuda --impl attnvk --dtype f16 --batch 2 --heads 8 --head-dim 64 --seq 2000 --causal --min-time 0.05
cases=("d64-n4k-causal:--batch 4 --heads 32 --seq 4096 --causal"
       "d64-n4k:--batch 4 --heads 32 --seq 4096"
       "d64-n16k-causal:--batch 1 --heads 32 --seq 16384 --causal")
for g in "${cases[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  [ "$(left)" -gt 12 ] || break
  m="--api cuda --dtype f16 --head-dim 64 $args --min-time 0.3"
  bench $tag $m --impl attnvk,cudnn
  BENCH_TIMEOUT=30 ATTNVK_CUDA_PERSISTENT=1 bench $tag-persistent $m --impl attnvk
done
echo "== done at $((SECONDS - start)) s"
pack_out s38h
