"""Host (numpy) inputs as the device stores them: Q, K, V packed to the
compute dtype, K/V quantized and per-head fp8 scales (fp8 queries: Q too,
a scale per query head), tables, score inputs; and the f32 views the
float64 reference must read (what the kernel sees)."""
import ctypes

import numpy as np

from . import _lib
from ._errors import bad_argument

_F32, _F16 = 0, 1
_NP_STORAGE = {"f32": np.float32, "f16": np.uint16, "bf16": np.uint16}


def pack(dtype, x):
    """f32 values to dtype storage (attnvk_pack, the rounding the CLI uses)."""
    src = np.ascontiguousarray(x, dtype=np.float32)
    if dtype == "f32":
        return src
    out = np.empty(src.shape, _NP_STORAGE[dtype])
    _lib.lib().attnvk_pack(_lib.DTYPE_NAMES.index(dtype), _lib.ptr(src, _lib.c_float_p), _lib.ptr(out), src.size)
    return out


def unpack(dtype, raw):
    if dtype == "f32":
        return raw
    out = np.empty(raw.shape, np.float32)
    _lib.lib().attnvk_unpack(_lib.DTYPE_NAMES.index(dtype), _lib.ptr(raw), _lib.ptr(out, _lib.c_float_p), raw.size)
    return out


def finite_f32(name, x, allow_neg_inf=False):
    x = np.ascontiguousarray(x, dtype=np.float32)
    bad = ~np.isfinite(x)
    if allow_neg_inf:
        bad &= ~np.isneginf(x)
    if bad.any():
        what = "NaN/+Inf" if allow_neg_inf else "NaN/Inf"
        raise bad_argument(f"{name} holds {int(bad.sum())} {what} values of {x.size}; inputs must be finite")
    return x


