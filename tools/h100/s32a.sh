#!/usr/bin/env bash
# For session 32 (first call): session 31's last kernel changes on a GPU (the wgmma backward under the
# spill budget: LSE converted once per tile, the walk back to (h, i0), dQ's job loop unrolled; none ran
# on a GPU): test_cuda_backward with wgmma and with mma.sync (300 s each: s31e's 150 s ran out on cold
# NVRTC compiles), `attnvk check --api cuda`, then the backward grid beside cuDNN and the bwd records'
# new backward_kernel.
#     bash tools/h100/s32a.sh   (carry .gpu and build-h100; DEADLINE seconds, default 500)
set -u
out=${OUT:-/tmp/s32a-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-500}
TEST_TIMEOUT=300 test_backward wgmma ATTNVK_CUDA_BWD_WGMMA=1
TEST_TIMEOUT=200 test_backward mma ATTNVK_CUDA_BWD_WGMMA=0
[ "$(left)" -gt 150 ] && logged check-cuda 140 $avk check --api cuda
export BENCH_TIMEOUT=150
b="--api cuda --dtype f16 --pass bwd --min-time 0.5 --impl attnvk,cudnn"
[ "$(left)" -gt 60 ] && bench bwd-d128-n4k $b --batch 4 --heads 16 --head-dim 128 --seq 4096
[ "$(left)" -gt 60 ] && bench bwd-d128-n4k-causal $b --batch 4 --heads 16 --head-dim 128 --seq 4096 --causal
[ "$(left)" -gt 60 ] && bench bwd-d64-n4k $b --batch 4 --heads 32 --head-dim 64 --seq 4096
[ -f "$out/json/bwd-d128-n4k.json" ] && python3 -c "
import json; [print(r['implementation'], r.get('backward_kernel')) for r in json.load(open('$out/json/bwd-d128-n4k.json'))['records']]"
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s32a.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s32a.tar.gz .
