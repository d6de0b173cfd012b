#!/usr/bin/env bash
# CLI behaviour: `attnvk run --api cpu` against an independent numpy float64
# attention, and one-line errors with exit status 2 for every kind of bad input.
# Usage: ATTNVK=path/to/attnvk test_cli.sh WORKDIR
set -u
attnvk=${ATTNVK:?set ATTNVK to the attnvk binary}
work=${1:?work dir}
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
rm -rf "$work" && mkdir -p "$work"

# one npy_tool.py process answers every `tool` call: numpy's import costs ~0.25 s a process
coproc npy_server { exec $python "$here/npy_tool.py" serve; }
server_pid=$npy_server_PID to_server=${npy_server[1]} from_server=${npy_server[0]}
trap 'kill "$server_pid" 2>/dev/null' EXIT
tool_timeout=120 # seconds for one answer; the slowest takes well under one
tool() { # npy_tool.py's words; prints its stdout, returns its exit status
  local request line out="" status=0
  printf -v request '%q ' "$@"
  # %q writes a newline as $'\n', which the server's shlex cannot read
  case $request in *"\$'"*) echo "tool: an argument is not a printable one-liner: $request" >&2; return 1;; esac
  trap '' PIPE # a dead server fails this call instead of killing the script
  printf '%s\n' "$request" 2>/dev/null >&"$to_server" || status=$?
  trap - PIPE
  while [ "$status" = 0 ]; do
    IFS= read -r -t "$tool_timeout" -u "$from_server" line || { status=$?; break; }
    if [[ $line == $'\x1e'EXIT\ * ]]; then printf '%s' "$out"; return "${line#*EXIT }"; fi
    out+=$line$'\n'
  done
  if [ "$status" -gt 128 ]; then # read timed out
    kill -KILL "$server_pid" 2>/dev/null # a late answer would be taken for the next call's
    echo "npy_tool server gave no answer to 'npy_tool.py $*' in $tool_timeout s: killed it" >&2
  else echo "npy_tool server (pid $server_pid) has exited: no answer to 'npy_tool.py $*'" >&2; fi
  printf '%s' "$out"
  return 1
}

passed=0 failed=0
seed=${ATTNVK_TEST_SEED:-$(( $(date +%s) % 100000 ))}
echo "test seed $seed (ATTNVK_TEST_SEED to replay)"

ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

# --- numerical cases: name B H HKV NQ NK D LAYOUT CAUSAL SCALE ---
while read -r name b h hkv nq nk d layout causal scale; do
  dir="$work/$name"; mkdir -p "$dir"
  tool make "$dir" "$b" "$h" "$hkv" "$nq" "$nk" "$d" "$layout" "$((seed + passed + failed))" || { bad "$name: make"; continue; }
  flags=(--api cpu --q "$dir/q.npy" --k "$dir/k.npy" --v "$dir/v.npy" --out "$dir/o.npy" --layout "$layout")
  [ "$causal" = 1 ] && flags+=(--causal)
  [ "$scale" != 0 ] && flags+=(--scale "$scale")
  if ! "$attnvk" run "${flags[@]}" > "$dir/log" 2>&1; then bad "$name: run failed: $(cat "$dir/log")"; continue; fi
  if res=$(tool check "$dir" "$layout" "$causal" "$scale"); then ok "$name $res"; else bad "$name $res"; fi
done <<'CASES'
gqa-8-2            2 8 2 33 70 64 bhsd 0 0
mqa                1 4 1 20 90 32 bhsd 0 0
causal-nq-lt-nk    1 2 2 17 60 64 bhsd 1 0
causal-nq-gt-nk    1 2 1 40 25 16 bhsd 1 0
d80                1 2 2 30 45 80 bhsd 0 0
d256               1 2 2 12 40 256 bhsd 1 0
nq1                2 4 2 1 300 128 bhsd 0 0
nq1-causal-bshd    1 4 4 1 129 64 bshd 1 0
bshd-gqa-causal    2 8 2 50 77 64 bshd 1 0
bshd-scale         1 3 3 20 20 48 bshd 0 0.2
CASES

# f16 input files are accepted (converted on read)
dir="$work/f16"; mkdir -p "$dir"
tool make "$dir" 1 2 2 8 8 16 bhsd "$seed" f16
if "$attnvk" run --api cpu --q "$dir/q.npy" --k "$dir/k.npy" --v "$dir/v.npy" --out "$dir/o.npy" > /dev/null 2>&1 &&
   tool check "$dir" bhsd 0 0 > /dev/null; then ok "float16 input files"; else bad "float16 input files"; fi

# --- bad input: exit 2 and a one-line message naming the problem ---
good="$work/gqa-8-2"
expect_usage() { # label, expected message fragment, attnvk args...
  local label=$1 frag=$2; shift 2
  local err; err=$("$attnvk" "$@" 2>&1 >/dev/null); local rc=$?
  local lines; lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$rc" = 2 ] && [ "$lines" = 1 ] && printf '%s' "$err" | grep -qF -- "$frag"; then ok "$label -> 2: $err"
  else bad "$label: rc=$rc lines=$lines msg='$err' (wanted '$frag')"; fi
}
run_with() { echo run --api cpu --q "$1" --k "$2" --v "$3" --out "$work/o.npy"; }
# by way of a file: a `tool` request is one line, these snippets are several
py() { printf '%s\n' "import numpy as np; $1" > "$work/snippet.py" && tool pyfile "$work/snippet.py"; }
py "np.save('$work/k_f8.npy', np.ones((2,2,70,64)))"
py "np.save('$work/k_i4.npy', np.ones((2,2,70,64), dtype=np.int32))"
py "np.save('$work/q_fortran.npy', np.asfortranarray(np.random.rand(2,8,33,64).astype(np.float32)))"
py "np.save('$work/v_short.npy', np.random.rand(2,2,71,64).astype(np.float32))"
py "np.save('$work/q_h7.npy', np.random.rand(2,7,33,64).astype(np.float32))"
py "np.save('$work/q_d63.npy', np.random.rand(2,8,33,63).astype(np.float32))"
py "np.save('$work/q_3d.npy', np.random.rand(8,33,64).astype(np.float32))"
py "np.save('$work/big_d.npy', np.random.rand(1,1,2,2000).astype(np.float32))"
head -c 100 "$good/q.npy" > "$work/q_truncated_header.npy"
head -c 5000 "$good/q.npy" > "$work/q_truncated_data.npy"
echo "not numpy" > "$work/q_text.npy"

