#!/usr/bin/env bash
# Session 21's first device call: the decode sweep (tools/h100/sweep-s21-decode.txt) after the
# batched split merge, then sparse tile skipping timed on every API (#20, session 20's bodies).
#     bash tools/h100/s21-sweep1.sh   (carry .gpu and build-h100; OUT set by the device tool)
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
BUILD=build-h100 MIN_TIME=0.1 CASE_TIMEOUT=40 bash tools/h100/decode_variants.sh tools/h100/sweep-s21-decode.txt > /dev/null 2>&1
cat "$OUT/variants.txt" | cut -c1-230
SKIP_TESTS=1 APIS="cuda opencl vulkan" PATTERNS="random:0.1" bash tools/h100/s19-sparse.sh 2>&1 | tail -20
