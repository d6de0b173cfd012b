#!/usr/bin/env bash
# Session 39's first call: where a Hopper forward CTA's time goes. Per-CTA timelines
# (ATTNVK_CUDA_DEFINES=-DAVK_TIMELINE=1, ATTNVK_CUDA_TIMELINE; tools/h100/timeline.py) of D=64 N=4k
# causal (192x96), D=128 N=4k and the 10% block layout at N=32k beside dense; then the epilogue
# without the consumers' sync (AVK_EPILOGUE_SYNC=0) against the default, beside cuDNN, and its check.
# (AVK_EPILOGUE_SYNC was removed after this call: no gain, the wait moved into the gap before the next CTA.)
#     DEADLINE=420 bash tools/h100/s39a.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s39a-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
d64c="--api cuda --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal"
d128="--api cuda --dtype f16 --batch 4 --heads 16 --head-dim 128 --seq 4096"
sp="--api cuda --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k"
r10="--block-layout random:0.1 --block-size 128x128"
tl d64-causal $d64c
tl d128 $d128
tl sparse-dense $sp
tl sparse-r10 $sp $r10
TL_DEFINES="-DAVK_EPILOGUE_SYNC=0" tl sparse-r10-nosync $sp $r10
echo "== timelines done at $((SECONDS - start)) s"
for round in 1 2; do
  bench d64-causal-$round $d64c --impl attnvk,cudnn --min-time 0.3
  ATTNVK_CUDA_DEFINES="-DAVK_EPILOGUE_SYNC=0" bench d64-causal-nosync-$round $d64c --impl attnvk --min-time 0.3
  bench d128-$round $d128 --impl attnvk,cudnn --min-time 0.3
  ATTNVK_CUDA_DEFINES="-DAVK_EPILOGUE_SYNC=0" bench d128-nosync-$round $d128 --impl attnvk --min-time 0.3
  bench sparse-r10-$round $sp $r10 --impl attnvk --min-time 0.5
  ATTNVK_CUDA_DEFINES="-DAVK_EPILOGUE_SYNC=0" bench sparse-r10-nosync-$round $sp $r10 --impl attnvk --min-time 0.5
done
bench sparse-dense $sp --impl attnvk --min-time 0.5
echo "== A/B done at $((SECONDS - start)) s"
[ "$(left)" -gt 100 ] && ATTNVK_CUDA_DEFINES="-DAVK_EPILOGUE_SYNC=0" logged check-nosync 100 $AVK check --api cuda --impl attnvk --dtype f16
echo "== done at $((SECONDS - start)) s"
pack_out s39a
