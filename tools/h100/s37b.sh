#!/usr/bin/env bash
# Session 37's second call: the new Vulkan backward defaults (P and dS in registers; D=64's dQ pass
# with them) beside cuDNN at D=128 and alone at D=64, test_vulkan_backward's default subset, and
# test_sparse after the layout prefetch came out again.
#     DEADLINE=150 bash tools/h100/s37b.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s37b-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
opts="--dtype f16 --pass bwd --min-time 0.3"
bench vk-d128 --api vulkan,cuda $opts --impl attnvk,cudnn --batch 4 --heads 16 --head-dim 128 --seq 4096
bench vk-d64 --api vulkan,cuda $opts --impl attnvk,cudnn --batch 4 --heads 32 --head-dim 64 --seq 4096
bwd_params
[ "$(left)" -gt 70 ] && logged test-vulkan-bwd 60 "$bin/tests/vulkan/test_vulkan_backward"
[ "$(left)" -gt 55 ] && logged test-sparse 50 "$bin/tests/test_sparse"
echo "== done at $((SECONDS - start)) s"
pack_out s37b
