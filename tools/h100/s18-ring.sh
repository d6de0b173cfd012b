#!/usr/bin/env bash
# Session 18: ring attention (#19) on NVIDIA. On one GPU: the transports' test (cuda-copy), test_ring
# over virtual ranks on CUDA, Vulkan and OpenCL (the device merges), and the bench's ring beside one
# device. On a machine of several GPUs (kind nvidia-h100-x2/x4): NCCL, a rank per GPU, and the scaling
# runs of the issue (N = 128k causal D=128 f16, then the longest sequence that fits).
#   STAGE="attnvk tests/test_ring tests/test_ring_merge tests/cuda/test_cuda_ring_comm" \
#     bash tools/h100/stage.sh build build-h100
#   run carry [".gpu","build-h100"]: bash tools/h100/s18-ring.sh   (SEQS, GPUS, SKIP_TESTS to vary)
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
export NCCL_NVLS_ENABLE=0 # multicast stays off on shared hosts (KINDS.md)
B=${BUILD:-build-h100}
mkdir -p "$OUT"
gpus=$(nvidia-smi -L | wc -l)
echo "gpus: $gpus"
if [ -z "${SKIP_TESTS:-}" ]; then
  ( time NCCL_DEBUG=WARN timeout ${TEST_TIMEOUT:-150} $B/tests/cuda/test_cuda_ring_comm ) > "$OUT/ring-comm.log" 2>&1
  echo "test_cuda_ring_comm rc=$?: $(grep -E 'passed|transport' "$OUT/ring-comm.log" | tr '\n' ' ')"
  ( time timeout ${TEST_TIMEOUT:-150} $B/tests/test_ring_merge ) > "$OUT/ring-merge.log" 2>&1
  echo "test_ring_merge rc=$?: $(tail -1 "$OUT/ring-merge.log")"; grep -E "^FAIL" "$OUT/ring-merge.log" | head -4
  for api in cuda vulkan opencl; do
    ( time timeout ${TEST_TIMEOUT:-150} $B/tests/test_ring $api 3 every ) > "$OUT/ring-$api.log" 2>&1
    echo "test_ring $api (3 virtual ranks) rc=$?: $(tail -1 "$OUT/ring-$api.log")"
    grep -E "^FAIL" "$OUT/ring-$api.log" | head -4 | cut -c1-200
  done
  if [ "$gpus" -gt 1 ]; then
    ( time NCCL_DEBUG=WARN timeout ${TEST_TIMEOUT:-150} $B/tests/test_ring cuda all every ) > "$OUT/ring-cuda-all.log" 2>&1
    echo "test_ring cuda all rc=$?: $(tail -1 "$OUT/ring-cuda-all.log")"
    grep -E "^FAIL" "$OUT/ring-cuda-all.log" | head -4 | cut -c1-200
  fi
fi
# the issue's shape: B=1, H*D = 2048 (16 heads of 128), causal f16; strong scaling at N = 128k
for g in ${GPUS:-$(seq 2 "$gpus")}; do
  [ "$g" -le 1 ] && g=2 # one GPU: virtual ranks
  dev=cuda; [ "$gpus" -eq 1 ] && dev=cuda:0
  for n in ${SEQS:-128k}; do
    NCCL_DEBUG=WARN timeout ${BENCH_TIMEOUT:-200} $B/attnvk bench ${BENCH_ARGS:-} --device $dev --ring $g --dtype f16 --batch 1 --seq $n --heads 16 --head-dim 128 \
      --causal --min-time 2 -o json --out "$OUT/ring-g$g-n$n.json" > "$OUT/ring-g$g-n$n.txt" 2>&1
    echo "bench --ring $g N=$n rc=$?"; grep -E "^attnvk|^ring" -A2 "$OUT/ring-g$g-n$n.txt" | cut -c1-200
  done
done
