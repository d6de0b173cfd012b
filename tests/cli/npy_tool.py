#!/usr/bin/env python3
"""Test helper: makes .npy inputs and checks `attnvk run` output against an
independent float64 attention written with numpy.

  npy_tool.py make DIR B H HKV NQ NK D LAYOUT SEED [f16]
  npy_tool.py check DIR LAYOUT CAUSAL SCALE   -> prints rel_l2, exits 1 above 1e-6
"""
import sys
import numpy as np


def make(d, b, h, hkv, nq, nk, dim, layout, seed, dtype="f32"):
    rng = np.random.default_rng(int(seed))
    dt = np.float16 if dtype == "f16" else np.float32
    shape_q = (b, h, nq, dim) if layout == "bhsd" else (b, nq, h, dim)
    shape_kv = (b, hkv, nk, dim) if layout == "bhsd" else (b, nk, hkv, dim)
    for name, shape in (("q", shape_q), ("k", shape_kv), ("v", shape_kv)):
        np.save(f"{d}/{name}.npy", rng.standard_normal(shape).astype(dt))


def attention(q, k, v, causal, scale):
    # q [B,H,Nq,D], k/v [B,Hkv,Nk,D], float64
    b, h, nq, dim = q.shape
    hkv, nk = k.shape[1], k.shape[2]
    k = np.repeat(k, h // hkv, axis=1)
    v = np.repeat(v, h // hkv, axis=1)
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    if causal:
        i = np.arange(nq)[:, None]
        j = np.arange(nk)[None, :]
        s = np.where(j <= i + nk - nq, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    denom = p.sum(axis=-1, keepdims=True)
    o = np.einsum("bhij,bhjd->bhid", p, v)
    return np.divide(o, denom, out=np.zeros_like(o), where=denom > 0)


def check(d, layout, causal, scale):
    q, k, v = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in "qkv")
    out = np.load(f"{d}/o.npy")
    if out.dtype != np.float32 or out.shape != q.shape:
        print(f"bad output: {out.dtype} {out.shape}, expected float32 {q.shape}")
        return 1
    if layout == "bshd":
        q, k, v = (x.transpose(0, 2, 1, 3) for x in (q, k, v))
    scale = float(scale) if float(scale) > 0 else 1.0 / np.sqrt(q.shape[-1])
    ref = attention(q, k, v, causal == "1", scale)
    if layout == "bshd":
        ref = ref.transpose(0, 2, 1, 3)
    if not np.all(np.isfinite(out)):
        print("non-finite output")
        return 1
    rel = np.linalg.norm(out - ref) / max(np.linalg.norm(ref), 1e-300)
    print(f"rel_l2 {rel:.3e}")
    return 0 if rel <= 1e-6 else 1


if __name__ == "__main__":
    a = sys.argv
    if a[1] == "make":
        make(a[2], *map(int, a[3:9]), a[9], a[10], *(a[11:12]))
        sys.exit(0)
    sys.exit(check(a[2], a[3], a[4], a[5]))
