"""attnvk on torch CUDA tensors, in place: Q, K, V and O stay where torch put
them (the data pointers printed show it), the result is compared with torch's
scaled_dot_product_attention, and both are timed.

    ATTNVK_LIBRARY=$PWD/build/libattnvk.so.0 PYTHONPATH=python python3 python/examples/torch_cuda.py
    ... --batch 4 --heads 32 --kv-heads 8 --seq 4096 --head-dim 128 --dtype bf16 --causal

Needs PyTorch with CUDA and a libattnvk with attnvk_buffer_wrap."""
import argparse
import time

import torch
import torch.nn.functional as F

import attnvk


def options():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--batch", type=int, default=4)
    a.add_argument("--heads", type=int, default=32)
    a.add_argument("--kv-heads", type=int, default=8)
    a.add_argument("--seq", type=int, default=4096)
    a.add_argument("--head-dim", type=int, default=128)
    a.add_argument("--dtype", choices=("f16", "bf16"), default="f16")
    a.add_argument("--causal", action="store_true")
    a.add_argument("--iters", type=int, default=20)
    return a.parse_args()


def sdpa(q, k, v, causal):
    """torch's SDPA; GQA by repeating K/V heads (enable_gqa needs torch >= 2.5)."""
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def ms_per_call(fn, iters):
    """Wall time per call with the GPU drained before and after, in ms."""
    fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(iters):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e3 / iters


def main():
    a = options()
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[a.dtype]
    torch.manual_seed(0)
    q = torch.randn(a.batch, a.heads, a.seq, a.head_dim, device="cuda", dtype=dtype)
    k = torch.randn(a.batch, a.kv_heads, a.seq, a.head_dim, device="cuda", dtype=dtype)
    v = torch.randn_like(k)
    out = torch.empty_like(q)
    print("attnvk", attnvk.library_path())
    print("device", [d["spec"] + " " + d["name"] for d in attnvk.devices() if d["api"] == "cuda"])

    # torch's is_causal is top-left aligned; attnvk's default is bottom-right (the same when Nq == Nk)
    info = {}
    o = attnvk.attention(q, k, v, causal=a.causal, causal_align="top-left", out=out, info=info)
    torch.cuda.synchronize()
    print(f"data_ptr q {q.data_ptr():#x} k {k.data_ptr():#x} v {v.data_ptr():#x} out {out.data_ptr():#x}")
    print(f"returned  {o.data_ptr():#x}: {'the same tensor, written in place' if o is out else 'A COPY'}")
    print("kernel", {key: info[key] for key in ("device", "implementation", "variant", "tile_br", "tile_bc")})

    want = sdpa(q, k, v, a.causal)
    err = ((o.double() - want.double()).norm() / want.double().norm()).item()
    print(f"rel L2 vs torch SDPA: {err:.3e} ({'ok' if err <= 5e-3 else 'TOO LARGE'}, tolerance 5e-3)")

    flops = 4.0 * a.batch * a.heads * a.seq * a.seq * a.head_dim / (2 if a.causal else 1)
    t_attnvk = ms_per_call(lambda: attnvk.attention(q, k, v, causal=a.causal, causal_align="top-left", out=out,
                                                    info=info), a.iters)
    kernel_ms = info["device_ms"]
    t_sdpa = ms_per_call(lambda: sdpa(q, k, v, a.causal), a.iters)
    print(f"attnvk.attention: {t_attnvk:.3f} ms/call wall ({flops / t_attnvk / 1e9:.1f} TFLOP/s), "
          f"kernel {kernel_ms:.3f} ms ({flops / kernel_ms / 1e9:.1f} TFLOP/s)")
    print(f"torch SDPA:       {t_sdpa:.3f} ms/call wall ({flops / t_sdpa / 1e9:.1f} TFLOP/s; "
          "includes repeat_interleave of K/V for GQA)")
    (r,) = attnvk.bench(batch=a.batch, heads=a.heads, kv_heads=a.kv_heads, seq_q=a.seq, head_dim=a.head_dim,
                        dtype=a.dtype, causal=a.causal, api="cuda", device=0, iters=a.iters)
    print(f"attnvk.bench (library buffers, back-to-back runs): {r['status']} "
          f"median {r['stats']['median_ms']:.3f} ms, {r['tflops']:.1f} TFLOP/s, rel_l2 {r['check']['rel_l2']:.2e}"
          if r["status"] == "ok" else f"attnvk.bench: {r['status']}: {r['reason']}")


if __name__ == "__main__":
    main()
