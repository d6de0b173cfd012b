#!/usr/bin/env bash
# Session 40's second call: s40c (the OpenCL backward's sliding copies, 90 s), s40d (the Vulkan decode
# body's workgroup size on quantized caches, 100 s), s39e (CUDA's Q by TMA, 170 s), then #13's
# score-modification costs on the current defaults of every API (CUDA beside cuDNN) in what is left:
# plain, softcap 30, ALiBi and a random additive mask at D=128 N=8k (B=2, H=16, f16); a 4096-key
# window against full causal at N=32k (B=1, H=16).
#     DEADLINE=560 bash tools/h100/s40b.sh   (carry .gpu and build-h100b)
set -u
out0=${OUT:-/tmp/s40b-out}
out=$out0/scores
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
mkdir -p $out0/s40c $out0/s40d $out0/s39e
OUT=$out0/s40c DEADLINE=90 bash tools/h100/s40c.sh
OUT=$out0/s40d DEADLINE=100 bash tools/h100/s40d.sh
OUT=$out0/s39e DEADLINE=170 bash tools/h100/s39e.sh
for api in cuda opencl vulkan; do
  impl=attnvk; [ $api = cuda ] && impl=attnvk,cudnn
  s8="--api $api --dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --impl $impl --min-time 0.3"
  s32="--api $api --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32768 --causal --impl $impl --min-time 0.3"
  for c in "plain:" "softcap:--softcap 30" "alibi:--alibi" "mask:--mask random"; do
    [ "$(left)" -gt 20 ] && bench $api-${c%%:*} $s8 ${c#*:}
  done
  [ "$(left)" -gt 25 ] && bench $api-causal32k $s32
  [ "$(left)" -gt 20 ] && bench $api-window32k $s32 --window 4096,0
done
echo "== s40b done at $((SECONDS - start)) s"
