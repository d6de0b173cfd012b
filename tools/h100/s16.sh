#!/usr/bin/env bash
# Session 16 on the H100: the probe verdicts, Vulkan fa-grid with coopmat-khr-rs named and by default
# (FA_GRID=1), then s14.sh (SWEEPS, CHECK_APIS, SUITE...).
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
ATTNVK_VK_RS_PROBE_DUMP=1 $B/attnvk devices > "$OUT/devices.log" 2>&1
echo "devices rc=$?"; grep -E "accumulator|moved|layout" "$OUT/devices.log" | grep -v "lane" | cut -c1-200
if [ "${FA_GRID:-0}" = 1 ]; then
  for v in ${FA_VARIANTS:-coopmat-khr-rs default}; do
    opt=; [ "$v" = default ] || opt="--variant $v"
    start=$EPOCHREALTIME
    $B/attnvk bench --suite fa-grid --api vulkan --impl attnvk $opt -o json --out "$OUT/fa-grid-vk-$v.json" > "$OUT/fa-grid-vk-$v.txt" 2>&1
    echo "fa-grid vulkan $v rc=$? wall $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $start}") s"
    grep -E "records:" "$OUT/fa-grid-vk-$v.txt"
  done
fi
bash tools/h100/s14.sh
