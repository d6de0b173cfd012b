#!/usr/bin/env bash
# Session 38's third call (#16, D=64 causal). (1) Odd causal shapes through 192-row tiles, checked
# against float64: the warpgroup's own tiles (AVK_OWN_TILES: past its diagonal it only takes its
# ping-pong turns) with the blocks counted from the last row. (2) D=64 causal at N=4k and 16k:
# the default (128x128) beside cuDNN, 192x128 with and without its own tiles, 128x64 at one CTA an
# SM and at two (AVK_MINB=2; the overlap on and off), and the non-causal D=64 under the same.
#     DEADLINE=420 bash tools/h100/s38c.sh   (carry .gpu and build-h100b)
# (AVK_OWN_TILES measured slower and removed after this call: its -192 and -192-all runs are now alike.)
set -u
out=${OUT:-/tmp/s38c-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
c="--api cuda --impl attnvk --dtype f16 --head-dim 64 --min-time 0.05 --tile 192x128"
bench odd-1000 $c --batch 2 --heads 3 --seq 1000 --causal
bench odd-4133 $c --batch 1 --heads 4 --seq 4133 --causal
bench odd-kv $c --batch 1 --heads 4 --seq 700 --seq-kv 2900 --causal
bench odd-win $c --batch 1 --heads 4 --seq 3000 --causal --window 300,0
bench odd-gqa $c --batch 1 --heads 8 --kv-heads 2 --seq 2222 --causal
bench odd-topleft $c --batch 1 --heads 4 --seq 1500 --seq-kv 2000 --causal --causal-align top-left
echo "== odd shapes done at $((SECONDS - start)) s"
cases=("d64-n4k-causal:--batch 4 --heads 32 --head-dim 64 --seq 4096 --causal"
       "d64-n16k-causal:--batch 1 --heads 32 --head-dim 64 --seq 16384 --causal"
       "d64-n4k:--batch 4 --heads 32 --head-dim 64 --seq 4096")
m2="-DAVK_MINB=2"
for g in "${cases[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  m="--api cuda --dtype f16 $args --min-time 0.5"
  bench $tag $m --impl attnvk,cudnn
  bench $tag-192 $m --impl attnvk --tile 192x128
  ATTNVK_CUDA_DEFINES="-DAVK_OWN_TILES=0" bench $tag-192-all $m --impl attnvk --tile 192x128
  bench $tag-128x64 $m --impl attnvk --tile 128x64
  ATTNVK_CUDA_DEFINES="$m2 -DAVK_WG_OVERLAP=0" bench $tag-128x64-2cta $m --impl attnvk --tile 128x64
  ATTNVK_CUDA_DEFINES="$m2" bench $tag-128x64-2cta-ov $m --impl attnvk --tile 128x64
done
echo "== done at $((SECONDS - start)) s"
pack_out s38c
