#!/usr/bin/env bash
# Session 42: #13's CUDA mask with its tiles brought by TMA (ATTNVK_CUDA_MASK_TMA=1: the producer
# loads each tile's f16 mask rows into two shared-memory stages, the consumers add them through
# ldmatrix) against the default (s42a: the overlap with L1 prefetches, 328.3 TFLOP/s against plain
# 525.5), at D=128 N=8k causal f16 (B=2, H=16) two rounds, D=64, non-causal, an odd shape and Nk
# not a multiple of 8 (the fallback); then `attnvk check --api cuda` with it on.
#     DEADLINE=300 bash tools/h100/s42b.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s42b-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
s8="--api cuda --dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --causal --impl attnvk --min-time 0.3"
d64="--api cuda --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal --impl attnvk --min-time 0.3"
for round in 1 2; do
  bench plain-$round $s8
  bench mask-$round $s8 --mask random
  ATTNVK_CUDA_MASK_TMA=1 bench mask-tma-$round $s8 --mask random
done
bench d64-plain $d64
bench d64-mask $d64 --mask random
ATTNVK_CUDA_MASK_TMA=1 bench d64-mask-tma $d64 --mask random
bench nc-mask ${s8/--causal/} --mask random
ATTNVK_CUDA_MASK_TMA=1 bench nc-mask-tma ${s8/--causal/} --mask random
ATTNVK_CUDA_MASK_TMA=1 bench softcap-mask-tma $s8 --mask random --softcap 30
for n in 1000 1001; do
  ATTNVK_CUDA_MASK_TMA=1 bench odd-$n-tma --api cuda --dtype f16 --batch 1 --heads 3 --head-dim 128 --seq $n --causal \
    --mask random --alibi --impl attnvk --variant wgmma-ws --min-time 0.05
done
ATTNVK_CUDA_MASK_TMA=1 logged check-tma $(( $(left) - 5 )) $AVK check --api cuda --impl attnvk --dtype f16
echo "== s42b done at $((SECONDS - start)) s"
pack_out s42b
