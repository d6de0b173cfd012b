#!/usr/bin/env bash
# Session 39's fourth call: OpenCL's mma-f16 programs for a block layout alone without the score
# hook's softcap/ALiBi/mask code and row inputs (AVK_PATTERN_ONLY, the new default) against with
# them (-UAVK_PATTERN_ONLY): registers (-cl-nv-verbose), random 10% / random:1 / dense at N=32k in
# two rounds; test_sparse on every API; CUDA timelines with the prologue and epilogue split.
#     DEADLINE=300 bash tools/h100/s39d.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s39d-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
sp="--api opencl --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --impl attnvk"
bs="--block-size 128x128"
ATTNVK_OPENCL_BUILD_LOG=1 ATTNVK_OPENCL_BUILD_OPTIONS="-cl-nv-verbose" bench regs-new $sp --block-layout random:0.1 $bs --min-time 0.02
ATTNVK_OPENCL_BUILD_LOG=1 ATTNVK_OPENCL_BUILD_OPTIONS="-UAVK_PATTERN_ONLY -cl-nv-verbose" bench regs-old $sp --block-layout random:0.1 $bs --min-time 0.02
ATTNVK_OPENCL_BUILD_LOG=1 ATTNVK_OPENCL_BUILD_OPTIONS="-cl-nv-verbose" bench regs-dense $sp --min-time 0.02
for f in regs-new regs-old regs-dense; do echo "$f: $(grep -E 'Used [0-9]+ registers|spill' $out/json/$f.err | sort | uniq -c | head -4 | tr '\n' ' ')"; done
for round in 1 2; do
  [ "$(left)" -gt 60 ] || break
  for lay in random:0.1 random:1; do
    bench opencl-$lay-$round $sp --block-layout $lay $bs --min-time 0.4
    ATTNVK_OPENCL_BUILD_OPTIONS="-UAVK_PATTERN_ONLY" bench opencl-$lay-hooks-$round $sp --block-layout $lay $bs --min-time 0.4
  done
  # session 40: the tile search's window of 4 wg tiles (one classification a row) against wg tiles
  ATTNVK_OPENCL_BUILD_OPTIONS=-DAVK_WINDOW_PER_LANE=1 bench opencl-random:0.1-win1-$round $sp --block-layout random:0.1 $bs --min-time 0.4
  bench opencl-dense-$round $sp --min-time 0.4
  [ $round = 1 ] && [ "${QUICK:-0}" != 1 ] && logged test-sparse 120 $bin/tests/test_sparse
done
# the Hopper forward's prologue and epilogue split further (timeline words 12-14); QUICK=1: neither
[ "${QUICK:-0}" != 1 ] && [ "$(left)" -gt 40 ] && for c in "d64-causal:--batch 4 --heads 32 --head-dim 64 --seq 4096 --causal" "d128:--batch 4 --heads 16 --head-dim 128 --seq 4096"; do
  tl ${c%%:*} --api cuda --dtype f16 ${c#*:}
done
echo "== done at $((SECONDS - start)) s"
pack_out s39d
