#!/usr/bin/env bash
# Session 16: which construct of the KHR layout probe crashes the H100 driver's compiler
# (build-h100/probes/pN.spv, made from shaders/coopmat_nv_layout_probe.comp by hand-edits:
# p0 the embedded probe, p1 no acc->A conversion, p2 fixed 8-element reads, p3 no element reads,
# p4 neither conversion nor element reads). Each runs in its own process.
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
for p in $B/probes/*.spv; do
  n=$(basename $p .spv)
  LD_PRELOAD=$PWD/$B/segv.so ATTNVK_VK_KHR_PROBE_FILE=$PWD/$p ATTNVK_VK_RS_PROBE_DUMP=1 timeout 60 $B/attnvk bench --api vulkan \
    --impl attnvk --variant coopmat-khr-rs --batch 1 --heads 2 --head-dim 64 --seq 256 --dtype f16 --min-time 0.01 > "$OUT/probe-$n.log" 2>&1
  echo "$n rc=$? $(grep -E 'accumulator|moved|^attnvk ' "$OUT/probe-$n.log" | cut -c1-160 | tr '\n' ' ')"
done
