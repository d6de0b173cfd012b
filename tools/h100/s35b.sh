#!/usr/bin/env bash
# Session 35's second call (no device came; for the next session): the wgmma backward's default
# (s35a's kernel) against P^T computed while dP^T's MMAs run (dV issued before dS^T,
# AVK_BWD_SPLIT=1) and dQ's blocks added a warp's 4 KiB at a time (AVK_BWD_DQ_WARP=1), each and
# both (ATTNVK_CUDA_DEFINES), beside cuDNN; where the time goes (AVK_BWD_X); test_cuda_backward
# under both (run it before making them the default).
#     DEADLINE=400 bash tools/h100/s35b.sh   (carry .gpu and build-h100b)
set -u
deadline=400
out=${OUT:-/tmp/s35b-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
b="--api cuda --dtype f16 --pass bwd --min-time 0.3"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
defs() { local tag=$1 d=$2; shift 2; ATTNVK_CUDA_DEFINES="$d" bench "$tag" "$@"; }
median() { python3 -c "
import json,sys; r=json.load(open(sys.argv[1]))['records'][0]; print(sys.argv[2], r['status'], (r.get('stats') or {}).get('median_ms'))" "$out/json/$1.json" "$1"; }
bench d128 $b --impl attnvk,cudnn $d128
both="-DAVK_BWD_SPLIT=1 -DAVK_BWD_DQ_WARP=1"
defs d128-split "-DAVK_BWD_SPLIT=1" $b --impl attnvk $d128
defs d128-warp "-DAVK_BWD_DQ_WARP=1" $b --impl attnvk $d128
defs d128-both "$both" $b --impl attnvk $d128
bench d64 $b --impl attnvk,cudnn $d64
defs d64-both "$both" $b --impl attnvk $d64
bench d128-causal $b --impl attnvk,cudnn $d128 --causal
defs d128-causal-both "$both" $b --impl attnvk $d128 --causal
# where the time goes (wrong gradients, timing only): 2 no reductions, 8 no staging stores,
# 16 no fence/barrier before them, 4 no P/dS arithmetic, 1 no dQ phase
for x in 2 4 10; do
  [ "$(left)" -gt 130 ] && defs d128-x$x "$both -DAVK_BWD_X=$x" $b --impl attnvk $d128 > /dev/null && median d128-x$x
done
[ "$(left)" -gt 90 ] && TEST_TIMEOUT=$(( $(left) - 15 )) test_backward both ATTNVK_CUDA_DEFINES="$both"
bwd_params
echo "== done at $((SECONDS - start)) s"
pack_out s35b
