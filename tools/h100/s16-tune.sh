#!/usr/bin/env bash
# Session 16: `attnvk tune --api vulkan --suite fa-grid --budget 300` (issue #15), then the fa-grid with the
# tuning file and without it (ATTNVK_NO_TUNING=1), one process each.
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache ATTNVK_TUNING_DIR=$OUT/tuning
B=${BUILD:-build-h100}
mkdir -p "$OUT"
start=$EPOCHREALTIME
$B/attnvk tune --api vulkan --suite fa-grid --budget ${BUDGET:-300} > "$OUT/tune.log" 2>&1
echo "tune rc=$? wall $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $start}") s"; tail -12 "$OUT/tune.log" | cut -c1-220
for mode in tuned table; do
  env $([ $mode = table ] && echo ATTNVK_NO_TUNING=1) $B/attnvk bench --suite fa-grid --api vulkan --impl attnvk -o json \
    --out "$OUT/fa-grid-vk-$mode.json" > "$OUT/fa-grid-vk-$mode.txt" 2>&1
  echo "fa-grid $mode rc=$?: $(grep -E 'records:' "$OUT/fa-grid-vk-$mode.txt")"
done
