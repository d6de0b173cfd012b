#!/usr/bin/env bash
# Session 28, most valuable first (device machines come rarely):
# 0. #12: Vulkan's decode body with two steps of K/V loads in flight (ATTNVK_VK_DECODE=ahead=2) against one,
#    by kv format at 64k, two rounds (the suspect for quantized caches: bytes in flight at 255 registers).
# 1. #12: CUDA's paged decode with the page size compiled in (AVK_PAGE_SIZE) against the kernel-argument
#    division (-UAVK_PAGE_SIZE), by kv format, page 16 and 256, beside contiguous; two rounds.
# 2. #20: attnvk check on OpenCL (the strided views have not run on the H100's OpenCL), then the dilated
#    production range on Vulkan and OpenCL with the views.
# 3. #12: OpenCL's mma-decode on q4_0 at 64k (0.456 of f16, target 0.45) and paged q8_0: a few table knobs.
# 4. attnvk check on CUDA (the page-size builds), if time is left.
#     AVK=./build-h100b/attnvk bash tools/h100/s28b.sh   (carry .gpu and build-h100b; DEADLINE seconds, default 570)
set -u
out=${OUT:-/tmp/s28b-out}
source tools/h100/bench-lib.sh
which ncu nsys 2>&1 | head -2; ls -d /usr/local/cuda*/bin 2>&1 | head -2
start=$SECONDS deadline=${DEADLINE:-570}
left() { echo $((deadline - (SECONDS - start))); }
vk="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 65536 --impl attnvk --api vulkan --min-time 0.3"
for round in 1 2; do
  for kv in q8_0 q4_0 fp8 f16; do
    kvd=$([ $kv = f16 ] && echo "" || echo "--kv-dtype $kv")
    for mode in ahead=1 ahead=2; do ATTNVK_VK_DECODE=$mode bench r$round-vk-$kv-$mode $vk $kvd; done
  done
  ATTNVK_VK_DECODE=ahead=2,half=1 bench r$round-vk-q4_0-ahead=2-half $vk --kv-dtype q4_0
  ATTNVK_VK_DECODE=ahead=2,keys=1 bench r$round-vk-q4_0-ahead=2-keys1 $vk --kv-dtype q4_0
done
echo "== #12 vulkan ahead done at $((SECONDS - start)) s"
cu="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 32768 --impl attnvk --api cuda --min-time 0.3"
for round in 1 2; do
  for kv in q8_0 fp8 q4_0 f16; do
    kvd=$([ $kv = f16 ] && echo "" || echo "--kv-dtype $kv")
    [ $round = 1 ] && bench r$round-cu-$kv-contig $cu $kvd
    for ps in 16 256; do
      [ $round = 2 ] && [ $ps = 256 ] && continue
      ATTNVK_CUDA_DEFINES="-UAVK_PAGE_SIZE" bench r$round-cu-$kv-p$ps-arg $cu $kvd --page-size $ps
      bench r$round-cu-$kv-p$ps-const $cu $kvd --page-size $ps
    done
  done
done
echo "== #12 cuda paged done at $((SECONDS - start)) s"
echo "== #12 done at $((SECONDS - start)) s"
[ "$(left)" -gt 150 ] && logged check-opencl 150 $avk check --api opencl --impl attnvk
for api in vulkan opencl; do
  [ "$(left)" -gt 60 ] || { echo "skip production $api: $(left) s left"; continue; }
  BENCH_TIMEOUT=$(( $(left) < 150 ? $(left) : 150 )) bench prod-$api --suite dilated --api $api --impl attnvk > "$out/prod-$api.txt"
  echo "production $api: $(grep -c ' ok ' "$out/prod-$api.txt") ok"; grep -v ' ok \|^==' "$out/prod-$api.txt" | head -3
  $avk report "$out"/json/prod-$api.json --out "$out/prod-$api-report.html" > "$out/prod-$api-crossover.txt" 2>&1
done
[ "$(left)" -gt 60 ] && {
cl="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --impl attnvk --api opencl --min-time 0.3"
bench cl-f16-64k $cl --seq-kv 65536
for tune in "" key_warps=4 stages=3 bc=32 maxreg=200 key_warps=4,stages=3; do
  ATTNVK_OPENCL_TUNE=$tune bench cl-q4_0-64k-${tune:-default} $cl --seq-kv 65536 --kv-dtype q4_0
done
bench cl-q8_0-32k $cl --seq-kv 32768 --kv-dtype q8_0
for tune in "" stages=3 key_warps=4; do
  ATTNVK_OPENCL_TUNE=$tune bench cl-q8_0-32k-p16-${tune:-default} $cl --seq-kv 32768 --kv-dtype q8_0 --page-size 16
done
}
[ "$(left)" -gt 100 ] && logged check-cuda $(( $(left) - 10 )) $avk check --api cuda --impl attnvk
echo "== done at $((SECONDS - start)) s"
# the device tool brings back at most 8 files: everything in one archive
cd "$out" && tar -czf s28b.tar.gz --exclude=s28b.tar.gz . && find . -mindepth 1 ! -name s28b.tar.gz -delete
