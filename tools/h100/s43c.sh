#!/usr/bin/env bash
# Session 43, s43b trimmed to the device time left after failed starts: Vulkan's mask staged in
# the K buffer and ALiBi in S's products, OpenCL's ALiBi in S's MMAs, each against its A/B, at
# D=128 N=8k causal f16 (B=2, H=16), two rounds; then `attnvk check` (f16) on OpenCL and Vulkan.
#     DEADLINE=200 [ROUNDS=1] bash tools/h100/s43c.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s43c-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
s8="--api vulkan --dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --causal --impl attnvk --min-time 0.2"
o8=${s8/vulkan/opencl}
for round in $(seq 1 ${ROUNDS:-2}); do
  bench plain-$round $s8
  bench mask-shared-$round $s8 --mask random
  ATTNVK_VK_MASK_SHARED=0 bench mask-global-$round $s8 --mask random
  bench alibi-mma-$round $s8 --alibi
  ATTNVK_VK_ALIBI_MMA=0 bench alibi-elem-$round $s8 --alibi
  bench ocl-plain-$round $o8
  bench ocl-alibi-mma-$round $o8 --alibi
  ATTNVK_OPENCL_ALIBI_MMA=0 bench ocl-alibi-score-$round $o8 --alibi
done
bench alibi-mask-shared $s8 --mask random --alibi
logged check-ocl 50 $AVK check --api opencl --impl attnvk --dtype f16
logged check-vulkan $(( $(left) - 5 )) $AVK check --api vulkan --impl attnvk --dtype f16
echo "== s43c done at $((SECONDS - start)) s"
pack_out s43c
