#!/usr/bin/env bash
# `attnvk run --grad-out` (issue #18): the CPU's gradients against an independent
# numpy float64 backward, d(sinks), bit-identical --deterministic runs, and
# one-line errors with exit status 2 for bad backward input.
# Usage: ATTNVK=path/to/attnvk PYTHON=python3-with-numpy test_cli_backward.sh WORKDIR
set -u
attnvk=${ATTNVK:?set ATTNVK to the attnvk binary}
work=${1:?work dir}
python=${PYTHON:-python3}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
passed=0 failed=0
seed=${ATTNVK_TEST_SEED:-$(( $(date +%s) % 100000 ))}
echo "test seed $seed (ATTNVK_TEST_SEED to replay)"
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

# inputs: GQA 4 -> 2, Nq 37 < Nk 50, odd lengths (bhsd); dO; sinks; a dO of the wrong shape and one with NaN
$python - "$seed" <<'PY' || { echo "FAIL numpy inputs"; exit 1; }
import sys, numpy as np
r = np.random.default_rng(int(sys.argv[1]))
f = lambda *s: r.standard_normal(s).astype(np.float32)
np.save("q.npy", f(2, 4, 37, 64)); np.save("k.npy", f(2, 2, 50, 64)); np.save("v.npy", f(2, 2, 50, 64))
np.save("do.npy", f(2, 4, 37, 64)); np.save("sinks.npy", f(4))
np.save("do_short.npy", f(2, 4, 36, 64)); np.save("do_3d.npy", f(8, 37, 64))
d = f(2, 4, 37, 64); d[0, 1, 2, 3] = np.nan; np.save("do_nan.npy", d)
PY

# an independent float64 backward with numpy (causal bottom-right, GQA, default scale)
check_numpy() {
  $python - <<'PY'
import numpy as np
q, k, v, do = (np.load(n + ".npy").astype(np.float64) for n in ("q", "k", "v", "do"))
h, hkv, nq, nk, d = q.shape[1], k.shape[1], q.shape[2], k.shape[2], q.shape[3]
kr, vr = np.repeat(k, h // hkv, 1), np.repeat(v, h // hkv, 1)
scale = 1 / np.sqrt(d)
s = np.einsum("bhid,bhjd->bhij", q, kr) * scale
s = np.where(np.arange(nk)[None, :] <= np.arange(nq)[:, None] + nk - nq, s, -np.inf)
p = np.exp(s - s.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
o = p @ vr
dp = do @ vr.transpose(0, 1, 3, 2)
ds = p * (dp - (do * o).sum(-1, keepdims=True))
want = {"dq": scale * ds @ kr,
        "dk": (scale * ds.transpose(0, 1, 3, 2) @ q).reshape(2, hkv, h // hkv, nk, d).sum(2),
        "dv": (p.transpose(0, 1, 3, 2) @ do).reshape(2, hkv, h // hkv, nk, d).sum(2)}
worst = 0
for name, w in want.items():
    got = np.load(name + ".npy").astype(np.float64)
    err = np.sqrt(((got - w) ** 2).sum() / (w ** 2).sum()) if np.isfinite(got).all() else np.inf
    print(f"{name} {err:.2e}", end=" ")
    worst = max(worst, err)
sys_exit = 0 if worst <= 1e-4 else 1
raise SystemExit(sys_exit)
PY
}

base=(run --api cpu --q q.npy --k k.npy --v v.npy --out o.npy --causal)
if "$attnvk" "${base[@]}" --grad-out do.npy --out-dq dq.npy --out-dk dk.npy --out-dv dv.npy --check > log 2>&1 &&
   grep -q "backward .* pass" log && res=$(check_numpy); then ok "f32 GQA causal Nq<Nk vs numpy: $res"
else bad "f32 GQA causal vs numpy: $(cat log) ${res:-}"; fi

if "$attnvk" "${base[@]}" --dtype bf16 --sinks sinks.npy --softcap 20 --grad-out do.npy --out-dsinks ds.npy \
     --out-dk dk2.npy --check > log 2>&1 && grep -q "dsinks .* pass" log &&
   $python -c "import numpy as np; assert np.load('ds.npy').shape == (4,) and np.load('dk2.npy').shape == (2,2,50,64)"
then ok "bf16 sinks+softcap with --check, d(sinks) [H]"; else bad "bf16 sinks+softcap: $(cat log)"; fi

det=(--grad-out do.npy --out-dq a_dq.npy --out-dk a_dk.npy --out-dv a_dv.npy --deterministic)
"$attnvk" "${base[@]}" "${det[@]}" > /dev/null 2>&1
for t in dq dk dv; do mv "a_$t.npy" "b_$t.npy"; done
"$attnvk" "${base[@]}" "${det[@]}" > /dev/null 2>&1
if cmp -s a_dq.npy b_dq.npy && cmp -s a_dk.npy b_dk.npy && cmp -s a_dv.npy b_dv.npy; then ok "--deterministic: two runs byte-identical"
else bad "--deterministic runs differ"; fi

# --- bad input: exit 2 and one line naming the problem ---
expect_usage() { # label, expected fragment, attnvk args...
  local label=$1 frag=$2; shift 2
  local err; err=$("$attnvk" "$@" 2>&1 >/dev/null); local rc=$?
  local lines; lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$rc" = 2 ] && [ "$lines" = 1 ] && printf '%s' "$err" | grep -qF -- "$frag"; then ok "$label -> 2: $err"
  else bad "$label: rc=$rc lines=$lines msg='$err' (wanted '$frag')"; fi
}
expect_usage "dO one query short" "dO must have the output's shape [2,4,37,64]" "${base[@]}" --grad-out do_short.npy --out-dq x.npy
expect_usage "dO of 3 dimensions" "has shape [8,37,64]" "${base[@]}" --grad-out do_3d.npy --out-dq x.npy
expect_usage "dO with NaN" "NaN/Inf" "${base[@]}" --grad-out do_nan.npy --out-dq x.npy
expect_usage "dO missing" "nothing.npy" "${base[@]}" --grad-out nothing.npy --out-dq x.npy
expect_usage "--out-dq without --grad-out" "--out-dq belongs to the backward pass" "${base[@]}" --out-dq x.npy
expect_usage "--deterministic without --grad-out" "--deterministic belongs to the backward pass" "${base[@]}" --deterministic
expect_usage "--grad-out without outputs" "--grad-out needs an output" "${base[@]}" --grad-out do.npy
expect_usage "--out-dsinks without --sinks" "--out-dsinks needs --sinks" "${base[@]}" --grad-out do.npy --out-dsinks x.npy
expect_usage "quantized K/V" "takes a contiguous K/V" "${base[@]}" --kv-dtype q8_0 --grad-out do.npy --out-dq x.npy
expect_usage "--out-dv in a missing folder" "--out-dv" "${base[@]}" --grad-out do.npy --out-dv no/such/dir/dv.npy
expect_usage "--out-dk without a value" "--out-dk needs a value" "${base[@]}" --grad-out do.npy --out-dk
if ls ./*.tmp* .*.tmp* > /dev/null 2>&1; then bad "temporary files left behind"; else ok "no temporary files left"; fi
[ -e x.npy ] && bad "a refused run wrote x.npy" || ok "refused runs wrote nothing"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
