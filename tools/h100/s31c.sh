#!/usr/bin/env bash
# For session 31: the wgmma backward's schedule (tile t+1's copies, LSE and D_i included, issued after
# the barrier that opens tile t: one barrier a tile fewer, no thread waiting on global loads), checked
# (test_cuda_backward, both bodies) and timed beside cuDNN; then where its time goes, one part taken out
# at a time (ATTNVK_CUDA_DEFINES=-DAVK_BWD_X=: 1 no dQ phase, 2 no dQ atomics, 4 no P/dS arithmetic;
# wrong gradients, so only their times count).
#     bash tools/h100/s31c.sh   (carry .gpu and build-h100; DEADLINE seconds, default 400)
set -u
out=${OUT:-/tmp/s31c-out}
source tools/h100/bench-lib.sh
start=$SECONDS deadline=${DEADLINE:-400}
test_backward wgmma ATTNVK_CUDA_BWD_WGMMA=1
test_backward mma ATTNVK_CUDA_BWD_WGMMA=0
b="--api cuda --dtype f16 --pass bwd --min-time 0.5 --batch 4 --heads 16 --head-dim 128 --seq 4096"
export BENCH_TIMEOUT=150
[ "$(left)" -gt 60 ] && bench bwd-d128-n4k $b --impl attnvk,cudnn
times() { python3 - "$out/json/$1.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["records"]:
    st = r.get("stats") or {}
    print(f"  {r['implementation']:6s} {r['status']:5s} median {st.get('median_ms', float('nan')):8.3f} ms")
PY
}
for x in 1 2 4 5; do
  [ "$(left)" -gt 40 ] && ATTNVK_CUDA_DEFINES=-DAVK_BWD_X=$x bench bwd-d128-n4k-x$x $b --impl attnvk > /dev/null && echo "X=$x:" && times bwd-d128-n4k-x$x
done
[ "$(left)" -gt 60 ] && bench bwd-d64-n4k --api cuda --dtype f16 --pass bwd --min-time 0.5 --batch 4 --heads 32 --head-dim 64 --seq 4096 --impl attnvk,cudnn
echo "== done at $((SECONDS - start)) s"
cd "$out" && tar -czf /tmp/s31c.tar.gz . && find . -mindepth 1 -delete && mv /tmp/s31c.tar.gz .
