#!/usr/bin/env bash
# Session 23's fourth device call: the fa-grid (B*N = 16k, H*D = 2048, f16) with wgmma-ws as the
# table's pick, cuDNN and the previous kernel (--variant wgmma) in the same run.
#     bash tools/h100/s23d.sh   (carry .gpu and build-h100; OUT set by the tool)
set -u
out=${OUT:-/tmp/s23d-out}
source tools/h100/bench-lib.sh
grid=("d128-n4k:--batch 4 --heads 16 --head-dim 128 --seq 4096"
      "d128-n4k-causal:--batch 4 --heads 16 --head-dim 128 --seq 4096 --causal"
      "d128-n16k:--batch 1 --heads 16 --head-dim 128 --seq 16384"
      "d128-n16k-causal:--batch 1 --heads 16 --head-dim 128 --seq 16384 --causal"
      "d64-n4k:--batch 4 --heads 32 --head-dim 64 --seq 4096"
      "d64-n4k-causal:--batch 4 --heads 32 --head-dim 64 --seq 4096 --causal"
      "d64-n16k:--batch 1 --heads 32 --head-dim 64 --seq 16384")
for g in "${grid[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  bench $tag --api cuda --dtype f16 $args --impl attnvk,cudnn --min-time 1
  bench $tag-wgmma --api cuda --dtype f16 $args --impl attnvk --variant wgmma --min-time 1
done
cd "$out" && tar -czf json.tar.gz json && rm -rf json
