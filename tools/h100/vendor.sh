#!/usr/bin/env bash
# Vendor baselines on the H100 ("cudnn" fused SDPA, "cublas" unfused): the
# feature matrix against the CPU reference, the CLI path, and timings.
# Build here first (cmake -S . -B build-vendor -G Ninja -DATTNVK_VULKAN=OFF
# -DATTNVK_OPENCL=OFF -DATTNVK_HIP=OFF && ninja -C build-vendor), then on the
# GPU machine, from the repository root:  bash tools/h100/vendor.sh
# Full logs go to $OUT (or /tmp/vendor-out); a short table is printed last.
set -u
out=${OUT:-/tmp/vendor-out}
mkdir -p "$out"
build=${BUILD:-build-vendor}
source .gpu/gpu-env.sh
# host libraries the attnvk command links (cJSON, SQLite), appended so the machine's own win
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/$build/h100-libs
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache ATTNVK_TEST_SEED=${ATTNVK_TEST_SEED:-20261122}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.used --format=csv >"$out/gpu.txt" 2>&1
ls -l $(echo "$LD_LIBRARY_PATH" | tr ':' '\n' | sed 's|$|/libcudnn.so.9|') 2>/dev/null >"$out/libs.txt"
./"$build"/attnvk devices >"$out/devices.txt" 2>&1

# 1. timings of the large cases (with a sampled-rows check of each run)
timeout 150 ./"$build"/tests/cuda/test_cuda_vendor --perf-only >"$out/perf.log" 2>&1
echo "perf exit $?" >>"$out/perf.log"
# 2. correctness: host checks and the feature matrix (f16/bf16/f32) for both;
#    cuDNN's own error log in case a graph is refused
CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG="$out/cudnn-errors.txt" \
  timeout 240 ./"$build"/tests/cuda/test_cuda_vendor >"$out/test_cuda_vendor.log" 2>&1
echo "test_cuda_vendor exit $?" >>"$out/test_cuda_vendor.log"
[ -f "$out/cudnn-errors.txt" ] && tail -c 4000000 "$out/cudnn-errors.txt" >"$out/cudnn.tmp" && mv "$out/cudnn.tmp" "$out/cudnn-errors.txt"

# 3. the CLI path with --check: GQA bshd causal bf16 through both baselines
python3 - "$out" <<'EOF' >"$out/cli.log" 2>&1
import numpy as np, sys
rng = np.random.default_rng(7)
out = sys.argv[1]
for name, shape in (("q", (2, 300, 8, 128)), ("k", (2, 300, 2, 128)), ("v", (2, 300, 2, 128))):
    np.save(f"{out}/{name}.npy", rng.standard_normal(shape).astype(np.float32))
EOF
for impl in cudnn cublas; do
  ./"$build"/attnvk run --api cuda --impl $impl --dtype bf16 --layout bshd --causal --check \
    --q "$out/q.npy" --k "$out/k.npy" --v "$out/v.npy" --out "$out/o-$impl.npy" >>"$out/cli.log" 2>&1
  echo "attnvk run --impl $impl exit $?" >>"$out/cli.log"
done
rm -f "$out"/*.npy

echo "== devices"; cat "$out/devices.txt"
echo "== failures / skips"; grep -E "^(FAIL|skip)" "$out/test_cuda_vendor.log" | head -40
echo "== cli"; tail -4 "$out/cli.log"
echo "== implementations"; grep -E "^implementation" "$out/test_cuda_vendor.log"
echo "== timings"; grep -E " perf |exit" "$out/perf.log"
tail -2 "$out/test_cuda_vendor.log"
