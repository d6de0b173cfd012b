"""attnvk.attention: `attnvk run` as a function, on numpy arrays (host path)
or on CUDA/HIP device tensors in place (device path)."""
import numpy as np

from . import _devices, _gpu, _lib, _problem
from ._errors import Error, bad_argument
from ._host import HostTensors, alibi_slopes, unpack
from ._run import Run


def attention(q, k, v, causal=False, scale=None, *, api=None, device=None, dtype=None, layout="bhsd",
              window=None, causal_align="bottom-right", softcap=None, alibi=None, sinks=None, mask=None,
              kv_dtype=None, q_dtype=None, block_table=None, seq_lens=None, return_lse=False, impl=None,
              variant=None, tile=None, split_kv=None, out=None, lse_out=None, info=None):
    """softmax(scale * Q K^T + score modifications) V; the semantics are attnvk.h's.

    q, k, v: numpy arrays (any float dtype; converted to `dtype`, the device's
    storage and compute precision, default q's: f16 for float16, else f32),
    or CUDA/HIP tensors (torch, CuPy, ...: used in place, in their own dtype).
    layout 'bhsd' (Q [B,H,Nq,D], K/V [B,Hkv,Nk,D]) or 'bshd'; GQA by Hkv;
    V's last dimension is Dv. Options as `attnvk run`: window=(left, right),
    causal_align='top-left', softcap, alibi=True (ggml's slopes) or slopes [H],
    sinks [H], mask [Nq,Nk] or [1|B,1|H,Nq,Nk] (f32/f16, -inf allowed),
    kv_dtype 'q8_0'|'q4_0'|'fp8', q_dtype 'fp8' (the FP8 forward: with kv_dtype
    'fp8'; dtype f16, the default there, or bf16 is O's), block_table int32 [B,max_pages] with
    seq_lens int32 [B] (K/V then pages [num_pages,page_size,Hkv,D]; seq_lens
    alone: a ragged contiguous cache), impl/variant/tile=(br,bc)/split_kv.
    Returns O (numpy: in the compute dtype, bf16 as float32; device: out, or
    a new torch tensor), and (O, lse [B,H,Nq] f32) with return_lse.
    info: a dict to fill with the device, kernel and device_ms of the run."""
    options = dict(layout=layout, causal=causal, scale=scale, window=window, causal_align=causal_align,
                   softcap=softcap, kv_dtype=kv_dtype, q_dtype=q_dtype)
    kernel = dict(implementation=impl, variant=variant, tile=tile, split_kv=split_kv, write_lse=return_lse)
    if _gpu.is_device_array(q):
        return _on_device(q, k, v, api, device, dtype, options, kernel,
                          dict(block_table=block_table, seq_lens=seq_lens, mask=mask, sinks=sinks, alibi=alibi),
                          out, lse_out, info)
    q, k, v = (np.asarray(x) for x in (q, k, v))
    mask = None if mask is None else np.asarray(mask)
    if dtype is None and q_dtype == "fp8":
        dtype = "f16"  # the FP8 forward writes f16 or bf16 O, as `attnvk run --q-dtype fp8`
    p = _problem.build(q.shape, k.shape, v.shape, dtype=_problem.dtype_name(dtype, q.dtype),
                       table_shape=None if block_table is None else np.shape(block_table),
                       seq_lens=None if seq_lens is None else np.asarray(seq_lens).reshape(-1),
                       alibi=alibi is not None and alibi is not False, sinks=sinks is not None,
                       mask_shape=None if mask is None else mask.shape,
                       mask_dtype="f16" if mask is not None and mask.dtype == np.float16 else "f32", **options)
    index = _devices.resolve(api, device)
    host = HostTensors(p, q, k, v, block_table=block_table, seq_lens=seq_lens, mask=mask, sinks=sinks,
                       alibi=alibi)
    dt = host.dtype
    o_raw = np.full(_problem.out_shape(p, q.shape), 0xFFFF if dt != "f32" else np.nan,
                    np.uint16 if dt != "f32" else np.float32)  # NaN: rows left unwritten show
    lse = np.full((p.batch, p.heads, p.seq_q), np.nan, np.float32) if return_lse else None
    with Run(_devices.open_device(index)) as run:
        run.prepare(p, **kernel)
        host.upload(run)
        bo = run.upload(o_raw, "o")
        blse = run.upload(lse, "lse") if return_lse else None
        ms = run.run()
        run.read(bo, o_raw)
        if return_lse:
            run.read(blse, lse)
        _fill_info(info, index, run, ms)
    o = o_raw.view(np.float16) if dt == "f16" else unpack(dt, o_raw)
    if out is not None:
        np.copyto(out, o)
        o = out
    if lse_out is not None and lse is not None:
        np.copyto(lse_out, lse)
        lse = lse_out
    return (o, lse) if return_lse else o


