#!/usr/bin/env bash
# Session 40: the Vulkan decode body's workgroup size on quantized caches (#12). At 128 lanes the
# body sits at 255 registers, two workgroups (8 warps) an SM; a workgroup of 512 (1024) lanes caps
# NVIDIA's allocation at 128 (64) registers a lane, 16 (32) warps an SM. B=8 H=32/8 D=128 Nq=1
# Nk=64k, f16 compute, every kv format, ATTNVK_VK_PIPELINE_STATS=1 for the registers.
#     DEADLINE=150 bash tools/h100/s40d.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s40d-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
dec="--api vulkan --dtype f16 --batch 8 --heads 32 --kv-heads 8 --head-dim 128 --seq 1 --seq-kv 64k --impl attnvk --min-time 0.2"
export ATTNVK_VK_PIPELINE_STATS=1
for kv in ${KVS:-q8_0 q4_0 fp8 dtype}; do
  kvo="--kv-dtype $kv"; [ $kv = dtype ] && kvo=""
  for wg in ${WGS:-table 256 512 1024}; do
    [ "$(left)" -gt 15 ] || break
    if [ $wg = table ]; then bench vk-$kv-wg$wg $dec $kvo
    else ATTNVK_VK_WORKGROUP=$wg bench vk-$kv-wg$wg $dec $kvo; fi
    python3 -c "import json,sys; [print('  params:', r.get('params')) for r in json.load(open(sys.argv[1]))['records']]" \
      $out/json/vk-$kv-wg$wg.json 2>/dev/null
  done
done
echo "== s40d done at $((SECONDS - start)) s"
