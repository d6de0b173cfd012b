#!/usr/bin/env bash
# Session 26 (device machines came rarely, so the most valuable first):
# the Vulkan direct K/V operands at 64k (#12), Vulkan's dilated views on the medium range (#20),
# attnvk check on Vulkan with both, CUDA's paged decode by page and row size, then fp8, paged 16
# and D=256 through the direct operands; OpenCL's dilated views last.
#     bash tools/h100/s26b.sh   (carry .gpu and build-h100)
set -u
out=${OUT:-/tmp/s26b-out}
source tools/h100/bench-lib.sh
ATTNVK_VK_RS_PROBE_DUMP=1 $avk devices > "$out/devices.txt" 2>&1; grep -A20 "I x B" "$out/devices.txt" | head -20
shape="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --impl attnvk --api vulkan --min-time 0.3"
export ATTNVK_VK_DECODE_DIRECT=1
for kv in q8_0 q4_0; do
  bench d64k-$kv-direct $shape --seq-kv 65536 --kv-dtype $kv --variant decode-nv-rs
  bench d64k-$kv-body $shape --seq-kv 65536 --kv-dtype $kv
done
bench d64k-f16 $shape --seq-kv 65536
BENCH_TIMEOUT=180 bench dil-medium-vulkan --suite dilated-medium --api vulkan --impl attnvk > "$out/dil-medium-vulkan.txt"
grep -c ' ok ' "$out/dil-medium-vulkan.txt"; grep -v '^==' "$out/dil-medium-vulkan.txt" | cut -c1-150 | head -30
$avk report "$out"/json/dil-medium-vulkan.json --out /tmp/dil.html 2>&1 | head -12
logged check-vulkan 150 $avk check --api vulkan --impl attnvk
cu="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 32768 --impl attnvk --api cuda --min-time 0.3"
for kv in q8_0 fp8; do
  for ps in 16 256; do bench cu-$kv-p$ps $cu --kv-dtype $kv --page-size $ps; done
done
bench d64k-fp8-direct $shape --seq-kv 65536 --kv-dtype fp8 --variant decode-nv-rs
bench d64k-fp8-body $shape --seq-kv 65536 --kv-dtype fp8
bench p16-q8_0-direct $shape --seq-kv 32768 --kv-dtype q8_0 --variant decode-nv-rs --page-size 16
bench d256-q8_0-direct --batch 4 --heads 16 --kv-heads 8 --head-dim 256 --dtype f16 --seq 1 --seq-kv 32768 --kv-dtype q8_0 --impl attnvk --api vulkan --min-time 0.3 --variant decode-nv-rs
(cd "$out" && tar -czf json.tar.gz json && rm -rf json)
mkdir -p "$out/json"
BENCH_TIMEOUT=150 bench dil-medium-opencl --suite dilated-medium --api opencl --impl attnvk > "$out/dil-medium-opencl.txt"
grep -c ' ok ' "$out/dil-medium-opencl.txt"; grep 'vs dense' "$out/dil-medium-opencl.txt" | cut -c1-150 | head -30
(cd "$out" && tar -czf json-ocl.tar.gz json && rm -rf json)
