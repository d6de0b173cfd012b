#!/usr/bin/env bash
# Session 27, issue #12: the Vulkan decode body's spread softmax (flash_decode.comp's SPREAD: scores
# summed by a reduce-scatter, exp2 of a lane's own share, rescale only when a row's max grows) and
# Q.K in f16 pairs over quantized caches (AVK_DECODE_HALF_QK), against the session-26 body
# (ATTNVK_VK_DECODE=spread=0,half=0) and each alone, every kv format at 64k; 1 and 4 keys a step,
# q8_0 as aligned words; then the decode suite beside cuDNN and `attnvk check --api vulkan`.
#     bash tools/h100/s27.sh   (carry .gpu and build-h100; about 5 minutes)
set -u
out=${OUT:-/tmp/s27-out}
source tools/h100/bench-lib.sh
shape="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 65536 --impl attnvk --api vulkan --min-time 0.3"
for round in ${ROUNDS:-1 2}; do
  for kv in q8_0 q4_0 f16 fp8; do
    arg=$([ $kv = f16 ] || echo "--kv-dtype $kv")
    ATTNVK_VK_DECODE=spread=0,half=0 bench r$round-$kv-base $shape $arg
    [ $kv = f16 ] || ATTNVK_VK_DECODE=half=0 bench r$round-$kv-spread $shape $arg
    [ $kv = f16 ] || ATTNVK_VK_DECODE=spread=0 bench r$round-$kv-half $shape $arg
    bench r$round-$kv-both $shape $arg
  done
done
for kv in q8_0 q4_0; do
  ATTNVK_VK_DECODE=keys=4 bench k4-$kv-both $shape --kv-dtype $kv
  ATTNVK_VK_DECODE=keys=1 bench k1-$kv-both $shape --kv-dtype $kv
done
ATTNVK_VK_DECODE=runs=2 bench words-q8_0-both $shape --kv-dtype q8_0
params() { python3 -c "import json,sys; [print(r['params']) for r in json.load(open(sys.argv[1]))['records']]" "$1"; }
for kv in q8_0 q4_0; do
  ATTNVK_VK_PIPELINE_STATS=1 ATTNVK_VK_DECODE=spread=0,half=0 bench stats-$kv-base $shape --kv-dtype $kv -r 3 > /dev/null
  ATTNVK_VK_PIPELINE_STATS=1 bench stats-$kv-both $shape --kv-dtype $kv -r 3 > /dev/null
  params "$out/json/stats-$kv-base.json"; params "$out/json/stats-$kv-both.json"
done
BENCH_TIMEOUT=120 bench suite-decode --suite decode --api cuda,vulkan --impl attnvk,cudnn
logged check-vulkan 150 $avk check --api vulkan --impl attnvk
(cd "$out" && tar -czf json.tar.gz json && rm -rf json)
