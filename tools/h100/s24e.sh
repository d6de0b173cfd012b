#!/usr/bin/env bash
# Session 24's last device call (issue #12): the two thinnest margins of s24d, again with the
# session-23 binary beside: CUDA B=1 Nk=128k decode (48 splits now, 47 before) and the Vulkan
# gemma3-27b local decode preset, three rounds each beside cuDNN.
#     bash tools/h100/s24e.sh   (carry .gpu and build-h100 with attnvk-base beside attnvk)
set -u
out=${OUT:-/tmp/s24e-out}
source tools/h100/bench-lib.sh
new=$avk base=./build-h100/attnvk-base
b1="--batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 131072 --min-time 1"
g3="--suite models --case gemma3-27b-local-decode --min-time 1"
for round in 1 2 3; do
  avk=$new; bench b1-new-$round $b1 --api cuda --impl attnvk,cudnn
  avk=$base; bench b1-base-$round $b1 --api cuda --impl attnvk
  avk=$new; bench g3-new-$round $g3 --api cuda,vulkan --impl attnvk,cudnn
done
cd "$out" && tar -czf json.tar.gz json && rm -rf json
