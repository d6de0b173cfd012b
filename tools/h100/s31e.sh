#!/usr/bin/env bash
# For session 31 (last call): the wgmma backward as it lands (no rotation, no bulk dQ: s31d measured
# neither helping), checked (test_cuda_backward, both bodies) and timed beside cuDNN with its
# same-run A/B: interior tiles unmasked (default) vs every tile masked (AVK_BWD_EDGE=0), and the
# mma.sync body. Then cuDNN's FP8 row on Hopper (O in e4m3, converted) beside attnvk's FP8 forward.
# (The interior-tile code it A/Bs was removed after this call: masking every tile ran faster.)
#     bash tools/h100/s31e.sh   (carry .gpu and build-h100; DEADLINE seconds, default 380)
set -u
out=${OUT:-/tmp/s31e-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-380}
test_backward wgmma ATTNVK_CUDA_BWD_WGMMA=1
test_backward mma ATTNVK_CUDA_BWD_WGMMA=0
export BENCH_TIMEOUT=150
f8="--api cuda --dtype fp8 --impl attnvk,cudnn --min-time 0.5"
[ "$(left)" -gt 40 ] && bench fp8-d128-n8k $f8 --batch 2 --heads 16 --head-dim 128 --seq 8192
[ "$(left)" -gt 40 ] && bench fp8-d128-n16k-causal $f8 --batch 1 --heads 16 --head-dim 128 --seq 16384 --causal
d128="--api cuda --dtype f16 --pass bwd --min-time 0.5 --batch 4 --heads 16 --head-dim 128 --seq 4096"
[ "$(left)" -gt 60 ] && bench bwd-d128-n4k $d128 --impl attnvk,cudnn
[ "$(left)" -gt 40 ] && ATTNVK_CUDA_DEFINES=-DAVK_BWD_EDGE=0 bench bwd-d128-n4k-edge0 $d128 --impl attnvk
[ "$(left)" -gt 40 ] && ATTNVK_CUDA_BWD_WGMMA=0 bench bwd-d128-n4k-mma $d128 --impl attnvk
[ "$(left)" -gt 50 ] && bench bwd-d64-n4k --api cuda --dtype f16 --pass bwd --min-time 0.5 --batch 4 --heads 32 --head-dim 64 --seq 4096 --impl attnvk,cudnn
[ "$(left)" -gt 50 ] && bench bwd-d128-n4k-causal $d128 --causal --impl attnvk,cudnn
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s31e.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s31e.tar.gz .
