"""attnvk_problem from tensor shapes and `attnvk run`'s options. Shape errors
read like the CLI's; every other rule is attnvk_problem_validate's."""
import ctypes

from . import _lib
from ._errors import bad_argument

_DTYPE_ALIASES = {"f32": "f32", "float32": "f32", "f16": "f16", "float16": "f16", "half": "f16",
                  "bf16": "bf16", "bfloat16": "bf16"}


def dtype_name(dtype, default_from=None):
    """'f32' | 'f16' | 'bf16' from a name, a numpy/torch dtype or None (the tensor's own)."""
    if dtype is None:
        name = str(default_from).replace("torch.", "") if default_from is not None else "float32"
        return _DTYPE_ALIASES.get(name, "f32")  # float64 and others compute in f32
    key = str(dtype).replace("torch.", "").replace("<class 'numpy.", "").rstrip("'>")
    if key not in _DTYPE_ALIASES:
        raise bad_argument(f"unsupported dtype '{dtype}' (f32, f16, bf16)")
    return _DTYPE_ALIASES[key]


def _choice(what, value, names):
    if value not in names:
        raise bad_argument(f"unknown {what} '{value}' ({', '.join(names)})")
    return names.index(value)


def _dims(shape, what, expect):
    if len(shape) != len(expect.split(",")):
        raise bad_argument(f"{what}: expected {len(expect.split(','))} dimensions ({expect}), got {len(shape)}")
    for d, n in enumerate(shape):
        if not 1 <= n <= 1 << 30:
            raise bad_argument(f"{what}: dimension {d} is {n} (must be 1..2^30)")


def build(qs, ks, vs, *, layout="bhsd", dtype="f32", causal=False, scale=None, window=None,
          causal_align="bottom-right", softcap=None, alibi=False, sinks=False, mask_shape=None, mask_dtype="f32",
          kv_dtype=None, q_dtype=None, table_shape=None, seq_lens=None, device_lens=None):
    """Problem from Q, K, V shapes (tuples). table_shape: the block table's
    (B, max_pages) for a paged cache, whose K/V shapes are pages
    (num_pages, page_size, Hkv, D); seq_lens: host int sequence (paged or
    ragged); device_lens: the shape of seq_lens left on a device (not read
    back: a paged Nk is then the table's reach, which bounds every length).
    q_dtype 'fp8' (with kv_dtype 'fp8', dtype f16/bf16: O's) is the FP8 forward."""
    p = _lib.Problem()
    p.layout = _choice("layout", layout, _lib.LAYOUTS)
    p.dtype = _choice("dtype", dtype, _lib.DTYPE_NAMES)
    p.kv_format = _choice("kv dtype", kv_dtype or "dtype", _lib.KV_FORMATS)
    q_names = tuple(_lib.Q_FORMATS)
    p.q_format = _lib.Q_FORMATS[q_names[_choice("q dtype", q_dtype or "dtype", q_names)]]
    p.align = _choice("causal alignment", causal_align, _lib.ALIGNS)
    order = "B,H,S,D" if layout == "bhsd" else "B,S,H,D"
    s_axis, h_axis = (2, 1) if layout == "bhsd" else (1, 2)
    _dims(qs, "q", order)
    paged = table_shape is not None
    if paged:
        _dims(ks, "k", "num_pages,page_size,Hkv,D")
        _dims(vs, "v", "num_pages,page_size,Hkv,D")
        if seq_lens is None and device_lens is None:
            raise bad_argument("block_table needs seq_lens too (a paged cache takes both)")
        if len(table_shape) != 2:
            raise bad_argument(f"block_table: needs 2 dimensions (B,max_pages), got {len(table_shape)}")
    else:
        _dims(ks, "k", order)
        _dims(vs, "v", order)
    for d in range(3):  # the last one is Dv, V's head dim
        if ks[d] != vs[d]:
            raise bad_argument(f"shape mismatch: K and V differ in dimension {d}")
    if qs[3] != ks[3]:
        raise bad_argument(f"shape mismatch: head dim {qs[3]} in Q, {ks[3]} in K")
    p.batch, p.heads, p.seq_q, p.head_dim = qs[0], qs[h_axis], qs[s_axis], qs[3]
    p.head_dim_v = vs[3] if vs[3] != qs[3] else 0
    if paged:
        p.num_pages, p.page_size, p.kv_heads = ks[0], ks[1], ks[2]
        p.max_pages = table_shape[1]
        if table_shape[0] != p.batch:
            raise bad_argument(f"shape mismatch: batch {p.batch} in Q, {table_shape[0]} in the block table")
    else:
        if ks[0] != qs[0]:
            raise bad_argument(f"shape mismatch: batch {qs[0]} in Q, {ks[0]} in K/V")
        p.kv_heads, p.seq_kv = ks[h_axis], ks[s_axis]
        p.ragged = int(seq_lens is not None or device_lens is not None)
    if p.heads % p.kv_heads:
        raise bad_argument(f"shape mismatch: Q heads ({p.heads}) is not a multiple of K/V heads ({p.kv_heads})")
    n_lens = len(seq_lens) if seq_lens is not None else device_lens[0] if device_lens else None
    if n_lens is not None and n_lens != p.batch:
        raise bad_argument(f"shape mismatch: batch {p.batch} in Q, {n_lens} in seq_lens")
    if paged:  # Nk = the longest sequence, as `attnvk run` takes it
        p.seq_kv = max([1] + [int(n) for n in seq_lens]) if seq_lens is not None else p.max_pages * p.page_size
    p.causal = int(bool(causal))
    if scale is not None and not scale > 0:
        raise bad_argument(f"scale must be a positive number, got {scale}")
    p.scale = scale or 0.0
    if window is not None:
        if len(window) != 2 or any(int(w) != w or w < -1 for w in window):
            raise bad_argument(f"window wants (left, right), integers >= -1 (-1 unbounded), got {window}")
        p.window, p.window_left, p.window_right = 1, int(window[0]), int(window[1])
    if softcap is not None:
        if not softcap > 0:
            raise bad_argument(f"softcap must be a positive number, got {softcap}")
        p.softcap = softcap
    p.alibi, p.sinks = int(bool(alibi)), int(bool(sinks))
    if mask_shape is not None:
        if len(mask_shape) not in (2, 4):
            raise bad_argument(f"mask: needs shape [Nq,Nk] or [1|B,1|H,Nq,Nk], got {len(mask_shape)} dimensions")
        if tuple(mask_shape[-2:]) != (p.seq_q, p.seq_kv):
            raise bad_argument(f"mask: the last dimensions are {list(mask_shape[-2:])}, "
                               f"the scores' [Nq,Nk] = [{p.seq_q},{p.seq_kv}]")
        p.mask = 1
        p.mask_batch, p.mask_heads = (mask_shape[0], mask_shape[1]) if len(mask_shape) == 4 else (1, 1)
        p.mask_dtype = _choice("mask dtype", mask_dtype, _lib.DTYPE_NAMES)
    _lib.check(_lib.lib().attnvk_problem_validate(ctypes.byref(p)))
    return p


