#!/usr/bin/env bash
# Session 12 on the H100, every API: attnvk check on CUDA, Vulkan and OpenCL, then sweep-s12-all.
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
for api in cuda opencl vulkan; do
  ( time timeout ${CHECK_TIMEOUT:-200} $B/attnvk check --api $api ) > "$OUT/check-$api.log" 2>&1
  echo "check $api rc=$?: $(grep -E 'passed,' "$OUT/check-$api.log" | tail -1)"; grep -E "^fail" "$OUT/check-$api.log" | cut -c1-160 | head -5
done
CASE_TIMEOUT=120 MIN_TIME=0.2 BUILD=$B SHAPE="--dtype f16" OUT=$OUT/all bash tools/h100/decode_variants.sh tools/h100/sweep-s12-all.txt | cut -c1-170
