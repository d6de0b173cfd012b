#!/usr/bin/env bash
# Session 16: the CUDA backward on the H100 (test_cuda_backward, then the bench's fwd+bwd beside
# cuDNN's forward), the softcap pairs' sweep, and `attnvk check` on every API (the softcap pairs).
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
( time timeout 200 $B/tests/cuda/test_cuda_backward ) > "$OUT/test-cuda-backward.log" 2>&1
echo "test_cuda_backward rc=$?: $(grep -E 'passed|PASS|FAIL' "$OUT/test-cuda-backward.log" | tail -2 | tr '\n' ' ')"
grep -E "^FAIL|fail" "$OUT/test-cuda-backward.log" | head -8 | cut -c1-220
for c in "" "--causal"; do
  for d in 128 64; do
    h=$((2048 / d))
    $B/attnvk bench --api cuda --impl attnvk,cudnn --dtype f16 --batch 4 --seq 4096 --heads $h --head-dim $d $c --pass fwd+bwd \
      -o json --out "$OUT/bwd-d$d${c:+-causal}.json" > "$OUT/bwd-d$d${c:+-causal}.txt" 2>&1
    echo "bench fwd+bwd D=$d $c rc=$?"; grep -E "^(attnvk|cudnn)|fwd .* bwd" "$OUT/bwd-d$d${c:+-causal}.txt" | cut -c1-200
  done
done
SWEEPS=tools/h100/sweep-s16-softcap.txt CHECK_APIS="${CHECK_APIS-cuda opencl vulkan}" CHECK_ARGS="--impl attnvk" bash tools/h100/s14.sh