expect_usage "missing file" "no-such.npy: cannot open" $(run_with "$work/no-such.npy" "$good/k.npy" "$good/v.npy")
expect_usage "not a npy file" "not a .npy file" $(run_with "$work/q_text.npy" "$good/k.npy" "$good/v.npy")
expect_usage "truncated header" "truncated" $(run_with "$work/q_truncated_header.npy" "$good/k.npy" "$good/v.npy")
expect_usage "truncated data" "truncated" $(run_with "$work/q_truncated_data.npy" "$good/k.npy" "$good/v.npy")
# k.npy with header_len (bytes 8-9) set to 64: the header then ends right after the shape
# tuple, and the reader used to take header padding as data (exit 0, --check passing)
mut="$work/header-len-64"; mkdir -p "$mut"
tool make "$mut" 1 2 1 5 7 16 bhsd "$seed" && cp "$mut/k.npy" "$mut/k64.npy"
printf '\100\000' | dd of="$mut/k64.npy" bs=1 seek=8 conv=notrunc status=none
expect_usage "k.npy header_len 64" "k64.npy: malformed .npy header: no newline at its declared end" \
  run --api cpu --q "$mut/q.npy" --k "$mut/k64.npy" --v "$mut/v.npy" --out "$mut/o.npy" --check
expect_usage "float64 file" "unsupported dtype '<f8'" $(run_with "$good/q.npy" "$work/k_f8.npy" "$good/v.npy")
expect_usage "int32 file" "unsupported dtype '<i4'" $(run_with "$good/q.npy" "$work/k_i4.npy" "$good/v.npy")
expect_usage "Fortran order" "Fortran" $(run_with "$work/q_fortran.npy" "$good/k.npy" "$good/v.npy")
expect_usage "K/V mismatch" "K and V differ" $(run_with "$good/q.npy" "$good/k.npy" "$work/v_short.npy")
expect_usage "H not multiple of Hkv" "not a multiple" $(run_with "$work/q_h7.npy" "$good/k.npy" "$good/v.npy")
expect_usage "head dim mismatch" "head dim" $(run_with "$work/q_d63.npy" "$good/k.npy" "$good/v.npy")
expect_usage "3-d tensor" "expected 4 dimensions" $(run_with "$work/q_3d.npy" "$good/k.npy" "$good/v.npy")
expect_usage "head dim too large" "head dim" $(run_with "$work/big_d.npy" "$work/big_d.npy" "$work/big_d.npy")
expect_usage "unsupported dtype option" "unsupported dtype 'f64'" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --dtype f64
expect_usage "unknown layout" "unknown layout" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --layout sbhd
expect_usage "bad scale" "--scale" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --scale abc
expect_usage "unknown option" "unknown option '--frobnicate'" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --frobnicate
expect_usage "missing --out" "--out is required" run --api cpu --q "$good/q.npy" --k "$good/k.npy" --v "$good/v.npy"
expect_usage "--out not writable" "run: --out $work/no-such-dir/o.npy: cannot create" \
  run --api cpu --q "$good/q.npy" --k "$good/k.npy" --v "$good/v.npy" --out "$work/no-such-dir/o.npy"
expect_usage "--lse not writable" "run: --lse $work: not a regular file" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --lse "$work"

# --out on a full disk (a file size limit stands in for it): exit 1 with one line, the
# file that was there intact byte-for-byte, no temporary left beside it
full="$work/full-disk"; mkdir -p "$full"
cp "$good/q.npy" "$full/o.npy"; cp "$good/q.npy" "$full/o.before"
err=$(trap '' XFSZ; ulimit -f 16
      "$attnvk" run --api cpu --q "$good/q.npy" --k "$good/k.npy" --v "$good/v.npy" --out "$full/o.npy" 2>&1 >/dev/null)
rc=$?
lines=$(printf '%s\n' "$err" | grep -c .) left=$(ls "$full" | tr '\n' ' ')
if [ "$rc" = 1 ] && [ "$lines" = 1 ] && printf '%s' "$err" | grep -qF "o.npy: write failed: File too large" &&
   cmp -s "$full/o.npy" "$full/o.before" && [ "$left" = "o.before o.npy " ]; then ok "--out on a full disk -> 1: $err"
else bad "--out on a full disk: rc=$rc lines=$lines msg='$err' files: $left"; fi
expect_usage "unknown api" "unknown API 'metal'" run --api metal --q "$good/q.npy" --k "$good/k.npy" --v "$good/v.npy" --out "$work/o.npy"
expect_usage "unknown command" "unknown command" frobnicate
expect_usage "devices bad option" "unknown option" devices --xml

