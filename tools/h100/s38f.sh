#!/usr/bin/env bash
# Session 38's last call: the new defaults (plain causal D=64 on 192 rows, blocks counted from the
# last row). `attnvk check --api cuda` (f16, bf16), the CUDA suites, test_sparse, then the
# FlashAttention grid beside cuDNN (and D=64/D=128 causal at N=8k, fp8 beside f16 at N=8k).
#     DEADLINE=540 bash tools/h100/s38f.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s38f-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
logged check-cuda 200 $AVK check --api cuda --impl attnvk --dtype f16,bf16
echo "== check done at $((SECONDS - start)) s"
grid=("${fa_grid[@]}" "d64-n16k-causal:--batch 1 --heads 32 --head-dim 64 --seq 16384 --causal"
      "d64-n8k-causal:--batch 2 --heads 32 --head-dim 64 --seq 8192 --causal"
      "d128-n8k:--batch 2 --heads 16 --head-dim 128 --seq 8192")
for g in "${grid[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  bench fa-$tag --api cuda --dtype f16 $args --impl attnvk,cudnn --min-time 0.5
done
bench fp8-d128-n8k --api cuda --dtype fp8 --batch 2 --heads 16 --head-dim 128 --seq 8192 --impl attnvk --min-time 0.5
echo "== grid done at $((SECONDS - start)) s"
logged test-sparse 60 "$bin/tests/test_sparse"
logged test-cuda-features 120 "$bin/tests/cuda/test_cuda_features"
logged test-cuda-vendor 90 "$bin/tests/cuda/test_cuda_vendor"
[ "$(left)" -gt 200 ] && logged test-cuda-nvrtc $(( $(left) - 15 )) "$bin/tests/cuda/test_cuda_nvrtc"
echo "== done at $((SECONDS - start)) s"
pack_out s38f
