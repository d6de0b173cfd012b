#!/usr/bin/env bash
# Session 13 on the H100: `attnvk peak` on CUDA, Vulkan and OpenCL (measured, then read back
# from the cache), beside PyTorch's device-to-device copy (cudaMemcpy) for the bandwidth check.
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-peak-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
( time $B/attnvk peak --api cuda,vulkan,opencl --remeasure --json "$OUT/peak-h100.json" ) > "$OUT/peak.log" 2>&1
echo "peak rc=$?"; cat "$OUT/peak.log"
$B/attnvk peak --api cuda,vulkan,opencl > "$OUT/peak-cached.log" 2>&1; echo "cached rc=$?"; head -30 "$OUT/peak-cached.log"
$B/attnvk devices > "$OUT/devices.log" 2>&1; echo "devices rc=$?"; head -40 "$OUT/devices.log"
python3 - <<'PY' 2>&1 | tee "$OUT/torch-copy.log"
import torch, time
n = 1 << 30  # 1 GiB each way
a = torch.empty(n, dtype=torch.uint8, device="cuda"); b = torch.empty_like(a)
for _ in range(3): b.copy_(a)
torch.cuda.synchronize()
best = 1e9
for _ in range(10):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); b.copy_(a); e.record(); torch.cuda.synchronize(); best = min(best, s.elapsed_time(e))
print(f"torch copy_ (cudaMemcpy DtoD) 1 GiB: {best:.3f} ms, {2 * n / best / 1e6:.1f} GB/s read+write, {n / best / 1e6:.1f} GB/s read")
PY
