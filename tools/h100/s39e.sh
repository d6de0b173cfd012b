#!/usr/bin/env bash
# Built in session 39, not yet run: Q's tile through the producer's TMA (ATTNVK_CUDA_Q_TMA=1, attn_sm90.h's
# AVK_Q_TMA) against the consumers' copies. Its check first (`attnvk check --api cuda`, test_sparse), then
# D=64 N=4k causal and D=128 N=4k beside cuDNN, the 10% layout at N=32k, two rounds, and timelines of both.
#     DEADLINE=300 bash tools/h100/s39e.sh   (carry .gpu and build-h100b, staged with test_sparse)
set -u
out=${OUT:-/tmp/s39e-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
# (a short DEADLINE, under 300 s: the check in f16 alone, no test_sparse; QUICK=1: no check, one round, no timelines)
if [ "${QUICK:-0}" = 1 ]; then :
elif [ "$(left)" -gt 300 ]; then
  ATTNVK_CUDA_Q_TMA=1 logged check-q-tma 120 $AVK check --api cuda --impl attnvk --dtype f16,bf16
  [ -x $bin/tests/test_sparse ] && ATTNVK_CUDA_Q_TMA=1 logged test-sparse-q-tma 150 $bin/tests/test_sparse
else
  ATTNVK_CUDA_Q_TMA=1 logged check-q-tma 60 $AVK check --api cuda --impl attnvk --dtype f16
fi
d64c="--api cuda --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal"
d128="--api cuda --dtype f16 --batch 4 --heads 16 --head-dim 128 --seq 4096"
r10="--api cuda --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --block-layout random:0.1 --block-size 128x128"
for round in 1 2; do
  [ "$(left)" -gt 60 ] && [ "${QUICK:-0}$round" != 12 ] || break
  bench d64-causal-$round $d64c --impl attnvk,cudnn --min-time 0.3
  ATTNVK_CUDA_Q_TMA=1 bench d64-causal-qtma-$round $d64c --impl attnvk --min-time 0.3
  bench d128-$round $d128 --impl attnvk,cudnn --min-time 0.3
  ATTNVK_CUDA_Q_TMA=1 bench d128-qtma-$round $d128 --impl attnvk --min-time 0.3
  bench r10-$round $r10 --impl attnvk --min-time 0.4
  ATTNVK_CUDA_Q_TMA=1 bench r10-qtma-$round $r10 --impl attnvk --min-time 0.4
done
[ "${QUICK:-0}" != 1 ] && [ "$(left)" -gt 30 ] && tl d64-causal $d64c && ATTNVK_CUDA_Q_TMA=1 tl d64-causal-qtma $d64c
echo "== done at $((SECONDS - start)) s"
pack_out s39e
