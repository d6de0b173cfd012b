#!/usr/bin/env bash
# Session 27: the decode body's new defaults per kv format (spread softmax; f16 Q.K for q8_0, as aligned
# words, and fp8) against the session-26 body, two rounds, B=8 H=32/8 D=128 64k.
#     bash tools/h100/s27b.sh   (carry .gpu and build-h100; about 2 minutes)
set -u
out=${OUT:-/tmp/s27b-out}
source tools/h100/bench-lib.sh
shape="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 65536 --impl attnvk --api vulkan --min-time 0.3"
for round in 1 2; do
  for kv in q8_0 q4_0 fp8; do
    ATTNVK_VK_DECODE=spread=0,half=0,runs=$([ $kv = q8_0 ] && echo 1 || echo 2) bench r$round-$kv-base $shape --kv-dtype $kv
    bench r$round-$kv-default $shape --kv-dtype $kv
  done
done
(cd "$out" && tar -czf json-b.tar.gz json && rm -rf json)
