#!/usr/bin/env bash
# Session 21 (#20): the dilated suites on Vulkan and OpenCL, beside dense causal flash of the same
# shapes, and the sparse/dense crossover report.
#     SUITES="dilated dilated-medium" APIS="vulkan opencl" bash tools/h100/s21-dilated.sh
#     SUITES=dilated-long APIS=vulkan EXTRA="-r 1 --warmup 1" bash tools/h100/s21-dilated.sh
# (carry .gpu and build-h100; OUT set by the device tool)
set -u
out=${OUT:-/tmp/s21-dilated}
source tools/h100/bench-lib.sh
for s in ${SUITES:-dilated dilated-medium}; do
  for api in ${APIS:-vulkan opencl}; do
    BENCH_TIMEOUT=${SUITE_TIMEOUT:-270} bench $s-$api --suite $s --api $api --impl attnvk ${EXTRA:-} > "$out/$s-$api.txt"
    echo "$s $api: $(grep -c ' ok ' "$out/$s-$api.txt") ok, $(grep -vc ' ok \|^==' "$out/$s-$api.txt") other; $(head -1 "$out/$s-$api.txt")"
    grep -v ' ok \|^==' "$out/$s-$api.txt" | head -3
  done
done
$avk report "$out"/json/*.json --out "$out/dilated-report.html" > "$out/crossover.txt" 2>&1
echo "report rc=$?"; cat "$out/crossover.txt" | head -40
cd "$out" && tar -czf dilated-json.tar.gz json && rm -rf json
