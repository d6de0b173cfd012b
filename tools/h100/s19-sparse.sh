#!/usr/bin/env bash
# Session 19: sparse patterns (#20) on the H100. test_sparse runs every API's pattern path (CPU,
# Vulkan, OpenCL, CUDA) against the float64 reference; `attnvk check --api cuda` the whole CUDA
# sweep (the key loops changed for tile skipping); then the bench at N = 32k, dense beside the
# patterns, on each API.
#   STAGE="attnvk tests/test_sparse" bash tools/h100/stage.sh build build-h100
#   run carry [".gpu","build-h100"]: bash tools/h100/s19-sparse.sh  (SKIP_TESTS, SKIP_CHECK, APIS, PATTERNS, SEQ,
#   BLOCK, HEADS, DENSE= to leave dense out, CAUSAL=1; a pattern is a --block-layout one or dilated:S..:R..)
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
summary() { # one line per record of a bench JSON
  python3 - "$1" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception as e:
    print("  (no JSON: %s)" % e); sys.exit()
for r in doc["records"]:
    st = r.get("stats") or {}
    ck = r.get("check") or {}
    print("  %-8s %-44s %-6s %9s ms %8.1f TFLOP/s check %s %s" % (r["implementation"], r["case"]["name"][:44],
          r["status"], "%.3f" % st["median_ms"] if st else "-", r.get("tflops") or 0, ck.get("rel_l2"), r.get("reason", "")[:60]))
PY
}
if [ -z "${SKIP_TESTS:-}" ]; then
  ( time timeout 200 $B/tests/test_sparse ) > "$OUT/test-sparse.log" 2>&1
  echo "test_sparse rc=$?: $(grep -E 'passed' "$OUT/test-sparse.log")"
  grep -E "^FAIL" "$OUT/test-sparse.log" | head -8 | cut -c1-220
  if [ -z "${SKIP_CHECK:-}" ]; then
    ( time timeout 240 $B/attnvk check --api cuda --device cuda:0 ) > "$OUT/check-cuda.log" 2>&1
    echo "check cuda rc=$?: $(grep -E 'passed' "$OUT/check-cuda.log" | tail -1)"
    grep -E "^FAIL" "$OUT/check-cuda.log" | head -8 | cut -c1-220
  fi
fi
common="--impl attnvk --dtype f16 --batch 1 --heads ${HEADS:-16} --head-dim 128 --seq ${SEQ:-32k} --min-time 1 ${CAUSAL:+--causal}"
for api in ${APIS:-cuda vulkan opencl}; do
  for pat in ${DENSE-dense} ${PATTERNS:-random:0.1}; do
    args=""
    [ "$pat" != dense ] && args="--block-layout $pat --block-size ${BLOCK:-128x128}"
    [ "${pat%%:*}" = dilated ] && args="--dilated ${pat#dilated:}"
    tag=$api-$(echo "$pat" | tr ':.,' '___')-${BLOCK:-128x128}-${SEQ:-32k}
    timeout 150 $B/attnvk bench --api "$api" $common $args -o json --out "$OUT/bench-$tag.json" > /dev/null 2> "$OUT/bench-$tag.err"
    echo "bench $api $pat rc=$?"
    summary "$OUT/bench-$tag.json"
  done
done
