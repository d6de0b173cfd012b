#!/usr/bin/env bash
# The whole bench on the H100: every API's attnvk kernel beside cuDNN, cuBLAS and
# CLBlast, on the FlashAttention papers' grid, plus the correctness sweep.
# Here first: bash tools/h100/prepare.sh && bash tools/build.sh build
# Then on the GPU machine (device tool, carry .gpu and build):
#     bash tools/h100/bench.sh [grid|grid32|check|f32|tests|all]   (default all; a part or two per call fits 10 minutes)
# Writes $OUT/h100-fa-grid.json (f16), $OUT/h100-fa-grid-f32.json (f32, OpenCL vs
# CLBlast), $OUT/check.log and logs; prints the tables last.
set -u
out=${OUT:-/tmp/bench-out}
build=${BUILD:-build}
mkdir -p "$out"
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
avk=./$build/attnvk
part=${1:-all}
want() { [ "$part" = all ] || [ "$part" = "$1" ]; }
# -o json prints the whole document on stdout too: show a short table of it instead
summary() {
  python3 - "$1" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["records"]:
    rate = f"{r['tflops']:8.1f} TFLOP/s {r['gbytes_per_s']:8.1f} GB/s" if r["status"] == "ok" else r["reason"][:60]
    print(f"{r['case']['name']:36s} {r['implementation']:8s} {r['api']:7s} {r['status']:8s} {rate}")
PY
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$out/gpu.txt" 2>&1
$avk devices >"$out/devices.txt" 2>&1
$avk devices --json >"$out/devices.json" 2>&1

# correctness on every API and implementation (no timing)
if want check; then
  timeout 400 $avk check --api cuda,vulkan,opencl >"$out/check.log" 2>&1
  echo "check exit $?" >>"$out/check.log"
  grep -E "^FAIL|passed" "$out/check.log" | tail -20
fi

# f16 grid: attnvk on cuda/vulkan/opencl with cuDNN and cuBLAS beside them (one device group)
if want grid; then
  timeout 520 $avk bench --suite fa-grid --api cuda,vulkan,opencl --min-time ${MIN_TIME:-0.3} \
    -o json --out "$out/h100-fa-grid.json" >/dev/null 2>"$out/fa-grid.err"
  echo "fa-grid exit $?" >>"$out/fa-grid.err"
  summary "$out/h100-fa-grid.json"; tail -3 "$out/fa-grid.err"
fi

# every API's GPU correctness tests (they skip without a GPU elsewhere; test_cuda_features
# compiles ~100 cubins cold: about 400 s)
if want tests; then
  python=$(command -v python3)
  for t in cuda/test_cuda_features cuda/test_cuda_vendor vulkan/test_vulkan opencl/test_opencl_flash opencl/test_opencl_clblast; do
    timeout 480 ./$build/tests/$t >"$out/$(basename $t).log" 2>&1
    echo "$t rc=$?: $(tail -1 "$out/$(basename $t).log")"
  done
  ATTNVK=./$build/attnvk PYTHON=$python timeout 120 bash tests/opencl/test_opencl_cli.sh /tmp/cl-cli >"$out/opencl_cli.log" 2>&1
  echo "opencl cli rc=$?: $(tail -1 "$out/opencl_cli.log")"
fi

# the same grid in f32: CLBlast's unfused baseline beside every API (cuDNN has no f32)
if want grid32; then
  timeout 400 $avk bench --suite fa-grid --dtype f32 --api cuda,vulkan,opencl --min-time ${MIN_TIME:-0.2} \
    -o json --out "$out/h100-fa-grid-f32.json" >/dev/null 2>"$out/fa-grid-f32.err"
  echo "fa-grid f32 exit $?" >>"$out/fa-grid-f32.err"
  summary "$out/h100-fa-grid-f32.json" | grep -E "d128-n4096|d128-n8192-b2-h16 "; tail -3 "$out/fa-grid-f32.err"
fi

# f32: OpenCL's f32 kernel against CLBlast's unfused baseline (the f32 rows of issue 5)
if want f32; then
  timeout 300 $avk bench --api opencl,cuda --dtype f32 --batch 2 --heads 16 --seq 4k,8k --head-dim 128 \
    --min-time ${MIN_TIME:-0.3} -o json --out "$out/h100-f32.json" >/dev/null 2>"$out/f32.err"
  echo "f32 exit $?" >>"$out/f32.err"
  summary "$out/h100-f32.json"; tail -3 "$out/f32.err"
fi
true
