"""The CUDA/HIP tensor path without a GPU: objects with __cuda_array_interface__
over host memory, attnvk_buffer_wrap stood in for by copies through the CPU
device. Checks the plumbing (shapes, dtypes, out/lse_out, extras, errors);
the real wrap runs in python/examples/torch_cuda.py on a GPU."""
import ctypes

import numpy as np
import pytest

import attnvk
import reference as ref
from attnvk import _attention, _devices, _gpu, _lib, _run


class HostAsCuda:
    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = {"shape": a.shape, "typestr": a.dtype.str, "data": (a.ctypes.data, False),
                                         "version": 3, "strides": None}


@pytest.fixture
def fake_wrap(monkeypatch):
    """Run.wrap uploads the bytes at the address; Run.close copies them back."""
    cpu = _devices.resolve("cpu")
    monkeypatch.setattr(_lib, "has", lambda name: True)
    monkeypatch.setattr(_attention._devices, "resolve", lambda api, device=None: cpu)
    wrapped = []

    def wrap(self, api, address, nbytes, name=None):
        host = np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(address))
        wrapped.append((self, self.upload(host.copy(), name), host))
        return wrapped[-1][1]

    close = _run.Run.close

    def close_copying_back(self):
        for run, buf, host in wrapped:
            if run is self:
                self.read(buf, host)
        close(self)

    monkeypatch.setattr(_run.Run, "wrap", wrap)
    monkeypatch.setattr(_run.Run, "close", close_copying_back)


def test_in_place_with_out_and_lse(fake_wrap, rng):
    q = rng.standard_normal((2, 4, 9, 64)).astype(np.float16)
    k, v = (rng.standard_normal((2, 2, 30, 64)).astype(np.float16) for _ in range(2))
    o, lse, sinks = np.zeros_like(q), np.zeros((2, 4, 9), np.float32), np.ones(4, np.float32)
    out = HostAsCuda(o)
    got, got_lse = attnvk.attention(HostAsCuda(q), HostAsCuda(k), HostAsCuda(v), causal=True, out=out,
                                    return_lse=True, lse_out=HostAsCuda(lse), sinks=sinks)
    want, want_lse = ref.attention(q, k, v, causal=True, sinks=sinks)
    assert got is out and ref.rel_l2(o, want) <= 5e-3 and ref.rel_l2(lse, want_lse) <= 1e-5


def test_device_errors(fake_wrap):
    x = HostAsCuda(np.zeros((1, 2, 4, 64), np.float16))
    with pytest.raises(attnvk.InvalidArgument, match=r"^give out= \(a cuda tensor of shape \[1, 2, 4, 64\], f16\)"):
        attnvk.attention(x, x, x)
    with pytest.raises(attnvk.InvalidArgument, match=r"^out is \[1, 2, 4, 64\] f32, O is \[1, 2, 4, 64\] f16$"):
        attnvk.attention(x, x, x, out=HostAsCuda(np.zeros((1, 2, 4, 64), np.float32)))
    with pytest.raises(attnvk.InvalidArgument, match="kv_dtype takes numpy K and V"):
        attnvk.attention(x, x, x, kv_dtype="q8_0")
    with pytest.raises(attnvk.InvalidArgument, match=r"^v is not C-contiguous"):
        _gpu._contiguous("v", (2, 3), (2, 4), 2)
