#!/usr/bin/env bash
# Session 41, one call: s41x (#13's softcap with exponentials on the FMA pipe), then s40e's pieces
# (on an H200 #16's grid first; s39d's OpenCL pattern-only and window A/B; s40c's OpenCL backward
# sliding copies; s40d's Vulkan decode workgroups on quantized caches; s39e's Q by TMA).
#     DEADLINE=560 bash tools/h100/s41a.sh   (carry .gpu and build-h100b)
set -u
out0=${OUT:-/tmp/s41a-out} t0=$SECONDS total=${DEADLINE:-560}
rest() { echo $(( total - (SECONDS - t0) )); }
mkdir -p $out0/s41x
OUT=$out0/s41x DEADLINE=170 bash tools/h100/s41x.sh
OUT=$out0 DEADLINE=$(rest) bash tools/h100/s40e.sh
echo "== s41a done at $((SECONDS - t0)) s"
# everything in one tarball (the device tool brings back 8 files at most)
cd "$out0" && tar -czf /tmp/s41a.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s41a.tar.gz .
