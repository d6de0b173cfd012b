#!/usr/bin/env bash
# Session 41's second call. #20's record on every API with the current defaults (OpenCL's pattern-only
# programs now in): random 10% of 128x128 blocks against dense at N=32k (B=1, H=16, D=128, f16), two
# rounds, then test_sparse on the H100. #13: CUDA's softcap with tanh of f16 pairs (AVK_SOFTCAP_F16X2=1)
# against the default, beside plain, at s41x's shape. #15: the Vulkan prefill table's registers. #16:
# fp8's tiles (192x128, 128x256) against the default 128x128.
#     DEADLINE=330 bash tools/h100/s41b.sh   (carry .gpu and build-h100b, staged with test_sparse)
set -u
out=${OUT:-/tmp/s41b-out}
export AVK=${AVK:-./build-h100b/attnvk}
source tools/h100/bench-lib.sh
sp="--dtype f16 --batch 1 --heads 16 --head-dim 128 --seq 32k --impl attnvk --min-time 0.4"
sparse_round() {
  for api in cuda vulkan opencl; do
    bench sparse-$api-r10-$1 --api $api $sp --block-layout random:0.1 --block-size 128x128
    bench sparse-$api-dense-$1 --api $api $sp
  done
}
sparse_round 1
for c in "d128:--head-dim 128 --heads 16" "d64:--head-dim 64 --heads 32"; do
  ATTNVK_VK_PIPELINE_STATS=1 bench vk-${c%%:*} --api vulkan --dtype f16 --batch 4 --seq 4096 ${c#*:} --impl attnvk --min-time 0.1
  python3 -c "import json,sys; [print('  params:', r.get('params')) for r in json.load(open(sys.argv[1]))['records']]" $out/json/vk-${c%%:*}.json
done
# #16: fp8's tiles (the softmax does not shrink with the MMAs, s41x's timeline: 1.20 us a tile against
# f16's 1.60): three consumer warpgroups (192 rows), or 256 keys a tile
f8="--api cuda --batch 2 --heads 16 --head-dim 128 --seq 8192 --impl attnvk --min-time 0.3"
for t in default 192x128 128x256; do
  [ "$(left)" -gt 150 ] || break
  if [ $t = default ]; then bench fp8-$t $f8 --dtype fp8; else bench fp8-$t $f8 --dtype fp8 --tile $t; fi
done
[ "$(left)" -gt 150 ] && bench f16-n8k $f8 --dtype f16
s8="--api cuda --dtype f16 --batch 2 --heads 16 --head-dim 128 --seq 8192 --causal --impl attnvk --min-time 0.3"
if [ "$(left)" -gt 140 ]; then
  bench plain $s8
  bench softcap $s8 --softcap 30
  ATTNVK_CUDA_DEFINES=-DAVK_SOFTCAP_F16X2=1 bench softcap-f16x2 $s8 --softcap 30
fi
[ "$(left)" -gt 110 ] && sparse_round 2
[ -x $bin/tests/test_sparse ] && [ "$(left)" -gt 40 ] && logged test-sparse $(( $(left) - 10 )) $bin/tests/test_sparse
echo "== s41b done at $((SECONDS - start)) s"
pack_out s41b
