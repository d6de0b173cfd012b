#!/usr/bin/env bash
# Shared by the device-call scripts (source it with `out` set): the GPU environment, a
# one-line-per-record summary of a bench JSON, and `bench TAG ARGS...`, which runs the
# bench into $out/json/TAG.json (BENCH_TIMEOUT seconds, default 90) and summarizes it.
mkdir -p "$out/json"
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
avk=${AVK:-./build-h100/attnvk} # AVK: another staged binary (carry its folder)
bin=$(dirname "$avk")            # the staged folder: its tests sit beside the binary
start=$SECONDS deadline=${DEADLINE:-${deadline:-400}} # left(): what DEADLINE (or the script's default) leaves
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
# the FlashAttention papers' grid (f16 unless named; B*N = 16k, H*D = 2048), "tag:bench arguments"
fa_grid=("d128-n4k:--batch 4 --heads 16 --head-dim 128 --seq 4096"
         "d128-n4k-causal:--batch 4 --heads 16 --head-dim 128 --seq 4096 --causal"
         "d128-n16k:--batch 1 --heads 16 --head-dim 128 --seq 16384"
         "d128-n16k-causal:--batch 1 --heads 16 --head-dim 128 --seq 16384 --causal"
         "d64-n4k:--batch 4 --heads 32 --head-dim 64 --seq 4096"
         "d64-n4k-causal:--batch 4 --heads 32 --head-dim 64 --seq 4096 --causal"
         "d64-n16k:--batch 1 --heads 32 --head-dim 64 --seq 16384")
bench() { # tag, then bench arguments
  local tag=$1; shift
  timeout -k 5 ${BENCH_TIMEOUT:-90} $avk bench "$@" -o json --out "$out/json/$tag.json" > /dev/null 2> "$out/json/$tag.err"
  echo "== $tag rc=$?"; summary "$out/json/$tag.json"
}
tl() { # tag, then bench arguments: one short run of the timeline build (TL_DEFINES: more -D options), then its summary
  local tag=$1; shift
  BENCH_TIMEOUT=60 ATTNVK_CUDA_DEFINES="-DAVK_TIMELINE=1 ${TL_DEFINES:-}" ATTNVK_CUDA_TIMELINE=$out/tl-$tag.txt \
    bench tl-$tag "$@" --impl attnvk --min-time 0.02
  python3 tools/h100/timeline.py $out/tl-$tag.txt
}
logged() { # tag, seconds, then a command: timed into $out/TAG.log; prints its tally and first failures
  local tag=$1 limit=$2; shift 2
  ( time timeout -k 5 "$limit" "$@" ) > "$out/$tag.log" 2>&1
  echo "$tag rc=$?: $(grep -E 'passed' "$out/$tag.log" | tail -1)"; grep -E "^FAIL" "$out/$tag.log" | head -8 | cut -c1-200
}
left() { echo $(( ${deadline:-400} - (SECONDS - ${start:-0}) )); } # seconds the script's DEADLINE leaves
test_backward() { # tag, then VAR=value settings: test_cuda_backward under them into $out/test-bwd-TAG.log
  local tag=$1; shift
  ( time env "$@" timeout ${TEST_TIMEOUT:-150} "$bin/tests/cuda/test_cuda_backward" ) > "$out/test-bwd-$tag.log" 2>&1
  echo "test_cuda_backward ($tag) rc=$?: $(grep -E 'passed|PASS|FAIL' "$out/test-bwd-$tag.log" | tail -2 | tr '\n' ' ')"
  grep -E "FAIL" "$out/test-bwd-$tag.log" | head -6 | cut -c1-220
}
pack_out() { # NAME: everything under $out into $out/NAME.tar.gz (written beside, then moved in)
  cd "$out" && tar -czf "/tmp/$1.tar.gz" . && find . -mindepth 1 -delete && mv "/tmp/$1.tar.gz" .
}
bwd_params() { # every record under $out/json: tag, API, implementation, status, TFLOP/s, the backward's params (or the reason)
  for f in "$out"/json/*.json; do python3 -c "
import json,sys; [print(sys.argv[1].split('/')[-1][:-5], r['api'], r['implementation'], r['status'], round(r.get('tflops') or 0, 1), (r.get('backward_kernel') or {}).get('params') or r.get('reason')) for r in json.load(open(sys.argv[1]))['records']]" "$f"; done 2>/dev/null | cut -c1-250
}
