#!/usr/bin/env bash
# Why a Vulkan-only process reads decode 4.5x slower than one that has a CUDA
# context (session 8: 441 GB/s alone, 2052 beside CUDA, same pipeline, and
# back-to-back launches did not change it). Each line is one process:
# alone; with a CUDA context in the same process; with OpenCL (NVIDIA's is
# built on CUDA); while another process holds a CUDA context; and the Vulkan
# streaming-read kernel measured alone. Changes no setting of the card.
set -u
out=${OUT:-/tmp/vk-alone}; mkdir -p "$out"
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
avk=./${BUILD:-build}/attnvk
case_args="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 16384 --warmup 5"
cat > "$out/fmt.py" <<'PY'
import csv, sys
for r in csv.DictReader(sys.stdin):
    print(f"{sys.argv[1]:18s} {r['api']:7s} {r['implementation']:7s} {r['status']:5s} {r['median_ms']:>9s} ms"
          f" {r['gbytes_per_s']:>8s} GB/s cv {r['cv']}")
PY
line() { # name, bench args...
  local name=$1; shift
  $avk bench $case_args "$@" -o csv 2>"$out/$name.err" | python3 "$out/fmt.py" "$name" | tee -a "$out/vk-alone.txt"
}
line alone --api vulkan --impl attnvk -r 30
nvidia-smi -q -d PERFORMANCE,CLOCK > "$out/smi-idle.txt" 2>&1
( sleep 2; nvidia-smi -q -d PERFORMANCE,CLOCK > "$out/smi-during-alone.txt" 2>&1 ) &
line alone-again --api vulkan --impl attnvk -r 3000
wait
line alone-l16 --api vulkan --impl attnvk -r 30 --launches 16
line alone-scalar --api vulkan --impl attnvk -r 10 --variant scalar
line cuda-scalar --api vulkan,cuda --impl attnvk -r 10 --variant scalar
line opencl-alone --api opencl --impl attnvk -r 30
line with-cuda --api vulkan,cuda --impl attnvk -r 30
line with-opencl --api vulkan,opencl --impl attnvk -r 30
python3 -c "import torch, time; torch.zeros(1, device='cuda'); time.sleep(40)" & holder=$!
sleep 10
line other-process --api vulkan --impl attnvk -r 30
kill $holder 2>/dev/null; wait $holder 2>/dev/null
fresh=$(mktemp -d)
ATTNVK_CACHE_DIR=$fresh ATTNVK_VISIBLE_DEVICES=vulkan $avk devices --json > "$out/devices-vulkan-alone.json" 2>&1
python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
for x in d.get("devices", []):
    print("bandwidth alone:", x.get("api"), x.get("name"), x.get("read_bandwidth_gbps"))' "$out/devices-vulkan-alone.json" | tee -a "$out/vk-alone.txt"
grep -iE "Clocks Event Reasons|Active|Idle|Applications Clocks Setting|SW Power|HW Slowdown|Graphics|Memory  " "$out/smi-during-alone.txt" | head -30
