#!/usr/bin/env bash
# Session 29, last call. #16: FlashAttention-3's intra-warpgroup overlap in the producer's ring
# (AVK_WG_OVERLAP=1 through ATTNVK_CUDA_DEFINES: tile t's S issued before tile t-1's P V, whose MMAs
# run under tile t's softmax) against the same kernels without it, f16 (wgmma-ws) and fp8
# (wgmma-ws-fp8), D=128, B*N = 16k, H*D = 2048, cuDNN in the same run; odd shapes checked first.
#     bash tools/h100/s29d.sh   (carry .gpu and build-h100; DEADLINE seconds, default 250)
set -u
out=${OUT:-/tmp/s29d-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-250}
left() { echo $((deadline - (SECONDS - start))); }
export ATTNVK_CUDA_DEFINES=-DAVK_WG_OVERLAP=1
c="--api cuda --impl attnvk --min-time 0.2"
BENCH_TIMEOUT=40 bench ov-f16-odd $c --dtype f16 --batch 1 --heads 4 --kv-heads 2 --head-dim 128 --seq 1000 --causal
BENCH_TIMEOUT=40 bench ov-f16-odd-split $c --dtype f16 --batch 1 --heads 4 --head-dim 128 --seq 3000 --split-kv 3
BENCH_TIMEOUT=40 bench ov-fp8-odd $c --dtype fp8 --batch 1 --heads 4 --kv-heads 2 --head-dim 128 --seq 1000 --causal
BENCH_TIMEOUT=40 bench ov-fp8-odd-split $c --dtype fp8 --batch 1 --heads 4 --head-dim 128 --seq 3000 --split-kv 3
BENCH_TIMEOUT=40 bench ov-fp8-window $c --dtype fp8 --batch 1 --heads 4 --head-dim 128 --seq 4096 --causal --window 1000,0
grid=("d128-n8k:--batch 2 --heads 16 --head-dim 128 --seq 8192"
      "d128-n8k-causal:--batch 2 --heads 16 --head-dim 128 --seq 8192 --causal"
      "d128-n16k:--batch 1 --heads 16 --head-dim 128 --seq 16384")
for g in "${grid[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  [ "$(left)" -gt 40 ] || break
  ATTNVK_CUDA_DEFINES= bench $tag-f16 --api cuda --dtype f16 $args --impl attnvk,cudnn --min-time 0.5
  bench $tag-f16-ov --api cuda --dtype f16 $args --impl attnvk --min-time 0.5
  ATTNVK_CUDA_DEFINES= bench $tag-fp8 --api cuda --dtype fp8 $args --impl attnvk --min-time 0.5
  bench $tag-fp8-ov --api cuda --dtype fp8 $args --impl attnvk --min-time 0.5
done
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s29d.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s29d.tar.gz .
