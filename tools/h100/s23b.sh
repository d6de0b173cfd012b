#!/usr/bin/env bash
# Session 23's second device call: wgmma-ws's tiles against wgmma's table pick and cuDNN at
# D = 64, 128, 192/128 and 256 (f16 unless named; B*N = 16k, H*D = 2048), to pick the table's rows.
#     bash tools/h100/s23b.sh   (carry .gpu and build-h100; OUT set by the tool)
set -u
out=${OUT:-/tmp/s23b-out}
source tools/h100/bench-lib.sh
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d256="--batch 4 --heads 8 --head-dim 256 --seq 4096"
t="--api cuda --dtype f16 --min-time 1"
bench d64 $t $d64 --impl attnvk,cudnn
for tile in 128x128 192x128 128x256 192x64; do bench d64-ws-$tile $t $d64 --impl attnvk --variant wgmma-ws --tile $tile; done
bench d64-causal $t $d64 --causal --impl attnvk,cudnn
for tile in 128x128 192x128; do bench d64-causal-ws-$tile $t $d64 --causal --impl attnvk --variant wgmma-ws --tile $tile; done
for tile in 128x64 192x128 64x128 128x256; do bench d128-ws-$tile $t $d128 --impl attnvk --variant wgmma-ws --tile $tile; done
bench d128-bf16 --api cuda --dtype bf16 --min-time 1 $d128 --impl attnvk,cudnn
bench d128-bf16-ws --api cuda --dtype bf16 --min-time 1 $d128 --impl attnvk --variant wgmma-ws
bench d256 $t $d256 --impl attnvk,cudnn
for tile in 128x64 64x128 128x128; do bench d256-ws-$tile $t $d256 --impl attnvk --variant wgmma-ws --tile $tile; done
bench d256-causal $t $d256 --causal --impl attnvk,cudnn
bench d256-causal-ws $t $d256 --causal --impl attnvk --variant wgmma-ws
mla="--batch 4 --heads 16 --head-dim 192 --head-dim-v 128 --seq 4096"
bench mla $t $mla --impl attnvk,cudnn
for tile in 128x128 128x64; do bench mla-ws-$tile $t $mla --impl attnvk --variant wgmma-ws --tile $tile; done
cd "$out" && tar -czf json.tar.gz json && rm -rf json
