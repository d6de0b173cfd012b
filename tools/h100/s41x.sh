#!/usr/bin/env bash
# Session 41: #13's softcap cost on CUDA with a share of the softmax's exponentials on the FMA pipe
# (AVK_EXP2_FMA_EVERY = k: every k-th n-tile's scores; attn_contract.h's avk_exp2_fma), against the
# default (all on the special-function unit), at s16's shape (D=128 N=8k causal f16, B=2 H=16) beside
# cuDNN; plain causal with the same knob; fp8 against f16 at D=128 N=8k (#16's 1.5x: fp8 doubles the
# tensor rate, not the special-function unit's) with it; D=64 N=4k causal (#16) with it.
#     DEADLINE=170 bash tools/h100/s41x.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s41x-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
s8="--api cuda --dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --causal --min-time 0.3"
d64c="--api cuda --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal --min-time 0.3"
bench plain $s8 --impl attnvk,cudnn
bench softcap $s8 --impl attnvk,cudnn --softcap 30
for k in 2 4; do
  [ "$(left)" -gt 15 ] && ATTNVK_CUDA_DEFINES="-DAVK_EXP2_FMA_EVERY=$k" bench softcap-fma$k $s8 --impl attnvk --softcap 30
done
[ "$(left)" -gt 15 ] && ATTNVK_CUDA_DEFINES="-DAVK_EXP2_FMA_EVERY=4" bench plain-fma4 $s8 --impl attnvk
[ "$(left)" -gt 15 ] && bench softcap-again $s8 --impl attnvk --softcap 30
n8k="--api cuda --batch 2 --heads 16 --head-dim 128 --seq 8192 --impl attnvk --min-time 0.3"
[ "$(left)" -gt 15 ] && bench fp8 $n8k --dtype fp8
[ "$(left)" -gt 15 ] && bench f16-n8k $n8k --dtype f16
for k in 2 4; do
  [ "$(left)" -gt 15 ] && ATTNVK_CUDA_DEFINES="-DAVK_EXP2_FMA_EVERY=$k" bench fp8-fma$k $n8k --dtype fp8
done
[ "$(left)" -gt 15 ] && bench d64c $d64c --impl attnvk,cudnn
[ "$(left)" -gt 15 ] && ATTNVK_CUDA_DEFINES="-DAVK_EXP2_FMA_EVERY=4" bench d64c-fma4 $d64c --impl attnvk
# where an fp8 tile's time goes beside f16's (native/sm90_timeline.h records)
[ "$(left)" -gt 25 ] && tl fp8 $n8k --dtype fp8
[ "$(left)" -gt 25 ] && tl f16 $n8k --dtype f16
echo "== s41x done at $((SECONDS - start)) s"
pack_out s41x
