#!/usr/bin/env bash
# Session 24's first device call (issue #12): the Vulkan gemma3-27b local decode preset
# (window 1024, 2 packed rows per kv head) with the decode body's row tile at the packed
# rows (--tile 2x64 against the table's 4) and its keys per step / lanes per key around it,
# beside cuDNN; then the same knobs on the 70b/405b presets and the decode suite's 64k row.
#     bash tools/h100/s24.sh   (carry .gpu and build-h100; OUT set by the tool)
set -u
out=${OUT:-/tmp/s24-out}
source tools/h100/bench-lib.sh
g3="--suite models --case gemma3-27b-local-decode --api vulkan --min-time 1"
bench g3-base $g3 --impl attnvk,cudnn
bench g3-t2 $g3 --impl attnvk --tile 2x64
for knob in keys=1 keys=4 lanes=16 lanes=4 lanes=16,keys=4 lanes=4,keys=1; do
  export ATTNVK_VK_DECODE=$knob
  bench g3-t2-$knob $g3 --impl attnvk --tile 2x64
  unset ATTNVK_VK_DECODE
done
for s in 1 4 8; do bench g3-t2-s$s $g3 --impl attnvk --tile 2x64 --split-kv $s; done
export ATTNVK_VK_DECODE=keys=4
for s in 1 4; do bench g3-t2-k4-s$s $g3 --impl attnvk --tile 2x64 --split-kv $s; done
unset ATTNVK_VK_DECODE
bench g3-base-again $g3 --impl attnvk,cudnn
bench g3-ocl --suite models --case gemma3-27b-local-decode --api opencl --min-time 1 --impl attnvk
cd "$out" && tar -czf json.tar.gz json && rm -rf json
