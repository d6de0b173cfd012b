#!/usr/bin/env bash
# For session 31 (first call): session 30's unrun checks.
# 1. cuDNN's FP8 SDPA beside attnvk's FP8 forward (cudnn_sdpa_fp8.c: built in session 30, never run on
#    a GPU): D=128 N=8k and N=16k causal, then an odd GQA shape; the bench checks every record.
# 2. D=64 causal on 2 warpgroups (the table's extra[1] = 128) beside the 192 rows it replaced, cuDNN in
#    the same run (s30f's content).
# 3. #20's OpenCL block layout at 10% (78% of dense in s30a/s30d) with 128-row work-groups: fewer
#    work-groups share each visible tile's fixed costs (Q load, prologue, O store).
#     bash tools/h100/s31a.sh   (carry .gpu and build-h100; DEADLINE seconds, default 300)
set -u
out=${OUT:-/tmp/s31a-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-300}
left() { echo $((deadline - (SECONDS - start))); }
f8="--api cuda --dtype fp8 --impl attnvk,cudnn --min-time 0.5"
bench fp8-d128-n8k $f8 --batch 2 --heads 16 --head-dim 128 --seq 8192
bench fp8-d128-n16k-causal $f8 --batch 1 --heads 16 --head-dim 128 --seq 16384 --causal
BENCH_TIMEOUT=40 bench fp8-odd-gqa $f8 --batch 1 --heads 8 --kv-heads 2 --head-dim 128 --seq 2500
bench f16-d128-n8k --api cuda --dtype f16 --impl attnvk,cudnn --min-time 0.5 --batch 2 --heads 16 --head-dim 128 --seq 8192
m="--api cuda --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal --min-time 0.5"
[ "$(left)" -gt 40 ] && bench d64-n4k-causal $m --impl attnvk,cudnn
[ "$(left)" -gt 30 ] && bench d64-n4k-causal-192 $m --impl attnvk --tile 192x128
[ "$(left)" -gt 20 ] && BENCH_TIMEOUT=40 bench d64-window-gqa --api cuda --dtype bf16 --batch 2 --heads 8 --kv-heads 2 --head-dim 64 --seq 3001 --window 500,100 --impl attnvk --min-time 0.2
sp="--api opencl --impl attnvk --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --min-time 1"
[ "$(left)" -gt 60 ] && bench ocl-dense $sp
[ "$(left)" -gt 40 ] && bench ocl-random0.1 $sp --block-layout random:0.1 --block-size 128x128
[ "$(left)" -gt 40 ] && bench ocl-random0.1-128x64 $sp --block-layout random:0.1 --block-size 128x128 --tile 128x64
[ "$(left)" -gt 40 ] && bench ocl-dense-128x64 $sp --tile 128x64
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s31a.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s31a.tar.gz .
