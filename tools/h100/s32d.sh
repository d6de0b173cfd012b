#!/usr/bin/env bash
# Session 32, second call: the OpenCL backward's mma body with ldmatrix fragments and 16-byte
# copies (test_opencl_backward, then the bench beside cuDNN's), and the Vulkan matrix body's
# causal and D=64 rows.
#     AVK=./build-h100b/attnvk DEADLINE=500 bash tools/h100/s32d.sh   (carry .gpu and build-h100b)
set -u
out=${OUT:-/tmp/s32d-out}
export AVK=${AVK:-./build-h100b/attnvk}
bin=$(dirname "$AVK")
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-500}
logged cl-bwd 150 $bin/tests/opencl/test_opencl_backward
export BENCH_TIMEOUT=80
d128="--batch 4 --heads 16 --head-dim 128 --seq 4096"
d64="--batch 4 --heads 32 --head-dim 64 --seq 4096"
bench cl-d128 --api opencl,cuda --dtype f16 --pass bwd --min-time 0.3 --impl attnvk,cudnn $d128
[ "$(left)" -gt 60 ] && bench cl-d64 --api opencl,cuda --dtype f16 --pass bwd --min-time 0.3 --impl attnvk,cudnn $d64
[ "$(left)" -gt 60 ] && bench cl-d128-causal --api opencl,cuda --dtype f16 --pass bwd --min-time 0.3 --impl attnvk,cudnn $d128 --causal
v="--api vulkan --dtype f16 --pass bwd --min-time 0.3 --impl attnvk"
[ "$(left)" -gt 60 ] && bench vk-d64 $v $d64
[ "$(left)" -gt 60 ] && bench vk-d128-causal $v $d128 --causal
[ "$(left)" -gt 60 ] && bench vk-d128-n16k $v --batch 1 --heads 16 --head-dim 128 --seq 16384
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s32d.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s32d.tar.gz .