def _row_heads(p, rows):
    """The kv head of every K/V row in storage order (for per-head fp8 scales)."""
    r = np.arange(rows)
    if p.page_size > 0 or p.layout == 1:  # pages and bshd: [..][Hkv][D]
        return r % p.kv_heads
    return (r // p.seq_kv) % p.kv_heads  # bhsd: [B][Hkv][Nk][D]


def _encode_kv(p, x, fmt, scales_out):
    """K or V (f32, any shape whose last dim is D) in the problem's kv format."""
    L = _lib.lib()
    D = p.head_dim
    rows = x.reshape(-1, D)
    rb = L.attnvk_kv_row_bytes(ctypes.byref(p))
    out = np.empty((rows.shape[0], rb), np.uint8)
    heads = _row_heads(p, rows.shape[0])
    for g in range(p.kv_heads) if fmt == 3 else [None]:
        sel = np.arange(rows.shape[0]) if g is None else np.nonzero(heads == g)[0]
        src = np.ascontiguousarray(rows[sel])
        scale = 1.0
        if g is not None:  # fp8: one scale per kv head from its largest magnitude
            scale = L.attnvk_fp8_scale(float(np.abs(src).max()) if src.size else 0.0)
            scales_out[g] = scale
        enc = np.empty((len(sel), rb), np.uint8)
        L.attnvk_kv_encode(fmt, D, _lib.ptr(src, _lib.c_float_p), _lib.ptr(enc), len(sel), scale)
        out[sel] = enc
    return out


def _fp8_q(p, q):
    """fp8 queries (the FP8 forward): Q (f32, p's layout) as e4m3 bytes in Q's layout and its scales [H],
    each from the head's largest magnitude, as attnvk_attention_host encodes them."""
    L, D = _lib.lib(), p.head_dim
    rows = q.reshape(-1, D)
    r = np.arange(rows.shape[0])
    heads = (r // p.seq_q) % p.heads if p.layout == 0 else r % p.heads  # bhsd [B][H][Nq][D], bshd [B][Nq][H][D]
    out = np.empty(rows.shape, np.uint8)
    scales = np.ones(p.heads, np.float32)
    for h in range(p.heads):
        sel = np.nonzero(heads == h)[0]
        src = np.ascontiguousarray(rows[sel])
        scales[h] = L.attnvk_fp8_scale(float(np.abs(src).max()) if src.size else 0.0)
        enc = np.empty(src.shape, np.uint8)
        L.attnvk_kv_encode(3, D, _lib.ptr(src, _lib.c_float_p), _lib.ptr(enc), len(sel), float(scales[h]))
        out[sel] = enc
    return out.reshape(q.shape), scales


def _fp8_q_decoded(p, q8, scales):
    """The f32 values the kernel reads from fp8 queries."""
    L, D = _lib.lib(), p.head_dim
    rows = q8.reshape(-1, D)
    r = np.arange(rows.shape[0])
    heads = (r // p.seq_q) % p.heads if p.layout == 0 else r % p.heads
    out = np.empty(rows.shape, np.float32)
    for h in range(p.heads):
        sel = np.nonzero(heads == h)[0]
        src, dst = np.ascontiguousarray(rows[sel]), np.empty((len(sel), D), np.float32)
        L.attnvk_kv_decode(3, D, _lib.ptr(src), _lib.ptr(dst, _lib.c_float_p), len(sel), float(scales[h]))
        out[sel] = dst
    return out.reshape(q8.shape)


def alibi_slopes(heads):
    """ggml's ALiBi slopes for H heads (`attnvk run --alibi`)."""
    out = np.empty(heads, np.float32)
    _lib.lib().attnvk_alibi_slopes(heads, _lib.ptr(out, _lib.c_float_p))
    return out


class HostTensors:
    """Everything a run reads, keyed by attnvk_tensors' field names, ready to upload."""

    def __init__(self, p, q, k, v, block_table=None, seq_lens=None, mask=None, sinks=None, alibi=None):
        self.p = p
        dt = _lib.DTYPE_NAMES[p.dtype]
        self.dtype = dt
        a = {}
        if p.q_format == _lib.Q_FORMATS["fp8"]:
            a["q"], a["q_scales"] = _fp8_q(p, finite_f32("q", q))
        else:
            a["q"] = pack(dt, finite_f32("q", q))
        if dt == "f16" and "q_scales" not in a and not np.isfinite(a["q"].view(np.float16)).all():
            raise bad_argument("q has values beyond the range of f16 (they round to Inf); use dtype='f32'")
        k32, v32 = finite_f32("k", k), finite_f32("v", v)
        fmt = p.kv_format
        if fmt == 0:
            a["k"], a["v"] = pack(dt, k32), pack(dt, v32)
        else:
            scales = np.ones((2, p.kv_heads), np.float32)
            a["k"] = _encode_kv(p, k32, fmt, scales[0])
            a["v"] = _encode_kv(p, v32, fmt, scales[1])
            if fmt == 3:
                a["kv_scales"] = scales
        if block_table is not None:
            a["block_table"] = np.ascontiguousarray(block_table, dtype=np.int32)
        if seq_lens is not None:
            a["seq_lens"] = np.ascontiguousarray(seq_lens, dtype=np.int32)
        if p.page_size > 0 or p.ragged:
            table = a.get("block_table")
            _lib.check(_lib.lib().attnvk_kv_tables_check(
                ctypes.byref(p), _lib.ptr(table, _lib.c_int32_p), _lib.ptr(a["seq_lens"], _lib.c_int32_p)))
        if mask is not None:
            a["mask"] = pack(_lib.DTYPE_NAMES[p.mask_dtype], finite_f32("mask", mask, allow_neg_inf=True))
        if sinks is not None:
            a["sinks"] = self._per_head("sinks", sinks)
        if alibi is not None and alibi is not False:
            a["alibi_slopes"] = self._slopes(alibi)
        self.arrays = a

    def _per_head(self, what, x):
        x = finite_f32(what, x)
        if x.shape != (self.p.heads,):
            raise bad_argument(f"{what}: need shape [H] = [{self.p.heads}], got {list(x.shape)}")
        return x

    def _slopes(self, alibi):
        if alibi is True:
            return alibi_slopes(self.p.heads)
        return self._per_head("ALiBi slopes", alibi)

    def upload(self, run):
        for name, array in self.arrays.items():
            run.upload(array, name)

    def reference_inputs(self):
        """(HostInputs, keep-alive list): Q, K, V as f32 the way the kernel reads
        them (rounded to the dtype; a cache gathered and decoded), and the rest."""
        p, a, L = self.p, self.arrays, _lib.lib()
        fp8_q = "q_scales" in a
        keep = {"q": _fp8_q_decoded(p, a["q"], a["q_scales"]) if fp8_q else unpack(self.dtype, a["q"])}
        if p.page_size > 0 or p.kv_format != 0:
            n_k = p.batch * p.kv_heads * p.seq_kv
            for which, name, d in ((0, "k", p.head_dim), (1, "v", p.head_dim_v or p.head_dim)):
                out = np.empty(n_k * d, np.float32)
                _lib.check(L.attnvk_kv_gather(ctypes.byref(p), _lib.ptr(a[name]),
                                              _lib.ptr(a.get("block_table"), _lib.c_int32_p),
                                              _lib.ptr(a.get("seq_lens"), _lib.c_int32_p),
                                              _lib.ptr(a.get("kv_scales"), _lib.c_float_p), which,
                                              _lib.ptr(out, _lib.c_float_p)))
                keep[name] = out
        else:
            keep["k"], keep["v"] = unpack(self.dtype, a["k"]), unpack(self.dtype, a["v"])
        if "mask" in a:
            keep["mask"] = unpack(_lib.DTYPE_NAMES[p.mask_dtype], a["mask"])
        f = _lib.c_float_p
        inputs = _lib.HostInputs(q=_lib.ptr(keep["q"], f), k=_lib.ptr(keep["k"], f), v=_lib.ptr(keep["v"], f),
                                 kv_lens=_lib.ptr(a.get("seq_lens"), _lib.c_int32_p),
                                 mask=_lib.ptr(keep.get("mask"), f), sinks=_lib.ptr(a.get("sinks"), f),
                                 alibi_slopes=_lib.ptr(a.get("alibi_slopes"), f))
        return inputs, keep
