#!/usr/bin/env bash
# Session 39's second call: the timelines again with each CTA's waits (K, V, the ping-pong's turn,
# the producer's free stages), for the 10% random layout beside a local one (local:12, 25 of 256
# key blocks, contiguous) and a full one (random:1, the walk over every tile), dense, D=64 causal
# and D=128; then the persistent kernels' timelines (ATTNVK_CUDA_PERSISTENT=1|2).
#     DEADLINE=300 bash tools/h100/s39b.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s39b-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
d64c="--api cuda --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal"
d128="--api cuda --dtype f16 --batch 4 --heads 16 --head-dim 128 --seq 4096"
sp="--api cuda --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k"
bs="--block-size 128x128"
tl sparse-r10 $sp --block-layout random:0.1 $bs
tl sparse-local12 $sp --block-layout local:12 $bs
tl sparse-r100 $sp --block-layout random:1 $bs
tl sparse-dense $sp
tl d64-causal $d64c
tl d128 $d128
echo "== timelines done at $((SECONDS - start)) s"
for m in 1 2; do
  ATTNVK_CUDA_PERSISTENT=$m tl d128-persistent$m $d128
  ATTNVK_CUDA_PERSISTENT=$m tl sparse-r10-persistent$m $sp --block-layout random:0.1 $bs
done
ATTNVK_CUDA_PERSISTENT=1 tl d64-causal-persistent1 $d64c
echo "== persistent timelines done at $((SECONDS - start)) s"
bench sparse-local12 $sp --block-layout local:12 $bs --impl attnvk --min-time 0.5
bench sparse-r100 $sp --block-layout random:1 $bs --impl attnvk --min-time 0.5
bench sparse-r10 $sp --block-layout random:0.1 $bs --impl attnvk --min-time 0.5
bench sparse-dense $sp --impl attnvk --min-time 0.5
echo "== done at $((SECONDS - start)) s"
pack_out s39b
