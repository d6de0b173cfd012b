#!/usr/bin/env bash
# Session 23's third device call: wgmma-ws as the table's pick (sm_90 prefill). Correctness:
# `attnvk check --api cuda`, test_cuda_features and test_sparse (block layouts fall back to
# wgmma); then the fa-grid (B*N = 16k, H*D = 2048, f16) with cuDNN, twice.
#     bash tools/h100/s23c.sh   (carry .gpu and build-h100; OUT set by the tool)
set -u
out=${OUT:-/tmp/s23c-out}
source tools/h100/bench-lib.sh
logged check 300 $avk check --api cuda --impl attnvk
logged features 300 ./build-h100/tests/cuda/test_cuda_features
logged sparse 200 ./build-h100/tests/test_sparse
grid=("d128-n4k:--batch 4 --heads 16 --head-dim 128 --seq 4096"
      "d128-n4k-causal:--batch 4 --heads 16 --head-dim 128 --seq 4096 --causal"
      "d128-n16k:--batch 1 --heads 16 --head-dim 128 --seq 16384"
      "d128-n16k-causal:--batch 1 --heads 16 --head-dim 128 --seq 16384 --causal"
      "d64-n4k:--batch 4 --heads 32 --head-dim 64 --seq 4096"
      "d64-n4k-causal:--batch 4 --heads 32 --head-dim 64 --seq 4096 --causal"
      "d64-n16k:--batch 1 --heads 32 --head-dim 64 --seq 16384")
for round in 1 2; do
  for g in "${grid[@]}"; do
    tag=${g%%:*}; args=${g#*:}
    bench $tag-$round --api cuda --dtype f16 $args --impl attnvk,cudnn --min-time 1
  done
done
cd "$out" && tar -czf json.tar.gz json && rm -rf json