# --- issue #11: numbers that overflow, names that are typos ---
expect_usage "seq-overflow-suffix" "got '18014398509481985k'" bench --seq 18014398509481985k
expect_usage "split-kv-overflow-suffix" "--split-kv wants 1..4096" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --split-kv 18014398509481985k
expect_usage "tensor-too-large" "tensor too large" bench --batch 1m --heads 1m --seq 16m --head-dim 1024
expect_usage "check-impl-typo" "unknown implementation 'bogus' (attnvk, cudnn, cublas, clblast, rocblas, openblas)" check --impl bogus
expect_usage "bench-impl-typo" "unknown implementation 'bogus' (attnvk, cudnn" bench --impl attnvk,bogus
expect_usage "run-impl-typo" "unknown implementation 'bogus' (attnvk, cudnn" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --impl bogus
expect_usage "bench-variant-typo" "unknown variant 'bogus' (cpu: flash-f32, reference-f64" bench --variant bogus
expect_usage "bench-max-seq-without-suite" "bench: --max-seq filters a --suite's cases" bench --max-seq 2k
expect_usage "bench-max-seq-garbage" "bench: --max-seq wants a length in 1..16m like 2k, got 'x'" bench --suite fa-grid --max-seq x
expect_usage "bench-case-without-suite" "bench: --case filters a --suite's cases" bench --case decode
expect_usage "bench-case-matches-none" "bench: suite 'models' has no case left after" bench --suite models --case no-such-case
expect_usage "run-variant-of-another-api" "unknown variant 'wgmma' (cpu: flash-f32, reference-f64)" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --variant wgmma
expect_usage "check-device-typo" "'no-such-gpu' matches no device" check --api cpu --device no-such-gpu
expect_usage "check-variant-typo" "check: unknown variant 'nope' (cpu: flash-f32, reference-f64)" check --variant nope --api cpu
expect_usage "bench-device-typo" "0=cpu:0" bench --api cpu --device cpu,no-such-gpu --seq 64 --heads 1 --head-dim 32 --iters 1
expect_usage "run-device-typo" "'cpu:5' matches no device" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --device 5
expect_usage "empty-device-spec" "--device" check --device ''
ATTNVK_VISIBLE_DEVICES=no-such-gpu expect_usage "visible-devices-typo" "ATTNVK_VISIBLE_DEVICES: 'no-such-gpu' matches no device" devices
ATTNVK_VISIBLE_DEVICES=cpu,,vulkan expect_usage "visible-devices-empty-item" "has an empty item" devices
out=$("$attnvk" check --api cpu --impl cudnn --dtype f32 2>&1); rc=$?
if [ "$rc" = 1 ] && printf '%s' "$out" | grep -q "check: nothing was checked"; then ok "check-nothing-checked -> 1"
else bad "check-nothing-checked: rc=$rc $(printf '%s' "$out" | tail -2)"; fi

# check runs the shared KV-cache table (paged, ragged, q8_0/q4_0/fp8) on every device it checks
out=$("$attnvk" check --api cpu --dtype f32 --seed "$seed" 2>&1); rc=$?
n_kv=$(printf '%s\n' "$out" | grep -E '^ok +cpu:0 .*kv=(q8_0|q4_0|fp8|dtype) page=' | grep -c .)
if [ "$rc" = 0 ] && [ "$n_kv" -ge 19 ] && printf '%s\n' "$out" | grep -q "paged 16 ragged .*kv=dtype page=16"; then
  ok "check covers the KV-cache cases ($n_kv on cpu)"; else bad "check kv-cache cases: rc=$rc n=$n_kv"; fi

expect_usage "bench-device-selects-nothing" "bench: no visible device matches --api vulkan --device cpu" bench --api vulkan --device cpu --seq 64 --heads 1 --head-dim 32 --iters 1
expect_usage "check-device-selects-nothing" "check: no visible device matches the --api and --device cpu given" check --api vulkan --device cpu
ATTNVK_CPU_THREADS=abc expect_usage "cpu-threads-garbage" "ATTNVK_CPU_THREADS: 'abc' is not an integer in 1..256" check --api cpu
ATTNVK_CPU_THREADS=0 expect_usage "cpu-threads-zero" "ATTNVK_CPU_THREADS: '0' is not an integer" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy")

# non-finite inputs: refused with the tensor and the count, --check or not
py "import numpy as np; k = np.load('$good/k.npy'); k[0, 1, 3, 5] = np.nan; k[1, 0, 0, 0] = np.inf; np.save('$work/k_nan.npy', k)"
py "import numpy as np; v = np.load('$good/v.npy'); v[0, 0, 0, :4] = 1e5; np.save('$work/v_big.npy', v)"
expect_usage "nan-inputs" "K ($work/k_nan.npy) holds 1 NaN and 1 Inf of" $(run_with "$good/q.npy" "$work/k_nan.npy" "$good/v.npy")
expect_usage "nan-inputs-check" "holds 1 NaN and 1 Inf" $(run_with "$good/q.npy" "$work/k_nan.npy" "$good/v.npy") --check
expect_usage "f16-overflow-inputs" "V ($work/v_big.npy) has 4 values beyond the range of f16" $(run_with "$good/q.npy" "$good/k.npy" "$work/v_big.npy") --dtype f16

# --- paged K/V (block table + seq_lens, int32) against numpy on the gathered pages ---
while read -r name b h hkv nq d layout page lens causal; do
  dir="$work/$name"; mkdir -p "$dir"
  tool paged "$dir" "$b" "$h" "$hkv" "$nq" "$d" "$layout" "$page" "$lens" "$((seed + passed + failed))" || { bad "$name: make"; continue; }
  flags=(--api cpu --q "$dir/q.npy" --k "$dir/kp.npy" --v "$dir/vp.npy" --block-table "$dir/table.npy"
         --seq-lens "$dir/lens.npy" --out "$dir/o.npy" --layout "$layout")
  [ "$causal" = 1 ] && flags+=(--causal)
  if ! "$attnvk" run "${flags[@]}" > "$dir/log" 2>&1; then bad "$name: run failed: $(cat "$dir/log")"; continue; fi
  if res=$(tool checkpaged "$dir" "$layout" "$causal" 1e-6); then ok "$name $res"; else bad "$name $res"; fi
