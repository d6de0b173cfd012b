#!/usr/bin/env bash
# Session 13 on the H100: Vulkan's tests and check (the f16 tile for D > 256), then sweep-s13-mask.
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
( time timeout ${VK_TEST_TIMEOUT:-150} $B/tests/vulkan/test_vulkan ) > "$OUT/test-vulkan.log" 2>&1
echo "test_vulkan rc=$?: $(tail -2 "$OUT/test-vulkan.log" | head -1)"; grep -iE "^fail|FAIL" "$OUT/test-vulkan.log" | head -5
for api in ${CHECK_APIS:-vulkan}; do
  ( time timeout ${CHECK_TIMEOUT:-200} $B/attnvk check --api $api ) > "$OUT/check-$api.log" 2>&1
  echo "check $api rc=$?: $(grep -E 'passed,' "$OUT/check-$api.log" | tail -1)"; grep -E "^fail" "$OUT/check-$api.log" | cut -c1-160 | head -5
done
CASE_TIMEOUT=${CASE_TIMEOUT:-100} MIN_TIME=0.2 BUILD=$B SHAPE="--dtype f16" OUT=$OUT/sweep bash tools/h100/decode_variants.sh ${SWEEP:-tools/h100/sweep-s13-mask.txt} | cut -c1-170
