#!/usr/bin/env bash
# Session 12 on the H100: CUDA's feature tests, attnvk check --api cuda, and the MLA / head-dim / decode sweep.
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
( time timeout 200 $B/tests/cuda/test_cuda_features ) > "$OUT/test_cuda_features.log" 2>&1; echo "features rc=$?"; tail -2 "$OUT/test_cuda_features.log"
( time timeout 200 $B/tests/cuda/test_cuda_vendor ) > "$OUT/test_cuda_vendor.log" 2>&1; echo "vendor rc=$?"; tail -2 "$OUT/test_cuda_vendor.log"
( time timeout 300 $B/attnvk check --api cuda ) > "$OUT/check-cuda.log" 2>&1; echo "check rc=$?"; grep -E "^fail|passed" "$OUT/check-cuda.log" | tail -8
CASE_TIMEOUT=120 MIN_TIME=0.2 SHAPE="--dtype f16" OUT=$OUT/mla bash tools/h100/decode_variants.sh tools/h100/sweep-s12-mla.txt | cut -c1-170
