"""PyTorch's SDPA backends (cuDNN, FlashAttention-2) forward and backward on the GPU, as context for
attnvk's backward (issue #18): fp16, B*N = 16k, H*D = 2048, TFLOP/s with the fwd 4*B*H*N^2*D (halved
for causal) and the bwd 2.5x that. CUDA-event timing, median of 20 after 5 warm-ups."""
import sys
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F


def time_ms(fn, reps=20):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b))
    out.sort()
    return out[len(out) // 2]


def case(backend, n, d, causal):
    b, h = 16384 // n, 2048 // d
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.float16, requires_grad=True) for _ in range(3))
    do = torch.randn(b, h, n, d, device="cuda", dtype=torch.float16)
    with sdpa_kernel([backend]):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        fwd = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
        bwd = time_ms(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))
    flops = 4.0 * b * h * n * n * d * (0.5 if causal else 1.0)
    return fwd, bwd, flops / fwd / 1e9, 2.5 * flops / bwd / 1e9


print(torch.__version__, torch.cuda.get_device_name(), "cudnn", torch.backends.cudnn.version())
for backend, name in ((SDPBackend.CUDNN_ATTENTION, "cudnn"), (SDPBackend.FLASH_ATTENTION, "flash2")):
    for n, d, causal in ((4096, 128, False), (4096, 128, True), (16384, 128, False), (4096, 64, False), (4096, 64, True)):
        try:
            f, bw, tf, tb = case(backend, n, d, causal)
            print(f"{name:7s} N={n:5d} D={d:3d} causal={int(causal)} fwd {f:7.3f} ms {tf:6.1f} TFLOP/s  bwd {bw:7.3f} ms {tb:6.1f} TFLOP/s")
        except Exception as e:  # a backend that refuses the case says why
            print(f"{name:7s} N={n} D={d} causal={int(causal)}: {str(e).splitlines()[0][:150]}")
        sys.stdout.flush()