def _fill_info(info, index, run, ms):
    if info is not None:
        info.update(device=_devices.info_of(index)["spec"], device_ms=ms, **run.kernel_info())


def _on_device(q, k, v, api, device, dtype, options, kernel, extras, out, lse_out, info):
    if not _lib.has("attnvk_buffer_wrap"):  # before anything else: no other fix helps
        raise Error("this libattnvk has no attnvk_buffer_wrap", "unsupported")
    if options["kv_dtype"] not in (None, "dtype"):
        raise bad_argument("kv_dtype takes numpy K and V (attnvk quantizes on the host)")
    if options["q_dtype"] not in (None, "dtype"):
        raise bad_argument("q_dtype takes numpy Q, K and V (attnvk quantizes on the host)")
    t = {name: _gpu.device_tensor(name, x) for name, x in (("q", q), ("k", k), ("v", v))}
    for name in ("k", "v"):
        if (t[name].api, t[name].index, t[name].dtype) != (t["q"].api, t["q"].index, t["q"].dtype):
            raise bad_argument(f"{name} is on {t[name].api}:{t[name].index} as {t[name].dtype}, "
                               f"q on {t['q'].api}:{t['q'].index} as {t['q'].dtype}: they must match")
    if dtype is not None and _problem.dtype_name(dtype) != t["q"].dtype:
        raise bad_argument(f"dtype {dtype} differs from q's {t['q'].dtype}: device tensors are used as they are")
    if api is not None and api != t["q"].api:
        raise bad_argument(f"api '{api}' differs from the tensors' {t['q'].api}")
    for name, x in extras.items():
        if name == "alibi" and (x is None or x is True or x is False):
            continue
        if x is not None:
            t[name] = _gpu.device_tensor(name, x) if _gpu.is_device_array(x) else np.ascontiguousarray(x)
    lens = t.get("seq_lens")
    mask = t.get("mask")
    p = _problem.build(t["q"].shape, t["k"].shape, t["v"].shape, dtype=t["q"].dtype,
                       table_shape=None if "block_table" not in t else tuple(t["block_table"].shape),
                       seq_lens=None if isinstance(lens, _gpu.DeviceTensor) else lens,
                       device_lens=lens.shape if isinstance(lens, _gpu.DeviceTensor) else None,
                       alibi=extras["alibi"] is not None and extras["alibi"] is not False,
                       sinks="sinks" in t, mask_shape=None if mask is None else tuple(mask.shape),
                       mask_dtype="f16" if isinstance(mask, _gpu.DeviceTensor) and mask.dtype == "f16" else "f32",
                       **options)
    index = _devices.resolve(t["q"].api, device if device is not None else (t["q"].index or 0))
    shape = _problem.out_shape(p, t["q"].shape)
    if out is None:
        if not _gpu._is_torch(q):
            raise bad_argument(f"give out= (a {t['q'].api} tensor of shape {list(shape)}, {t['q'].dtype}) "
                               "for device inputs that are not torch tensors")
        out = _gpu.empty_like_torch(q, shape)
    t["o"] = _gpu.device_tensor("out", out)
    if t["o"].shape != shape or t["o"].dtype != t["q"].dtype:
        raise bad_argument(f"out is {list(t['o'].shape)} {t['o'].dtype}, O is {list(shape)} {t['q'].dtype}")
    if kernel["write_lse"]:
        if lse_out is None:
            if not _gpu._is_torch(q):
                raise bad_argument("give lse_out= (a float32 device tensor [B,H,Nq]) with return_lse")
            lse_out = _gpu.empty_like_torch(q, (p.batch, p.heads, p.seq_q), float32=True)
        t["lse"] = _gpu.device_tensor("lse_out", lse_out)
        if t["lse"].shape != (p.batch, p.heads, p.seq_q) or t["lse"].dtype != "f32":
            raise bad_argument(f"lse_out is {list(t['lse'].shape)} {t['lse'].dtype}, "
                               f"the LSE is [{p.batch}, {p.heads}, {p.seq_q}] f32")
    api_id = _lib.API_NAMES.index(t["q"].api)
    with Run(_devices.open_device(index)) as run:
        run.prepare(p, **kernel)
        for name, x in t.items():
            field = "alibi_slopes" if name == "alibi" else name
            if isinstance(x, _gpu.DeviceTensor):
                run.wrap(api_id, x.address, x.nbytes, field)
            else:
                run.upload(x.astype(np.int32 if field in ("block_table", "seq_lens") else np.float32), field)
        if extras["alibi"] is True:
            run.upload(alibi_slopes(p.heads), "alibi_slopes")
        ms = run.run()
        _fill_info(info, index, run, ms)
    return (out, lse_out) if kernel["write_lse"] else out
