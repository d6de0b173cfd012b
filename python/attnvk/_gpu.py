"""CUDA/HIP device tensors without a host round trip: objects exposing
__cuda_array_interface__ (torch, CuPy, Numba) or __dlpack__ are wrapped in
place with attnvk_buffer_wrap and the kernel reads and writes them there.
Untested in attnvk's CI (no GPU there): python/examples/torch_cuda.py runs it."""
import ctypes
import math

from ._errors import bad_argument

_CAI_DTYPES = {"<f4": "f32", "<f2": "f16", "<i4": "int32"}
_DL_DTYPES = {(2, 32): "f32", (2, 16): "f16", (4, 16): "bf16", (0, 32): "int32"}  # (DLDataTypeCode, bits)
_DL_CUDA, _DL_ROCM = 2, 10
_ITEMSIZE = {"f32": 4, "f16": 2, "bf16": 2, "int32": 4}


class DeviceTensor:
    """A C-contiguous device array: address, shape, dtype name, api ('cuda'/'hip'), device index."""

    def __init__(self, address, shape, dtype, api, index, owner, keep=None):
        self.address, self.shape, self.dtype, self.api, self.index = address, tuple(shape), dtype, api, index
        self.owner = owner  # the caller's object: returned as the output
        self.keep = keep    # a DLPack capsule: its memory lives as long as it does
        self.nbytes = math.prod(self.shape) * _ITEMSIZE[dtype]


def _is_torch(x):
    return type(x).__module__.startswith("torch")


def _torch_api():
    import torch
    return "hip" if getattr(torch.version, "hip", None) else "cuda"


def _contiguous(name, shape, strides, itemsize):
    if strides is None:
        return
    expect, step = [], itemsize
    for n in reversed(shape):
        expect.insert(0, step)
        step *= n
    if any(s != e for s, e, n in zip(strides, expect, shape) if n > 1):
        raise bad_argument(f"{name} is not C-contiguous (strides {tuple(strides)}); make it contiguous first")


def _sync_stream(api, stream):
    """Waits for the producer's stream (CUDA Array Interface v3 'stream')."""
    if api == "hip":
        ctypes.CDLL("libamdhip64.so").hipStreamSynchronize(ctypes.c_void_p(stream))
    else:
        ctypes.CDLL("libcuda.so.1").cuStreamSynchronize(ctypes.c_void_p(stream))


def _from_cai(name, x, api):
    cai = x.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise bad_argument(f"{name}: masked device arrays are not supported")
    dtype = _CAI_DTYPES.get(cai["typestr"])
    if dtype is None:
        raise bad_argument(f"{name}: unsupported device dtype '{cai['typestr']}' (f32, f16; int32 tables)")
    _contiguous(name, cai["shape"], cai.get("strides"), _ITEMSIZE[dtype])
    if not _is_torch(x) and cai.get("stream") not in (None, 0):
        _sync_stream(api, cai["stream"])
    return DeviceTensor(cai["data"][0], cai["shape"], dtype, api, None, x)


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def _from_dlpack(name, x):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    # torch: synchronized by the caller; others: made ready on the default stream (CUDA's legacy
    # stream is 1 in DLPack's convention, ROCm's 0), which is then waited for
    default_stream = 0 if x.__dlpack_device__()[0] == _DL_ROCM else 1
    capsule = x.__dlpack__() if _is_torch(x) else x.__dlpack__(stream=default_stream)
    t = _DLTensor.from_address(get(capsule, b"dltensor"))  # DLManagedTensor starts with its DLTensor
    if t.device_type not in (_DL_CUDA, _DL_ROCM):
        raise bad_argument(f"{name}: DLPack device type {t.device_type} is not CUDA (2) or ROCm (10)")
    api = "hip" if t.device_type == _DL_ROCM else "cuda"
    dtype = _DL_DTYPES.get((t.code, t.bits)) if t.lanes == 1 else None
    if dtype is None:
        raise bad_argument(f"{name}: unsupported DLPack dtype (code {t.code}, {t.bits} bits, {t.lanes} lanes)")
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = [t.strides[i] * _ITEMSIZE[dtype] for i in range(t.ndim)] if t.strides else None
    _contiguous(name, shape, strides, _ITEMSIZE[dtype])
    if not _is_torch(x):
        _sync_stream(api, default_stream)
    return DeviceTensor(t.data + t.byte_offset, shape, dtype, api, t.device_id, x, keep=capsule)


def is_device_array(x):
    if _is_torch(x):  # its __cuda_array_interface__ raises RuntimeError on tensors that require grad
        return bool(getattr(x, "is_cuda", False))
    if hasattr(x, "__cuda_array_interface__"):
        return True
    return hasattr(x, "__dlpack_device__") and x.__dlpack_device__()[0] in (_DL_CUDA, _DL_ROCM)


def device_tensor(name, x):
    """DeviceTensor for a CUDA/HIP array, with its producer's pending work finished."""
    if _is_torch(x):
        import torch  # present: x is one of its tensors
        x = x.detach()
        torch.cuda.current_stream(x.device).synchronize()
        if x.dtype != torch.bfloat16:  # the CUDA Array Interface has no bf16
            t = _from_cai(name, x, _torch_api())
        else:
            t = _from_dlpack(name, x)
        t.index = x.device.index
        return t
    if hasattr(x, "__cuda_array_interface__"):
        return _from_cai(name, x, "cuda")
    return _from_dlpack(name, x)


def empty_like_torch(q, shape, float32=False):
    """An output tensor on q's device, through torch (q is a torch tensor)."""
    import torch
    return torch.empty(shape, dtype=torch.float32 if float32 else q.dtype, device=q.device)
