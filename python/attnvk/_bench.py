"""attnvk.bench: time repeated kernel runs through the library and check the
output against the float64 reference; one record per device, with the
field names of `attnvk bench -o json` records (bench/SCHEMA.md)."""
import ctypes
import statistics

import numpy as np

from . import _devices, _lib, _problem
from ._errors import Error, OutOfMemory, Unavailable, Unsupported, bad_argument
from ._host import HostTensors, unpack
from ._run import Run

_FULL_CHECK_ROWS, _FULL_CHECK_FLOPS, _SAMPLED_ROWS = 8192, 2e9, 64  # as the CLI's check


def _inputs(rng, p, mask, sinks):
    """Seeded Q, K, V (contiguous in the layout, or pages) and score inputs."""
    lay = _lib.LAYOUTS[p.layout]
    B, H, G, Nq, Nk, D, Dv = p.batch, p.heads, p.kv_heads, p.seq_q, p.seq_kv, p.head_dim, _problem.dv(p)
    shape = (lambda h, n, d: (B, h, n, d)) if lay == "bhsd" else (lambda h, n, d: (B, n, h, d))
    normal = lambda s: rng.standard_normal(s, dtype=np.float32)  # noqa: E731
    x = {"q": normal(shape(H, Nq, D)), "k": normal(shape(G, Nk, D)), "v": normal(shape(G, Nk, Dv))}
    if p.page_size:
        pages = -(-Nk // p.page_size)
        order = rng.permutation(B * pages)  # pages in shuffled order, as an engine's pool
        for name in ("k", "v"):
            kv = x[name] if lay == "bshd" else x[name].transpose(0, 2, 1, 3)  # [B, Nk, Hkv, D]
            padded = np.zeros((B, pages * p.page_size) + kv.shape[2:], np.float32)
            padded[:, :Nk] = kv
            pool = np.empty_like(padded.reshape((B * pages, p.page_size) + kv.shape[2:]))
            pool[order] = padded.reshape(pool.shape)
            x[name] = pool
        x["block_table"] = order.reshape(B, pages).astype(np.int32)
        x["seq_lens"] = np.full(B, Nk, np.int32)
    if mask:  # as `attnvk bench --mask random`: [Nq, Nk] with 10% -inf
        m = normal((Nq, Nk))
        m[rng.random((Nq, Nk)) < 0.1] = -np.inf
        x["mask"] = m
    if sinks:
        x["sinks"] = normal(H)
    return x


def _check_rows(p, rng):
    rows = p.batch * p.heads * p.seq_q
    flops = _lib.lib().attnvk_problem_flops(ctypes.byref(p))
    if rows <= _FULL_CHECK_ROWS and flops <= _FULL_CHECK_FLOPS:
        return None  # every row
    picked = {0, rows - 1, p.seq_q - 1, rows - p.seq_q} | set(rng.integers(0, rows, _SAMPLED_ROWS - 4).tolist())
    return np.array(sorted(picked), np.uintp)


def _visible_share(p):
    """Share of a contiguous cache's keys some query row sees (GB/s counts those)."""
    if p.page_size or p.ragged:
        return 1.0
    i = np.arange(p.seq_q)
    ip = i if p.align else i + p.seq_kv - p.seq_q
    lo = np.zeros_like(ip)
    hi = np.full_like(ip, p.seq_kv)
    if p.window and p.window_left >= 0:
        lo = np.maximum(lo, ip - p.window_left)
    if p.window and p.window_right >= 0:
        hi = np.minimum(hi, ip + p.window_right + 1)
    if p.causal:
        hi = np.minimum(hi, ip + 1)
    seen = hi > lo
    return float(hi[seen].max() - lo[seen].min()) / p.seq_kv if seen.any() else 0.0


def _io_bytes(p):
    """What the kernel must move at least: bench_io_bytes in bench/bench_record.c."""
    L, ref = _lib.lib(), ctypes.byref(p)
    es, share = (4, 2, 2)[p.dtype], _visible_share(p)
    q_es = 1 if p.q_format == _lib.Q_FORMATS["fp8"] else es  # fp8 queries: a byte an element
    q_o = p.batch * p.heads * p.seq_q * (q_es * p.head_dim + es * _problem.dv(p))
    tables = 4.0 * p.batch * (p.max_pages + 1) if p.page_size else 0.0
    mask = (4, 2, 2)[p.mask_dtype] * p.mask_batch * p.mask_heads * p.seq_q * p.seq_kv * share if p.mask else 0.0
    return q_o + (L.attnvk_kv_bytes(ref) + L.attnvk_v_bytes(ref)) * share + tables + mask


def _percentile(s, f):
    """Linear interpolation between the sorted samples around f (0..1)."""
    pos = f * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _stats(samples):
    s = sorted(samples)
    mean = statistics.fmean(s)
    std = statistics.stdev(s) if len(s) > 1 else 0.0
    few = len(s) < 20  # p95/p99 would only restate the largest sample
    return {"min_ms": s[0], "median_ms": statistics.median(s), "mean_ms": mean, "std_ms": std,
            "p95_ms": None if few else _percentile(s, 0.95), "p99_ms": None if few else _percentile(s, 0.99),
            "cv": std / mean if mean > 0 else None}


def _record(p, case, index):
    d = _devices.info_of(index)
    return {"implementation": "attnvk", "fused": True, "api": d["api"], "device_index": index,
            "device_name": d["name"], "device_uuid": d["uuid"], "driver_version": d["driver_version"],
            "api_version": d["api_version"], "case": case, "status": "ok", "reason": "", "variant": None,
            "tile_br": None, "tile_bc": None, "workgroup_size": None, "split_kv": None, "params": None,
            "samples_ms": None, "stats": None, "flops": _lib.lib().attnvk_problem_flops(ctypes.byref(p)),
            "tflops": None, "tokens_per_s": None, "gbytes_per_s": None, "memory_bytes": None, "check": None,
            "warmup_runs": None, "launches": None}


def _measure(r, p, host, check_rows, index, iters, warmup, launches, kernel, check):
    L = _lib.lib()
    dt = host.dtype
    info = _devices.info_of(index)
    if (dt == "f16" and not info["fp16"]) or (dt == "bf16" and not info["bf16"]):
        r["status"], r["reason"] = "skipped", f"{info['name']} has no {dt}"
        return
    o_raw = np.full(_problem.out_shape(p, host.arrays["q"].shape), 0xFFFF if dt != "f32" else np.nan,
                    np.uint16 if dt != "f32" else np.float32)
    with Run(_devices.open_device(index)) as run:
        run.prepare(p, **kernel)
        r.update({k: v for k, v in run.kernel_info().items() if k in r})
        r["implementation"] = run.kernel_info()["implementation"] or "attnvk"
        host.upload(run)
        bo = run.upload(o_raw, "o")  # NaN-poisoned: rows the kernel leaves unwritten fail the check
        r["memory_bytes"] = sum(a.nbytes for a in host.arrays.values()) + o_raw.nbytes + run.info.workspace_bytes
        run.run()
        if check:
            o = unpack(dt, run.read(bo, o_raw)).astype(np.float32, copy=False)
            inputs, keep = host.reference_inputs()
            rows = check_rows.ctypes.data_as(ctypes.POINTER(ctypes.c_size_t)) if check_rows is not None else None
            c = L.attnvk_check_output_inputs(ctypes.byref(p), ctypes.byref(inputs), _lib.ptr(o, _lib.c_float_p),
                                             rows, 0 if check_rows is None else len(check_rows))
            r["check"] = {"rel_l2": c.rel_l2, "max_abs": c.max_abs, "tolerance": c.tolerance,
                          "rows_checked": c.rows_checked, "nonfinite": c.nonfinite, "passed": bool(c.passed)}
        for _ in range(warmup):
            run.run_repeated(launches)
        r["samples_ms"] = [run.run_repeated(launches) for _ in range(iters)]
    r["warmup_runs"], r["launches"], r["stats"] = warmup, launches, _stats(r["samples_ms"])
    if r["check"] is not None and not r["check"]["passed"]:
        r["status"] = "fail"
        r["reason"] = (f"rel_l2 {r['check']['rel_l2']:.3e} > tolerance {r['check']['tolerance']:.0e}"
                       if not r["check"]["nonfinite"] else f"{r['check']['nonfinite']} NaN/Inf in the output")
        return
    seconds = r["stats"]["median_ms"] / 1e3
    r["tflops"] = r["flops"] / seconds / 1e12
    r["tokens_per_s"] = p.batch * p.seq_q / seconds
    r["gbytes_per_s"] = _io_bytes(p) / seconds / 1e9
    if p.seq_q <= 16:  # memory-bound decode: against the cached read bandwidth (never measured here)
        gbps = ctypes.c_double()
        ok = L.attnvk_device_read_bandwidth(_devices.open_device(index), 0, ctypes.byref(gbps), None) == 0
        r["read_bandwidth_gbps"] = gbps.value if ok else None
        r["bandwidth_fraction"] = r["gbytes_per_s"] / gbps.value if ok and gbps.value > 0 else None


def _device_indices(api, device):
    if api == "all":
        return [d["global_index"] for d in _devices.devices()]
    if api and device is None:  # every device of each API named
        return [i for a in api.split(",") for i in _bench_api(a.strip())]
    return [_devices.resolve(api, device)]


def _bench_api(api):
    _devices.resolve(api)  # unknown or unavailable: the same errors as attention()
    return [d["global_index"] for d in _devices.devices() if d["api"] == api]


def bench(batch=1, heads=8, kv_heads=None, seq_q=256, seq_kv=None, head_dim=64, head_dim_v=None, causal=False,
          dtype="f16", layout="bhsd", *, api=None, device=None, kv_dtype=None, q_dtype=None, page_size=0, window=None,
          causal_align="bottom-right", softcap=None, alibi=False, sinks=False, mask=False, iters=10, warmup=1,
          launches=1, seed=0, impl=None, variant=None, tile=None, split_kv=None, check=True, name=None):
    """Records (dicts) of one case on the devices asked for: api None (the
    default device), 'all', an API name or a comma list ('vulkan,opencl'),
    device an index or name within api. Each record: what ran (variant,
    tile), samples_ms (each the mean of `launches` back-to-back runs),
    stats, tflops, tokens_per_s, gbytes_per_s, check (rel_l2 against the
    float64 reference, tolerance, passed) and status ok/fail/skipped/unavailable."""
    if not (isinstance(iters, int) and iters >= 1 and isinstance(launches, int) and 1 <= launches <= 1000):
        raise bad_argument(f"iters must be >= 1 and launches 1..1000, got {iters} and {launches}")
    seq_kv = seq_kv or seq_q
    kv_heads = kv_heads or heads
    lay = (lambda h, n, d: (batch, h, n, d)) if layout == "bhsd" else (lambda h, n, d: (batch, n, h, d))
    qs, ks, vs = lay(heads, seq_q, head_dim), lay(kv_heads, seq_kv, head_dim), lay(kv_heads, seq_kv,
                                                                                 head_dim_v or head_dim)
    table_shape = lens = None
    if page_size:
        pages = -(-seq_kv // page_size)
        ks = (batch * pages, page_size, kv_heads, head_dim)
        vs = ks[:3] + ((head_dim_v or head_dim),)
        table_shape, lens = (batch, pages), [seq_kv] * batch
    p = _problem.build(qs, ks, vs, layout=layout, dtype=_problem.dtype_name(dtype), causal=causal, window=window,
                       causal_align=causal_align, softcap=softcap, alibi=alibi, sinks=sinks,
                       mask_shape=(seq_q, seq_kv) if mask else None, kv_dtype=kv_dtype, q_dtype=q_dtype,
                       table_shape=table_shape,
                       seq_lens=lens)
    case = dict(name=name or f"b{batch}-h{heads}/{kv_heads}-q{seq_q}-k{seq_kv}-d{head_dim}"
                + ("-causal" if causal else ""), **_problem.describe(p))
    rng = np.random.default_rng(seed)
    x = _inputs(rng, p, mask, sinks)
    host = HostTensors(p, alibi=alibi or None, **x)
    rows = _check_rows(p, rng) if check else None
    kernel = dict(implementation=impl, variant=variant, tile=tile, split_kv=split_kv)
    records = []
    for index in _device_indices(api, device):
        r = _record(p, case, index)
        try:
            _measure(r, p, host, rows, index, iters, warmup, launches, kernel, check)
        except (Unsupported, OutOfMemory) as e:
            r["status"], r["reason"] = "skipped", str(e)
        except Unavailable as e:
            r["status"], r["reason"] = "unavailable", str(e)
        except Error as e:
            r["status"], r["reason"] = "fail", f"{e.status}: {e}"
        if r["status"] != "ok":
            r["tflops"] = r["tokens_per_s"] = r["gbytes_per_s"] = None
        records.append(r)
    return records
