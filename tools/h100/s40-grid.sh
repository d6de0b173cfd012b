#!/usr/bin/env bash
# #16's FlashAttention grid beside cuDNN, and fp8 beside f16 at D=128 N=8k, on whatever card the call
# got (session 40: the H200 rerun on the current defaults, when the device tool lends one).
#     DEADLINE=200 bash tools/h100/s40-grid.sh   (carry .gpu and the staged folder AVK lives in)
set -u
out=${OUT:-/tmp/s40-grid-out}
source tools/h100/bench-lib.sh
for g in "${fa_grid[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  [ "$(left)" -gt 30 ] || { echo "skip $tag: $(left) s left"; break; }
  bench fa-$tag --api cuda --dtype f16 $args --impl attnvk,cudnn --min-time 0.3
done
n8k="--batch 2 --heads 16 --head-dim 128 --seq 8192 --impl attnvk --min-time 0.3"
[ "$(left)" -gt 25 ] && bench d128-n8k-f16 --api cuda --dtype f16 $n8k
[ "$(left)" -gt 25 ] && bench d128-n8k-fp8 --api cuda --dtype fp8 $n8k
echo "== grid done at $((SECONDS - start)) s"
