#!/usr/bin/env bash
# Session 15 on the H100: the interop test and the Python package on CUDA (torch
# tensors in place), then s14.sh (check, sweeps), then fa-grid on Vulkan with
# coopmat-khr (issue #15). BUILD as staged by tools/h100/stage.sh.
set -u
source .gpu/gpu-env.sh
B=${BUILD:-build-h100}
export LD_LIBRARY_PATH=$PWD/$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ATTNVK_LIBRARY=$PWD/$B/libattnvk.so.0
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
mkdir -p "$OUT"
( time timeout 120 $B/tests/interop/test_interop cuda ) > "$OUT/interop-cuda.log" 2>&1
echo "interop cuda rc=$?: $(grep -E 'passed' "$OUT/interop-cuda.log" | tail -1)"; grep -iE "^fail" "$OUT/interop-cuda.log" | head -5
for args in "" "--causal" "--dtype bf16 --causal --seq 8192 --batch 2"; do
  PYTHONPATH=python timeout 120 python3 python/examples/torch_cuda.py $args > "$OUT/torch.log" 2>&1
  echo "torch_cuda.py $args rc=$?"; cat "$OUT/torch.log" | cut -c1-200
done
PYTHONPATH=python:python/tests timeout 150 python3 -m pytest -q python/tests > "$OUT/pytest.log" 2>&1
echo "pytest rc=$?: $(tail -1 "$OUT/pytest.log")"
bash tools/h100/s14.sh
if [ "${KHR_GRID:-0}" = 1 ]; then
  start=$EPOCHREALTIME
  $B/attnvk bench --suite fa-grid --api vulkan --impl attnvk --variant coopmat-khr -o json --out "$OUT/fa-grid-khr.json" > "$OUT/fa-grid-khr.txt" 2>&1
  echo "fa-grid khr rc=$? wall $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $start}") s"
fi
