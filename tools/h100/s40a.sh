#!/usr/bin/env bash
# Session 40's call: on an H200, #16's grid first (s40-grid.sh, ~150 s); then session 39's OpenCL
# pattern-only A/B (s39d.sh) in what DEADLINE leaves.
#     DEADLINE=560 bash tools/h100/s40a.sh   (carry .gpu and build-h100b)
set -u
export AVK=${AVK:-./build-h100b/attnvk}
total=${DEADLINE:-560} t0=$SECONDS
out0=${OUT:-/tmp/s40a-out}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  mkdir -p $out0/grid && OUT=$out0/grid DEADLINE=200 bash tools/h100/s40-grid.sh
fi
mkdir -p $out0/s39d && OUT=$out0/s39d DEADLINE=$(( total - (SECONDS - t0) )) bash tools/h100/s39d.sh
