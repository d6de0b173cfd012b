#!/usr/bin/env bash
# OpenCL on the H100 (device tool; carry .gpu and a staged build): the
# flash-kernel tests on NVIDIA's OpenCL, then the decode shapes of issue #12
# beside CUDA and cuDNN. Writes $OUT/opencl-*.txt.
set -u
out=${OUT:-/tmp/opencl-out}
build=${BUILD:-build}
mkdir -p "$out"
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=${ATTNVK_CACHE_DIR:-/tmp/attnvk-cache}
timeout ${TEST_TIMEOUT:-240} ./$build/tests/opencl/test_opencl_flash >"$out/opencl-test.txt" 2>&1
echo "test_opencl_flash exit $?: $(tail -1 "$out/opencl-test.txt")"
shape="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --min-time 0.1"
for args in "--seq-kv 16384 --api opencl,cuda --impl attnvk,cudnn" "--seq-kv 65536 --api opencl --impl attnvk --kv-dtype q8_0" \
  "--seq-kv 65536 --api opencl --impl attnvk --kv-dtype q4_0" "--seq-kv 65536 --api opencl --impl attnvk"; do
  timeout 100 ./$build/attnvk bench $shape $args -o csv 2>&1 | cut -d, -f1,3,7,17,18,19,20,21,22,32,35,38 >>"$out/opencl-bench.txt"
done
grep -v "^#" "$out/opencl-bench.txt" | head -30
