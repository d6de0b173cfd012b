#!/usr/bin/env bash
# Session 17: the OpenCL backward on the H100 (issue #18): test_opencl_backward with the portable
# body, then with the mma.sync body (ATTNVK_OPENCL_BWD_MMA=1, never run on a GPU before), then the
# bench's fwd+bwd at B=4 N=4k H=16 D=128 f16 (causal and not) with each body, and a ptxas look
# at the NVIDIA build logs (registers, spills) through ATTNVK_OPENCL_BUILD_OPTIONS=-cl-nv-verbose.
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
for mma in 0 1; do
  ( time ATTNVK_OPENCL_BWD_MMA=$mma timeout 300 "$B"/tests/opencl/test_opencl_backward ) > "$OUT/test-ocl-bwd-mma$mma.log" 2>&1
  echo "test_opencl_backward mma=$mma rc=$?: $(grep -E 'passed|PASS|FAIL' "$OUT/test-ocl-bwd-mma$mma.log" | tail -2 | tr '\n' ' ')"
  grep -E "^FAIL" "$OUT/test-ocl-bwd-mma$mma.log" | head -8 | cut -c1-220
done
for c in "" "--causal"; do
  for mma in 0 1; do
    ATTNVK_OPENCL_BWD_MMA=$mma ATTNVK_OPENCL_BUILD_OPTIONS=-cl-nv-verbose ATTNVK_OPENCL_BUILD_LOG=1 \
      "$B"/attnvk bench --api opencl --impl attnvk --dtype f16 --batch 4 --seq 4096 --heads 16 --head-dim 128 $c \
      --pass fwd+bwd -o json --out "$OUT/ocl-bwd-mma$mma${c:+-causal}.json" > "$OUT/ocl-bwd-mma$mma${c:+-causal}.txt" 2>&1
    echo "bench opencl fwd+bwd mma=$mma $c rc=$?"
    grep -E "^ +attnvk|fwd .* bwd|avk_bwd_(dkdv|dq)|registers|spill" "$OUT/ocl-bwd-mma$mma${c:+-causal}.txt" | cut -c1-200 | head -12
  done
done
