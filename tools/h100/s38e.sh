#!/usr/bin/env bash
# Session 38's fifth call (#16). A share of P's exponentials on the FMA pipe (avk_exp2_fma: every
# k-th n-tile, AVK_EXP_FMA_EVERY=k; 0 is the MUFU alone): fp8 D=128 N=8k (its 1.5x bar), f16 D=64
# N=4k causal and not, f16 D=128 N=8k; each record checked against float64 by the bench.
#     DEADLINE=300 bash tools/h100/s38e.sh   (carry .gpu and build-h100b)
# (AVK_EXP_FMA_EVERY measured slower and removed after this call: rerun, the define changes nothing.)
set -u
out=${OUT:-/tmp/s38e-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
n8k="--batch 2 --heads 16 --head-dim 128 --seq 8192 --min-time 0.4"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096 --min-time 0.4"
bench f16-d128-n8k --api cuda --dtype f16 $n8k --impl attnvk,cudnn
bench f16-d64-n4k --api cuda --dtype f16 $d64 --impl attnvk,cudnn
bench f16-d64-n4k-causal --api cuda --dtype f16 $d64 --causal --impl attnvk,cudnn
bench fp8-d128-n8k --api cuda --dtype fp8 $n8k --impl attnvk
for k in 8 4 3 2; do
  export ATTNVK_CUDA_DEFINES="-DAVK_EXP_FMA_EVERY=$k"
  bench fp8-d128-n8k-fma$k --api cuda --dtype fp8 $n8k --impl attnvk
  bench f16-d64-n4k-fma$k --api cuda --dtype f16 $d64 --impl attnvk
  bench f16-d64-n4k-causal-fma$k --api cuda --dtype f16 $d64 --causal --impl attnvk
  [ $k = 4 ] && bench f16-d128-n8k-fma$k --api cuda --dtype f16 $n8k --impl attnvk
  [ $k = 4 ] && bench bf16-d64-n4k-causal-fma$k --api cuda --dtype bf16 $d64 --causal --impl attnvk
  unset ATTNVK_CUDA_DEFINES
done
bench fp8-d128-n8k-again --api cuda --dtype fp8 $n8k --impl attnvk
bench f16-d64-n4k-causal-again --api cuda --dtype f16 $d64 --causal --impl attnvk,cudnn
echo "== done at $((SECONDS - start)) s"
pack_out s38e