done <<'CASES'
paged-ragged-16     4 8 2 1 64 bhsd 16 0,1,15,17 0
paged-causal-bshd   3 4 1 4 128 bshd 32 31,33,64 1
CASES
pg="$work/paged-ragged-16"
pflags=(--q "$pg/q.npy" --k "$pg/kp.npy" --v "$pg/vp.npy" --block-table "$pg/table.npy" --seq-lens "$pg/lens.npy" --out "$work/o.npy")
out=$("$attnvk" run --api cpu "${pflags[@]}" --kv-dtype q8_0 --check 2>&1); rc=$?
if [ "$rc" = 0 ] && printf '%s' "$out" | grep -q ": pass"; then ok "paged q8_0 --check: $out"; else bad "paged q8_0 --check: rc=$rc $out"; fi
out=$("$attnvk" run --api cpu --q "$good/q.npy" --k "$good/k.npy" --v "$good/v.npy" --out "$work/o.npy" --kv-dtype fp8 --check 2>&1); rc=$?
if [ "$rc" = 0 ] && printf '%s' "$out" | grep -q ": pass"; then ok "contiguous fp8 --check"; else bad "contiguous fp8 --check: rc=$rc $out"; fi
# the FP8 forward (issue #16): Q, K and V quantized per head here; --check on the dequantized inputs
# (tolerance 5e-2); O against numpy's float64 attention on the unquantized inputs: e4m3's few percent
for fp8 in "--dtype fp8" "--dtype bf16 --q-dtype fp8 --kv-dtype fp8" "--kv-dtype fp8 --q-dtype fp8 --causal"; do
  # shellcheck disable=SC2086 # the options split on purpose
  out=$("$attnvk" run --api cpu --q "$good/q.npy" --k "$good/k.npy" --v "$good/v.npy" --out "$good/o.npy" $fp8 --check 2>&1); rc=$?
  causal=0; case "$fp8" in *--causal*) causal=1;; esac
  if [ "$rc" = 0 ] && printf '%s' "$out" | grep -q "(tolerance 5e-02): pass" &&
     res=$(tool check "$good" bhsd "$causal" 0 2>&1; true) && rel=${res##*rel_l2 } && rel=${rel%% *} &&
     $python -c "import sys; r = float(sys.argv[1]); sys.exit(not 1e-2 < r < 8e-2)" "$rel"; then
    ok "run $fp8 --check, vs unquantized inputs rel_l2 $rel"
  else bad "run $fp8 --check: rc=$rc $out / $res"; fi
done
expect_usage "q-fp8-without-fp8-cache" "run: --q-dtype fp8 (the FP8 forward) needs an fp8 K/V cache: add --kv-dtype fp8" \
  $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --q-dtype fp8
expect_usage "q-fp8-q8_0-cache" "needs an fp8 K/V cache" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --q-dtype fp8 --kv-dtype q8_0
expect_usage "q-fp8-f32" "writes O in f16 or bf16, not f32" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --dtype f32 --q-dtype fp8 --kv-dtype fp8
expect_usage "dtype-fp8-kv-q4_0" "--dtype fp8 stores K and V in fp8: drop --kv-dtype q4_0" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --dtype fp8 --kv-dtype q4_0
expect_usage "q-dtype-unknown" "--q-dtype wants fp8 or dtype, got 'e5m2'" $(run_with "$good/q.npy" "$good/k.npy" "$good/v.npy") --q-dtype e5m2
expect_usage "bench-q-fp8-without-fp8-cache" "bench: --q-dtype fp8 (the FP8 forward) needs an fp8 K/V cache" bench --api cpu --q-dtype fp8 --seq 64
expect_usage "bench-dtype-fp8-q-dtype" "bench: --dtype fp8 stores Q in fp8: drop --q-dtype dtype" bench --api cpu --dtype fp8 --q-dtype dtype
expect_usage "bench-q-fp8-f32" "bench: --q-dtype fp8 (the FP8 forward) writes O in f16 or bf16, not f32" bench --api cpu --dtype f32 --q-dtype fp8 --kv-dtype fp8
expect_usage "bench-dtype-unknown" "bench: --dtype wants f32, f16, bf16 or fp8, got 'fp4'" bench --api cpu --dtype fp4
py "np.save('$work/table_f32.npy', np.load('$pg/table.npy').astype(np.float32))"
py "np.save('$work/table_i64.npy', np.load('$pg/table.npy').astype(np.int64))"
py "np.save('$work/lens_f32.npy', np.load('$pg/lens.npy').astype(np.float32))"
py "t = np.load('$pg/table.npy'); t[3, 0] = 999; np.save('$work/table_oob.npy', t)"
py "t = np.load('$pg/table.npy'); np.save('$work/lens_long.npy', np.array([0, 1, 15, t.shape[1] * 16 + 1], dtype=np.int32))"
py "np.save('$work/lens_neg.npy', np.array([0, -1, 15, 17], dtype=np.int32))"
py "np.save('$work/lens_b3.npy', np.array([0, 1, 15], dtype=np.int32))"
py "np.save('$work/q_i4.npy', np.ones((4,8,1,64), dtype=np.int32))"
py "np.save('$work/kp_d32.npy', np.load('$pg/kp.npy')[..., :32].copy())"
py "np.save('$work/table_1d.npy', np.load('$pg/table.npy')[0].copy())"
prun() { echo run --api cpu --q "$pg/q.npy" --k "$pg/kp.npy" --v "$pg/vp.npy" --out "$work/o.npy" --block-table "$1" --seq-lens "$2"; }
expect_usage "table-f32" "table_f32.npy: the block table has dtype '<f4'; it must be int32 '<i4'" $(prun "$work/table_f32.npy" "$pg/lens.npy")
expect_usage "table-i64" "table_i64.npy: the block table has dtype '<i8'; it must be int32" $(prun "$work/table_i64.npy" "$pg/lens.npy")
expect_usage "lens-f32" "lens_f32.npy: seq_lens has dtype '<f4'" $(prun "$pg/table.npy" "$work/lens_f32.npy")
expect_usage "q-int32" "q_i4.npy: unsupported dtype '<i4' for a tensor" run --api cpu --q "$work/q_i4.npy" --k "$pg/kp.npy" --v "$pg/vp.npy" --out "$work/o.npy" --block-table "$pg/table.npy" --seq-lens "$pg/lens.npy"
expect_usage "page-out-of-range" "block_table[3][0] = 999 is out of range" $(prun "$work/table_oob.npy" "$pg/lens.npy")
expect_usage "seq-len-past-table" "seq_lens[3] = 49 exceeds max_pages x page_size = 3 x 16" $(prun "$pg/table.npy" "$work/lens_long.npy")
expect_usage "seq-len-negative" "seq_lens[1] = -1 is negative" $(prun "$pg/table.npy" "$work/lens_neg.npy")
expect_usage "seq-lens-batch" "batch 4 in Q, 4 in the block table, 3 in seq_lens" $(prun "$pg/table.npy" "$work/lens_b3.npy")
expect_usage "table-1d" "the block table needs 2 dimensions" $(prun "$work/table_1d.npy" "$pg/lens.npy")
expect_usage "pages-head-dim" "head dim 64 in Q, 32 in the K/V pages" run --api cpu --q "$pg/q.npy" --k "$work/kp_d32.npy" --v "$work/kp_d32.npy" --out "$work/o.npy" --block-table "$pg/table.npy" --seq-lens "$pg/lens.npy"
expect_usage "unknown-kv-dtype" "unknown kv dtype 'q5_1'" $(prun "$pg/table.npy" "$pg/lens.npy") --kv-dtype q5_1
expect_usage "table-without-lens" "--block-table needs --seq-lens too" run --api cpu --q "$pg/q.npy" --k "$pg/kp.npy" --v "$pg/vp.npy" --out "$work/o.npy" --block-table "$pg/table.npy"
expect_usage "lens-without-table" "--seq-lens needs --block-table too" run --api cpu --q "$pg/q.npy" --k "$pg/kp.npy" --v "$pg/vp.npy" --out "$work/o.npy" --seq-lens "$pg/lens.npy"

# --version and `version`: version, commit, the APIs built
for v in --version version; do
  out=$("$attnvk" $v); rc=$?
  if [ "$rc" = 0 ] && printf '%s' "$out" | grep -qE '^attnvk [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{7,}|unknown), APIs built: cpu( [a-z]+)*\)$'; then
    ok "$v: $out"; else bad "$v: rc=$rc '$out'"; fi
done

# every environment variable the sources read is in `attnvk help env`
env_help=$("$attnvk" help env)
root=$(cd "$here/../.." && pwd)
read_vars=$(cd "$root" && { grep -rhoE 'getenv\("[A-Za-z_][A-Za-z0-9_]*"\)' runtime bench tests --include='*.c' --include='*.h' |
  sed -E 's/getenv\("(.*)"\)/\1/'; grep -rhoE '"ATTNVK_[A-Z0-9_]+"' runtime bench tests --include='*.c' --include='*.h' | tr -d '"'; } | sort -u)
# getenv(NAME) through a variable: only these, whose names are ATTNVK_ literals found above
indirect=$(cd "$root" && grep -rnE 'getenv\([^")]' runtime bench tests --include='*.c' --include='*.h' |
  grep -vE 'vk_variants\.c:.*getenv\(name\)|tuning\.c:.*getenv\(name\)|history_db\.c:.*getenv\(HISTORY_TEST_HOOK_ENV\)')
missing=""
for v in $read_vars; do printf '%s\n' "$env_help" | grep -qE "^  $v " || missing="$missing $v"; done
n_vars=$(printf '%s\n' $read_vars | grep -c .)
if [ -z "$missing" ] && [ -z "$indirect" ] && [ "$n_vars" -ge 20 ]; then ok "help env documents all $n_vars variables the sources read"
else bad "help env: undocumented:$missing; unlisted getenv indirection: $indirect"; fi

# --- devices --json is valid JSON and lists every API ---
if "$attnvk" devices --json | $python -c '
import json, sys
d = json.load(sys.stdin)
apis = {a["api"]: a for a in d["apis"]}
assert set(apis) == {"cpu", "vulkan", "opencl", "cuda", "hip"}, apis
for a in apis.values():
    assert a["status"] == "available" or a["reason"], a
assert any(x["api"] == "cpu" for x in d["devices"])
for x in d["devices"]:
    for key in ("name", "vendor", "type", "driver_version", "api_version", "memory_bytes", "subgroup_sizes", "uuid"):
        assert key in x, key
'; then ok "devices --json is valid and complete"; else bad "devices --json"; fi

# --- devices measures each device's read bandwidth once, then reads it from the cache ---
# (the text wraps long detail lines wherever the measured figure's width puts the break, so the
# checks read it as one line)
flat() { tr '\n' ' ' | tr -s ' '; }
bw_cache="$work/bandwidth-cache"
rm -rf "$bw_cache"
first=$(ATTNVK_CACHE_DIR="$bw_cache" "$attnvk" devices 2>&1 | flat)
second=$(ATTNVK_CACHE_DIR="$bw_cache" "$attnvk" devices --json 2>&1)
unmeasured=$(ATTNVK_CACHE_DIR="$work/bandwidth-empty" "$attnvk" devices --no-measure 2>&1 | flat)
if echo "$first" | grep -q "read bandwidth [0-9.]* GB/s (measured now)" &&
   ! echo "$first" | grep -q "read bandwidth unknown" &&
   echo "$second" | $python -c '
import json, sys
d = json.load(sys.stdin)
assert d["devices"] and all(x["read_bandwidth_gbps"] > 0 for x in d["devices"]), d["devices"]
' && ATTNVK_CACHE_DIR="$bw_cache" "$attnvk" devices | flat | grep -q "GB/s (cached)" &&
   ! ATTNVK_CACHE_DIR="$bw_cache" "$attnvk" devices | flat | grep -q "measured now" &&
   echo "$unmeasured" | grep -q "read bandwidth unknown (not measured yet)" &&
   ! echo "$unmeasured" | grep -q "GB/s"; then
    ok "devices: read bandwidth measured once per device, then cached; --no-measure shows cached only:" \
       $(echo "$first" | grep -o "read bandwidth [0-9.]* GB/s" | tr '\n' ' ')
else bad "devices read bandwidth: $first"; fi

# --- bench records carry the device's api_version beside driver_version ---
if "$attnvk" bench --api cpu --seq 64 --heads 1 --head-dim 32 --iters 1 --warmup 0 -o json --out "$work/rec.json" > /dev/null 2>&1 &&
   $python -c '
import json, sys
d = json.load(open(sys.argv[1]))
dev = {(x["api"], x["index"]): x for x in d["devices"]}
assert d["records"]
for r in d["records"]:
    x = d["devices"][r["device_index"]]
    assert r["api_version"] == x["api_version"] and r["driver_version"] == x["driver_version"], r
' "$work/rec.json"; then ok "records-api-version"; else bad "records-api-version"; fi

# --- score modifications and visibility (issue #13) on the CPU, against numpy ---
sa="$work/scores-a"; sb="$work/scores-b"; mkdir -p "$sa" "$sb"
tool make "$sa" 2 4 2 9 14 16 bhsd "$seed"   # Nq < Nk
tool make "$sb" 1 4 4 14 9 16 bhsd "$seed"   # Nq > Nk
for d in "$sa" "$sb"; do
  py "
rng = np.random.default_rng($seed)
q = np.load('$d/q.npy'); b, h, nq = q.shape[:3]; nk = np.load('$d/k.npy').shape[2]
m = rng.standard_normal((b, 1, nq, nk)); m[rng.random(m.shape) < 0.1] = -np.inf
np.save('$d/mask.npy', m.astype(np.float32))
np.save('$d/mask2d.npy', rng.standard_normal((nq, nk)).astype(np.float16))
np.save('$d/sinks.npy', rng.standard_normal(h).astype(np.float32))"
done
# attnvk's OpenCL kernels (the tiled bodies), the unfused CLBlast baseline and
# attnvk's Vulkan kernels apply them too, where OpenCL, CLBlast and Vulkan load
# (PoCL and lavapipe in CI)
apis=(cpu)
"$attnvk" run --api vulkan --q "$sa/q.npy" --k "$sa/k.npy" --v "$sa/v.npy" --out "$work/o.npy" \
  > /dev/null 2>&1 && apis+=(vulkan)
"$attnvk" run --api opencl --q "$sa/q.npy" --k "$sa/k.npy" --v "$sa/v.npy" --out "$work/o.npy" \
  > /dev/null 2>&1 && apis+=(opencl)
"$attnvk" run --api opencl --impl clblast --q "$sa/q.npy" --k "$sa/k.npy" --v "$sa/v.npy" --out "$work/o.npy" \
  > /dev/null 2>&1 && apis+=(clblast)
for api in "${apis[@]}"; do
while read -r name dir causal align window softcap mask sinks alibi; do
  d="$work/$dir"
  flags=(--api cpu --q "$d/q.npy" --k "$d/k.npy" --v "$d/v.npy" --out "$d/o.npy" --causal-align "$align")
  [ "$api" = clblast ] && flags=(--api opencl --impl clblast "${flags[@]:2}")
  [ "$api" = opencl ] && flags=(--api opencl "${flags[@]:2}")
  [ "$api" = vulkan ] && flags=(--api vulkan "${flags[@]:2}")
  [ "$causal" = 1 ] && flags+=(--causal)
  [ "$window" != - ] && flags+=(--window "$window")
  [ "$softcap" != 0 ] && flags+=(--softcap "$softcap")
  [ "$mask" != - ] && flags+=(--mask "$d/$mask")
  [ "$sinks" != - ] && flags+=(--sinks "$d/$sinks")
  [ "$alibi" = 1 ] && flags+=(--alibi)
  if ! "$attnvk" run "${flags[@]}" --check > "$d/log" 2>&1; then bad "$api $name: $(cat "$d/log")"; continue; fi
  if res=$(tool checkscores "$d" "$causal" "$align" "$window" "$softcap" "$mask" "$sinks" "$alibi"); then ok "$api $name $res"
  else bad "$api $name $res"; fi
done <<'CASES'
softcap-window-sinks   scores-a 1 bottom-right 4,-1 5 -          sinks.npy 0
mask-alibi             scores-a 0 bottom-right -    0 mask.npy   -         1
top-left-nq-lt-nk      scores-a 1 top-left     -    0 -          -         0
top-left-nq-gt-nk      scores-b 1 top-left     -    0 -          -         0
window-both-f16-mask   scores-b 0 top-left     2,3  0 mask2d.npy sinks.npy 1
all-of-them            scores-b 1 bottom-right 3,-1 2 mask2d.npy sinks.npy 1
CASES
done
# V's last dimension gives Dv (DeepSeek MLA: 192/128 prefill, 576/512 absorbed decode); O takes it
dv="$work/dv-prefill"; dvd="$work/dv-decode"; mkdir -p "$dv" "$dvd"
tool makedv "$dv" 1 4 2 20 33 192 128 bhsd "$seed"
tool makedv "$dvd" 2 8 2 1 90 576 512 bshd "$seed"
py "np.save('$dv/sinks.npy', np.random.default_rng($seed).standard_normal(4).astype(np.float32))"
for api in "${apis[@]}"; do # every implementation declares Dk != Dv
  target=(--api "$api")
  [ "$api" = clblast ] && target=(--api opencl --impl clblast)
  for c in "prefill $dv bhsd 1" "decode $dvd bshd 1 --split-kv 3" "decode-no-split $dvd bshd 0 --split-kv 1"; do
    set -- $c; name=$1 d=$2 layout=$3 causal=$4; shift 4
    [ "$api" = clblast ] && set -- # an unfused baseline has no split-KV to ask for
    flags=("${target[@]}" --q "$d/q.npy" --k "$d/k.npy" --v "$d/v.npy" --out "$d/o.npy" --layout "$layout" "$@")
    [ "$causal" = 1 ] && flags+=(--causal)
    if "$attnvk" run "${flags[@]}" --check > "$d/log" 2>&1 && res=$(tool check "$d" "$layout" "$causal" 0); then
      ok "$api dk/dv $name $res"; else bad "$api dk/dv $name: $(cat "$d/log") ${res:-}"; fi
  done
  flags=("${target[@]}" --q "$dv/q.npy" --k "$dv/k.npy" --v "$dv/v.npy" --out "$dv/o.npy" --causal --window 5,-1 --sinks "$dv/sinks.npy")
  if "$attnvk" run "${flags[@]}" --check > "$dv/log" 2>&1 && res=$(tool checkscores "$dv" 1 bottom-right 5,-1 0 - sinks.npy 0); then
    ok "$api dk/dv window sinks $res"; else bad "$api dk/dv window sinks: $(cat "$dv/log") ${res:-}"; fi
done
py "np.save('$work/v_d32.npy', np.random.rand(2,2,70,32).astype(np.float32))"
expect_usage "dk-dv-pair" "unsupported head dims Dk=64 (Q, K) and Dv=32 (V, O)" $(run_with "$good/q.npy" "$good/k.npy" "$work/v_d32.npy")
expect_usage "dk-dv-quantized" "need a contiguous K/V cache" \
  run --api cpu --q "$dv/q.npy" --k "$dv/k.npy" --v "$dv/v.npy" --out "$work/o.npy" --kv-dtype q8_0
expect_usage "bench-dk-dv-pair" "unsupported head dims Dk=64 (Q, K) and Dv=100" bench --api cpu --seq 64 --heads 1 --head-dim 64 --head-dim-v 100
if "$attnvk" bench --api cpu --batch 1 --heads 2 --seq 24 --head-dim 192 --head-dim-v 128 --dtype f32 --causal -r 1 \
     --warmup 0 -o json --out "$work/dv.json" > /dev/null 2>&1 &&
   $python -c '
import json, sys
r = json.load(open(sys.argv[1]))["records"][0]
c = r["case"]
assert r["status"] == "ok", r
assert c["name"].endswith("-dv128") and c["head_dim"] == 192 and c["head_dim_v"] == 128, c
' "$work/dv.json"; then ok "bench --head-dim-v"; else bad "bench --head-dim-v"; fi

srun() { echo run --api cpu --q "$sa/q.npy" --k "$sa/k.npy" --v "$sa/v.npy" --out "$work/o.npy"; }
py "np.save('$work/mask_bad_nk.npy', np.zeros((9, 13), np.float32))"
py "np.save('$work/mask_bad_b.npy', np.zeros((3, 1, 9, 14), np.float32))"
py "np.save('$work/mask_3d.npy', np.zeros((1, 9, 14), np.float32))"
py "np.save('$work/mask_nan.npy', np.full((9, 14), np.nan, np.float32))"
py "np.save('$work/sinks3.npy', np.zeros(3, np.float32))"
expect_usage "window-below-minus-one" "--window wants LEFT,RIGHT" $(srun) --window -2,3
expect_usage "window-one-side" "--window wants LEFT,RIGHT" $(srun) --window 4
expect_usage "causal-align-name" "--causal-align wants top-left or bottom-right" $(srun) --causal-align left
expect_usage "softcap-zero" "--softcap must be a positive number" $(srun) --softcap 0
expect_usage "alibi-twice" "--alibi makes ggml's slopes" $(srun) --alibi --alibi-slopes "$sa/sinks.npy"
expect_usage "mask-nk" "the mask's last dimensions are [9,13], the scores' [Nq,Nk] = [9,14]" $(srun) --mask "$work/mask_bad_nk.npy"
expect_usage "mask-batch" "mask batch dimension 3 does not broadcast to B=2" $(srun) --mask "$work/mask_bad_b.npy"
expect_usage "mask-3d" "the mask needs shape [Nq,Nk] or [1|B,1|H,Nq,Nk], got 3 dimensions" $(srun) --mask "$work/mask_3d.npy"
expect_usage "mask-nan" "the mask holds 126 NaN/+Inf values" $(srun) --mask "$work/mask_nan.npy"
expect_usage "sinks-length" "sinks need shape [H] = [4]" $(srun) --sinks "$work/sinks3.npy"
expect_usage "mask-paged" "--mask, --sinks and ALiBi take a contiguous" $(srun) --mask "$sa/mask.npy" --kv-dtype q8_0

# the bench takes the same modifications on generated inputs, names them and records them
if "$attnvk" bench --api cpu --batch 1 --heads 2 --seq 40 --seq-kv 70 --head-dim 16 --dtype f32 --causal --softcap 20 \
     --window 8,-1 --causal-align top-left --alibi --sinks random --mask random -r 1 --warmup 0 -o json \
     --out "$work/scores.json" > /dev/null 2>&1 &&
   $python -c '
import json, sys
r = json.load(open(sys.argv[1]))["records"][0]
c = r["case"]
assert r["status"] == "ok", r
assert c["name"].endswith("-softcap20-w8_-1-tl-alibi-sinks-mask"), c["name"]
assert (c["softcap"], c["window_left"], c["window_right"], c["causal_align"], c["alibi"], c["sinks"], c["mask"]) == \
    (20, 8, -1, "top-left", True, True, "random"), c
' "$work/scores.json"; then ok "bench score modifications"; else bad "bench score modifications"; fi
expect_usage "bench-mask-file" "bench: --mask wants 'random'" bench --api cpu --mask m.npy
expect_usage "bench-window" "bench: --window wants LEFT,RIGHT" bench --api cpu --window 3
# a case the modifiers make invalid is refused once, without a crash (double free, seen before)
expect_usage "bench-mask-too-large" "mask too large: 1*1*65536*65536" bench --api cpu --seq 65536 --heads 1 --head-dim 16 --mask random
expect_usage "bench-kv-dtype-head-dim" "kv format q8_0 needs a head dim that is a multiple of 32" bench --api cpu --seq 64 --heads 1 --head-dim 16 --kv-dtype q8_0

# --- sparse patterns (issue #20): block layouts and dilated attention on the CPU, against numpy ---
sp="$work/sparse"; spd="$work/sparse-nq-nk"; mkdir -p "$sp" "$spd"
tool make "$sp" 2 4 2 37 37 16 bhsd "$seed"    # 37: partial last blocks
tool make "$spd" 1 2 1 20 45 16 bhsd "$seed"   # Nq < Nk
py "
rng = np.random.default_rng($seed)
l = (rng.random((1, 4, 5, 3)) < 0.5).astype(np.uint8) * rng.integers(1, 255, (1, 4, 5, 3)).astype(np.uint8)
l[0, 1, 2, :] = 0  # an empty row of blocks
np.save('$sp/layout.npy', l)
np.save('$spd/layout.npy', np.where(rng.random((5, 6)) < 0.6, -3, 0).astype(np.int8))
np.save('$work/layout_f32.npy', np.ones((5, 3), np.float32))
np.save('$work/layout_short.npy', np.ones((5, 2), np.uint8))
np.save('$work/layout_b3.npy', np.ones((3, 1, 5, 3), np.uint8))
np.save('$work/layout_3d.npy', np.ones((1, 5, 3), np.uint8))
np.save('$work/q_u1.npy', np.ones((2, 4, 37, 16), np.uint8))
np.save('$sp/mask.npy', np.zeros((37, 37), np.float32))"
while read -r name d causal layout block dilated; do
  flags=(--api cpu --q "$work/$d/q.npy" --k "$work/$d/k.npy" --v "$work/$d/v.npy" --out "$work/$d/o.npy")
  [ "$causal" = 1 ] && flags+=(--causal)
  [ "$layout" != - ] && flags+=(--block-layout "$work/$d/$layout" --block-size "$block")
  [ "$dilated" != - ] && flags+=(--dilated "$dilated")
  if ! "$attnvk" run "${flags[@]}" --check > "$work/$d/log" 2>&1; then bad "sparse $name: $(cat "$work/$d/log")"; continue; fi
  if res=$(tool checksparse "$work/$d" "$causal" "$layout" "$block" "$dilated"); then ok "sparse $name $res"
  else bad "sparse $name $res"; fi
done <<'CASES'
layout-per-head-causal   sparse        1 layout.npy 8x16 -
layout-2d-int8-nq-lt-nk  sparse-nq-nk  0 layout.npy 4x8  -
dilated-2-groups         sparse        0 -          -    16,24:1,2
dilated-causal-4-groups  sparse        1 -          -    8,16,9,37:1,2,3,4
CASES
sprun() { echo run --api cpu --q "$sp/q.npy" --k "$sp/k.npy" --v "$sp/v.npy" --out "$work/o.npy"; }
expect_usage "layout-shape" "the block layout's last dimensions are [5,2]; [Nq,Nk] = [37,37] in 8x16 blocks needs [5,3]" \
  $(sprun) --block-layout "$work/layout_short.npy" --block-size 8x16
expect_usage "layout-batch" "block layout batch dimension 3 does not broadcast to B=2" $(sprun) --block-layout "$work/layout_b3.npy" --block-size 8x16
expect_usage "layout-3d" "the block layout needs shape [rows,cols] or [1|B,1|H,rows,cols], got 3" $(sprun) --block-layout "$work/layout_3d.npy" --block-size 8x16
expect_usage "layout-f32" "layout_f32.npy: the block layout has dtype '<f4'; it must be uint8 '|u1' or int8 '|i1'" \
  $(sprun) --block-layout "$work/layout_f32.npy" --block-size 8x16
expect_usage "q-uint8" "q_u1.npy: unsupported dtype '|u1' for a tensor" $(run_with "$work/q_u1.npy" "$sp/k.npy" "$sp/v.npy")
expect_usage "layout-no-size" "--block-layout needs --block-size BQxBK" $(sprun) --block-layout "$sp/layout.npy"
expect_usage "size-no-layout" "--block-size sizes the blocks of --block-layout" $(sprun) --block-size 8x16
expect_usage "block-size-bad" "--block-size wants BQxBK" $(sprun) --block-layout "$sp/layout.npy" --block-size 8
expect_usage "dilated-groups" "3 dilated groups do not divide H=4 heads" $(sprun) --dilated 8,16,32:1,2,4
expect_usage "dilated-rate-0" "dilated rate 1 is 0: rates must be >= 1" $(sprun) --dilated 8,16:1,0
expect_usage "dilated-counts" "--dilated wants S0,S1,..:R0,R1,.." $(sprun) --dilated 8,16:1
expect_usage "dilated-no-rates" "--dilated wants S0,S1,..:R0,R1,.." $(sprun) --dilated 8,16
expect_usage "dilated-nq-nk" "dilated attention needs Nq = Nk (got 20 and 45)" \
  run --api cpu --q "$spd/q.npy" --k "$spd/k.npy" --v "$spd/v.npy" --out "$work/o.npy" --dilated 8:2
expect_usage "dilated-mask" "dilated attention takes causal, softcap and GQA, not a mask" $(sprun) --dilated 8:2 --mask "$sp/mask.npy"
expect_usage "layout-paged" "--block-layout and --dilated take a contiguous" $(sprun) --block-layout "$sp/layout.npy" --block-size 8x16 --kv-dtype q8_0

# --- --check prints a passing comparison; ATTNVK_VISIBLE_DEVICES hides devices (a typo is an error, above) ---
if "$attnvk" run --api cpu --q "$good/q.npy" --k "$good/k.npy" --v "$good/v.npy" --out "$work/o.npy" --check | grep -q "pass"; then
  ok "run --check"; else bad "run --check"; fi
n=$(ATTNVK_VISIBLE_DEVICES=cpu "$attnvk" devices --json | $python -c 'import json,sys; print(len(json.load(sys.stdin)["devices"]))')
if [ "$n" = 1 ]; then ok "ATTNVK_VISIBLE_DEVICES=cpu keeps one device"; else bad "ATTNVK_VISIBLE_DEVICES: $n devices"; fi

kill -0 "$server_pid" 2>/dev/null || bad "the npy_tool server died during the run (messages above)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
