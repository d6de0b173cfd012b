#!/usr/bin/env bash
# Session 38's first call. #16: causal row blocks counted back from the last row
# (AVK_CAUSAL_FROM_END, avk_locate_at: the part block of N % BR rows, D=64's 192-row blocks,
# holds the first rows) against before, beside cuDNN at D=64 and D=128, N=4k..16k; `attnvk check
# --api cuda` under the new default. Then s37b.sh (the Vulkan backward's new defaults).
#     DEADLINE=420 bash tools/h100/s38a.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s38a-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
logged check-cuda 150 $AVK check --api cuda --impl attnvk --dtype f16
echo "== check done at $((SECONDS - start)) s"
cases=("d64-n4k-causal:--batch 4 --heads 32 --head-dim 64 --seq 4096 --causal"
       "d64-n8k-causal:--batch 2 --heads 32 --head-dim 64 --seq 8192 --causal"
       "d64-n16k-causal:--batch 1 --heads 32 --head-dim 64 --seq 16384 --causal"
       "d128-n8k-causal:--batch 2 --heads 16 --head-dim 128 --seq 8192 --causal")
for g in "${cases[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  m="--api cuda --dtype f16 $args --min-time 0.5"
  bench $tag $m --impl attnvk,cudnn
  ATTNVK_CUDA_DEFINES="-DAVK_CAUSAL_FROM_END=0" bench $tag-before $m --impl attnvk
done
echo "== grid done at $((SECONDS - start)) s"
[ "$(left)" -gt 100 ] && OUT=$out/s37b DEADLINE=$(( $(left) - 10 )) bash tools/h100/s37b.sh
pack_out s38a
