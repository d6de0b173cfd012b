"""ctypes mirror of attnvk.h: the structs, the prototypes, and lib() that
loads libattnvk.so once. Field order and types must match the header."""
import ctypes
from ctypes import POINTER, Structure, c_char, c_char_p, c_double, c_float, c_int, c_size_t, c_uint, c_uint8
from ctypes import c_uint32, c_uint64, c_void_p

from . import _errors, _find

c_int32_p = POINTER(ctypes.c_int32)
c_float_p = POINTER(c_float)

API_NAMES = ("cpu", "vulkan", "opencl", "cuda", "hip")
DTYPE_NAMES = ("f32", "f16", "bf16")
LAYOUTS = ("bhsd", "bshd")
KV_FORMATS = ("dtype", "q8_0", "q4_0", "fp8")
Q_FORMATS = {"dtype": 0, "fp8": 3}  # attnvk_problem.q_format: KV_FORMATS' values Q can take
DEVICE_TYPES = ("other", "discrete", "integrated", "cpu")
ALIGNS = ("bottom-right", "top-left")
MAX_DILATED_GROUPS = 8  # ATTNVK_MAX_DILATED_GROUPS


class Problem(Structure):
    _fields_ = [(n, c_int) for n in ("batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "causal")] + [
        ("scale", c_float)] + [(n, c_int) for n in (
            "dtype", "layout", "kv_format", "page_size", "num_pages", "max_pages", "ragged", "align", "window",
            "window_left", "window_right")] + [("softcap", c_float)] + [(n, c_int) for n in (
                "alibi", "sinks", "mask", "mask_batch", "mask_heads", "mask_dtype", "head_dim_v",
                "position_offset", "block_sparse", "block_q", "block_k", "layout_batch", "layout_heads",
                "dilated_groups")] + [
                    ("dilated_segment", c_int * MAX_DILATED_GROUPS), ("dilated_rate", c_int * MAX_DILATED_GROUPS),
                    ("q_format", c_int)]


class DeviceInfo(Structure):
    _fields_ = [("api", c_int), ("index", c_int), ("name", c_char * 256), ("vendor", c_char * 64),
                ("vendor_id", c_uint32), ("type", c_int), ("driver_version", c_char * 64),
                ("api_version", c_char * 64), ("architecture", c_char * 64), ("memory_bytes", c_uint64),
                ("compute_units", c_int), ("subgroup_sizes", c_int * 4), ("shared_memory_per_group", c_uint64),
                ("max_workgroup_size", c_int), ("fp16", c_int), ("bf16", c_int), ("cooperative_matrix", c_int),
                ("has_uuid", c_int), ("uuid", c_uint8 * 16), ("default_variant", c_char * 64)]


class KernelOptions(Structure):
    _fields_ = [("implementation", c_char_p), ("variant", c_char_p), ("tile_br", c_int), ("tile_bc", c_int),
                ("split_kv", c_int), ("write_lse", c_int), ("test_flags", c_uint)]


class KernelInfo(Structure):
    _fields_ = [("implementation", c_char * 32), ("variant", c_char * 64), ("tile_br", c_int), ("tile_bc", c_int),
                ("workgroup_size", c_int), ("split_kv", c_int), ("workspace_bytes", c_uint64),
                ("params", c_char * 256)]


class ImplInfo(Structure):
    _fields_ = [("name", c_char * 32), ("fused", c_int), ("available", c_int), ("reason", c_char * 256),
                ("features", c_uint)]


TENSOR_NAMES = ("q", "k", "v", "o", "lse", "block_table", "seq_lens", "kv_scales", "mask", "sinks", "alibi_slopes",
                "block_layout", "q_scales")


class Tensors(Structure):
    _fields_ = [(n, c_void_p) for n in TENSOR_NAMES]


class HostInputs(Structure):
    _fields_ = [("q", c_float_p), ("k", c_float_p), ("v", c_float_p), ("kv_lens", c_int32_p), ("mask", c_float_p),
                ("sinks", c_float_p), ("alibi_slopes", c_float_p), ("block_layout", c_void_p)]


class Check(Structure):
    _fields_ = [("rel_l2", c_double), ("max_abs", c_double), ("nonfinite", c_size_t), ("rows_checked", c_size_t),
                ("tolerance", c_double), ("passed", c_int)]


class ExternalBuffer(Structure):  # attnvk_buffer_wrap's input (CUDA/HIP device memory)
    _fields_ = [("api", c_int), ("handle", c_void_p), ("memory", c_void_p), ("offset", c_size_t),
                ("bytes", c_size_t)]


P = POINTER
_PROTOTYPES = {  # name: (restype, argtypes); c_int restype for attnvk_status
    "attnvk_last_error": (c_char_p, []),
    "attnvk_status_name": (c_char_p, [c_int]),
    "attnvk_api_status": (c_int, [c_void_p, c_int, P(c_char_p)]),
    "attnvk_context_create": (c_int, [P(c_void_p)]),
    "attnvk_context_destroy": (None, [c_void_p]),
    "attnvk_device_count": (c_int, [c_void_p]),
    "attnvk_device_info_at": (P(DeviceInfo), [c_void_p, c_int]),
    "attnvk_device_select": (c_int, [c_void_p, c_char_p, P(c_int), c_int]),
    "attnvk_device_spec_check": (c_int, [c_void_p, c_char_p]),
    "attnvk_device_open": (c_int, [c_void_p, c_int, P(c_void_p)]),
    "attnvk_device_close": (None, [c_void_p]),
    "attnvk_device_implementations": (c_int, [c_void_p, P(ImplInfo), c_int]),
    "attnvk_device_read_bandwidth": (c_int, [c_void_p, c_int, P(c_double), P(c_int)]),
    "attnvk_buffer_create": (c_int, [c_void_p, c_size_t, P(c_void_p)]),
    "attnvk_buffer_destroy": (None, [c_void_p]),
    "attnvk_buffer_write": (c_int, [c_void_p, c_size_t, c_void_p, c_size_t]),
    "attnvk_buffer_read": (c_int, [c_void_p, c_size_t, c_void_p, c_size_t]),
    "attnvk_problem_validate": (c_int, [P(Problem)]),
    "attnvk_problem_scale": (c_float, [P(Problem)]),
    "attnvk_problem_flops": (c_double, [P(Problem)]),
    "attnvk_kv_bytes": (c_size_t, [P(Problem)]),
    "attnvk_v_bytes": (c_size_t, [P(Problem)]),
    "attnvk_kv_row_bytes": (c_size_t, [P(Problem)]),
    "attnvk_kv_tables_check": (c_int, [P(Problem), c_int32_p, c_int32_p]),
    "attnvk_kv_encode": (None, [c_int, c_int, c_float_p, c_void_p, c_size_t, c_float]),
    "attnvk_kv_gather": (c_int, [P(Problem), c_void_p, c_int32_p, c_int32_p, c_float_p, c_int, c_float_p]),
    "attnvk_fp8_scale": (c_float, [c_float]),
    "attnvk_kv_decode": (None, [c_int, c_int, c_void_p, c_float_p, c_size_t, c_float]),
    "attnvk_kernel_prepare": (c_int, [c_void_p, P(Problem), P(KernelOptions), P(c_void_p), P(KernelInfo)]),
    "attnvk_kernel_run_tensors": (c_int, [c_void_p, P(Tensors), c_int, c_int, P(c_double)]),
    "attnvk_kernel_run_repeated": (c_int, [c_void_p, P(Tensors), c_int, c_int, c_int, P(c_double)]),
    "attnvk_kernel_destroy": (None, [c_void_p]),
    "attnvk_alibi_slopes": (None, [c_int, c_float_p]),
    "attnvk_check_output_inputs": (Check, [P(Problem), P(HostInputs), c_float_p, P(c_size_t), c_size_t]),
    "attnvk_tolerance": (c_double, [c_int]),
    "attnvk_pack": (None, [c_int, c_float_p, c_void_p, c_size_t]),
    "attnvk_unpack": (None, [c_int, c_void_p, c_float_p, c_size_t]),
}
OPTIONAL = {  # newer symbols: feature-detected, absent from older libraries
    "attnvk_buffer_wrap": (c_int, [c_void_p, P(ExternalBuffer), P(c_void_p)]),
}

_loaded = None


def lib():
    """The loaded library (with prototypes set); raises attnvk.Unavailable."""
    global _loaded
    if _loaded is None:
        cdll, path = _find.load()
        for name, (res, args) in list(_PROTOTYPES.items()) + list(OPTIONAL.items()):
            if name in OPTIONAL and not hasattr(cdll, name):
                continue
            fn = getattr(cdll, name)
            fn.restype, fn.argtypes = res, args
        cdll.path = path
        _loaded = cdll
    return _loaded


def has(name):
    return hasattr(lib(), name)


def error_for(status):
    """attnvk.Error subclass for a failed call, with the library's one-line message."""
    L = lib()
    cls = _errors.BY_STATUS[status] if 0 < status < len(_errors.BY_STATUS) else _errors.Error
    return cls(L.attnvk_last_error().decode(errors="replace"), L.attnvk_status_name(status).decode())


def check(status):
    if status != 0:
        raise error_for(status)


def text(field):
    return field.decode(errors="replace")


def ptr(array, ctype=None):
    """Pointer to a numpy array's data (the array must stay alive)."""
    p = c_void_p(array.ctypes.data) if array is not None else c_void_p()
    return ctypes.cast(p, ctype) if ctype else p
