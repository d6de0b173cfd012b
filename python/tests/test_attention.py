"""attnvk.attention on every API against the float64 numpy reference."""
import numpy as np
import pytest

import attnvk
import reference as ref
from conftest import normal

TOLERANCE = {"f32": 1e-5, "f16": 5e-3}


def qkv(rng, B=2, H=4, G=2, Nq=37, Nk=45, D=64, Dv=None, layout="bhsd"):
    shape = (lambda h, n, d: (B, h, n, d)) if layout == "bhsd" else (lambda h, n, d: (B, n, h, d))
    return normal(rng, *shape(H, Nq, D)), normal(rng, *shape(G, Nk, D)), normal(rng, *shape(G, Nk, Dv or D))


def rounded(dtype, *xs):
    """The inputs as the device holds them (the reference must see the same values)."""
    return [x.astype(np.float16).astype(np.float32) if dtype == "f16" else x for x in xs]


@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("layout,causal", [("bhsd", True), ("bshd", False)])
def test_gqa_matches_float64(api, rng, dtype, layout, causal):
    q, k, v = rounded(dtype, *qkv(rng, layout=layout))
    info = {}
    o = attnvk.attention(q, k, v, causal=causal, api=api, dtype=dtype, layout=layout, info=info)
    want, _ = ref.attention(q, k, v, causal=causal, layout=layout)
    assert o.shape == q.shape and o.dtype == (np.float16 if dtype == "f16" else np.float32)
    assert ref.rel_l2(o, want) <= TOLERANCE[dtype], info
    assert info["device"].startswith(api) and info["device_ms"] > 0


def test_decode_mqa_lse_and_scale(api, rng):
    q, k, v = qkv(rng, B=1, H=8, G=1, Nq=1, Nk=100)
    o, lse = attnvk.attention(q, k, v, scale=0.3, api=api, return_lse=True)
    want, want_lse = ref.attention(q, k, v, scale=0.3)
    assert ref.rel_l2(o, want) <= 1e-5 and ref.rel_l2(lse, want_lse) <= 1e-5


def test_head_dim_v(api, rng):  # DeepSeek MLA's 192/128
    q, k, v = qkv(rng, B=1, H=2, G=1, Nq=3, Nk=20, D=192, Dv=128)
    o = attnvk.attention(q, k, v, api=api)
    assert o.shape == (1, 2, 3, 128) and ref.rel_l2(o, ref.attention(q, k, v)[0]) <= 1e-5


SCORE_CASES = {  # name: (attnvk.attention options, reference options)
    "window": (dict(window=(8, 2), causal=True), dict(window=(8, 2), causal=True)),
    "top-left": (dict(causal=True, causal_align="top-left"), dict(causal=True, top_left=True)),
    "softcap": (dict(softcap=5.0), dict(softcap=5.0)),
    "alibi": (dict(alibi=True, causal=True), dict(slopes="ggml", causal=True)),
    "sinks": (dict(sinks="random"), dict(sinks="random")),
    "mask": (dict(mask="random"), dict(mask="random")),
}


@pytest.mark.parametrize("case", SCORE_CASES)
def test_score_modifications(api, rng, case):
    q, k, v = qkv(rng, H=4, G=2, Nq=5, Nk=40, layout="bshd")
    made = {"sinks": normal(rng, 4), "mask": normal(rng, 5, 40), "slopes": attnvk.alibi_slopes(4)}
    made["mask"][:, ::7] = -np.inf
    ours, theirs = ({key: made[key] if val in ("random", "ggml") else val for key, val in opts.items()}
                    for opts in SCORE_CASES[case])
    if "slopes" in theirs:
        theirs["slopes"] = made["slopes"]
    o = attnvk.attention(q, k, v, layout="bshd", api=api, **ours)
    assert ref.rel_l2(o, ref.attention(q, k, v, layout="bshd", **theirs)[0]) <= 1e-5


def test_paged_and_ragged_cache(api, rng):
    B, G, D, page, pages = 2, 2, 64, 16, 3
    q, k, v = qkv(rng, B=B, H=4, G=G, Nq=4, Nk=40, layout="bshd")
    lens = np.array([33, 40], np.int32)
    order = rng.permutation(B * pages)  # each sequence's pages, scattered through the pool
    pools = []
    for x in (k, v):
        padded = np.zeros((B, pages * page, G, D), np.float32)
        padded[:, :40] = x
        pool = np.empty((B * pages, page, G, D), np.float32)
        pool[order] = padded.reshape(-1, page, G, D)
        pools.append(pool)
    table = order.reshape(B, pages).astype(np.int32)
    want, _ = ref.attention(q, k, v, causal=True, layout="bshd", seq_lens=lens)
    paged = attnvk.attention(q, *pools, causal=True, layout="bshd", block_table=table, seq_lens=lens, api=api)
    ragged = attnvk.attention(q, k, v, causal=True, layout="bshd", seq_lens=lens, api=api)
    assert ref.rel_l2(paged, want) <= 1e-5 and ref.rel_l2(ragged, want) <= 1e-5


def test_quantized_cache_near_unquantized(rng):
    q, k, v = qkv(rng, Nq=4, Nk=64)
    want, _ = ref.attention(q, k, v)
    for kv_dtype, bound in (("q8_0", 0.03), ("fp8", 0.1), ("q4_0", 0.3)):  # quantization error, not a bug bound
        assert ref.rel_l2(attnvk.attention(q, k, v, api="cpu", kv_dtype=kv_dtype), want) <= bound


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_fp8_forward_on_the_cpu(rng, dtype):
    """q_dtype='fp8' (the FP8 forward): Q, K and V in e4m3 with per-head scales, O in dtype. The CPU
    computes exactly on the decoded values: against the unquantized inputs, e4m3's few percent."""
    q, k, v = qkv(rng, Nq=40, Nk=70, D=64)
    want, _ = ref.attention(q, k, v, causal=True)
    o = attnvk.attention(q, k, v, causal=True, api="cpu", dtype=dtype, q_dtype="fp8", kv_dtype="fp8")
    assert o.shape == q.shape and np.isfinite(o).all()
    assert 1e-3 < ref.rel_l2(o, want) <= 8e-2  # quantization error, not a bug bound
    (r,) = attnvk.bench(batch=1, heads=4, kv_heads=2, seq_q=40, head_dim=64, causal=True, dtype=dtype, api="cpu",
                        kv_dtype="fp8", q_dtype="fp8", iters=2)
    assert r["status"] == "ok" and r["check"]["passed"] and r["check"]["tolerance"] == 0.05, r
    assert r["case"]["dtype"] == "fp8" and r["case"]["o_dtype"] == dtype and r["case"]["q_format"] == "fp8"
