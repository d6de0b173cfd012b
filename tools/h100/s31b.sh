#!/usr/bin/env bash
# For session 31: the CUDA backward's wgmma dK/dV kernels (native/attn_bwd_sm90.h), first GPU run.
# 1. test_cuda_backward with them (the default on Hopper) and with ATTNVK_CUDA_BWD_WGMMA=0 (mma.sync).
# 2. The bench's backward beside cuDNN's (B*N = 16k, H*D = 2048, f16): D=128 N=4k plain and causal,
#    D=64 N=4k, D=128 N=16k; the mma.sync body once for the same-run ratio; D=64 with 64-row query tiles.
# 3. cuDNN's FP8 graph with cuDNN's own log (s31a: "no engine", the pattern check's reason).
#     bash tools/h100/s31b.sh   (carry .gpu and build-h100; DEADLINE seconds, default 400)
set -u
out=${OUT:-/tmp/s31b-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-400}
test_backward wgmma ATTNVK_CUDA_BWD_WGMMA=1
test_backward mma ATTNVK_CUDA_BWD_WGMMA=0
b="--api cuda --dtype f16 --pass bwd --min-time 0.5"
export BENCH_TIMEOUT=150
[ "$(left)" -gt 60 ] && bench bwd-d128-n4k $b --impl attnvk,cudnn --batch 4 --heads 16 --head-dim 128 --seq 4096
[ "$(left)" -gt 60 ] && ATTNVK_CUDA_BWD_WGMMA=0 bench bwd-d128-n4k-mma $b --impl attnvk --batch 4 --heads 16 --head-dim 128 --seq 4096
[ "$(left)" -gt 60 ] && bench bwd-d128-n4k-causal $b --impl attnvk,cudnn --batch 4 --heads 16 --head-dim 128 --seq 4096 --causal
[ "$(left)" -gt 60 ] && bench bwd-d64-n4k $b --impl attnvk,cudnn --batch 4 --heads 32 --head-dim 64 --seq 4096
[ "$(left)" -gt 60 ] && ATTNVK_CUDA_BWD_TILES=bc=128,bq=64 bench bwd-d64-n4k-bq64 $b --impl attnvk --batch 4 --heads 32 --head-dim 64 --seq 4096
[ "$(left)" -gt 90 ] && bench bwd-d128-n16k $b --impl attnvk,cudnn --batch 1 --heads 16 --head-dim 128 --seq 16384
[ "$(left)" -gt 30 ] && CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG="$out/cudnn-fp8.log" BENCH_TIMEOUT=40 \
  bench fp8-cudnn-log --api cuda --dtype fp8 --impl cudnn --batch 1 --heads 4 --head-dim 128 --seq 1024 --min-time 0.1
[ -f "$out/cudnn-fp8.log" ] && grep -i "not_supported\|reason\|error" "$out/cudnn-fp8.log" | sort | uniq -c | sort -rn | head -12 | cut -c1-300
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s31b.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s31b.tar.gz .
