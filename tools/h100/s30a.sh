#!/usr/bin/env bash
# Session 30, #20's closing run on the current code:
# 1. test_sparse on every API (staged beside attnvk: STAGE="attnvk tests/test_sparse");
# 2. block layouts at N=32k (B=1, H=16, D=128, f16, 128x128 blocks) at 5/10/20% density beside the
#    dense kernel of the same call, on OpenCL, Vulkan and CUDA (CUDA's dense default is wgmma-ws now);
# 3. the dilated production range (1k-16k) on Vulkan and OpenCL with the strided views (session 26),
#    and the crossover report.
#     bash tools/h100/s30a.sh   (carry .gpu and build-h100; DEADLINE seconds, default 570)
set -u
out=${OUT:-/tmp/s30a-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-570}
left() { echo $((deadline - (SECONDS - start))); }
build=$(dirname "$avk")
[ -x $build/tests/test_sparse ] && logged test-sparse 150 $build/tests/test_sparse
sp="--impl attnvk --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --min-time 1"
for api in cuda vulkan opencl; do
  bench sparse-$api-dense --api $api $sp
  for d in 0.1 0.05 0.2; do bench sparse-$api-random$d --api $api $sp --block-layout random:$d --block-size 128x128; done
done
echo "== sparse done at $((SECONDS - start)) s"
for api in vulkan opencl; do
  [ "$(left)" -gt 40 ] || { echo "skip production $api: $(left) s left"; continue; }
  t0=$SECONDS
  BENCH_TIMEOUT=$(( $(left) / 2 + 20 )) bench production-$api --suite dilated --api $api --impl attnvk > "$out/production-$api.txt"
  echo "production $api: $(grep -c ' ok ' "$out/production-$api.txt") ok, $(grep -vc ' ok \|^==' "$out/production-$api.txt") other in $((SECONDS - t0)) s"
  grep -v ' ok \|^==' "$out/production-$api.txt" | head -3
done
ls "$out"/json/production-*.json > /dev/null 2>&1 &&
  $avk report "$out"/json/production-*.json --out "$out/production-report.html" > "$out/production-crossover.txt" 2>&1
head -30 "$out/production-crossover.txt" 2>/dev/null
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s30a.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s30a.tar.gz .
