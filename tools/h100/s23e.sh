#!/usr/bin/env bash
# Session 23's fifth device call: wgmma-ws pipelined within the warpgroup (S(t) issued before
# P(t-1) V(t-1), softmax(t) beside it) against the unpipelined build (attnvk-ws1, commit
# 2817aa2) and cuDNN, one run: `attnvk check` with the variant forced, then the fa-grid.
#     bash tools/h100/s23e.sh   (carry .gpu and build-h100 with attnvk-ws1 beside attnvk)
set -u
out=${OUT:-/tmp/s23e-out}
source tools/h100/bench-lib.sh
logged check-ws 300 $avk check --api cuda --impl attnvk --variant wgmma-ws --dtype f16,bf16
for g in "${fa_grid[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  bench $tag --api cuda --dtype f16 $args --impl attnvk,cudnn --min-time 1
  avk=./build-h100/attnvk-ws1 bench $tag-ws1 --api cuda --dtype f16 $args --impl attnvk --min-time 1
done
bench d64-n4k-128 --api cuda --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --impl attnvk --variant wgmma-ws --tile 128x128 --min-time 1
bench d256-n4k --api cuda --dtype f16 --batch 4 --heads 8 --head-dim 256 --seq 4096 --impl attnvk,cudnn --min-time 1
avk=./build-h100/attnvk-ws1 bench d256-n4k-ws1 --api cuda --dtype f16 --batch 4 --heads 8 --head-dim 256 --seq 4096 --impl attnvk --min-time 1
cd "$out" && tar -czf json.tar.gz json && rm -rf json
