#!/usr/bin/env bash
# Keeps a CUDA context open in the background for $1 seconds (default 500)
# and samples the GPU's clocks to $OUT/clocks.csv. A process with no CUDA
# context (a Vulkan- or OpenCL-only bench) was measured at a fraction of its
# speed on the H100: the card stays at low clocks between short submissions.
# The bench's mixed runs (--api vulkan,cuda) hold one anyway; this makes the
# single-API sweeps comparable with them. It changes no setting of the card.
secs=${1:-500}
python3 -c "import torch, time; torch.zeros(1, device='cuda'); time.sleep($secs)" &
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,pstate,power.draw --format=csv -lms 500 > "${OUT:-/tmp}/clocks.csv" 2>&1 &
sleep 5
