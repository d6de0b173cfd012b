#!/usr/bin/env bash
# Session 28, third call: the Vulkan decode body's AHEAD steps (the loop without an early exit) against the
# session-27 body (build-h100base: commit cd67952) in one call, two rounds, B=8 H=32/8 D=128 64k; then the
# dilated production range on Vulkan (#20) while the deadline allows.
#     AVK=./build-h100b/attnvk DEADLINE=300 bash tools/h100/s28c.sh   (carry .gpu, build-h100b, build-h100base)
set -u
out=${OUT:-/tmp/s28c-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-300}
left() { echo $((deadline - (SECONDS - start))); }
new=$avk base=./build-h100base/attnvk
vk="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 65536 --impl attnvk --api vulkan --min-time 0.3"
for round in 1 2; do
  for kv in q8_0 q4_0 fp8 f16; do
    kvd=$([ $kv = f16 ] && echo "" || echo "--kv-dtype $kv")
    avk=$base bench r$round-vk-$kv-base $vk $kvd
    avk=$new; for mode in ahead=1 ahead=2; do ATTNVK_VK_DECODE=$mode bench r$round-vk-$kv-$mode $vk $kvd; done
  done
done
avk=$new
echo "== vulkan ahead done at $((SECONDS - start)) s"
if [ "$(left)" -gt 60 ]; then
  BENCH_TIMEOUT=$(left) bench prod-vulkan --suite dilated --api vulkan --impl attnvk > "$out/prod-vulkan.txt"
  echo "production vulkan: $(grep -c ' ok ' "$out/prod-vulkan.txt") ok"; grep -v ' ok \|^==' "$out/prod-vulkan.txt" | head -3
  $avk report "$out"/json/prod-vulkan.json --out "$out/prod-vulkan-report.html" > "$out/prod-vulkan-crossover.txt" 2>&1
fi
echo "== done at $((SECONDS - start)) s"
# the device tool brings back at most 8 files: everything in one archive (written outside the folder it reads)
cd "$out" && tar -czf /tmp/s28c.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s28c.tar.gz .
