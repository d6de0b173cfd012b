#!/usr/bin/env bash
# Session 38's fourth call (#16). (1) The per-CTA cost: Nq = 4096 against few keys (Nk = 128,
# 512, 2048), attnvk (D=64: 192 rows; D=128: 128) beside cuDNN; the intercept of time against
# tiles is what a CTA costs besides its tiles. (2) The new default for plain causal D=64 (192 rows,
# blocks counted from the end) beside cuDNN at N=4k, 8k, 16k, and D=128 causal at 4k, 16k.
#     DEADLINE=300 bash tools/h100/s38d.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s38d-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
for nk in 128 512 2048; do
  bench probe-d64-nk$nk --api cuda --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --seq-kv $nk --impl attnvk,cudnn --min-time 0.3
  bench probe-d128-nk$nk --api cuda --dtype f16 --batch 4 --heads 16 --head-dim 128 --seq 4096 --seq-kv $nk --impl attnvk,cudnn --min-time 0.3
done
echo "== probes done at $((SECONDS - start)) s"
cases=("d64-n4k-causal:--batch 4 --heads 32 --head-dim 64 --seq 4096 --causal"
       "d64-n8k-causal:--batch 2 --heads 32 --head-dim 64 --seq 8192 --causal"
       "d64-n16k-causal:--batch 1 --heads 32 --head-dim 64 --seq 16384 --causal"
       "d128-n4k-causal:--batch 4 --heads 16 --head-dim 128 --seq 4096 --causal"
       "d128-n16k-causal:--batch 1 --heads 16 --head-dim 128 --seq 16384 --causal")
for g in "${cases[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  bench $tag --api cuda --dtype f16 $args --min-time 0.5 --impl attnvk,cudnn
done
echo "== done at $((SECONDS - start)) s"
pack_out s38d
