"""Failures are attnvk.Error with attnvk's one-line message."""
import numpy as np
import pytest

import attnvk
from attnvk import _find
from conftest import normal


def test_bad_shape(rng):
    with pytest.raises(attnvk.InvalidArgument, match=r"^q: expected 4 dimensions \(B,H,S,D\), got 3$"):
        attnvk.attention(normal(rng, 4, 8, 64), normal(rng, 1, 4, 8, 64), normal(rng, 1, 4, 8, 64), api="cpu")
    with pytest.raises(attnvk.InvalidArgument, match=r"Q heads \(3\) is not a multiple of K/V heads \(2\)"):
        attnvk.attention(normal(rng, 1, 3, 8, 64), normal(rng, 1, 2, 8, 64), normal(rng, 1, 2, 8, 64), api="cpu")


def test_unknown_api_and_device(rng):
    q = normal(rng, 1, 1, 4, 64)
    with pytest.raises(attnvk.Error, match=r"^unknown API 'metal' \(cpu, vulkan, opencl, cuda, hip\)$"):
        attnvk.attention(q, q, q, api="metal")
    with pytest.raises(attnvk.Error, match="no-such-gpu") as e:
        attnvk.attention(q, q, q, device="no-such-gpu")
    assert e.value.status == "invalid argument"


def test_library_rejects_problem(rng):  # attnvk_problem_validate's own one-line messages
    q, v = normal(rng, 1, 1, 4, 64), normal(rng, 1, 1, 4, 100)
    with pytest.raises(attnvk.InvalidArgument, match=r"^unsupported head dims Dk=64 \(Q, K\) and Dv=100 \(V, O\)"):
        attnvk.attention(q, q, v, api="cpu")
    with pytest.raises(attnvk.Error, match=r"^mask batch dimension 2 does not broadcast to B=1 \(1 or B\)$") as e:
        attnvk.attention(q, q, q, api="cpu", mask=np.zeros((2, 1, 4, 4), np.float32))
    assert e.value.status == "invalid argument"


def test_bad_inputs(rng):
    q = normal(rng, 1, 2, 4, 64)
    q[0, 1, 2, 3] = np.nan
    with pytest.raises(attnvk.InvalidArgument, match="q holds 1 NaN/Inf values of 512; inputs must be finite"):
        attnvk.attention(q, q, q, api="cpu")
    with pytest.raises(attnvk.InvalidArgument, match="unsupported dtype 'f8'"):
        attnvk.attention(q, q, q, api="cpu", dtype="f8")
    with pytest.raises(attnvk.InvalidArgument, match="window wants"):
        attnvk.attention(q, q, q, api="cpu", window=(1,))
    with pytest.raises(attnvk.InvalidArgument, match="block_table needs seq_lens too"):
        attnvk.attention(q, q, q, api="cpu", block_table=np.zeros((1, 1), np.int32))


class FakeCudaArray:  # what CuPy or torch would hand over, with no GPU behind it
    __cuda_array_interface__ = {"shape": (1, 1, 4, 64), "typestr": "<f2", "data": (0x1000, False), "version": 3}


def test_device_tensor_needs_buffer_wrap():
    x = FakeCudaArray()
    from attnvk import _lib
    if _lib.has("attnvk_buffer_wrap"):
        pytest.skip("this libattnvk has attnvk_buffer_wrap: the device path runs on CUDA (examples/torch_cuda.py)")
    with pytest.raises(attnvk.Error, match="^this libattnvk has no attnvk_buffer_wrap$"):
        attnvk.attention(x, x, x)


def test_library_not_found_names_each_place(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTNVK_LIBRARY", str(tmp_path / "libattnvk.so"))
    with pytest.raises(attnvk.Unavailable, match=r"cannot load libattnvk \(ATTNVK_LIBRARY: .*libattnvk.so"):
        _find.load()
    monkeypatch.delenv("ATTNVK_LIBRARY")
    places = [where for where, _ in _find._candidates()]
    assert places[0] == "ATTNVK_LIBRARY" and places[-1] == "the system loader"


def test_problem_struct_matches_the_library():
    """The ctypes attnvk_problem has the library's size: attnvk_problem_init zeroes
    exactly sizeof(attnvk_problem) bytes of a larger, marked buffer (a field added in C
    and not here would make the library read past the Python struct)."""
    import ctypes
    from attnvk import _lib
    size = ctypes.sizeof(_lib.Problem)
    buf = (ctypes.c_uint8 * (size + 256))(*([0xAB] * (size + 256)))
    fn = _lib.lib().attnvk_problem_init
    fn.restype, fn.argtypes = None, [ctypes.c_void_p]
    fn(ctypes.cast(buf, ctypes.c_void_p))
    zeroed = next(i for i in range(size + 256) if buf[i] == 0xAB)
    assert zeroed == size, f"the library's attnvk_problem is {zeroed} bytes, the Python one {size}"


def test_fp8_queries_need_an_fp8_cache(rng):
    q = normal(rng, 1, 2, 8, 64)
    with pytest.raises(attnvk.InvalidArgument, match=r"^fp8 queries \(the FP8 forward\) need an fp8 K/V cache"):
        attnvk.attention(q, q, q, api="cpu", q_dtype="fp8")
    with pytest.raises(attnvk.InvalidArgument, match=r"need dtype f16 or bf16 \(O's dtype\), got f32$"):
        attnvk.attention(q, q, q, api="cpu", dtype="f32", q_dtype="fp8", kv_dtype="fp8")
    with pytest.raises(attnvk.InvalidArgument, match=r"^unknown q dtype 'q8_0' \(dtype, fp8\)$"):
        attnvk.attention(q, q, q, api="cpu", q_dtype="q8_0")
