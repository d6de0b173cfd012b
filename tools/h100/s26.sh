#!/usr/bin/env bash
# Issue #12, session 26: s25.sh (the Vulkan direct K/V operands, first time on NVIDIA), then where
# CUDA's paged quantized decode loses against contiguous: by page size and by row size (q8_0's 136-byte
# rows share 32-byte sectors with the next kv head's; fp8's 128 do not; H_kv=1 has no neighbours).
#     bash tools/h100/s26.sh   (carry .gpu and build-h100; --page-size runs the contiguous cache beside the paged one)
set -u
out=${OUT:-/tmp/s26-out}
bash tools/h100/s25.sh
mkdir -p "$out/json"; source tools/h100/bench-lib.sh > /dev/null
cu="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 32768 --impl attnvk --api cuda --min-time 0.3"
for kv in q8_0 fp8; do
  for ps in 16 256; do bench cu-$kv-p$ps $cu --kv-dtype $kv --page-size $ps; done
done
bench cu-q8_0-hkv1-p16 ${cu/--kv-heads 8/--kv-heads 1} --kv-dtype q8_0 --page-size 16
(cd "$out" && tar -czf json26.tar.gz json && rm -rf json)
# the L2 prefetch around each 16-byte copy (128 by default) and rows copied as stored, on paged q8_0
mkdir -p "$out/json"
for d in "-DAVK_CP_L2_PREFETCH=256" "-DAVK_CP_L2_PREFETCH=0" "-DAVK_DECODE_ALIGNED_ROWS=0"; do
  ATTNVK_CUDA_DEFINES="$d" bench cu-q8_0-p16$d $cu --kv-dtype q8_0 --page-size 16
done
(cd "$out" && tar -czf json26b.tar.gz json && rm -rf json)
# #20: Vulkan's dilated views (AVK_FLAG_DILATED_VIEW) on the medium range beside dense causal flash
mkdir -p "$out/json"
BENCH_TIMEOUT=200 bench dil-medium-vulkan --suite dilated-medium --api vulkan --impl attnvk > "$out/dil-medium-vulkan.txt"
grep -c ' ok ' "$out/dil-medium-vulkan.txt"; grep -v '^==' "$out/dil-medium-vulkan.txt" | cut -c1-150 | head -40
$avk report "$out"/json/*.json --out "$out/dil-report.html" > "$out/dil-crossover.txt" 2>&1; head -30 "$out/dil-crossover.txt"
(cd "$out" && tar -czf json26c.tar.gz json && rm -rf json dil-report.html)
