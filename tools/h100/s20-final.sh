#!/usr/bin/env bash
# Session 20's closing device call (issue #12): checks, the decode suite beside cuDNN on
# every API, paged against contiguous, and cp.async's L2 prefetch hint on prefill.
#     bash tools/h100/s20-final.sh   (carry .gpu and build-h100; OUT set by the device tool)
set -u
out=${OUT:-/tmp/s20-out}
mkdir -p "$out"
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
avk=./build-h100/attnvk
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
summary() { python3 - "$1" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["records"]:
    rate = (f"{r['gbytes_per_s']:6.0f} GB/s {r['tflops']:6.1f} TFLOP/s {r['stats']['median_ms']:8.3f} ms" if r["status"] == "ok"
            else r.get("reason", "")[:70])
    print(f"{r['case']['name'][-40:]:40s} {r['api']:6s} {r['implementation']:6s} {r['status']:5s} {rate} {r.get('variant') or ''}")
PY
}
timeout 240 $avk check --api cuda --impl attnvk > "$out/check-cuda.log" 2>&1
echo "check cuda rc=$? $(tail -1 "$out/check-cuda.log")"; grep FAIL "$out/check-cuda.log" | head -5
timeout 150 $avk bench --suite decode --api cuda,opencl,vulkan --impl attnvk,cudnn -o json --out "$out/decode-suite.json" > /dev/null 2>&1
echo "decode suite rc=$?"; summary "$out/decode-suite.json"
shape="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 32768 --impl attnvk"
for f in q8_0 q4_0 fp8; do
  timeout 60 $avk bench --api cuda,opencl $shape --kv-dtype $f --page-size 16 -o json --out "$out/paged-$f.json" > /dev/null 2>&1
  summary "$out/paged-$f.json"
done
for f in dtype q8_0 q4_0; do
  timeout 60 $avk bench --api cuda,opencl,vulkan --batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 \
    --seq-kv 65536 --impl attnvk --kv-dtype $f -o json --out "$out/quant-$f.json" > /dev/null 2>&1
  summary "$out/quant-$f.json"
done
# split counts around the core plan (CUDA f16, OpenCL q4_0) at 64k
for sp in 4 6 12 16; do
  timeout 40 $avk bench --api cuda --batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 65536 \
    --impl attnvk --split-kv $sp -o json --out "$out/split-cuda-$sp.json" > /dev/null 2>&1
  timeout 40 $avk bench --api opencl --batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 65536 \
    --impl attnvk --kv-dtype q4_0 --split-kv $sp -o json --out "$out/split-opencl-q4-$sp.json" > /dev/null 2>&1
  echo "split $sp:"; summary "$out/split-cuda-$sp.json"; summary "$out/split-opencl-q4-$sp.json"
done
# prefill with and without the hint (fa-grid's D=128 N=4k shape, causal and not)
for hint in 128 0; do
  for c in "" --causal; do
    ATTNVK_CUDA_DEFINES=-DAVK_CP_L2_PREFETCH=$hint ATTNVK_OPENCL_BUILD_OPTIONS=-DAVK_CP_L2_PREFETCH=$hint timeout 90 \
      $avk bench --api cuda,opencl --batch 4 --heads 16 --head-dim 128 --seq 4096 --dtype f16 --impl attnvk $c \
      -o json --out "$out/prefill-l2-$hint$c.json" > /dev/null 2>&1
    echo "prefill L2 prefetch $hint $c:"; summary "$out/prefill-l2-$hint$c.json"
  done
done
cd "$out" && tar -czf more-json.tar.gz prefill-*.json paged-*.json quant-*.json split-*.json && rm -f prefill-*.json paged-*.json quant-*.json split-*.json
