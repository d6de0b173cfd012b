#!/usr/bin/env bash
# Session 44: what bounds the Vulkan decode body on quantized caches (#12: q8_0 <= 0.65x and q4_0 <= 0.45x
# of the f16 time at 64k; it sits at 0.94x / 0.90x). ATTNVK_VK_DECODE=probe=1 times its loads alone,
# probe=2 its arithmetic alone (wrong outputs: those records fail their check on purpose), per format,
# with the pipelines' registers (ATTNVK_VK_PIPELINE_STATS=1); then 16 lanes a key (half the Q and O
# registers) and keys per step; the driver's internal representations; CUDA's epilogue barrier at D=64 causal
# (#16); then s44a's D=64 A/Bs (Vulkan ALiBi in S and mask, OpenCL ALiBi in the MMAs).
#     DEADLINE=330 bash tools/h100/s44b.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s44b-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
export ATTNVK_VK_PIPELINE_STATS=1
dec="--api vulkan --variant decode --impl attnvk --dtype f16 --batch 8 --heads 32 --kv-heads 8 --head-dim 128 --seq 1 --seq-kv 65536 --min-time 0.3"
probe_summary() { python3 - "$1" <<'PY'
import json, sys
try: recs = json.load(open(sys.argv[1]))["records"]
except Exception as e: print("  (no JSON: %s)" % e); sys.exit()
for r in recs:
    med = (r.get("stats") or {}).get("median_ms")
    print(f"  {r['status']:5s} median {med} ms  {r.get('params','')[:230]}")
PY
}
for kv in dtype q8_0 q4_0; do
  for pr in 0 1 2; do
    tag=vk-$kv-probe$pr
    ATTNVK_VK_DECODE=probe=$pr timeout -k 5 60 $AVK bench $dec --kv-dtype $kv -o json --out $out/json/$tag.json > /dev/null 2> $out/json/$tag.err
    echo "== $tag rc=$?"; probe_summary $out/json/$tag.json
  done
done
for kv in dtype q8_0 q4_0; do
  tag=vk-$kv-lanes16
  ATTNVK_VK_DECODE=lanes=16 timeout -k 5 60 $AVK bench $dec --kv-dtype $kv -o json --out $out/json/$tag.json > /dev/null 2> $out/json/$tag.err
  echo "== $tag rc=$?"; probe_summary $out/json/$tag.json
  tag=vk-$kv-lanes16-probe1
  ATTNVK_VK_DECODE=lanes=16,probe=1 timeout -k 5 60 $AVK bench $dec --kv-dtype $kv -o json --out $out/json/$tag.json > /dev/null 2> $out/json/$tag.err
  echo "== $tag rc=$?"; probe_summary $out/json/$tag.json
done
for k in 1 4; do
  tag=vk-q8_0-keys$k
  ATTNVK_VK_DECODE=keys=$k timeout -k 5 60 $AVK bench $dec --kv-dtype q8_0 -o json --out $out/json/$tag.json > /dev/null 2> $out/json/$tag.err
  echo "== $tag rc=$?"; probe_summary $out/json/$tag.json
done
echo "== decode part done at $((SECONDS - start)) s"
# what the driver shows of its code (ATTNVK_VK_PIPELINE_IR; a fresh pipeline cache so it compiles)
for kv in q8_0 dtype; do
  mkdir -p $out/ir-$kv
  ATTNVK_CACHE_DIR=/tmp/ir-cache-$kv ATTNVK_VK_PIPELINE_IR=$out/ir-$kv timeout -k 5 60 $AVK bench $dec --kv-dtype $kv --min-time 0.05 > /dev/null 2> $out/ir-$kv.err
  echo "== ir-$kv rc=$?: $(grep -c internal $out/ir-$kv.err) pipelines, $(ls $out/ir-$kv | wc -l) files, $(du -sh $out/ir-$kv | cut -f1)"
done
mkdir -p $out/ir-softcap
ATTNVK_CACHE_DIR=/tmp/ir-cache-sc ATTNVK_VK_PIPELINE_IR=$out/ir-softcap timeout -k 5 60 $AVK bench --api vulkan --dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --causal --softcap 30 --impl attnvk --min-time 0.05 > /dev/null 2> $out/ir-softcap.err
echo "== ir-softcap rc=$?: $(ls $out/ir-softcap | wc -l) files"
unset ATTNVK_VK_PIPELINE_STATS
# #16: D=64 N=4k causal beside cuDNN, with and without the warp-specialized epilogue's consumer barrier
d64c="--api cuda --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal --min-time 0.5"
for round in 1 2; do
  bench cu-d64c-r$round $d64c --impl attnvk,cudnn
  ATTNVK_CUDA_DEFINES=-DAVK_WS_EPILOGUE_SYNC=0 bench cu-d64c-nosync-r$round $d64c --impl attnvk
done
ATTNVK_CUDA_DEFINES=-DAVK_WS_EPILOGUE_SYNC=0 bench cu-d128c-nosync --api cuda --dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --causal --impl attnvk --min-time 0.5
bench cu-d128c --api cuda --dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --causal --impl attnvk --min-time 0.5
[ "$(left)" -gt 100 ] && ATTNVK_CUDA_DEFINES=-DAVK_WS_EPILOGUE_SYNC=0 logged check-cuda-nosync 90 $AVK check --api cuda --impl attnvk --dtype f16
v64="--api vulkan --dtype f16 --batch 4 --heads 32 --head-dim 64 --seq 4096 --causal --impl attnvk --min-time 0.3"
o64=${v64/vulkan/opencl}
bench vk-d64-plain $v64
bench vk-d64-mask $v64 --mask random
bench vk-d64-alibi-mma $v64 --alibi
ATTNVK_VK_ALIBI_MMA=0 bench vk-d64-alibi-elem $v64 --alibi
bench ocl-d64-plain $o64
bench ocl-d64-alibi $o64 --alibi
ATTNVK_OPENCL_ALIBI_MMA=1 bench ocl-d64-alibi-mma $o64 --alibi
echo "== s44b done at $((SECONDS - start)) s"
pack_out s44b
