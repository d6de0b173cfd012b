#!/usr/bin/env bash
# Session 41, one call: s41x (#13's softcap with exponentials on the FMA pipe), then s40e's pieces
# (on an H200 #16's grid first; s39d's OpenCL pattern-only and window A/B; s40c's OpenCL backward
# sliding copies; s40d's Vulkan decode workgroups on quantized caches; s39e's Q by TMA).
#     DEADLINE=560 bash tools/h100/s41a.sh   (carry .gpu and build-h100b)
set -u
out0=${OUT:-/tmp/s41a-out} t0=$SECONDS total=${DEADLINE:-560}
rest() { echo $(( total - (SECONDS - t0) )); }
mkdir -p $out0/s41x
OUT=$out0/s41x DEADLINE=170 bash tools/h100/s41x.sh
# #15: the Vulkan prefill table's registers and spills (the occupancy its 256-lane workgroups get)
mkdir -p $out0/vkstats
( out=$out0/vkstats; deadline=30; source tools/h100/bench-lib.sh
  for c in "d128:--head-dim 128 --heads 16" "d64:--head-dim 64 --heads 32"; do
    ATTNVK_VK_PIPELINE_STATS=1 bench vk-${c%%:*} --api vulkan --dtype f16 --batch 4 --seq 4096 ${c#*:} --impl attnvk --min-time 0.1
    python3 -c "import json,sys; [print('  params:', r.get('params')) for r in json.load(open(sys.argv[1]))['records']]" $out/json/vk-${c%%:*}.json
  done )
OUT=$out0 DEADLINE=$(rest) bash tools/h100/s40e.sh
echo "== s41a done at $((SECONDS - t0)) s"
# everything in one tarball (the device tool brings back 8 files at most)
cd "$out0" && tar -czf /tmp/s41a.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s41a.tar.gz .
