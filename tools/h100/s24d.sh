#!/usr/bin/env bash
# Session 24's fourth device call (issue #12), the final code against the session-23 binary:
# the decode suite and the models suite's decode presets on CUDA, OpenCL and Vulkan beside cuDNN;
# MHA decode (1 packed row) at 4k/16k/64k and B=1 128k on every API, the Vulkan workgroup at 128
# and 256 there; attnvk check on CUDA and OpenCL.
#     bash tools/h100/s24d.sh   (carry .gpu and build-h100 with attnvk-base beside attnvk)
set -u
out=${OUT:-/tmp/s24d-out}
source tools/h100/bench-lib.sh
new=$avk base=./build-h100/attnvk-base
logged check-cuda 200 $avk check --api cuda --impl attnvk
logged check-opencl 200 $avk check --api opencl --impl attnvk
BENCH_TIMEOUT=200 bench decode-suite --suite decode --api cuda,opencl,vulkan --impl attnvk,cudnn
BENCH_TIMEOUT=200 bench models-decode --suite models --case decode --api cuda,opencl,vulkan --impl attnvk,cudnn
avk=$base; BENCH_TIMEOUT=200 bench models-decode-base --suite models --case decode --api cuda,opencl,vulkan --impl attnvk; avk=$new
for nk in 4096 16384 65536; do
  mha="--batch 8 --heads 32 --kv-heads 32 --head-dim 128 --dtype f16 --seq 1 --seq-kv $nk --min-time 1"
  bench mha-$nk $mha --api cuda,opencl,vulkan --impl attnvk,cudnn
  avk=$base; bench mha-$nk-base $mha --api cuda --impl attnvk; avk=$new
  export ATTNVK_VK_WORKGROUP=256; bench mha-$nk-vkwg256 $mha --api vulkan --impl attnvk; unset ATTNVK_VK_WORKGROUP
done
mha1="--batch 1 --heads 32 --kv-heads 32 --head-dim 128 --dtype f16 --seq 1 --seq-kv 131072 --min-time 1"
bench mha-b1-128k $mha1 --api cuda,opencl,vulkan --impl attnvk,cudnn
export ATTNVK_VK_WORKGROUP=256; bench mha-b1-128k-vkwg256 $mha1 --api vulkan --impl attnvk; unset ATTNVK_VK_WORKGROUP
cd "$out" && tar -czf json.tar.gz json && rm -rf json
