"""Device buffers and kernels with their lifetimes: a Run owns what it
creates and frees it on close, so an error half-way leaks nothing."""
import ctypes
from collections import OrderedDict

import numpy as np

from . import _lib
from ._errors import Error


_KERNELS = OrderedDict()  # (device, problem bytes, options) -> (attnvk_kernel*, KernelInfo): prepared once
_KERNELS_KEPT = 16


def drop_kernels():
    while _KERNELS:
        _lib.lib().attnvk_kernel_destroy(_KERNELS.popitem()[1][0])


class Run:
    def __init__(self, device):
        self.device = device
        self.buffers = []
        self.kernel = None
        self.info = None
        self.tensors = _lib.Tensors()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        L = _lib.lib()
        self.kernel = None  # owned by _KERNELS
        for b in self.buffers:
            L.attnvk_buffer_destroy(b)
        self.buffers = []

    def _keep(self, buf, name):
        self.buffers.append(buf)
        if name:
            setattr(self.tensors, name, buf.value)
        return buf

    def create(self, nbytes, name=None):
        buf = ctypes.c_void_p()
        _lib.check(_lib.lib().attnvk_buffer_create(self.device, max(int(nbytes), 4), ctypes.byref(buf)))
        return self._keep(buf, name)

    def upload(self, array, name=None):
        """A buffer holding a contiguous numpy array's bytes."""
        array = np.ascontiguousarray(array)
        buf = self.create(array.nbytes, name)
        _lib.check(_lib.lib().attnvk_buffer_write(buf, 0, _lib.ptr(array), array.nbytes))
        return buf

    def wrap(self, api, address, nbytes, name=None):
        """A buffer over device memory someone else owns (attnvk_buffer_wrap)."""
        L = _lib.lib()
        if not hasattr(L, "attnvk_buffer_wrap"):
            raise Error("this libattnvk has no attnvk_buffer_wrap", "unsupported")
        ext = _lib.ExternalBuffer(api=api, handle=address, memory=None, offset=0, bytes=nbytes)
        buf = ctypes.c_void_p()
        _lib.check(L.attnvk_buffer_wrap(self.device, ctypes.byref(ext), ctypes.byref(buf)))
        return self._keep(buf, name)

    def read(self, buf, out):
        """Fills the contiguous numpy array out from buf."""
        _lib.check(_lib.lib().attnvk_buffer_read(buf, 0, _lib.ptr(out), out.nbytes))
        return out

    def prepare(self, problem, implementation=None, variant=None, tile=None, split_kv=None, write_lse=False):
        """The kernel for this problem and options: prepared once per process
        (compiling or loading it is what repeated calls should not pay again)."""
        key = (self.device.value, bytes(problem), implementation, variant, tile, split_kv, bool(write_lse))
        if key not in _KERNELS:
            opts = _lib.KernelOptions(implementation=implementation.encode() if implementation else None,
                                      variant=variant.encode() if variant else None, split_kv=split_kv or 0,
                                      write_lse=int(bool(write_lse)))
            if tile is not None:
                opts.tile_br, opts.tile_bc = tile
            kernel, info = ctypes.c_void_p(), _lib.KernelInfo()
            _lib.check(_lib.lib().attnvk_kernel_prepare(self.device, ctypes.byref(problem), ctypes.byref(opts),
                                                        ctypes.byref(kernel), ctypes.byref(info)))
            _KERNELS[key] = (kernel, info)
            if len(_KERNELS) > _KERNELS_KEPT:
                _lib.lib().attnvk_kernel_destroy(_KERNELS.popitem(last=False)[1][0])
        _KERNELS.move_to_end(key)
        self.kernel, self.info = _KERNELS[key]

    def run(self):
        """One run, waited for; the kernel's device time in ms."""
        ms = ctypes.c_double()
        _lib.check(_lib.lib().attnvk_kernel_run_tensors(self.kernel, ctypes.byref(self.tensors), 0, 0,
                                                        ctypes.byref(ms)))
        return ms.value

    def run_repeated(self, launches):
        """launches back-to-back runs, one wait; the mean device ms per launch."""
        ms = ctypes.c_double()
        _lib.check(_lib.lib().attnvk_kernel_run_repeated(self.kernel, ctypes.byref(self.tensors), 0, 0, launches,
                                                         ctypes.byref(ms)))
        return ms.value

    def kernel_info(self):
        i = self.info
        return {"implementation": _lib.text(i.implementation), "variant": _lib.text(i.variant),
                "tile_br": i.tile_br, "tile_bc": i.tile_bc, "workgroup_size": i.workgroup_size,
                "split_kv": i.split_kv, "workspace_bytes": i.workspace_bytes, "params": _lib.text(i.params)}
