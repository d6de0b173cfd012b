#!/usr/bin/env bash
# Session 44: what bounds the Vulkan decode body on quantized caches (#12: q8_0 <= 0.65x and q4_0 <= 0.45x
# of the f16 time at 64k; it sits at 0.94x / 0.90x). ATTNVK_VK_DECODE=probe=1 times its loads alone,
# probe=2 its arithmetic alone (wrong outputs: those records fail their check on purpose), per format,
# with the pipelines' registers (ATTNVK_VK_PIPELINE_STATS=1); 16 lanes a key (half the Q and O registers);
# the driver's internal representations (ATTNVK_VK_PIPELINE_IR) of the decode body and of the softcap
# prefill; CUDA's epilogue barrier at D=64 causal beside cuDNN (#16); first, #13's score hooks built for
# the problem's modifications alone on OpenCL and Vulkan, and both checks. Steps past DEADLINE are skipped.
#     DEADLINE=560 bash tools/h100/s44b.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s44b-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
export ATTNVK_VK_PIPELINE_STATS=1
dec="--api vulkan --variant decode --impl attnvk --dtype f16 --batch 8 --heads 32 --kv-heads 8 --head-dim 128 --seq 1 --seq-kv 65536 --min-time 0.2"
probe_summary() { python3 - "$1" <<'PY'
import json, sys
try: recs = json.load(open(sys.argv[1]))["records"]
except Exception as e: print("  (no JSON: %s)" % e); sys.exit()
for r in recs:
    med = (r.get("stats") or {}).get("median_ms")
    print(f"  {r['status']:5s} median {med} ms  {r.get('params','')[:230]}")
PY
}
dbench() { # tag, ATTNVK_VK_DECODE value, kv format
  [ "$(left)" -gt 30 ] || { echo "== $1 skipped (deadline)"; return; }
  ATTNVK_VK_DECODE=$2 timeout -k 5 60 $AVK bench $dec --kv-dtype $3 -o json --out $out/json/$1.json > /dev/null 2> $out/json/$1.err
  echo "== $1 rc=$?"; probe_summary $out/json/$1.json
}
# #13: the score hook built for the problem's modifications alone (OpenCL -DAVK_HOOK_MODS, Vulkan AVK_SCORES
# bits 16-128) against all three compiled in (ATTNVK_*_HOOK_MODS=0), D=128 N=8k causal f16
s8="--dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --causal --impl attnvk --min-time 0.3"
for api in opencl vulkan; do
  up=$(echo $api | tr a-z A-Z); [ $api = vulkan ] && up=VK
  bench $api-plain --api $api $s8
  for f in "softcap:--softcap 30" "alibi:--alibi" "mask:--mask random"; do
    bench $api-${f%%:*} --api $api $s8 ${f#*:}
    env ATTNVK_${up}_HOOK_MODS=0 $AVK bench --api $api $s8 ${f#*:} -o json --out $out/json/$api-${f%%:*}-all.json > /dev/null 2> $out/json/$api-${f%%:*}-all.err
    echo "== $api-${f%%:*}-all (ATTNVK_${up}_HOOK_MODS=0)"; summary $out/json/$api-${f%%:*}-all.json
  done
done
[ "$(left)" -gt 200 ] && logged check-ocl 80 $AVK check --api opencl --impl attnvk --dtype f16
[ "$(left)" -gt 180 ] && logged check-vk 80 $AVK check --api vulkan --impl attnvk --dtype f16
for kv in q8_0 dtype q4_0; do
  for pr in 0 1 2; do dbench vk-$kv-probe$pr probe=$pr $kv; done
done
dbench vk-q8_0-lanes16 lanes=16 q8_0
dbench vk-dtype-lanes16 lanes=16 dtype
dbench vk-q8_0-lanes16-probe1 lanes=16,probe=1 q8_0
echo "== decode part done at $((SECONDS - start)) s"
# what the driver shows of its code (a fresh pipeline cache, so it compiles)
mkdir -p $out/ir-q8_0 $out/ir-softcap
ATTNVK_CACHE_DIR=/tmp/ir-cache-q ATTNVK_VK_PIPELINE_IR=$out/ir-q8_0 timeout -k 5 60 $AVK bench $dec --kv-dtype q8_0 --min-time 0.05 > /dev/null 2> $out/ir-q8_0.err
echo "== ir-q8_0 rc=$?: $(grep internal $out/ir-q8_0.err | head -3), $(ls $out/ir-q8_0 | wc -l) files, $(du -sh $out/ir-q8_0 | cut -f1)"
ATTNVK_CACHE_DIR=/tmp/ir-cache-sc ATTNVK_VK_PIPELINE_IR=$out/ir-softcap timeout -k 5 60 $AVK bench --api vulkan --dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --causal --softcap 30 --impl attnvk --min-time 0.05 > /dev/null 2> $out/ir-softcap.err
echo "== ir-softcap rc=$?: $(ls $out/ir-softcap | wc -l) files"
unset ATTNVK_VK_PIPELINE_STATS
# #16: D=64 N=4k causal beside cuDNN, with and without the warp-specialized epilogue's consumer barrier
d64c="--api cuda --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal --min-time 0.5"
for round in 1 2; do
  [ "$(left)" -gt 40 ] && bench cu-d64c-r$round $d64c --impl attnvk,cudnn
  [ "$(left)" -gt 30 ] && ATTNVK_CUDA_DEFINES=-DAVK_WS_EPILOGUE_SYNC=0 bench cu-d64c-nosync-r$round $d64c --impl attnvk
done
[ "$(left)" -gt 100 ] && ATTNVK_CUDA_DEFINES=-DAVK_WS_EPILOGUE_SYNC=0 logged check-cuda-nosync 90 $AVK check --api cuda --impl attnvk --dtype f16
echo "== s44b done at $((SECONDS - start)) s"
pack_out s44b
