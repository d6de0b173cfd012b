#!/usr/bin/env bash
# Session 30, #16's closing run on the final defaults (D=64's three warpgroups with the overlap and the
# ping-pong; causal row blocks longest first across heads): `attnvk check --api cuda`, the
# FlashAttention grid beside cuDNN, the causal order against its opt-out (-DAVK_CAUSAL_HEADS_FIRST=0),
# fp8 beside f16 at D=128 N=8k, the NVRTC cold start (--cold), then test_sparse.
#     bash tools/h100/s30e.sh   (carry .gpu and build-h100; DEADLINE seconds, default 420)
set -u
out=${OUT:-/tmp/s30e-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-420}
left() { echo $((deadline - (SECONDS - start))); }
logged check-cuda 170 $avk check --api cuda --impl attnvk --dtype f16,bf16
echo "== check done at $((SECONDS - start)) s"
for g in "${fa_grid[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  [ "$(left)" -gt 40 ] || { echo "skip $tag: $(left) s left"; break; }
  bench fa-$tag --api cuda --dtype f16 $args --impl attnvk,cudnn --min-time 0.5
done
for tag in d128-n4k-causal d64-n4k-causal; do
  [ "$(left)" -gt 40 ] || break
  for g in "${fa_grid[@]}"; do [ "${g%%:*}" = $tag ] && args=${g#*:}; done
  ATTNVK_CUDA_DEFINES=-DAVK_CAUSAL_HEADS_FIRST=0 bench fa-$tag-per-head --api cuda --dtype f16 $args --impl attnvk --min-time 0.5
done
n8k="--batch 2 --heads 16 --head-dim 128 --seq 8192 --impl attnvk --min-time 0.5"
[ "$(left)" -gt 40 ] && bench d128-n8k-f16 --api cuda --dtype f16 $n8k
[ "$(left)" -gt 40 ] && bench d128-n8k-fp8 --api cuda --dtype fp8 $n8k
[ "$(left)" -gt 70 ] && BENCH_TIMEOUT=$(( $(left) - 40 )) bench cold-d128-n4k-f16 --api cuda --dtype f16 --batch 4 --heads 16 --head-dim 128 --seq 4096 --impl attnvk --cold --cold-runs 2
[ "$(left)" -gt 60 ] && BENCH_TIMEOUT=$(( $(left) - 5 )) bench cold-d128-n8k-fp8 --api cuda --dtype fp8 $n8k --cold --cold-runs 2
[ "$(left)" -gt 55 ] && logged test-sparse $(( $(left) - 5 )) ./build-h100/tests/test_sparse
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s30e.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s30e.tar.gz .
