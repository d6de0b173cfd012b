#!/usr/bin/env bash
# Session 30, #16: FlashAttention-3's ping-pong (-DAVK_PINGPONG=1: the consumer warpgroups take turns
# issuing MMAs) on top of the intra-warpgroup overlap (-DAVK_WG_OVERLAP=1, V produced one tile behind K
# now) and the split release (-DAVK_SPLIT_RELEASE=1), and the turns around S alone (split + ping-pong
# without the overlap), one change at a time, against the default
# schedule; the binary before this session's kernel change (build-h100, the default's producer loop as
# measured) runs beside it. Odd shapes are checked first with everything on.
#     bash tools/h100/s30b.sh   (carry .gpu, build-h100 and build-h100b; DEADLINE seconds, default 570)
set -u
out=${OUT:-/tmp/s30b-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-570}
left() { echo $((deadline - (SECONDS - start))); }
old=./build-h100/attnvk new=./build-h100b/attnvk
split="-DAVK_SPLIT_RELEASE=1" spp="-DAVK_SPLIT_RELEASE=1 -DAVK_PINGPONG=1" ov="-DAVK_WG_OVERLAP=1 -DAVK_SPLIT_RELEASE=1" pp="-DAVK_WG_OVERLAP=1 -DAVK_SPLIT_RELEASE=1 -DAVK_PINGPONG=1"
c="--api cuda --impl attnvk --min-time 0.2"
avk=$new
export ATTNVK_CUDA_DEFINES="$pp"
BENCH_TIMEOUT=40 bench odd-f16-gqa $c --dtype f16 --batch 1 --heads 4 --kv-heads 2 --head-dim 128 --seq 1000 --causal
BENCH_TIMEOUT=40 bench odd-bf16-window $c --dtype bf16 --batch 2 --heads 4 --kv-heads 1 --head-dim 128 --seq 3001 --window 300,200
BENCH_TIMEOUT=40 bench odd-f16-split $c --dtype f16 --batch 1 --heads 4 --head-dim 128 --seq 5000 --split-kv 3 --causal
BENCH_TIMEOUT=40 bench odd-d64 $c --dtype f16 --batch 1 --heads 4 --head-dim 64 --seq 3000 --causal
BENCH_TIMEOUT=40 bench odd-fp8-window $c --dtype fp8 --batch 1 --heads 4 --head-dim 128 --seq 4096 --causal --window 1000,0
BENCH_TIMEOUT=40 bench odd-fp8-gqa $c --dtype fp8 --batch 1 --heads 8 --kv-heads 2 --head-dim 128 --seq 2500
export ATTNVK_CUDA_DEFINES="$spp" # the turns around S alone
BENCH_TIMEOUT=40 bench odd-spp-f16-gqa $c --dtype f16 --batch 1 --heads 4 --kv-heads 2 --head-dim 128 --seq 1000 --causal
BENCH_TIMEOUT=40 bench odd-spp-bf16-window $c --dtype bf16 --batch 2 --heads 4 --kv-heads 1 --head-dim 128 --seq 3001 --window 300,200
echo "== checks done at $((SECONDS - start)) s"
grid=("d128-n8k:--batch 2 --heads 16 --head-dim 128 --seq 8192"
      "d128-n16k-causal:--batch 1 --heads 16 --head-dim 128 --seq 16384 --causal"
      "d64-n4k:--batch 4 --heads 32 --head-dim 64 --seq 4096")
for g in "${grid[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  [ "$(left)" -gt 100 ] || { echo "skip $tag: $(left) s left"; break; }
  m="--api cuda --dtype f16 $args --min-time 0.5"
  avk=$old ATTNVK_CUDA_DEFINES= bench $tag-f16-before $m --impl attnvk,cudnn
  avk=$new
  ATTNVK_CUDA_DEFINES= bench $tag-f16 $m --impl attnvk
  ATTNVK_CUDA_DEFINES="$split" bench $tag-f16-split $m --impl attnvk
  ATTNVK_CUDA_DEFINES="$spp" bench $tag-f16-spp $m --impl attnvk
  ATTNVK_CUDA_DEFINES="$ov" bench $tag-f16-ov $m --impl attnvk
  ATTNVK_CUDA_DEFINES="$pp" bench $tag-f16-pp $m --impl attnvk
  [ "${tag#d64}" = "$tag" ] || continue
  m="--api cuda --dtype fp8 $args --min-time 0.5 --impl attnvk"
  ATTNVK_CUDA_DEFINES= bench $tag-fp8 $m
  ATTNVK_CUDA_DEFINES="$spp" bench $tag-fp8-spp $m
  ATTNVK_CUDA_DEFINES="$ov" bench $tag-fp8-ov $m
  ATTNVK_CUDA_DEFINES="$pp" bench $tag-fp8-pp $m
done
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s30b.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s30b.tar.gz .
