#!/usr/bin/env bash
# Session 38's last call (#16): D=64 on 192x96 tiles by default (ptxas: no spills, against 108
# bytes at 192x128). Odd shapes through it checked against float64 (causal, Nq != Nk, a window
# (its 128x128), GQA, top-left, bf16, softcap and ALiBi, sinks); `attnvk check --api cuda`; then
# the D=64 grid beside cuDNN, the default against --tile 192x128.
#     DEADLINE=300 bash tools/h100/s38g.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s38g-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
c="--api cuda --impl attnvk --head-dim 64 --min-time 0.05"
bench odd-1000-causal $c --dtype f16 --batch 2 --heads 3 --seq 1000 --causal
bench odd-1000 $c --dtype f16 --batch 2 --heads 3 --seq 1000
bench odd-4133-causal $c --dtype bf16 --batch 1 --heads 4 --seq 4133 --causal
bench odd-kv-causal $c --dtype f16 --batch 1 --heads 4 --seq 700 --seq-kv 2900 --causal
bench odd-kv $c --dtype bf16 --batch 1 --heads 4 --seq 2900 --seq-kv 700
bench odd-win $c --dtype f16 --batch 1 --heads 4 --seq 3000 --causal --window 300,0
bench odd-gqa $c --dtype f16 --batch 1 --heads 8 --kv-heads 2 --seq 2222 --causal
bench odd-topleft $c --dtype f16 --batch 1 --heads 4 --seq 1500 --seq-kv 2000 --causal --causal-align top-left
bench odd-softcap-alibi $c --dtype f16 --batch 1 --heads 4 --seq 1111 --softcap 30 --alibi
bench odd-sinks $c --dtype bf16 --batch 1 --heads 4 --seq 1234 --causal --sinks random
echo "== odd shapes done at $((SECONDS - start)) s"
logged check-cuda 120 $AVK check --api cuda --impl attnvk --dtype f16
echo "== check done at $((SECONDS - start)) s"
cases=("d64-n4k:--batch 4 --heads 32 --seq 4096"
       "d64-n4k-causal:--batch 4 --heads 32 --seq 4096 --causal"
       "d64-n8k-causal:--batch 2 --heads 32 --seq 8192 --causal"
       "d64-n16k:--batch 1 --heads 32 --seq 16384"
       "d64-n16k-causal:--batch 1 --heads 32 --seq 16384 --causal")
for g in "${cases[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  [ "$(left)" -gt 15 ] || break
  m="--api cuda --dtype f16 --head-dim 64 $args --min-time 0.4"
  bench $tag $m --impl attnvk,cudnn
  bench $tag-bc128 $m --impl attnvk --tile 192x128
done
echo "== done at $((SECONDS - start)) s"
pack_out s38g
