#!/usr/bin/env bash
# Issue #12, written in session 25 (no device was lent then; for the next session): the matrix
# decode body's direct K/V operands for quantized caches (AVK_DIRECT_KV: words of the rows decoded
# in registers into B operands, no shared-memory tiles; on NVIDIA only with
# ATTNVK_VK_DECODE_DIRECT=1 until measured), against the decode body and the shared-memory matrix
# body, at 64k; the layout probe's B operand dump; attnvk check on Vulkan with the direct operands.
#     bash tools/h100/s25.sh   (carry .gpu and build-h100)
set -u
out=${OUT:-/tmp/s25-out}
source tools/h100/bench-lib.sh
ATTNVK_VK_RS_PROBE_DUMP=1 $avk devices > "$out/devices.txt" 2>&1; grep -A20 "I x B" "$out/devices.txt" | head -20
shape="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --impl attnvk --api vulkan --min-time 0.3"
export ATTNVK_VK_DECODE_DIRECT=1
for kv in q8_0 q4_0 fp8; do
  bench d64k-$kv-direct $shape --seq-kv 65536 --kv-dtype $kv --variant decode-nv-rs
  bench d64k-$kv-body $shape --seq-kv 65536 --kv-dtype $kv
done
bench d64k-f16 $shape --seq-kv 65536
export ATTNVK_VK_DECODE_DIRECT=0; bench d64k-q8_0-nvrs-tiles $shape --seq-kv 65536 --kv-dtype q8_0 --variant decode-nv-rs; export ATTNVK_VK_DECODE_DIRECT=1
bench p16-q8_0-direct $shape --seq-kv 32768 --kv-dtype q8_0 --variant decode-nv-rs --page-size 16
bench nq4-q8_0 $shape --seq 4 --seq-kv 32768 --kv-dtype q8_0
bench d256-q8_0-direct --batch 4 --heads 16 --kv-heads 8 --head-dim 256 --dtype f16 --seq 1 --seq-kv 32768 --kv-dtype q8_0 --impl attnvk --api vulkan --min-time 0.3 --variant decode-nv-rs
cd "$out" && tar -czf json.tar.gz json && cd - > /dev/null
logged check-vulkan 150 $avk check --api vulkan --impl attnvk
cd "$out" && rm -rf json
