#!/usr/bin/env bash
# Issue #12's decode measurements on the H100 (device tool; carry .gpu and a
# staged build, see stage.sh): f16 GQA decode beside cuDNN, Nq 1/4/16, the
# quantized and paged caches, a split-KV sweep and the models' decode shapes.
#     BUILD=build-h100 APIS=cuda,opencl,vulkan bash tools/h100/decode.sh
# Host-side input building is single-threaded and slow at Nk=64k (a paged
# twin doubles it): CASE_TIMEOUT defaults to 300 s per run.
# Writes $OUT/decode-*.json and prints one line per record.
set -u
out=${OUT:-/tmp/decode-out}
build=${BUILD:-build}
apis=${APIS:-cuda}
mkdir -p "$out"
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=${ATTNVK_CACHE_DIR:-/tmp/attnvk-cache}
avk=./$build/attnvk
t=${MIN_TIME:-0.15}
shape="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16"
summary() {
  python3 - "$@" <<'PY'
import json, sys
for f in sys.argv[1:]:
    try: recs = json.load(open(f))["records"]
    except Exception as e: print(f, "unreadable:", e); continue
    for r in recs:
        k = r.get("kernel") or {}
        rate = f"{r['gbytes_per_s']:7.0f} GB/s {r['stats']['median_ms']:8.3f} ms" if r["status"] == "ok" else r["reason"][:70]
        qe = f" qerr {r['quant_error']:.1e}" if "quant_error" in r else ""
        print(f"{r['case']['name']:44s} {r['implementation']:7s} {r['api']:6s} {r['status']:7s} {rate} {r.get('variant') or ''} split={r.get('split_kv')}{qe}")
PY
}
run() { # name, extra args
  local name=$1; shift
  timeout ${CASE_TIMEOUT:-300} $avk bench --api "$apis" --min-time "$t" -o json --out "$out/decode-$name.json" "$@" >/dev/null 2>"$out/decode-$name.err"
  echo "$name exit $?" >>"$out/decode.log"
}
run f16 $shape --seq 1 --seq-kv 16384 --impl attnvk,cudnn
run f16-64k $shape --seq 1 --seq-kv 65536 --impl attnvk,cudnn
run nq $shape --seq 1,4,16 --seq-kv 32768 --impl attnvk,cudnn
run q8 $shape --seq 1 --seq-kv 65536 --impl attnvk --kv-dtype q8_0
run paged $shape --seq 1 --seq-kv 32768 --impl attnvk --kv-dtype q8_0 --page-size 16
run paged-f16 $shape --seq 1 --seq-kv 32768 --impl attnvk --page-size 16
run q4 $shape --seq 1 --seq-kv 65536 --impl attnvk --kv-dtype q4_0
run fp8 $shape --seq 1 --seq-kv 65536 --impl attnvk --kv-dtype fp8
run models --batch 8 --heads 64 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 32768 --impl attnvk,cudnn
for s in 4 8 16 32; do run split$s $shape --seq 1 --seq-kv 16384 --impl attnvk --split-kv $s; done
cat "$out/decode.log"
summary "$out"/decode-*.json | tee "$out/decode-summary.txt"
# the device tool returns few files: one archive of the JSON documents
tar -czf "$out/decode-json.tar.gz" -C "$out" $(cd "$out" && ls decode-*.json) && rm -f "$out"/decode-*.json
