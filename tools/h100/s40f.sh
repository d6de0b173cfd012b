#!/usr/bin/env bash
# Session 40's last try (device time nearly spent on machines that would not start): s39d's OpenCL
# block-layout A/B alone (QUICK), then s40c's backward A/B if 80 s are left.
#     DEADLINE=250 bash tools/h100/s40f.sh   (carry .gpu and build-h100b)
set -u
export AVK=${AVK:-./build-h100b/attnvk} QUICK=1
out0=${OUT:-/tmp/s40f-out} t0=$SECONDS total=${DEADLINE:-250}
rest() { echo $(( total - (SECONDS - t0) )); }
mkdir -p $out0/s39d $out0/s40c
OUT=$out0/s39d DEADLINE=$(( total - 60 )) bash tools/h100/s39d.sh
[ "$(rest)" -gt 80 ] && OUT=$out0/s40c DEADLINE=$(( $(rest) - 5 )) bash tools/h100/s40c.sh
echo "== s40f done at $((SECONDS - t0)) s"
