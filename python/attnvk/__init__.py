"""attnvk for Python: a thin ctypes layer over libattnvk.so (the C API in
attnvk/attnvk.h). numpy arrays go through the host; CUDA/HIP tensors
(__cuda_array_interface__, __dlpack__) are used in place."""
from ._attention import attention
from ._bench import bench
from ._devices import devices
from ._errors import (BackendError, CompileError, DeviceLost, Error, InvalidArgument, IoError, OutOfMemory,
                      Unavailable, Unsupported)
from ._host import alibi_slopes

__version__ = "0.1.0"
__all__ = ["attention", "bench", "devices", "alibi_slopes", "library_path", "Error", "InvalidArgument",
           "Unsupported", "Unavailable", "OutOfMemory", "DeviceLost", "CompileError", "IoError", "BackendError"]


def library_path():
    """The libattnvk.so this package loaded (loading it if needed)."""
    from ._lib import lib
    return lib().path
