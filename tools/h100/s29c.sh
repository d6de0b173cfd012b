#!/usr/bin/env bash
# Session 29, third call. #16: the FP8 forward through the producer's TMA ring (wgmma-ws-fp8, D=128's
# default now) against the cp.async body (wgmma-fp8), the f16 kernel and cuDNN, one run (B*N = 16k,
# H*D = 2048); `attnvk check --api cuda` (its FP8 cases included; dilated problems through the views,
# now CUDA's default). #20: the dilated suite's production range on CUDA through the views.
#     bash tools/h100/s29c.sh   (carry .gpu and build-h100; DEADLINE seconds, default 540)
set -u
out=${OUT:-/tmp/s29c-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-540}
left() { echo $((deadline - (SECONDS - start))); }
grid=("d128-n8k:--batch 2 --heads 16 --head-dim 128 --seq 8192"
      "d128-n8k-causal:--batch 2 --heads 16 --head-dim 128 --seq 8192 --causal"
      "d128-n4k:--batch 4 --heads 16 --head-dim 128 --seq 4096"
      "d128-n16k:--batch 1 --heads 16 --head-dim 128 --seq 16384")
for round in 1 2; do
  for g in "${grid[@]}"; do
    tag=${g%%:*}; args=${g#*:}
    [ "$(left)" -gt 330 ] || break
    bench $tag-f16-$round --api cuda --dtype f16 $args --impl attnvk,cudnn --min-time 0.5
    bench $tag-fp8ws-$round --api cuda --dtype fp8 $args --impl attnvk --min-time 0.5
    bench $tag-fp8-$round --api cuda --dtype fp8 $args --impl attnvk --variant wgmma-fp8 --min-time 0.5
  done
done
echo "== fp8 speed done at $((SECONDS - start)) s"
logged check-cuda 240 $avk check --api cuda --impl attnvk --dtype f16,bf16
grep -i "fp8\|dil" "$out/check-cuda.log" | cut -c1-180 | head -24
echo "== check done at $((SECONDS - start)) s"
if [ "$(left)" -gt 40 ]; then
  BENCH_TIMEOUT=$(( $(left) - 10 )) bench dilated --suite dilated --api cuda --impl attnvk -r 1 --warmup 1 > "$out/dilated.txt"
  echo "dilated (production): $(grep -c ' ok ' "$out/dilated.txt") ok, $(grep -vc ' ok \|^==' "$out/dilated.txt") other"
  grep -v ' ok \|^==' "$out/dilated.txt" | head -5
fi
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s29c.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s29c.tar.gz .
