#!/usr/bin/env bash
# Session 22's third device call: split counts around CUDA's plan at B=1 (128k and 32k keys) with
# the grouped merge, cuDNN in the same run; each count twice, interleaved.
#     bash tools/h100/s22c.sh   (carry .gpu and build-h100; OUT set by the tool)
set -u
out=${OUT:-/tmp/s22c-out}
source tools/h100/bench-lib.sh
for nk in 131072 32768; do
  b1="--batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv $nk --min-time 1"
  for round in 1 2; do
    bench b1-$nk-plan-$round --api cuda $b1 --impl attnvk,cudnn
    for s in 32 40 56 64 80 96; do bench b1-$nk-s$s-$round --api cuda $b1 --impl attnvk --split-kv $s; done
  done
done
cd "$out" && tar -czf json.tar.gz json && rm -rf json
