#!/usr/bin/env python3
"""Test helper: makes .npy inputs and checks `attnvk run` output against an
independent float64 attention written with numpy.

  npy_tool.py make DIR B H HKV NQ NK D LAYOUT SEED [f16]
  npy_tool.py makedv DIR B H HKV NQ NK DK DV LAYOUT SEED  (V's head dim DV, Q and K's DK)
  npy_tool.py check DIR LAYOUT CAUSAL SCALE   -> prints rel_l2, exits 1 above 1e-5 (the f32 tolerance)
  npy_tool.py paged DIR B H HKV NQ D LAYOUT PAGE LENS SEED
      (LENS comma-separated, one per sequence: q.npy, pages kp.npy/vp.npy
       [num_pages,page,Hkv,D] in shuffled order, table.npy int32 [B,max_pages]
       with garbage past each sequence's pages, lens.npy int32 [B])
  npy_tool.py checkpaged DIR LAYOUT CAUSAL TOL -> rel_l2 against the gathered pages
  npy_tool.py checkscores DIR CAUSAL ALIGN WINDOW SOFTCAP MASK SINKS ALIBI
      (bhsd, default scale; WINDOW "L,R" or -, MASK/SINKS file names in DIR or -,
       ALIBI 1 for ggml's slopes) -> rel_l2 against numpy, exits 1 above 1e-5
  npy_tool.py checksparse DIR CAUSAL LAYOUT BQxBK DILATED
      (bhsd, Nq = Nk for DILATED; LAYOUT a file in DIR or -, DILATED "S0,S1:R0,R1" or -)
      -> rel_l2 against numpy with the issue's visibility rules, exits 1 above 1e-5
  npy_tool.py pyfile FILE   runs a Python file (test_cli.sh's numpy one-offs)
  npy_tool.py serve
      one command per stdin line (the words above, shell-quoted); answers each with
      its stdout, then a line "\x1eEXIT <status>": numpy's import is paid once, not per call
"""
import contextlib
import io
import shlex
import sys
import traceback
import warnings
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


