#!/usr/bin/env bash
# Session 24's last device call (issue #12): the Vulkan decode body's paged pipelines with the page
# size as a specialization constant (no per-key integer division), new against the previous commit's
# binary (attnvk-base here: 9cbb9c7, the binary of s24d and s24e), paged (page 16, shuffled) beside contiguous at 32k; attnvk check on Vulkan.
#     bash tools/h100/s24f.sh   (carry .gpu and build-h100 with attnvk-base beside attnvk)
set -u
out=${OUT:-/tmp/s24f-out}
source tools/h100/bench-lib.sh
new=$avk base=./build-h100/attnvk-base
shape="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 32768 --impl attnvk --api vulkan --min-time 0.5 --page-size 16"
for round in 1 2; do
  for kv in q8_0 q4_0 fp8 f16; do
    fmt=""; [ $kv != f16 ] && fmt="--kv-dtype $kv"
    avk=$new; bench p16-$kv-new-$round $shape $fmt
    avk=$base; bench p16-$kv-base-$round $shape $fmt
  done
done
avk=$new
logged check-vulkan 120 $avk check --api vulkan --impl attnvk
cd "$out" && tar -czf json.tar.gz json && rm -rf json
