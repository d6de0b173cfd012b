#!/usr/bin/env bash
# Session 29, #20: CUDA's dilated problems as strided views (ATTNVK_CUDA_DILATED_VIEWS=1, first run on a GPU).
# 1. The views against the per-element test on three checked shapes (odd N and split 3, GQA, causal 32k).
# 2. test_sparse with the views (staged beside attnvk: STAGE="attnvk tests/test_sparse").
# 3. The long range (256k-1M) on CUDA through the views, when every view record passed its check;
#    otherwise only 256k with the per-element test (session 28's deadline cut it).
#     bash tools/h100/s29a.sh   (carry .gpu and build-h100; DEADLINE seconds, default 560)
set -u
out=${OUT:-/tmp/s29a-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-560}
left() { echo $((deadline - (SECONDS - start))); }
cu="--api cuda --impl attnvk --batch 1 --heads 12 --dtype f16 --min-time 0.2"
for views in 0 1; do
  export ATTNVK_CUDA_DILATED_VIEWS=$views
  BENCH_TIMEOUT=40 bench cu-v$views-32k $cu --head-dim 128 --seq 32768 --causal --dilated 2048,4096,8192:1,2,4
  BENCH_TIMEOUT=40 bench cu-v$views-odd-split3 $cu --head-dim 64 --seq 5000 --dilated 512,1024,2048:1,2,4 --split-kv 3
  BENCH_TIMEOUT=40 bench cu-v$views-gqa $cu --kv-heads 4 --head-dim 128 --seq 12000 --causal --dilated 1000,3000:2,3
done
export ATTNVK_CUDA_DILATED_VIEWS=1
build=$(dirname "$avk")
[ -x $build/tests/test_sparse ] && logged sparse-cuda-views 90 $build/tests/test_sparse
views_ok=$(python3 - "$out"/json/cu-v1-*.json <<'PY'
import json, sys
ok = True
for f in sys.argv[1:]:
    try: recs = json.load(open(f))["records"]
    except Exception: ok = False; continue
    ok = ok and bool(recs) and all(r["status"] == "ok" for r in recs)
print(1 if ok else 0)
PY
)
echo "== views checked: ok=$views_ok at $((SECONDS - start)) s"
if [ "$views_ok" = 1 ]; then plan="1m:100 768k:80 512k:60 384k:50 256k:45"; else export ATTNVK_CUDA_DILATED_VIEWS=0; plan="256k:45"; fi
for item in $plan; do
  IFS=: read -r n est <<< "$item"
  if [ "$(left)" -lt "$est" ]; then echo "skip cuda $n: $(left)s left, about ${est}s needed"; continue; fi
  t0=$SECONDS
  BENCH_TIMEOUT=$(left) bench long-cuda-$n --suite dilated-long --case "-n$n-" --api cuda --impl attnvk -r 1 --warmup 1 \
    > "$out/long-cuda-$n.txt"
  echo "cuda $n (views=$ATTNVK_CUDA_DILATED_VIEWS): $(grep -c ' ok ' "$out/long-cuda-$n.txt") ok in $((SECONDS - t0)) s"
  cat "$out/long-cuda-$n.txt" | cut -c1-200
done
ls "$out"/json/long-cuda-*.json > /dev/null 2>&1 &&
  $avk report "$out"/json/long-cuda-*.json --out "$out/long-cuda-report.html" > "$out/long-cuda-crossover.txt" 2>&1
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s29a.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s29a.tar.gz .
