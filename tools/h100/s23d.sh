#!/usr/bin/env bash
# Session 23's fourth device call: the fa-grid (B*N = 16k, H*D = 2048, f16) with wgmma-ws as the
# table's pick, cuDNN and the previous kernel (--variant wgmma) in the same run.
#     bash tools/h100/s23d.sh   (carry .gpu and build-h100; OUT set by the tool)
set -u
out=${OUT:-/tmp/s23d-out}
source tools/h100/bench-lib.sh
for g in "${fa_grid[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  bench $tag --api cuda --dtype f16 $args --impl attnvk,cudnn --min-time 1
  bench $tag-wgmma --api cuda --dtype f16 $args --impl attnvk --variant wgmma --min-time 1
done
cd "$out" && tar -czf json.tar.gz json && rm -rf json
