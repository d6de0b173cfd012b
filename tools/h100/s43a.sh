#!/usr/bin/env bash
# Session 43: #13's OpenCL mask with its tiles copied into local memory beside K and V
# (AVK_MASK_LOCAL, the default from this session) against each lane's loads from global memory
# (ATTNVK_OPENCL_MASK_LOCAL=0), at D=128 N=8k causal f16 (B=2, H=16) two rounds, D=64, not causal,
# an Nk not a multiple of 8 (the fallback); then `attnvk check --api opencl` (f16, both ways).
#     DEADLINE=300 bash tools/h100/s43a.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s43a-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
s8="--api opencl --dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --causal --impl attnvk --min-time 0.3"
d64="--api opencl --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal --impl attnvk --min-time 0.3"
for round in 1 2; do
  bench plain-$round $s8
  bench mask-local-$round $s8 --mask random
  ATTNVK_OPENCL_MASK_LOCAL=0 bench mask-global-$round $s8 --mask random
done
bench d64-plain $d64
bench d64-mask-local $d64 --mask random
ATTNVK_OPENCL_MASK_LOCAL=0 bench d64-mask-global $d64 --mask random
bench nc-mask-local ${s8/--causal/} --mask random
ATTNVK_OPENCL_MASK_LOCAL=0 bench nc-mask-global ${s8/--causal/} --mask random
bench alibi-mask-local $s8 --mask random --alibi
for n in 1000 1001; do
  bench odd-$n --api opencl --dtype f16 --batch 1 --heads 3 --head-dim 128 --seq $n --causal \
    --mask random --alibi --impl attnvk --min-time 0.05
done
logged check-local $(( $(left) / 2 )) $AVK check --api opencl --impl attnvk --dtype f16
ATTNVK_OPENCL_MASK_LOCAL=0 logged check-global $(( $(left) - 5 )) $AVK check --api opencl --impl attnvk --dtype f16
echo "== s43a done at $((SECONDS - start)) s"
pack_out s43a
