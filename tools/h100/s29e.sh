#!/usr/bin/env bash
# #16: the producer ring's K slot freed once S has landed (ATTNVK_CUDA_DEFINES=-DAVK_SPLIT_RELEASE=1)
# against one release after P V (the default), and with the intra-warpgroup overlap on top
# (-DAVK_WG_OVERLAP=1); f16 (wgmma-ws) and fp8 (wgmma-ws-fp8), cuDNN in the same run; odd shapes
# checked first, then `attnvk check --api cuda` with the split release.
# Session 29 ran it once with the split release's first form as the default: the first bench hung
# (the V release re-waited K's full barrier, which K's next load could have moved two phases on;
# fixed in the kernel since, unmeasured). Run it again next.
#     bash tools/h100/s29e.sh   (carry .gpu and build-h100; DEADLINE seconds, default 230)
set -u
out=${OUT:-/tmp/s29e-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-230}
left() { echo $((deadline - (SECONDS - start))); }
c="--api cuda --impl attnvk --min-time 0.2"
export ATTNVK_CUDA_DEFINES=-DAVK_SPLIT_RELEASE=1
BENCH_TIMEOUT=40 bench odd-f16 $c --dtype f16 --batch 1 --heads 4 --kv-heads 2 --head-dim 128 --seq 1000 --causal
BENCH_TIMEOUT=40 bench odd-f16-d64-split $c --dtype f16 --batch 1 --heads 4 --head-dim 64 --seq 3000 --split-kv 3
BENCH_TIMEOUT=40 bench odd-fp8-window $c --dtype fp8 --batch 1 --heads 4 --head-dim 128 --seq 4096 --causal --window 1000,0
grid=("d128-n8k:--batch 2 --heads 16 --head-dim 128 --seq 8192"
      "d128-n16k-causal:--batch 1 --heads 16 --head-dim 128 --seq 16384 --causal"
      "d64-n4k:--batch 4 --heads 32 --head-dim 64 --seq 4096")
for g in "${grid[@]}"; do
  tag=${g%%:*}; args=${g#*:}
  [ "$(left)" -gt 140 ] || break
  ATTNVK_CUDA_DEFINES= bench $tag-f16 --api cuda --dtype f16 $args --impl attnvk,cudnn --min-time 0.5
  bench $tag-f16-split --api cuda --dtype f16 $args --impl attnvk --min-time 0.5
  ATTNVK_CUDA_DEFINES="-DAVK_SPLIT_RELEASE=1 -DAVK_WG_OVERLAP=1" bench $tag-f16-ov --api cuda --dtype f16 $args --impl attnvk --min-time 0.5
  [ "$tag" = d64-n4k ] && continue
  ATTNVK_CUDA_DEFINES= bench $tag-fp8 --api cuda --dtype fp8 $args --impl attnvk --min-time 0.5
  bench $tag-fp8-split --api cuda --dtype fp8 $args --impl attnvk --min-time 0.5
  ATTNVK_CUDA_DEFINES="-DAVK_SPLIT_RELEASE=1 -DAVK_WG_OVERLAP=1" bench $tag-fp8-ov --api cuda --dtype fp8 $args --impl attnvk --min-time 0.5
done
echo "== speed done at $((SECONDS - start)) s"
[ "$(left)" -gt 60 ] && logged check-cuda $(( $(left) - 5 )) $avk check --api cuda --impl attnvk --dtype f16,bf16
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s29e.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s29e.tar.gz .
