#!/usr/bin/env bash
# Session 23's device call: issue #16's first step, wgmma-ws (TMA K/V ring, a producer
# warpgroup, setmaxnreg) against wgmma and cuDNN in one run: `attnvk check` with the
# variant forced, then the fa-grid shapes (B*N = 16k, H*D = 2048, f16) twice, interleaved.
#     bash tools/h100/s23.sh   (carry .gpu and build-h100; OUT set by the tool)
set -u
out=${OUT:-/tmp/s23-out}
source tools/h100/bench-lib.sh
logged check-ws 240 $avk check --api cuda --impl attnvk --variant wgmma-ws --dtype f16,bf16
logged check-wgmma 240 $avk check --api cuda --impl attnvk --dtype f16
grid=("d128-n4k:--batch 4 --heads 16 --head-dim 128 --seq 4096"
      "d128-n4k-causal:--batch 4 --heads 16 --head-dim 128 --seq 4096 --causal"
      "d64-n4k:--batch 4 --heads 32 --head-dim 64 --seq 4096"
      "d128-n16k:--batch 1 --heads 16 --head-dim 128 --seq 16384")
for round in 1 2; do
  for g in "${grid[@]}"; do
    tag=${g%%:*}; args=${g#*:}
    bench $tag-$round --api cuda --dtype f16 $args --impl attnvk,cudnn --min-time 1
    bench $tag-ws-$round --api cuda --dtype f16 $args --impl attnvk --variant wgmma-ws --min-time 1
  done
done
cd "$out" && tar -czf json.tar.gz json && rm -rf json
