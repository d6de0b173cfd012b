#!/usr/bin/env bash
# Session 40: #13's score-modification costs on the current defaults of every API (CUDA beside cuDNN):
# plain, softcap 30, ALiBi and a random additive mask at D=128 N=8k (B=2, H=16, f16); a 4096-key
# window against full causal at N=32k (B=1, H=16); first s40c (the OpenCL backward). Then s39e (CUDA's Q by TMA) in what is left.
#     DEADLINE=450 bash tools/h100/s40b.sh   (carry .gpu and build-h100b)
set -u
out0=${OUT:-/tmp/s40b-out}
out=$out0/scores
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
total=$deadline deadline=290 # s40c (OpenCL backward, 90 s) and the scores get 290 s of DEADLINE, s39e the rest
mkdir -p $out0/s40c && OUT=$out0/s40c DEADLINE=90 bash tools/h100/s40c.sh
for api in cuda opencl vulkan; do
  impl=attnvk; [ $api = cuda ] && impl=attnvk,cudnn
  s8="--api $api --dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --impl $impl --min-time 0.3"
  s32="--api $api --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32768 --causal --impl $impl --min-time 0.3"
  [ "$(left)" -gt 20 ] || break
  bench $api-plain $s8
  bench $api-softcap $s8 --softcap 30
  bench $api-alibi $s8 --alibi
  bench $api-mask $s8 --mask random
  bench $api-causal32k $s32
  bench $api-window32k $s32 --window 4096,0
done
echo "== scores done at $((SECONDS - start)) s"
mkdir -p $out0/s39e && OUT=$out0/s39e DEADLINE=$(( total - (SECONDS - start) )) bash tools/h100/s39e.sh
