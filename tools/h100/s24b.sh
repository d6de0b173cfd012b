#!/usr/bin/env bash
# Session 24's second device call (issue #12): the Vulkan decode body's row tile fitted to the
# packed rows (vk_variants.c fit_packed_rows) against the session-23 binary (attnvk-base), beside
# cuDNN: the gemma3-27b local decode preset (2 packed rows), MHA decode (1 row), the workgroup
# size there; the decode suite on Vulkan (4 rows: unchanged); q8_0 through contiguous bhsd, bshd
# and paged caches on every API (is paged q8_0's cost the layout's row stride or the paging?);
# attnvk check on Vulkan.
#     bash tools/h100/s24b.sh   (carry .gpu and build-h100 with attnvk-base beside attnvk)
set -u
out=${OUT:-/tmp/s24b-out}
source tools/h100/bench-lib.sh
new=$avk base=./build-h100/attnvk-base
logged check-vulkan 300 $avk check --api vulkan --impl attnvk
g3="--suite models --case gemma3-27b-local-decode --min-time 1"
mha="--batch 8 --heads 32 --kv-heads 32 --head-dim 128 --dtype f16 --seq 1 --seq-kv 16384 --min-time 1"
for round in 1 2; do
  avk=$new; bench g3-new-$round $g3 --api vulkan,cuda --impl attnvk,cudnn
  avk=$base; bench g3-base-$round $g3 --api vulkan --impl attnvk
  avk=$new; bench mha-new-$round $mha --api vulkan,cuda --impl attnvk,cudnn
  avk=$base; bench mha-base-$round $mha --api vulkan --impl attnvk
done
avk=$new
for wg in 64 256; do
  export ATTNVK_VK_WORKGROUP=$wg
  bench g3-wg$wg $g3 --api vulkan --impl attnvk
  bench mha-wg$wg $mha --api vulkan --impl attnvk
  unset ATTNVK_VK_WORKGROUP
done
bench g3-s1 $g3 --api vulkan --impl attnvk --split-kv 1
BENCH_TIMEOUT=150 bench decode-suite-vk --suite decode --api vulkan --impl attnvk
q8="--batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 32768 --kv-dtype q8_0 --impl attnvk --min-time 1"
for api in cuda vulkan opencl; do
  bench q8-bhsd-$api $q8 --api $api
  bench q8-bshd-$api $q8 --api $api --layout bshd
  bench q8-p16-$api $q8 --api $api --page-size 16
done
cd "$out" && tar -czf json.tar.gz json && rm -rf json
