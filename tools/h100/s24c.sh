#!/usr/bin/env bash
# Session 24's third device call (issue #12): gemma3-27b local decode on Vulkan's matrix decode
# bodies beside cuDNN; paged q8_0 with one kv head (a page's rows contiguous) against contiguous,
# to tell the paging's cost from the 136-byte rows at an H_kv-row stride; MHA decode on CUDA
# (one split planned) at 2 and 3 splits.
#     bash tools/h100/s24c.sh   (carry .gpu and build-h100)
set -u
out=${OUT:-/tmp/s24c-out}
source tools/h100/bench-lib.sh
g3="--suite models --case gemma3-27b-local-decode --min-time 1"
bench g3 $g3 --api vulkan,cuda --impl attnvk,cudnn
for v in decode-nv-rs decode-khr-rs; do bench g3-$v $g3 --api vulkan --impl attnvk --variant $v; done
q8="--batch 64 --heads 4 --kv-heads 1 --head-dim 128 --dtype f16 --seq 1 --seq-kv 32768 --kv-dtype q8_0 --impl attnvk --min-time 1"
for api in cuda vulkan opencl; do bench q8-hkv1-p16-$api $q8 --api $api --page-size 16; done
q4="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 32768 --kv-dtype q4_0 --impl attnvk --min-time 1"
for api in cuda vulkan opencl; do bench q4-p16-$api $q4 --api $api --page-size 16; done
mha="--batch 8 --heads 32 --kv-heads 32 --head-dim 128 --dtype f16 --seq 1 --seq-kv 16384 --min-time 1"
bench mha-cuda $mha --api cuda,opencl --impl attnvk,cudnn
for s in 2 3; do bench mha-cuda-s$s $mha --api cuda --impl attnvk --split-kv $s; done
cd "$out" && tar -czf json.tar.gz json && rm -rf json
