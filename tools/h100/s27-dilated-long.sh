#!/usr/bin/env bash
# Issue #20, for the session after 26: the dilated suites' long range (256k-1M) now that Vulkan and
# OpenCL run dilation as strided views (session 26 measured the medium range: 40-132x over dense at
# 128k), on Vulkan, and CUDA's long range (per-element residues; only 1M ran, in session 19). Dense
# causal flash dominates the time (Vulkan 1M D=128: 18.5 s a run in session 21), so one run each.
#     bash tools/h100/s27-dilated-long.sh   (carry .gpu and build-h100; about 9 minutes)
set -u
out=${OUT:-/tmp/s27-out}
source tools/h100/bench-lib.sh
for api in ${APIS:-vulkan cuda}; do
  BENCH_TIMEOUT=${SUITE_TIMEOUT:-260} bench long-$api --suite dilated-long --api $api --impl attnvk -r 1 --warmup 1 > "$out/long-$api.txt"
  echo "long $api: $(grep -c ' ok ' "$out/long-$api.txt") ok"; grep -v ' ok \|^==' "$out/long-$api.txt" | head -3
done
$avk report "$out"/json/*.json --out "$out/long-report.html" > "$out/long-crossover.txt" 2>&1; cat "$out/long-crossover.txt" | cut -c1-220
cd "$out" && tar -czf long-json.tar.gz json && rm -rf json
