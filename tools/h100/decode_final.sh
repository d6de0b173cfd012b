#!/usr/bin/env bash
# The end-of-session check for issue #12 on the H100 (device tool; carry
# .gpu and a staged build): the CUDA feature tests, then the decode shapes
# on CUDA and OpenCL beside cuDNN in one bench run each. $OUT: logs and JSON.
set -u
out=${OUT:-/tmp/final-out}
build=${BUILD:-build}
mkdir -p "$out"
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=${ATTNVK_CACHE_DIR:-/tmp/attnvk-cache}
[ -z "${SKIP_TESTS:-}" ] && timeout ${TEST_TIMEOUT:-420} ./$build/tests/cuda/test_cuda_features >"$out/features.txt" 2>&1 &&
echo "test_cuda_features exit $?: $(tail -1 "$out/features.txt"); mma-decode cases: $(grep -c 'mma-decode' "$out/features.txt"); FAIL lines: $(grep -c '^FAIL' "$out/features.txt")"
shape="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --min-time 0.1"
run() { # name, args
  local name=$1; shift
  timeout ${CASE_TIMEOUT:-200} ./$build/attnvk bench $shape "$@" -o json --out "$out/final-$name.json" >/dev/null 2>"$out/final-$name.err"
}
run f16-16k --api cuda,opencl --impl attnvk,cudnn --seq 1 --seq-kv 16384
run f16-64k --api cuda,opencl --impl attnvk,cudnn --seq 1 --seq-kv 65536
run nq --api cuda --impl attnvk,cudnn --seq 1,4,16 --seq-kv 32768
run quant-q8 --api cuda --impl attnvk --seq 1 --seq-kv 65536 --kv-dtype q8_0 --page-size 16
run quant-q4 --api cuda --impl attnvk --seq 1 --seq-kv 65536 --kv-dtype q4_0
python3 - "$out"/final-*.json <<'PY' | tee "$out/final-summary.txt"
import json, sys
for f in sys.argv[1:]:
    try: recs = json.load(open(f))["records"]
    except Exception as e: print(f, "unreadable:", e); continue
    for r in recs:
        rate = f"{r['gbytes_per_s']:6.0f} GB/s {r['stats']['median_ms']:7.3f} ms" if r["status"] == "ok" else r.get("reason", "")[:70]
        print(f"{r['case']['name']:46s} {r['implementation']:6s} {r['api']:6s} {r['status']:6s} {rate} {r.get('variant') or ''} split={r.get('split_kv')}")
PY
tar -czf "$out/final-json.tar.gz" -C "$out" $(cd "$out" && ls final-*.json) && rm -f "$out"/final-*.json
