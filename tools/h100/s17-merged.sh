#!/usr/bin/env bash
# Session 17, after the merges: the CUDA backward and forward tests (the host layer moved to
# core/native_backward.c), the Vulkan backward on the H100, and fwd+bwd timings of both.
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
for t in ${TESTS:-cuda/test_cuda_backward cuda/test_cuda_features vulkan/test_vulkan_backward}; do
  n=$(basename $t)
  ( time timeout 300 $B/tests/$t ) > "$OUT/$n.txt" 2>&1
  echo "$n rc=$?: $(grep -E 'passed' "$OUT/$n.txt" | tail -1)"
  grep -E "^FAIL" "$OUT/$n.txt" | head -6 | cut -c1-240
done
for c in "" "--causal"; do
  for d in ${DIMS:-128 64}; do
    h=$((2048 / d))
    $B/attnvk bench --api ${APIS:-cuda,vulkan} --impl ${IMPLS:-attnvk,cudnn} --dtype f16 --batch 4 --seq 4096 --heads $h --head-dim $d $c \
      --pass ${PASS:-bwd} --min-time 0.3 -o json --out "$OUT/bwd-d$d${c:+-causal}.json" > "$OUT/bwd-d$d${c:+-causal}.txt" 2>&1
    echo "bench D=$d $c rc=$?"; grep -E "^(attnvk|cudnn|cublas)" "$OUT/bwd-d$d${c:+-causal}.txt" | cut -c1-150
  done
done
