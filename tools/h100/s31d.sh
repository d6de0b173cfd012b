#!/usr/bin/env bash
# For session 31: the wgmma backward after s31c's breakdown (dQ atomics 1.5 ms of 5.0, the P/dS
# arithmetic 1.0): the key blocks' query walks rotated (AVK_BWD_ROTATE, on: concurrent key blocks add
# their dQ to different rows), interior tiles unmasked, and dQ as bulk reductions from shared memory
# (AVK_BWD_BULK_DQ=1, off by default until measured). test_cuda_backward for the default, bulk dQ and
# the mma.sync body, then the bench beside cuDNN.
# (Both switches were removed after this call: neither helped; bench/results/cuda-2026-12-06-s31.)
#     bash tools/h100/s31d.sh   (carry .gpu and build-h100; DEADLINE seconds, default 420)
set -u
out=${OUT:-/tmp/s31d-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-420}
test_backward wgmma ATTNVK_CUDA_BWD_WGMMA=1
test_backward bulk ATTNVK_CUDA_DEFINES=-DAVK_BWD_BULK_DQ=1
test_backward mma ATTNVK_CUDA_BWD_WGMMA=0
export BENCH_TIMEOUT=150
d128="--api cuda --dtype f16 --pass bwd --min-time 0.5 --batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--api cuda --dtype f16 --pass bwd --min-time 0.5 --batch 4 --heads 32 --head-dim 64 --seq 4096"
[ "$(left)" -gt 60 ] && bench bwd-d128-n4k $d128 --impl attnvk,cudnn
[ "$(left)" -gt 50 ] && ATTNVK_CUDA_DEFINES=-DAVK_BWD_ROTATE=0 bench bwd-d128-n4k-norot $d128 --impl attnvk
[ "$(left)" -gt 50 ] && ATTNVK_CUDA_DEFINES=-DAVK_BWD_BULK_DQ=1 bench bwd-d128-n4k-bulk $d128 --impl attnvk
[ "$(left)" -gt 50 ] && bench bwd-d64-n4k $d64 --impl attnvk,cudnn
[ "$(left)" -gt 50 ] && ATTNVK_CUDA_DEFINES=-DAVK_BWD_BULK_DQ=1 bench bwd-d64-n4k-bulk $d64 --impl attnvk
[ "$(left)" -gt 60 ] && bench bwd-d128-n4k-causal $d128 --causal --impl attnvk,cudnn
[ "$(left)" -gt 90 ] && bench bwd-d128-n16k --api cuda --dtype f16 --pass bwd --min-time 0.5 --batch 1 --heads 16 --head-dim 128 --seq 16384 --impl attnvk,cudnn
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s31d.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s31d.tar.gz .
