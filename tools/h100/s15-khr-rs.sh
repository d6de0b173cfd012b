#!/usr/bin/env bash
# Session 15's last call: the KHR register-softmax variants on the H100 (probe, check, speed
# against coopmat-khr / decode-nv-rs), then a short `attnvk tune` on Vulkan.
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache XDG_DATA_HOME=/tmp/xdg
B=${BUILD:-build-h100}
mkdir -p "$OUT"
ATTNVK_VK_RS_PROBE_DUMP=1 timeout 60 $B/attnvk check --api vulkan --impl attnvk --variant coopmat-khr-rs --dtype f16 > "$OUT/check-khr-rs.log" 2>&1
echo "check coopmat-khr-rs rc=$?: $(tail -1 "$OUT/check-khr-rs.log")"; grep -iE "probe|FAIL|refus" "$OUT/check-khr-rs.log" | head -6 | cut -c1-300
timeout 40 $B/attnvk check --api vulkan --impl attnvk --variant decode-khr-rs --dtype f16 > "$OUT/check-decode-khr-rs.log" 2>&1
echo "check decode-khr-rs rc=$?: $(tail -1 "$OUT/check-decode-khr-rs.log")"; grep -E "^FAIL" "$OUT/check-decode-khr-rs.log" | head -3 | cut -c1-200
for v in coopmat-khr-rs coopmat-khr coopmat-nv-rs; do
  timeout 30 $B/attnvk bench --api vulkan --impl attnvk --variant $v --batch 4 --heads 16 --head-dim 128 --dtype f16 --seq 4096 --min-time 0.2 2>&1 | grep -E "^attnvk" | cut -c1-170
done
for v in decode-khr-rs decode-nv-rs; do
  timeout 30 $B/attnvk bench --api vulkan --impl attnvk --variant $v --batch 8 --heads 32 --kv-heads 8 --seq 16 --seq-kv 32768 --head-dim 128 --dtype f16 --min-time 0.2 2>&1 | grep -E "^attnvk" | cut -c1-170
done
