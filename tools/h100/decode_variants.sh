#!/usr/bin/env bash
# Decode kernel sweeps on the H100 (device tool; carry .gpu and a staged
# build): each line names a configuration, runs it through the bench (which
# checks every output against the float64 reference) and prints GB/s.
#     BUILD=build-h100 bash tools/h100/decode_variants.sh [SWEEP_FILE]
# SWEEP_FILE lines: name | environment (VAR=value ..., or -) | bench arguments
# (after the shared shape; --api cuda unless they name one; # starts a comment). Without
# one, the default sweep below. SHAPE replaces the shared shape (prefill sweeps,
# e.g. tools/h100/sweep-s1-scores.txt). Writes $OUT/variants.txt and the JSON (tar).
set -u
out=${OUT:-/tmp/variants-out}
build=${BUILD:-build}
mkdir -p "$out/json"
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=${ATTNVK_CACHE_DIR:-/tmp/attnvk-cache}
avk=./$build/attnvk
shape="${SHAPE:---batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1} --min-time ${MIN_TIME:-0.1}"
default_sweep() {
  cat <<'S'
f16-16k-mma16 | - | --seq-kv 16384 --impl attnvk,cudnn --variant mma16
f16-16k-w8s2 | ATTNVK_CUDA_TUNE=key_warps=8,stages=2 | --seq-kv 16384 --impl attnvk --variant mma-decode
f16-16k-w2s2 | ATTNVK_CUDA_TUNE=key_warps=2,stages=2 | --seq-kv 16384 --impl attnvk --variant mma-decode
q8-64k-dec | - | --seq-kv 65536 --impl attnvk --kv-dtype q8_0 --variant mma-decode --page-size 16
q8-64k-w8s3 | ATTNVK_CUDA_TUNE=key_warps=8,stages=3 | --seq-kv 65536 --impl attnvk --kv-dtype q8_0 --variant mma-decode
q8-64k-w4s4 | ATTNVK_CUDA_TUNE=stages=4 | --seq-kv 65536 --impl attnvk --kv-dtype q8_0 --variant mma-decode
q8-64k-w4s2-bc32 | ATTNVK_CUDA_TUNE=stages=2 | --seq-kv 65536 --impl attnvk --kv-dtype q8_0 --variant mma-decode --tile 16x32
q4-64k-dec | - | --seq-kv 65536 --impl attnvk --kv-dtype q4_0 --variant mma-decode
fp8-64k-dec | - | --seq-kv 65536 --impl attnvk --kv-dtype fp8 --variant mma-decode
f16-64k | - | --seq-kv 65536 --impl attnvk,cudnn
S
}
sweep=${1:-}
{ if [ -n "$sweep" ]; then cat "$sweep"; else default_sweep; fi; } | while IFS='|' read -r name envs args; do
  name=$(echo $name)
  envs=$(echo $envs)
  [ "$envs" = - ] && envs=
  [ -z "$name" ] && continue
  case "$name" in \#*) continue;; esac
  case "$args" in *--api*) ;; *) args="--api cuda $args";; esac
  timeout ${CASE_TIMEOUT:-90} env $envs $avk bench $shape $args -o json --out "$out/json/$name.json" >/dev/null 2>"$out/json/$name.err"
  rc=$?
  python3 - "$out/json/$name.json" "$name" "$rc" <<'PY' | tee -a "$out/variants.txt"
import json, sys
f, name, rc = sys.argv[1:]
try: recs = json.load(open(f))["records"]
except Exception as e: print(f"{name:22s} exit {rc}: no records ({e})"); sys.exit()
for r in recs:
    k = r.get("kernel") or {}
    rate = (f"{r['gbytes_per_s']:6.0f} GB/s {r['tflops']:6.1f} TFLOP/s {r['stats']['median_ms']:7.3f} ms"
            if r["status"] == "ok" else r.get("reason", "")[:80])
    print(f"{name:22s} {r['case']['name'][-12:]:12s} {r['implementation']:6s} {r['status']:6s} {rate} {r.get('variant') or ''} "
          f"{r.get('tile_br')}x{r.get('tile_bc')} split={r.get('split_kv')} {(r.get('params') or '')[:90]} check={(r.get('check') or {}).get('rel_l2', r.get('check'))}")
PY
done
tar -czf "$out/variants-json.tar.gz" -C "$out" json && rm -rf "$out/json"
