#!/usr/bin/env bash
# Why a Vulkan-only process reads decode 3-4x slower than one that also opened
# CUDA (bench/results/decode-2026-11-24-s7): the same Vulkan bench alone, then
# while another process holds a CUDA context, sampling P-state and clocks.
set -u
out=${OUT:-/tmp/vkp}; mkdir -p "$out"
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
avk=./${BUILD:-build}/attnvk
args="--api vulkan --batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 16384 --impl attnvk --min-time 0.5"
sample() { nvidia-smi --query-gpu=pstate,clocks.sm,clocks.mem,power.draw --format=csv,noheader -lms 200 >"$out/smi-$1.txt" 2>&1 & echo $!; }
p=$(sample alone); $avk bench $args 2>&1 | grep -E 'GB/s' | tee "$out/alone.txt"; kill $p
python3 -c 'import torch,time; torch.zeros(1,device="cuda"); time.sleep(60)' & holder=$!
sleep 8
p=$(sample cuda); $avk bench $args 2>&1 | grep -E 'GB/s' | tee "$out/with-cuda.txt"; kill $p
kill $holder
for f in alone cuda; do echo "$f: $(sort "$out/smi-$f.txt" | uniq -c | sort -rn | head -4 | tr '\n' ';')"; done
