#!/usr/bin/env bash
# Session 40, everything in one call (the device was scarce): on an H200 first #16's grid (s40-grid.sh);
# then s39d's OpenCL pattern-only A/B (QUICK: no test_sparse, no timelines), s40c (the OpenCL backward's
# sliding copies), s40d (the Vulkan decode workgroup on quantized caches), s39e's Q-by-TMA A/B (QUICK: one
# round, no check).
#     DEADLINE=540 bash tools/h100/s40e.sh   (carry .gpu and build-h100b)
set -u
export AVK=${AVK:-./build-h100b/attnvk} QUICK=1
out0=${OUT:-/tmp/s40e-out} t0=$SECONDS total=${DEADLINE:-540}
rest() { echo $(( total - (SECONDS - t0) )); }
h200=0; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && h200=1
mkdir -p $out0/grid $out0/s39d $out0/s40c $out0/s40d $out0/s39e
[ $h200 = 1 ] && OUT=$out0/grid DEADLINE=150 bash tools/h100/s40-grid.sh
OUT=$out0/s39d DEADLINE=$(( $(rest) - 190 )) bash tools/h100/s39d.sh
OUT=$out0/s40c DEADLINE=$(( $(rest) - 110 < 80 ? $(rest) - 110 : 80 )) bash tools/h100/s40c.sh
KVS="q8_0 q4_0 dtype" WGS="table 512 1024" OUT=$out0/s40d DEADLINE=$(( $(rest) - 45 < 70 ? $(rest) - 45 : 70 )) bash tools/h100/s40d.sh
OUT=$out0/s39e DEADLINE=$(( $(rest) - 5 )) bash tools/h100/s39e.sh
echo "== s40e done at $((SECONDS - t0)) s"
