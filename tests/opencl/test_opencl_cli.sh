#!/usr/bin/env bash
# `attnvk run --api opencl --check` agrees with the float64 reference and with
# `attnvk run --api cpu` on the same .npy files, for each implementation and
# a few variants/options. Usage: ATTNVK=path/to/attnvk test_opencl_cli.sh WORKDIR
set -u
attnvk=${ATTNVK:?set ATTNVK to the attnvk binary}
work=${1:?work dir}
here=$(cd "$(dirname "$0")" && pwd)
tool="${PYTHON:-python3} $here/npy_plain.py"
rm -rf "$work" && mkdir -p "$work"
if ! ATTNVK_VISIBLE_DEVICES=opencl "$attnvk" devices >/dev/null 2>&1; then  # exit 2: no OpenCL device
  echo "no OpenCL device: skipped"; echo "0 passed, 0 failed"; exit 77
fi
passed=0 failed=0
seed=${ATTNVK_TEST_SEED:-$(( $(date +%s) % 100000 ))}
echo "test seed $seed (ATTNVK_TEST_SEED to replay)"
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

# name B H HKV NQ NK D LAYOUT CAUSAL DTYPE TOL extra-args...
while read -r name b h hkv nq nk d layout causal dtype tol extra; do
  dir="$work/$name"; mkdir -p "$dir"
  $tool make "$dir" "$b" "$h" "$hkv" "$nq" "$nk" "$d" "$layout" "$((seed + passed + failed))" || { bad "$name: make"; continue; }
  flags=(--q "$dir/q.npy" --k "$dir/k.npy" --v "$dir/v.npy" --layout "$layout" --dtype "$dtype")
  [ "$causal" = 1 ] && flags+=(--causal)
  # shellcheck disable=SC2086
  if ! out=$("$attnvk" run --api opencl "${flags[@]}" --out "$dir/o_cl.npy" --check $extra 2>&1); then
    bad "$name: $out"; continue
  fi
  if ! "$attnvk" run --api cpu "${flags[@]}" --out "$dir/o_cpu.npy" > /dev/null 2>&1; then bad "$name: cpu run"; continue; fi
  if cmp=$($tool compare "$dir/o_cl.npy" "$dir/o_cpu.npy" "$tol"); then ok "$name: ${out#*: }; vs cpu $cmp"
  else bad "$name: vs cpu $cmp"; fi
done <<'CASES'
gqa-f32           2 8 2 33 70 64 bhsd 0 f32 1e-5
causal-bshd-f32   1 4 2 50 77 96 bshd 1 f32 1e-5
decode-split      1 8 2 1 600 128 bhsd 0 f32 1e-5 --split-kv 4
tile-override     1 2 2 45 90 32 bhsd 1 f32 1e-5 --tile 16x8
f16-tiled         1 4 4 40 64 64 bhsd 1 f16 5e-3
f16-mma-emu       1 2 1 40 64 64 bshd 0 f16 5e-3 --variant mma-f16-emu
clblast           2 4 2 30 50 64 bshd 1 f32 1e-5 --impl clblast
CASES
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
