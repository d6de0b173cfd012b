"""The process-wide context, the device list and opened devices (kept open:
opening compiles or loads pipelines, which calls should not pay again)."""
import atexit
import ctypes

from . import _lib, _run
from ._errors import Unavailable, bad_argument

_context = None
_open = {}  # global device index -> attnvk_device*


def context():
    global _context
    if _context is None:
        L = _lib.lib()
        ctx = ctypes.c_void_p()
        _lib.check(L.attnvk_context_create(ctypes.byref(ctx)))
        _context = ctx
        atexit.register(_close_all)
    return _context


def _close_all():
    global _context
    L = _lib.lib()
    _run.drop_kernels()  # kernels before their devices
    for dev in _open.values():
        L.attnvk_device_close(dev)
    _open.clear()
    if _context is not None:
        L.attnvk_context_destroy(_context)
        _context = None


def _info_dict(i, d):
    uuid = bytes(d.uuid).hex() if d.has_uuid else None
    if uuid:
        uuid = "-".join((uuid[:8], uuid[8:12], uuid[12:16], uuid[16:20], uuid[20:]))
    api = _lib.API_NAMES[d.api]
    return {
        "api": api, "index": d.index, "spec": f"{api}:{d.index}", "global_index": i,
        "name": _lib.text(d.name), "vendor": _lib.text(d.vendor), "vendor_id": d.vendor_id,
        "type": _lib.DEVICE_TYPES[d.type] if 0 <= d.type < len(_lib.DEVICE_TYPES) else "other",
        "driver_version": _lib.text(d.driver_version), "api_version": _lib.text(d.api_version),
        "architecture": _lib.text(d.architecture), "memory_bytes": d.memory_bytes, "compute_units": d.compute_units,
        "subgroup_sizes": [s for s in d.subgroup_sizes if s], "shared_memory_per_group": d.shared_memory_per_group,
        "max_workgroup_size": d.max_workgroup_size, "fp16": bool(d.fp16), "bf16": bool(d.bf16),
        "cooperative_matrix": bool(d.cooperative_matrix), "uuid": uuid,
        "default_variant": _lib.text(d.default_variant),
    }


def devices():
    """Every visible (API, device) as a dict with attnvk_device_info's fields
    (the keys of `attnvk devices --json`), plus spec ("vulkan:0") and global_index."""
    L, ctx = _lib.lib(), context()
    return [_info_dict(i, L.attnvk_device_info_at(ctx, i).contents) for i in range(L.attnvk_device_count(ctx))]


# with api=None and device=None: the first GPU through these APIs, else the CPU device
_DEFAULT_ORDER = ("cuda", "hip", "vulkan", "opencl")


def _default_spec():
    listed = devices()
    for api in _DEFAULT_ORDER:
        for d in listed:
            if d["api"] == api and d["type"] in ("discrete", "integrated"):
                return d["spec"]
    return "cpu"


def resolve(api=None, device=None):
    """Global index of the device `attnvk run --api API --device N|NAME` would pick."""
    L, ctx = _lib.lib(), context()
    if api is not None:
        if api not in _lib.API_NAMES:
            raise bad_argument(f"unknown API '{api}' (cpu, vulkan, opencl, cuda, hip)")
        reason = ctypes.c_char_p()
        if L.attnvk_api_status(ctx, _lib.API_NAMES.index(api), ctypes.byref(reason)) != 0:
            raise Unavailable(f"{api} unavailable: {reason.value.decode(errors='replace')}")
    if device is not None:
        device = str(device)
        if not device or "," in device:
            raise bad_argument(f"device names one device (an index or a name), got '{device}'")
    if api and device is not None:
        spec = f"{api}:{device}"  # index within the API, or a name
    else:
        spec = api or device or _default_spec()
    if device is not None:
        _lib.check(L.attnvk_device_spec_check(ctx, spec.encode()))
    found = (ctypes.c_int * 1)()
    if L.attnvk_device_select(ctx, spec.encode(), found, 1) < 1:
        raise bad_argument(f"no visible device matches '{spec}'")
    return found[0]


def open_device(index):
    """attnvk_device* for a global index, opened once per process."""
    if index not in _open:
        L, dev = _lib.lib(), ctypes.c_void_p()
        _lib.check(L.attnvk_device_open(context(), index, ctypes.byref(dev)))
        _open[index] = dev
    return _open[index]


def info_of(index):
    return _info_dict(index, _lib.lib().attnvk_device_info_at(context(), index).contents)