def paged(d, b, h, hkv, nq, dim, layout, page, lens, seed):
    rng = np.random.default_rng(int(seed))
    lens = [int(x) for x in lens.split(",")]
    assert len(lens) == b
    max_pages = max(1, (max(lens) + page - 1) // page) + 1  # a garbage column past every sequence
    used = [(n + page - 1) // page for n in lens]
    num_pages = sum(used) + 2  # spare pages nobody owns
    order = rng.permutation(num_pages)
    table = rng.integers(-1000, 1000, size=(b, max_pages)).astype(np.int32)
    nxt = 0
    for i in range(b):
        table[i, : used[i]] = order[nxt : nxt + used[i]]
        nxt += used[i]
    shape_q = (b, h, nq, dim) if layout == "bhsd" else (b, nq, h, dim)
    np.save(f"{d}/q.npy", rng.standard_normal(shape_q).astype(np.float32))
    for name in ("kp", "vp"):
        np.save(f"{d}/{name}.npy", rng.standard_normal((num_pages, page, hkv, dim)).astype(np.float32))
    np.save(f"{d}/table.npy", table)
    np.save(f"{d}/lens.npy", np.array(lens, dtype=np.int32))


def check_paged(d, layout, causal, tol):
    q = np.load(f"{d}/q.npy").astype(np.float64)
    kp, vp = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("kp", "vp"))
    table, lens = np.load(f"{d}/table.npy"), np.load(f"{d}/lens.npy")
    out = np.load(f"{d}/o.npy")
    if out.dtype != np.float32 or out.shape != q.shape:
        print(f"bad output: {out.dtype} {out.shape}, expected float32 {q.shape}")
        return 1
    if layout == "bshd":
        q = q.transpose(0, 2, 1, 3)
    page = kp.shape[1]
    ref = np.zeros_like(q)
    for b, n in enumerate(lens):
        if n == 0:  # no keys: the output row is zero
            continue
        rows = [table[b, j // page] * page + j % page for j in range(n)]
        # one sequence at a time: [1,Hkv,n,D] from the flattened pages
        k = kp.reshape(-1, kp.shape[2], kp.shape[3])[rows].transpose(1, 0, 2)[None]
        v = vp.reshape(-1, vp.shape[2], vp.shape[3])[rows].transpose(1, 0, 2)[None]
        ref[b : b + 1] = attention(q[b : b + 1], k, v, causal == "1", 1.0 / np.sqrt(q.shape[-1]))
    if layout == "bshd":
        ref = ref.transpose(0, 2, 1, 3)
    if not np.all(np.isfinite(out)):
        print("non-finite output")
        return 1
    rel = np.linalg.norm(out - ref) / max(np.linalg.norm(ref), 1e-300)
    print(f"rel_l2 {rel:.3e}")
    return 0 if rel <= float(tol) else 1


def check(d, layout, causal, scale):
    q, k, v = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in "qkv")
    out = np.load(f"{d}/o.npy")
    o_shape = q.shape[:-1] + v.shape[-1:]  # O has Q's shape with V's head dim
    if out.dtype != np.float32 or out.shape != o_shape:
        print(f"bad output: {out.dtype} {out.shape}, expected float32 {o_shape}")
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
    # the project's f32 tolerance: 1e-6 failed about one seed in four for CLBlast's
    # 576/512 decode (f32 sums over 576 values, rel_l2 up to 1.13e-6)
    return 0 if rel <= 1e-5 else 1


def alibi_slopes(h):
    n = 2 ** int(np.floor(np.log2(h)))
    m0, m1 = 2.0 ** (-8.0 / n), 2.0 ** (-4.0 / n)
    return np.array([m0 ** (i + 1) if i < n else m1 ** (2 * (i - n) + 1) for i in range(h)])


def load_scores(d):
    """Q, K and V of a run's folder (K/V repeated over GQA groups), its O and the scaled scores."""
    q, k, v = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in "qkv")
    h, hkv = q.shape[1], k.shape[1]
    k, v = np.repeat(k, h // hkv, axis=1), np.repeat(v, h // hkv, axis=1)
    return q, k, v, np.load(f"{d}/o.npy"), np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(q.shape[3])


def check_scores(d, causal, align, window, softcap, mask, sinks, alibi):
    q, k, v, out, s = load_scores(d)
    b, h, nq, dim = q.shape
    nk = k.shape[2]
    if float(softcap) > 0:
        s = float(softcap) * np.tanh(s / float(softcap))
    i = np.arange(nq)[:, None] + (0 if align == "top-left" else nk - nq)
    j = np.arange(nk)[None, :]
    if alibi == "1":
        s = s + alibi_slopes(h)[None, :, None, None] * (j - i)[None, None]
    if mask != "-":
        s = s + np.load(f"{d}/{mask}").astype(np.float64)  # broadcasts [Nq,Nk] or [1|B,1|H,Nq,Nk]
    visible = np.ones((nq, nk), dtype=bool)
    if causal == "1":
        visible &= j <= i
    if window != "-":
        left, right = (int(x) for x in window.split(","))
        if left >= 0:
            visible &= j >= i - left
        if right >= 0:
            visible &= j <= i + right
    s = np.where(visible[None, None], s, -np.inf)
    sink = np.load(f"{d}/{sinks}").astype(np.float64)[None, :, None, None] if sinks != "-" else None
    m = s.max(axis=-1, keepdims=True)
    if sink is not None:
        m = np.maximum(m, sink)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    denom = p.sum(axis=-1, keepdims=True) + (np.exp(sink - m) if sink is not None else 0.0)
    o = np.einsum("bhij,bhjd->bhid", p, v)
    ref = np.divide(o, denom, out=np.zeros_like(o), where=denom > 0)
    if out.shape != ref.shape or not np.all(np.isfinite(out)):
        print(f"bad output: {out.shape}, finite {np.all(np.isfinite(out))}")
        return 1
    rel = np.linalg.norm(out - ref) / max(np.linalg.norm(ref), 1e-300)
    print(f"rel_l2 {rel:.3e}")
    return 0 if rel <= 1e-5 else 1


def sparse_visible(b, h, nq, nk, causal, layout, block, dilated):
    """[B,H,Nq,Nk] visibility from issue #20's rules, spelled independently."""
    i = np.arange(nq)[:, None]
    j = np.arange(nk)[None, :]
    vis = np.ones((b, h, nq, nk), dtype=bool)
    if causal == "1":
        vis &= (j <= i + nk - nq)[None, None]
    if layout is not None:
        bq, bk = block
        lay = layout.reshape((1, 1) + layout.shape) if layout.ndim == 2 else layout
        full = np.repeat(np.repeat(lay != 0, bq, axis=2), bk, axis=3)[:, :, :nq, :nk]
        vis &= np.broadcast_to(full, vis.shape)
    if dilated is not None:
        segs, rates = ([int(x) for x in part.split(",")] for part in dilated.split(":"))
        groups = len(segs)
        for hh in range(h):
            g = hh // (h // groups)
            s, r = segs[g], rates[g]
            o = g % r
            active_i = (i % s) % r == o
            active_j = (j % s) % r == o
            vis[:, hh] &= active_i & active_j & (i // s == j // s)
    return vis


def check_sparse(d, causal, layout_file, block, dilated):
    q, k, v, out, s = load_scores(d)
    b, h, nq, dim = q.shape
    nk = k.shape[2]
    layout = np.load(f"{d}/{layout_file}") if layout_file != "-" else None
    bq, bk = (int(x) for x in block.split("x")) if block != "-" else (1, 1)
    vis = sparse_visible(b, h, nq, nk, causal, layout, (bq, bk), dilated if dilated != "-" else None)
    s = np.where(vis, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    denom = p.sum(axis=-1, keepdims=True)
    o = np.einsum("bhij,bhjd->bhid", p, v)
    ref = np.divide(o, denom, out=np.zeros_like(o), where=denom > 0)
    if out.shape != ref.shape or not np.all(np.isfinite(out)):
        print(f"bad output: {out.shape}, finite {np.all(np.isfinite(out))}")
        return 1
    rel = np.linalg.norm(out - ref) / max(np.linalg.norm(ref), 1e-300)
    empty = int((~vis.any(axis=-1)).sum())
    print(f"rel_l2 {rel:.3e} ({empty} rows see no key)")
    return 0 if rel <= 1e-5 else 1


def run(a):
    """One command line's work, a as sys.argv; returns the exit status."""
    if a[1] == "make":
        make(a[2], *map(int, a[3:9]), a[9], a[10], *(a[11:12]))
        return 0
    if a[1] == "makedv":
        make(a[2], *map(int, a[3:8]), int(a[8]), a[10], a[11])
        shape_v = np.load(f"{a[2]}/k.npy").shape[:-1] + (int(a[9]),)
        np.save(f"{a[2]}/v.npy", np.random.default_rng(int(a[11]) + 1).standard_normal(shape_v).astype(np.float32))
        return 0
    if a[1] == "paged":
        paged(a[2], *map(int, a[3:8]), a[8], int(a[9]), a[10], a[11])
        return 0
    if a[1] == "pyfile":
        with open(a[2]) as f:
            exec(compile(f.read(), a[2], "exec"), {"__name__": "__main__"})
        return 0
    if a[1] == "checkscores":
        return check_scores(*a[2:10])
    if a[1] == "checksparse":
        return check_sparse(*a[2:7])
    if a[1] == "checkpaged":
        return check_paged(a[2], a[3], a[4], a[5])
    return check(a[2], a[3], a[4], a[5])


def exit_status(code):
    """The status a process would exit with for sys.exit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def serve():
    for line in sys.stdin:
        out = io.StringIO()
        # a fresh warnings registry per request: one-shot runs each show their warnings
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            try:
                rc = run([sys.argv[0]] + shlex.split(line))
            except SystemExit as e:
                rc = exit_status(e.code)
            except Exception:  # this request fails as a one-shot run would; the server goes on
                traceback.print_exc(file=out)
                rc = 1
        text = out.getvalue()
        if text and not text.endswith("\n"):
            text += "\n"  # the terminator needs a line of its own; $(...) drops the newline anyway
        sys.stdout.write(f"{text}\x1eEXIT {rc}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve()
    else:
        sys.exit(run(sys.argv))
