#!/usr/bin/env bash
# Session 23's sixth device call: issue #13's score-modification overheads on CUDA's new default
# (wgmma-ws) beside cuDNN: plain, softcap, ALiBi and a random additive mask at D=128 N=8k
# (B=2, H=16, f16); a 4096-key window against full causal at N=32k (B=1, H=16); each twice.
#     bash tools/h100/s23f.sh   (carry .gpu and build-h100; OUT set by the tool)
set -u
out=${OUT:-/tmp/s23f-out}
source tools/h100/bench-lib.sh
s8="--api cuda --dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --impl attnvk,cudnn --min-time 1"
s32="--api cuda --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32768 --causal --impl attnvk,cudnn --min-time 1"
for round in 1 2; do
  bench plain-$round $s8
  bench softcap-$round $s8 --softcap 30
  bench alibi-$round $s8 --alibi
  bench mask-$round $s8 --mask random
  bench causal32k-$round $s32
  bench window32k-$round $s32 --window 4096,0
done
cd "$out" && tar -czf json.tar.gz json && rm -rf json