def describe(p):
    """The problem as the bench's `case` object (bench/SCHEMA.md)."""
    L = _lib.lib()
    fp8 = p.q_format == _lib.Q_FORMATS["fp8"]  # the FP8 forward: dtype fp8, O's in o_dtype (as the CLI's)
    case = {"batch": p.batch, "heads": p.heads, "kv_heads": p.kv_heads, "seq_q": p.seq_q, "seq_kv": p.seq_kv,
            "head_dim": p.head_dim, "causal": bool(p.causal), "dtype": "fp8" if fp8 else _lib.DTYPE_NAMES[p.dtype],
            "layout": _lib.LAYOUTS[p.layout], "scale": L.attnvk_problem_scale(ctypes.byref(p)),
            "kv_format": _lib.KV_FORMATS[p.kv_format], "page_size": p.page_size}
    if fp8:
        case["o_dtype"], case["q_format"] = _lib.DTYPE_NAMES[p.dtype], "fp8"
    if p.head_dim_v and p.head_dim_v != p.head_dim:
        case["head_dim_v"] = p.head_dim_v
    if p.softcap > 0:
        case["softcap"] = p.softcap
    if p.window:
        case["window_left"], case["window_right"] = p.window_left, p.window_right
    if p.align:
        case["causal_align"] = "top-left"
    for flag in ("alibi", "sinks"):
        if getattr(p, flag):
            case[flag] = True
    if p.mask:
        case["mask"] = True
    return case


def dv(p):
    return p.head_dim_v or p.head_dim


def out_shape(p, qshape):
    return tuple(qshape[:3]) + (dv(p),)
