#!/usr/bin/env bash
# For the next session (built in session 43, not yet run): what s43c had no device time left for.
# `attnvk check --api opencl` in full (s43c's stopped at 50 s, 69 passed), then D=64 N=4k causal
# f16 (B=4, H=32): Vulkan's ALiBi in S's products and its mask (D=64 keeps two K buffers: the
# mask is not staged there), OpenCL's ALiBi in the MMAs (an A/B at D=128), each against its A/B.
#     DEADLINE=300 bash tools/h100/s44a.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s44a-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
logged check-ocl 150 $AVK check --api opencl --impl attnvk --dtype f16
v64="--api vulkan --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal --impl attnvk --min-time 0.3"
o64=${v64/vulkan/opencl}
bench vk-d64-plain $v64
bench vk-d64-mask $v64 --mask random
bench vk-d64-alibi-mma $v64 --alibi
ATTNVK_VK_ALIBI_MMA=0 bench vk-d64-alibi-elem $v64 --alibi
bench ocl-d64-plain $o64
bench ocl-d64-alibi $o64 --alibi
ATTNVK_OPENCL_ALIBI_MMA=1 bench ocl-d64-alibi-mma $o64 --alibi
echo "== s44a done at $((SECONDS - start)) s"
pack_out s44a
