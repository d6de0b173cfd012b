#!/usr/bin/env bash
# Session 29, second call. #16: the FP8 forward (wgmma-fp8) for the first time on a GPU: checked
# shapes (each record against float64 on the unquantized inputs and on the dequantized ones), then
# its speed against the f16 kernel and cuDNN at the fa-grid's shapes (B*N = 16k, H*D = 2048), twice.
# #20: the dilated suite's production and medium ranges on CUDA through the views (now the default).
#     bash tools/h100/s29b.sh   (carry .gpu and build-h100; DEADLINE seconds, default 560)
set -u
out=${OUT:-/tmp/s29b-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-560}
left() { echo $((deadline - (SECONDS - start))); }
c="--api cuda --impl attnvk --min-time 0.3"
BENCH_TIMEOUT=60 bench fp8-d128-n2k $c --dtype fp8 --batch 2 --heads 8 --head-dim 128 --seq 2048
BENCH_TIMEOUT=60 bench fp8-d128-n2k-causal $c --dtype fp8 --batch 2 --heads 8 --head-dim 128 --seq 2048 --causal
BENCH_TIMEOUT=60 bench fp8-d64-odd $c --dtype fp8 --batch 1 --heads 8 --head-dim 64 --seq 1000 --causal
BENCH_TIMEOUT=60 bench fp8-d256 $c --dtype fp8 --batch 1 --heads 4 --head-dim 256 --seq 3000
BENCH_TIMEOUT=60 bench fp8-gqa-split3 $c --dtype fp8 --batch 2 --heads 8 --kv-heads 2 --head-dim 128 --seq 4096 --split-kv 3
BENCH_TIMEOUT=60 bench fp8-bf16-out $c --dtype bf16 --q-dtype fp8 --kv-dtype fp8 --batch 1 --heads 8 --head-dim 128 --seq 4096 --causal
logged check-fp8 120 $avk check --api cuda --impl attnvk --dtype fp8
grid=("d128-n8k:--batch 2 --heads 16 --head-dim 128 --seq 8192"
      "d128-n8k-causal:--batch 2 --heads 16 --head-dim 128 --seq 8192 --causal"
      "d128-n4k:--batch 4 --heads 16 --head-dim 128 --seq 4096"
      "d64-n4k:--batch 4 --heads 32 --head-dim 64 --seq 4096")
for round in 1 2; do
  for g in "${grid[@]}"; do
    tag=${g%%:*}; args=${g#*:}
    [ "$(left)" -gt 200 ] || break
    bench $tag-f16-$round --api cuda --dtype f16 $args --impl attnvk,cudnn --min-time 0.5
    bench $tag-fp8-$round --api cuda --dtype fp8 $args --impl attnvk --min-time 0.5
  done
done
echo "== fp8 done at $((SECONDS - start)) s"
for suite in dilated-production dilated-medium; do
  [ "$(left)" -gt 30 ] || { echo "skip $suite: $(left) s left"; continue; }
  BENCH_TIMEOUT=$(( $(left) - 10 )) bench $suite --suite $suite --api cuda --impl attnvk -r 1 --warmup 1 > "$out/$suite.txt"
  echo "$suite: $(grep -c ' ok ' "$out/$suite.txt") ok, $(grep -vc ' ok \|^==' "$out/$suite.txt") other"
  grep -v ' ok \|^==' "$out/$suite.txt" | head -5
done
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s29b.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s29b.tar.gz .
