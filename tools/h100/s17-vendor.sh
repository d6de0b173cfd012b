#!/usr/bin/env bash
# Session 17: the backward's vendor baselines (cuDNN SDPA backward graph, cuBLAS unfused) and attnvk's
# CUDA backward on the H100: their tests, then the bench's fwd+bwd beside each other.
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
for t in ${TESTS:-test_cuda_backward test_cuda_vendor_backward test_cuda_vendor}; do
  ( time timeout 300 $B/tests/cuda/$t ) > "$OUT/$t.log" 2>&1
  echo "$t rc=$?: $(grep -E 'passed' "$OUT/$t.log" | tail -1)"
  grep -E "^FAIL" "$OUT/$t.log" | head -6 | cut -c1-240
done
for c in "" "--causal"; do
  for d in ${DIMS:-128 64}; do
    h=$((2048 / d))
    $B/attnvk bench --api cuda --impl ${IMPLS:-attnvk,cudnn,cublas} --dtype f16 --batch 4 --seq 4096 --heads $h --head-dim $d $c \
      --pass ${PASS:-fwd+bwd} -o json --out "$OUT/bwd-d$d${c:+-causal}.json" > "$OUT/bwd-d$d${c:+-causal}.txt" 2>&1
    echo "bench D=$d $c rc=$?"; grep -E "^(attnvk|cudnn|cublas)|fwd .* bwd" "$OUT/bwd-d$d${c:+-causal}.txt" | cut -c1-200
  done
done
