"""numpy float64 attention with attnvk.h's semantics, written here (not the
library's reference) so the tests check the bindings against an independent oracle."""
import numpy as np


def attention(q, k, v, causal=False, scale=None, layout="bhsd", window=None, top_left=False, softcap=None,
              slopes=None, sinks=None, mask=None, seq_lens=None):
    """O (float64, q's layout) and lse [B,H,Nq]. seq_lens: keys per sequence (ragged)."""
    if layout == "bshd":
        q, k, v = (x.transpose(0, 2, 1, 3) for x in (q, k, v))
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    B, H, Nq, D = q.shape
    G, Nk = k.shape[1], k.shape[2]
    k, v = np.repeat(k, H // G, axis=1), np.repeat(v, H // G, axis=1)  # GQA: head h reads kv head h // (H/G)
    s = np.einsum("bhid,bhjd->bhij", q, k) * (scale or 1 / np.sqrt(D))
    if softcap:
        s = softcap * np.tanh(s / softcap)
    lens = np.full(B, Nk) if seq_lens is None else np.asarray(seq_lens)
    i, j = np.arange(Nq)[:, None], np.arange(Nk)[None, :]
    visible = np.empty((B, 1, Nq, Nk), bool)
    ip_all = []
    for b in range(B):
        ip = i if top_left else i + lens[b] - Nq  # i': the query's place among the sequence's keys
        ok = j < lens[b]
        if causal:
            ok = ok & (j <= ip)
        if window is not None:
            left, right = window
            if left >= 0:
                ok = ok & (j >= ip - left)
            if right >= 0:
                ok = ok & (j <= ip + right)
        visible[b, 0] = ok
        ip_all.append(np.broadcast_to(ip, (Nq, Nk)))
    if slopes is not None:
        s = s + np.asarray(slopes, np.float64)[None, :, None, None] * (j - np.stack(ip_all)[:, None])
    if mask is not None:
        m = np.asarray(mask, np.float64)
        s = s + (m if m.ndim == 4 else m[None, None])
    s = np.where(visible, s, -np.inf)
    sink = np.full((1, H, 1, 1), -np.inf) if sinks is None else np.asarray(sinks, np.float64)[None, :, None, None]
    m = np.maximum(s.max(axis=-1, keepdims=True), sink)
    m_safe = np.where(np.isfinite(m), m, 0)
    p = np.exp(s - m_safe)
    total = p.sum(axis=-1, keepdims=True) + np.exp(sink - m_safe)
    o = np.einsum("bhij,bhjd->bhid", p / np.where(total > 0, total, 1), v)
    lse = np.where(total[..., 0] > 0, m_safe[..., 0] + np.log(np.where(total[..., 0] > 0, total[..., 0], 1)), -np.inf)
    if layout == "bshd":
        o = o.transpose(0, 2, 1, 3)
    return o, lse


def rel_l2(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))
