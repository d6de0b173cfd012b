#!/usr/bin/env bash
# Session 30: D=64 causal on 2 warpgroups (the table's extra[1] = 128) beside the 192 rows it replaces
# (--tile 192x128) and cuDNN; a window and GQA at D=64 checked.
#     bash tools/h100/s30f.sh   (carry .gpu and build-h100)
set -u
out=${OUT:-/tmp/s30f-out}
source tools/h100/bench-lib.sh
m="--api cuda --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal --min-time 0.5"
bench d64-n4k-causal $m --impl attnvk,cudnn
bench d64-n4k-causal-192 $m --impl attnvk --tile 192x128
BENCH_TIMEOUT=40 bench d64-window-gqa --api cuda --dtype bf16 --batch 2 --heads 8 --kv-heads 2 --head-dim 64 --seq 3001 --window 500,100 --impl attnvk --min-time 0.2
cd "$out" && tar -czf /tmp/s30f.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s30f.tar.gz .
