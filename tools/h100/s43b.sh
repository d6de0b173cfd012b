#!/usr/bin/env bash
# Session 43: #13's Vulkan mask staged in the K buffer (AVK_MASK_SHARED, the register-softmax
# prefill with one K buffer: D=128 coopmat-khr-rs) against each lane's pairs from global memory
# (ATTNVK_VK_MASK_SHARED=0), D=128 N=8k causal f16 (B=2, H=16) two rounds, not causal, with
# ALiBi, an Nk not a multiple of 8 (the fallback); Vulkan's ALiBi with its key term in S's
# products (AVK_ALIBI_MMA) against per element (ATTNVK_VK_ALIBI_MMA=0); OpenCL's ALiBi with its key term in S's MMAs
# (AVK_ALIBI_MMA) against per score (ATTNVK_OPENCL_ALIBI_MMA=0); then `attnvk check` (f16) on
# OpenCL and Vulkan.
#     DEADLINE=280 bash tools/h100/s43b.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s43b-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
s8="--api vulkan --dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --causal --impl attnvk --min-time 0.3"
for round in 1 2; do
  bench plain-$round $s8
  bench mask-shared-$round $s8 --mask random
  ATTNVK_VK_MASK_SHARED=0 bench mask-global-$round $s8 --mask random
done
bench nc-mask-shared ${s8/--causal/} --mask random
ATTNVK_VK_MASK_SHARED=0 bench nc-mask-global ${s8/--causal/} --mask random
bench alibi-mask-shared $s8 --mask random --alibi
for round in 1 2; do
  bench alibi-mma-$round $s8 --alibi
  ATTNVK_VK_ALIBI_MMA=0 bench alibi-elem-$round $s8 --alibi
done
bench d64-plain ${s8/--head-dim 128 --seq 8192/--head-dim 64 --seq 4096}
bench d64-alibi-mma ${s8/--head-dim 128 --seq 8192/--head-dim 64 --seq 4096} --alibi
ATTNVK_VK_ALIBI_MMA=0 bench d64-alibi-elem ${s8/--head-dim 128 --seq 8192/--head-dim 64 --seq 4096} --alibi
for n in 1000 1001; do
  bench odd-$n --api vulkan --dtype f16 --batch 1 --heads 3 --head-dim 128 --seq $n --causal \
    --mask random --alibi --impl attnvk --min-time 0.05
done
o8=${s8/vulkan/opencl}
d64="--api opencl --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal --impl attnvk --min-time 0.3"
for round in 1 2; do
  bench ocl-plain-$round $o8
  bench ocl-alibi-mma-$round $o8 --alibi
  ATTNVK_OPENCL_ALIBI_MMA=0 bench ocl-alibi-score-$round $o8 --alibi
done
bench ocl-d64-plain $d64
bench ocl-d64-alibi-mma $d64 --alibi
ATTNVK_OPENCL_ALIBI_MMA=0 bench ocl-d64-alibi-score $d64 --alibi
bench ocl-mask-alibi $o8 --mask random --alibi
bench ocl-nc-alibi-mma ${o8/--causal/} --alibi
logged check-ocl $(( $(left) / 3 )) $AVK check --api opencl --impl attnvk --dtype f16
logged check-vulkan $(( $(left) - 5 )) $AVK check --api vulkan --impl attnvk --dtype f16
echo "== s43b done at $((SECONDS - start)) s"
pack_out s43b
