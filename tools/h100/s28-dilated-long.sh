#!/usr/bin/env bash
# Issue #20, session 28: the dilated suite's long range (256k-1M) on Vulkan with the strided views
# (session 26), and on CUDA (per-element residues; session 19 ran only two 1M cases). Session 21
# measured ~9 s of host work a record at these lengths (inputs, the float64 check) besides the GPU
# time, so each length is its own bench call (its own JSON), most valuable first, and a length is
# skipped once the call's deadline would cut it.
#     bash tools/h100/s28-dilated-long.sh   (carry .gpu and build-h100; DEADLINE seconds, default 560)
set -u
out=${OUT:-/tmp/s28-long-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-560}
# api:length:estimated seconds (10 records a length: dense causal D 64/128 and four ladders each)
plan=${PLAN:-"vulkan:1m:170 cuda:1m:110 vulkan:768k:110 cuda:768k:80 vulkan:512k:75 cuda:512k:60
  vulkan:384k:60 cuda:384k:50 vulkan:256k:50 cuda:256k:45"}
for item in $plan; do
  IFS=: read -r api n est <<< "$item"
  left=$((deadline - (SECONDS - start)))
  if [ "$left" -lt "$est" ]; then echo "skip $api $n: ${left}s left, about ${est}s needed"; continue; fi
  t0=$SECONDS
  BENCH_TIMEOUT=$left bench long-$api-$n --suite dilated-long --case "-n$n-" --api $api --impl attnvk -r 1 --warmup 1 \
    > "$out/long-$api-$n.txt"
  echo "$api $n: $(grep -c ' ok ' "$out/long-$api-$n.txt") ok in $((SECONDS - t0)) s"
  grep -v ' ok \|^==' "$out/long-$api-$n.txt" | head -3
done
for api in vulkan cuda; do
  ls "$out"/json/long-$api-*.json > /dev/null 2>&1 || continue
  $avk report "$out"/json/long-$api-*.json --out "$out/long-$api-report.html" > "$out/long-$api-crossover.txt" 2>&1
  cut -c1-200 "$out/long-$api-crossover.txt"
done
cd "$out" && tar -czf long-json.tar.gz json && rm -rf json
