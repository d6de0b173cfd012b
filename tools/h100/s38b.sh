#!/usr/bin/env bash
# Session 38's second call (#16). P's exponentials two at a time in f16x2 (AVK_HALF_EXP: the
# default for fp8 now, a switch for f16): fp8 at D=128 N=8k against -DAVK_HALF_EXP=0 and the f16
# kernel; f16 at D=64 (causal and not, N=4k and 16k) and D=128 with it against without, cuDNN
# beside; D=64 causal on 128-row tiles; then `attnvk check --api cuda` with it on for f16 and fp8.
#     DEADLINE=420 bash tools/h100/s38b.sh   (carry .gpu and build-h100b)
# (AVK_HALF_EXP measured slower and removed after this call: rerun, the define changes nothing.)
set -u
out=${OUT:-/tmp/s38b-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
on="-DAVK_HALF_EXP=1" off="-DAVK_HALF_EXP=0"
n8k="--batch 2 --heads 16 --head-dim 128 --seq 8192 --min-time 0.5"
bench d128-n8k-fp8 --api cuda --dtype fp8 $n8k --impl attnvk
ATTNVK_CUDA_DEFINES=$off bench d128-n8k-fp8-off --api cuda --dtype fp8 $n8k --impl attnvk
bench d128-n8k-f16 --api cuda --dtype f16 $n8k --impl attnvk,cudnn
ATTNVK_CUDA_DEFINES=$on bench d128-n8k-f16-on --api cuda --dtype f16 $n8k --impl attnvk
cases=("d64-n4k:--batch 4 --heads 32 --head-dim 64 --seq 4096"
       "d64-n4k-causal:--batch 4 --heads 32 --head-dim 64 --seq 4096 --causal"
       "d64-n16k:--batch 1 --heads 32 --head-dim 64 --seq 16384"
       "d64-n16k-causal:--batch 1 --heads 32 --head-dim 64 --seq 16384 --causal"
       "d128-n4k-causal:--batch 4 --heads 16 --head-dim 128 --seq 4096 --causal")
for g in "${cases[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  m="--api cuda --dtype f16 $args --min-time 0.5"
  bench $tag $m --impl attnvk,cudnn
  ATTNVK_CUDA_DEFINES=$on bench $tag-on $m --impl attnvk
done
m="--api cuda --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal --min-time 0.5 --impl attnvk"
bench d64-n4k-causal-128 $m --tile 128x128
ATTNVK_CUDA_DEFINES=$on bench d64-n4k-causal-128-on $m --tile 128x128
echo "== benches done at $((SECONDS - start)) s"
ATTNVK_CUDA_DEFINES=$on logged check-cuda-f16-on 150 $AVK check --api cuda --impl attnvk --dtype f16
logged check-cuda-fp8 100 $AVK check --api cuda --impl attnvk --dtype fp8
echo "== done at $((SECONDS - start)) s"
pack_out s38b
