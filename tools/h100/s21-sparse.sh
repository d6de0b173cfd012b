#!/usr/bin/env bash
# Session 21: sparse tile skipping on OpenCL and Vulkan (#20) after the shown-tile bits: test_sparse,
# then dense beside random 128x128 blocks at 5/10/20% density, N=32k (B=1 H=16 D=128 f16).
#     bash tools/h100/s21-sparse.sh   (carry .gpu and build-h100; OUT set by the device tool)
set -u
out=${OUT:-/tmp/s21-sparse}
mkdir -p "$out"
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
( time timeout 150 ./build-h100/tests/test_sparse ) > "$out/test-sparse.log" 2>&1
echo "test_sparse rc=$?: $(grep -E 'passed' "$out/test-sparse.log")"; grep -E "^FAIL" "$out/test-sparse.log" | head -5 | cut -c1-200
sp="--impl attnvk --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --min-time 1"
for api in ${APIS:-opencl vulkan}; do
  for pat in dense random:0.1 random:0.05 random:0.2; do
    args=""; [ $pat != dense ] && args="--block-layout $pat --block-size 128x128"
    timeout 90 ./build-h100/attnvk bench --api $api $sp $args -o json --out "$out/$api-$pat.json" > /dev/null 2>&1
    python3 -c "
import json,sys
for r in json.load(open(sys.argv[1]))['records']:
    print(sys.argv[2], sys.argv[3], r['status'], r['variant'], '%.3f ms' % r['stats']['median_ms'], '%.1f TFLOP/s' % r['tflops'], r['check']['rel_l2'])" "$out/$api-$pat.json" $api $pat
  done
done
cd "$out" && tar -czf sparse-json.tar.gz *.json && rm -f *.json
