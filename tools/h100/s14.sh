#!/usr/bin/env bash
# Sessions 14-15 on the H100: attnvk peak (PEAK=1), attnvk check for CHECK_APIS (default none), optional
# test_vulkan (VK_TEST=1), then each sweep of SWEEPS (decode_variants.sh format).
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
if [ "${PEAK:-0}" = 1 ]; then # measured peaks, cached for the suites' records (issue #14)
  ( time $B/attnvk peak ) > "$OUT/peak.txt" 2>&1; echo "peak rc=$?"; cat "$OUT/peak.txt" | cut -c1-160
fi
if [ "${VK_TEST:-0}" = 1 ]; then
  ( time timeout ${VK_TEST_TIMEOUT:-150} $B/tests/vulkan/test_vulkan ) > "$OUT/test-vulkan.log" 2>&1
  echo "test_vulkan rc=$?: $(tail -2 "$OUT/test-vulkan.log" | head -1)"; grep -iE "^fail|FAIL" "$OUT/test-vulkan.log" | head -5
fi
for api in ${CHECK_APIS:-}; do
  ( time timeout ${CHECK_TIMEOUT:-200} $B/attnvk check --api $api ${CHECK_ARGS:-} ) > "$OUT/check-$api.log" 2>&1
  echo "check $api rc=$?: $(grep -E 'passed,' "$OUT/check-$api.log" | tail -1)"; grep -E "^fail" "$OUT/check-$api.log" | cut -c1-160 | head -5
done
for sw in ${SWEEPS:-}; do
  name=$(basename "$sw" .txt)
  echo "== $name"
  shape=$(grep -m1 '^#SHAPE=' "$sw" | cut -d= -f2-) # a sweep's own shared shape (else the decode shape)
  SHAPE=${shape:-${SHAPE:-}} CASE_TIMEOUT=${CASE_TIMEOUT:-100} MIN_TIME=${MIN_TIME:-0.2} BUILD=$B OUT=$OUT/$name \
    bash tools/h100/decode_variants.sh "$sw" | cut -c1-200
done
if [ -n "${SUITE:-}" ]; then # the harness's wall time for a suite (issue #14)
  start=$EPOCHREALTIME
  $B/attnvk bench --suite $SUITE ${SUITE_ARGS:-} -o json --out "$OUT/suite-$SUITE.json" > "$OUT/suite-$SUITE.txt" 2> "$OUT/suite-$SUITE.err"
  rc=$?
  echo "suite $SUITE rc=$rc wall $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $start}") s"; tail -3 "$OUT/suite-$SUITE.err"
fi
