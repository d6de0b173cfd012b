#!/usr/bin/env bash
# Session 21's closing device calls (issues #12, #20), in two parts under the 600 s cap:
#   PART=a: test_sparse on every API, sparse tile skipping timed (dense beside 10% random blocks),
#           the decode suite and the models suite's decode presets beside cuDNN;
#   PART=b: Nq 1/4/16, quantized against f16, paged against contiguous, and two CUDA A/Bs.
#     PART=a bash tools/h100/s21-final.sh   (carry .gpu and build-h100; OUT set by the device tool)
set -u
out=${OUT:-/tmp/s21-out}
mkdir -p "$out/json"
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
avk=./build-h100/attnvk
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
summary() { python3 - "$1" <<'PY'
import json, sys
try:
    recs = json.load(open(sys.argv[1]))["records"]
except Exception as e:
    print("  (no JSON: %s)" % e); sys.exit()
for r in recs:
    rate = (f"{r['gbytes_per_s']:6.0f} GB/s {r['tflops']:6.1f} TFLOP/s {r['stats']['median_ms']:8.3f} ms" if r["status"] == "ok"
            else r.get("reason", "")[:70])
    ck = (r.get("check") or {}).get("rel_l2")
    print(f"{r['case']['name'][-44:]:44s} {r['api']:6s} {r['implementation']:6s} {r['status']:5s} {rate} {r.get('variant') or ''} split={r.get('split_kv')} check={ck}")
PY
}
bench() { # tag, then bench arguments
  local tag=$1; shift
  timeout ${BENCH_TIMEOUT:-90} $avk bench "$@" -o json --out "$out/json/$tag.json" > /dev/null 2> "$out/json/$tag.err"
  echo "== $tag rc=$?"; summary "$out/json/$tag.json"
}
shape="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1"
if [ "${PART:-a}" = a ]; then
  $avk devices > "$out/devices.txt" 2>&1; grep -iE "bandwidth|GB/s" "$out/devices.txt" | head -6
  ( time timeout 200 ./build-h100/tests/test_sparse ) > "$out/test-sparse.log" 2>&1
  echo "test_sparse rc=$?: $(grep -E 'passed' "$out/test-sparse.log")"; grep -E "^FAIL" "$out/test-sparse.log" | head -8 | cut -c1-200
  sp="--impl attnvk --dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --min-time 1"
  for api in opencl vulkan cuda; do
    bench sparse-$api-dense --api $api $sp
    bench sparse-$api-random0.1 --api $api $sp --block-layout random:0.1 --block-size 128x128
  done
  BENCH_TIMEOUT=180 bench decode-suite --suite decode --api cuda,opencl,vulkan --impl attnvk,cudnn
  BENCH_TIMEOUT=180 bench models-decode --suite models --case decode --api cuda,opencl,vulkan --impl attnvk,cudnn
else
  for nq in 1 4 16; do bench nq$nq-32k --api cuda,opencl,vulkan ${shape/--seq 1/--seq $nq} --seq-kv 32768 --impl attnvk,cudnn; done
  for f in dtype q8_0 q4_0 fp8; do bench quant-$f-64k --api cuda,opencl,vulkan $shape --seq-kv 65536 --impl attnvk --kv-dtype $f; done
  for f in dtype q8_0 q4_0; do bench paged-$f-32k --api cuda,opencl,vulkan $shape --seq-kv 32768 --impl attnvk --kv-dtype $f --page-size 16; done
  bench cu-64k-tile16x64 --api cuda $shape --seq-kv 65536 --impl attnvk --tile 16x64
  ATTNVK_CUDA_DEFINES=-DAVK_MERGE_BATCH=16 bench cu-b1-128k-merge16 --api cuda --batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 131072 --impl attnvk
  bench cu-b1-128k-merge8 --api cuda --batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 131072 --impl attnvk,cudnn
fi
cd "$out" && tar -czf json-${PART:-a}.tar.gz json && rm -rf json
