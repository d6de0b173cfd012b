#!/usr/bin/env bash
# Session 17: the CUDA backward with dQ by atomics: test_cuda_backward (both modes), then the bench's
# fwd+bwd over tile choices (ATTNVK_CUDA_BWD_TILES) at B=4 N=4k H*D=2048 f16.
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
if [ -z "${SKIP_TEST:-}" ]; then
( time timeout 300 $B/tests/cuda/test_cuda_backward ) > "$OUT/test-cuda-backward.log" 2>&1
echo "test_cuda_backward rc=$?: $(grep -E 'passed|PASS|FAIL' "$OUT/test-cuda-backward.log" | tail -2 | tr '\n' ' ')"
grep -E "^FAIL" "$OUT/test-cuda-backward.log" | head -8 | cut -c1-220
fi
for d in ${DIMS:-128 64}; do
  h=$((2048 / d))
  for t in ${TILES:-""}; do
    for c in ${CAUSAL:-""}; do
      ATTNVK_CUDA_BWD_TILES=$t $B/attnvk bench --api cuda --impl attnvk --dtype f16 --batch 4 --seq 4096 --heads $h --head-dim $d $c \
        --pass bwd --min-time 0.3 > "$OUT/bwd.txt" 2>&1
      echo "D=$d ${c:-noncausal} tiles=${t:-table}: $(grep -E '^attnvk' "$OUT/bwd.txt" | cut -c40-140)"
    done
  done
done
