/* The CUDA backend: the native flash kernel compiled per device with NVRTC
 * (cuda_compile.c) and run through the native host layer (core/native_flash.c,
 * shared with HIP) over the driver table below; vendor baselines go through
 * cuda_vendor.h. Devices and buffers: cuda_device.c. */
#include "core/kernel_args.h"
#include "core/kv_cache.h" /* AVK_SCORE_FEATURES */
#include "core/layout.h"   /* avk_head_dim_v */
#include "core/native_flash.h"
#include "core/tuning.h"
#include "core/split_plan.h" /* avk_is_decode */
#include "cuda/cuda_backward.h"
#include "cuda/cuda_bandwidth.h"
#include "cuda/cuda_peak.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_kernels.h"
#include "cuda/cuda_merge.h"
#include "cuda/cuda_ring_comm.h"
#include "cuda/cuda_timeline.h"
#include "cuda/cuda_vendor.h"
#include "../../native/attn_params.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A loaded cubin, kept per device for its lifetime (tests prepare the same
 * configuration many times). */
typedef struct avk_cuda_module {
    struct avk_cuda_module *next;
    uint64_t key;
    CUmodule module;
    CUfunction fwd, reduce;
    CUfunction v_transpose; /* wgmma-fp8: V into the K-major Vt the P V MMAs read */
    int registers, local_bytes, from_cache;
} avk_cuda_module;

struct avk_bkernel {
    void *vendor;               /* a baseline's kernel, or NULL for attnvk's */
    avk_cuda_config cfg;
    const avk_cuda_module *mod;
    avk_native_kernel native;   /* planned arguments, splits, partials */
    avk_cuda_bwd *bwd;          /* the backward's kernels, once asked for */
};

/* ---- the driver table of the native host layer ---- */
static attnvk_status drv_enter(void *ctx) { return avk_cuda_push(ctx); }
static void drv_leave(void *ctx) { avk_cuda_pop(ctx); }

static attnvk_status drv_alloc(void *ctx, size_t bytes, unsigned long long *addr)
{
    avk_cuda_device *dev = ctx;
    CUdeviceptr ptr = 0;
    attnvk_status s = avk_cuda_check(dev, dev->cu->cuMemAlloc(&ptr, bytes), "cuMemAlloc(kernel workspace)");
    *addr = ptr;
    return s;
}

static attnvk_status drv_zero(void *ctx, unsigned long long addr, size_t bytes)
{
    avk_cuda_device *dev = ctx;
    static const unsigned char zeros[64];
    if (bytes > sizeof zeros) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "cuda: zero: %zu bytes (at most 64)", bytes);
    return avk_cuda_check(dev, dev->cu->cuMemcpyHtoD((CUdeviceptr)addr, zeros, bytes), "cuMemcpyHtoD(kernel counter)");
}

static void drv_free(void *ctx, unsigned long long addr)
{
    avk_cuda_device *dev = ctx;
    if (!dev->lost) dev->cu->cuMemFree((CUdeviceptr)addr);
}

static attnvk_status drv_launch(void *ctx, void *stream, void *function, const unsigned grid[3], unsigned threads,
                                size_t smem, void **args, int early, const char *name)
{
    avk_cuda_device *dev = ctx;
    /* early (the split-KV merge), Hopper on: it launches while the split
     * kernel's last CTAs run and waits for them in griddepcontrol.wait, so
     * no launch gap between the two */
    CUlaunchAttribute pdl = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                             .value.programmaticStreamSerializationAllowed = 1};
    const CUlaunchConfig cfg = {.gridDimX = grid[0], .gridDimY = grid[1], .gridDimZ = grid[2],
                                .blockDimX = threads, .blockDimY = 1, .blockDimZ = 1,
                                .sharedMemBytes = (unsigned)smem,
                                .hStream = stream ? (CUstream)stream : dev->stream,
                                .attrs = &pdl, .numAttrs = early && dev->cc_major >= 9 ? 1u : 0u};
    char what[96];
    snprintf(what, sizeof what, "cuLaunchKernelEx(%s)", name);
    attnvk_status s = avk_cuda_check(dev, dev->cu->cuLaunchKernelEx(&cfg, (CUfunction)function, args, NULL), what);
    if (s == ATTNVK_OK && avk_cuda_timeline_path() && strcmp(name, "avk_attn_fwd") == 0)
        s = avk_cuda_timeline_dump(dev, cfg.hStream, (CUfunction)function, grid,
                                   ((const avk_attn_params *)args[0])->items); /* a persistent kernel's blocks */
    return s;
}

/* wgmma-ws-fp8: K's e4m3 rows in boxes of 128 columns x the key tile, and Vt (the
 * transposed V in the workspace: per (b, kv head) Dv rows of AVK_FP8_VT_KEYS keys)
 * in boxes of 128 keys x Dv rows, both 128-byte swizzled */
static attnvk_status fp8_tensor_maps(avk_cuda_device *dev, const avk_native_kernel *k, const avk_attn_params *P,
                                     unsigned char (*maps)[128])
{
    const cuuint64_t d = (cuuint64_t)k->p.head_dim, dv = (cuuint64_t)avk_head_dim_v(&k->p);
    const cuuint64_t keys = AVK_FP8_VT_KEYS(P->seq_kv);
    const cuuint64_t k_size[4] = {d, P->seq_kv, P->kv_heads, P->batch};
    const cuuint64_t k_stride[3] = {(P->kv_ss ? P->kv_ss : 1u) * d, (P->kv_sh ? P->kv_sh : 1u) * d,
                                    (P->kv_sb ? P->kv_sb : 1u) * d};
    const cuuint64_t v_size[4] = {keys, dv, P->kv_heads, P->batch};
    const cuuint64_t v_stride[3] = {keys, dv * keys, (cuuint64_t)P->kv_heads * dv * keys};
    const cuuint32_t k_box[4] = {128u, (cuuint32_t)k->tensor_map_rows, 1u, 1u}, v_box[4] = {128u, (cuuint32_t)dv, 1u, 1u};
    const cuuint32_t step[4] = {1u, 1u, 1u, 1u};
    CUresult r = dev->cu->cuTensorMapEncodeTiled((CUtensorMap *)maps[0], CU_TENSOR_MAP_DATA_TYPE_UINT8, 4,
                                                 (void *)(uintptr_t)P->k, k_size, k_stride, k_box, step,
                                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) return avk_cuda_check(dev, r, "cuTensorMapEncodeTiled(K, e4m3)");
    r = dev->cu->cuTensorMapEncodeTiled((CUtensorMap *)maps[1], CU_TENSOR_MAP_DATA_TYPE_UINT8, 4,
                                        (void *)(uintptr_t)P->vt, v_size, v_stride, v_box, step,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? ATTNVK_OK : avk_cuda_check(dev, r, "cuTensorMapEncodeTiled(Vt)");
}

/* AVK_MASK_TMA: the f16 mask [mask_batch][mask_heads][Nq][Nk] as its rows, a 2-D tensor {Nk, rows},
 * in boxes of 64 keys x the CTA's rows, 128-byte swizzled (sm90_consumer.h's avk_add_mask_tile reads them) */
static attnvk_status mask_tensor_map(avk_cuda_device *dev, const avk_native_kernel *k, const avk_attn_params *P,
                                     unsigned char *map)
{
    const attnvk_problem *p = &k->p;
    const cuuint64_t size[2] = {(cuuint64_t)p->seq_kv, (cuuint64_t)p->mask_batch * p->mask_heads * p->seq_q};
    const cuuint64_t stride[1] = {(cuuint64_t)p->seq_kv * 2u};
    const cuuint32_t box[2] = {64u, (cuuint32_t)k->shape.br}, step[2] = {1u, 1u};
    CUresult r = dev->cu->cuTensorMapEncodeTiled((CUtensorMap *)map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                                                 (void *)(uintptr_t)P->mask, size, stride, box, step,
                                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? ATTNVK_OK : avk_cuda_check(dev, r, "cuTensorMapEncodeTiled(mask)");
}

/* wgmma-ws's TMA descriptors: K and V as 4-D tensors {D, keys, kv heads, batch} (P's
 * row strides), boxes of 64 columns x the key tile in the 128-byte swizzle its wgmma
 * descriptors read; keys past Nk land as zeros */
static attnvk_status drv_tensor_maps(void *ctx, const avk_native_kernel *k, const avk_attn_params *P,
                                     unsigned char (*maps)[128])
{
    avk_cuda_device *dev = ctx;
    if (k->v_transpose) return fp8_tensor_maps(dev, k, P, maps);
    const int dims[2] = {k->p.head_dim, avk_head_dim_v(&k->p)};
    const unsigned long long base[2] = {P->k, P->v};
    const CUtensorMapDataType type =
        k->p.dtype == ATTNVK_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    for (int i = 0; i < 2 && i < k->tensor_maps; ++i) {
        const cuuint64_t row = (cuuint64_t)dims[i] * 2u;
        /* a stride of a size-1 dimension is never stepped; the encoder still wants it valid */
        const cuuint64_t size[4] = {(cuuint64_t)dims[i], P->seq_kv, P->kv_heads, P->batch};
        const cuuint64_t stride[3] = {(P->kv_ss ? P->kv_ss : 1u) * row, (P->kv_sh ? P->kv_sh : 1u) * row,
                                      (P->kv_sb ? P->kv_sb : 1u) * row};
        const cuuint32_t box[4] = {64u, (cuuint32_t)k->tensor_map_rows, 1u, 1u}, step[4] = {1u, 1u, 1u, 1u};
        CUresult r = dev->cu->cuTensorMapEncodeTiled((CUtensorMap *)maps[i], type, 4, (void *)(uintptr_t)base[i], size,
                                                     stride, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                                     CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r != CUDA_SUCCESS) return avk_cuda_check(dev, r, i ? "cuTensorMapEncodeTiled(V)" : "cuTensorMapEncodeTiled(K)");
    }
    return k->tensor_maps > 2 ? mask_tensor_map(dev, k, P, maps[2]) : ATTNVK_OK;
}

static attnvk_status drv_time_begin(void *ctx) { return avk_cuda_time_begin(ctx); }
static attnvk_status drv_time_end(void *ctx, double *ms) { return avk_cuda_time_end(ctx, ms); }
static unsigned long long drv_address(const avk_bbuf *b) { return avk_cuda_ptr(b); }

const avk_native_driver avk_cuda_native_driver = {"cuda",   drv_enter,      drv_leave,    drv_alloc,
                                                  drv_free, drv_launch,     drv_time_begin, drv_time_end,
                                                  drv_address, drv_tensor_maps, drv_zero};

void avk_cuda_modules_release(avk_cuda_device *dev)
{
    while (dev->modules) {
        avk_cuda_module *m = dev->modules;
        dev->modules = m->next;
        if (!dev->lost) dev->cu->cuModuleUnload(m->module);
        free(m);
    }
}

static attnvk_status load_module(avk_cuda_device *dev, const avk_cuda_config *cfg, const avk_cuda_module **out)
{
    char arch[16];
    avk_cuda_arch_name(dev->cc_major, dev->cc_minor, arch, sizeof arch);
    uint64_t key = avk_cuda_cache_key(cfg, arch, dev->driver_version, 0);
    for (avk_cuda_module *m = dev->modules; m; m = m->next)
        if (m->key == key) {
            *out = m;
            return ATTNVK_OK;
        }
    void *cubin = NULL;
    size_t size = 0;
    int from_cache = 0;
    attnvk_status s = avk_cuda_compile(cfg, arch, dev->driver_version, NULL, &cubin, &size, &from_cache, NULL, 0);
    if (s != ATTNVK_OK) return s;
    avk_cuda_module *m = calloc(1, sizeof *m);
    if (!m) {
        free(cubin);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    s = avk_cuda_check(dev, dev->cu->cuModuleLoadData(&m->module, cubin), "cuModuleLoadData");
    free(cubin);
    if (s == ATTNVK_OK) s = avk_cuda_check(dev, dev->cu->cuModuleGetFunction(&m->fwd, m->module, "avk_attn_fwd"), "cuModuleGetFunction(avk_attn_fwd)");
    if (s == ATTNVK_OK) s = avk_cuda_check(dev, dev->cu->cuModuleGetFunction(&m->reduce, m->module, "avk_attn_reduce"), "cuModuleGetFunction(avk_attn_reduce)");
    if (s == ATTNVK_OK && cfg->fp8)
        s = avk_cuda_check(dev, dev->cu->cuModuleGetFunction(&m->v_transpose, m->module, "avk_fp8_v_transpose"),
                           "cuModuleGetFunction(avk_fp8_v_transpose)");
    size_t smem = avk_cuda_config_smem(cfg);
    if (s == ATTNVK_OK && smem > 48 * 1024)
        s = avk_cuda_check(dev, dev->cu->cuFuncSetAttribute(m->fwd, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem),
                           "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    if (s != ATTNVK_OK) {
        if (m->module && !dev->lost) dev->cu->cuModuleUnload(m->module);
        free(m);
        return s;
    }
    dev->cu->cuFuncGetAttribute(&m->registers, CU_FUNC_ATTRIBUTE_NUM_REGS, m->fwd);
    dev->cu->cuFuncGetAttribute(&m->local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, m->fwd);
    m->key = key;
    m->from_cache = from_cache;
    m->next = dev->modules;
    dev->modules = m;
    *out = m;
    return ATTNVK_OK;
}

static int cuda_implementations(avk_bdev *dev, attnvk_impl_info *out, int max)
{
    if (max >= 1) {
        memset(out, 0, sizeof *out);
        snprintf(out->name, sizeof out->name, "attnvk");
        out->fused = 1;
        const avk_nvrtc *rt = avk_nvrtc_load();
        out->available = rt != NULL;
        out->features = ATTNVK_FEATURE_PAGED | ATTNVK_FEATURE_RAGGED | ATTNVK_FEATURE_KV_Q8_0 |
                        ATTNVK_FEATURE_KV_Q4_0 | ATTNVK_FEATURE_KV_FP8 | AVK_SCORE_FEATURES |
                        ATTNVK_FEATURE_HEAD_DIM_V | /* every body (mma-decode: the selection routes Dk != Dv past it) */
                        ATTNVK_FEATURE_POSITION_OFFSET | /* the contract's i' (ring attention's blocks) */
                        ATTNVK_FEATURE_BLOCK_SPARSE | ATTNVK_FEATURE_DILATED | /* AVK_MOD_PATTERN builds */
                        ATTNVK_FEATURE_Q_FP8; /* wgmma-fp8 (sm_90; the selection says why elsewhere) */
        if (!rt) snprintf(out->reason, sizeof out->reason, "%s", avk_nvrtc_reason());
    }
    return 1 + avk_cuda_vendor_implementations(dev, max > 1 ? out + 1 : NULL, max > 1 ? max - 1 : 0);
}

static attnvk_status prepare_vendor(avk_cuda_device *dev, const attnvk_problem *p, const attnvk_kernel_options *o,
                                    avk_bkernel *k, attnvk_kernel_info *info)
{
    attnvk_status s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) return s;
    s = avk_cuda_vendor_prepare(dev, p, o, &k->vendor, info);
    avk_cuda_pop(dev);
    if (s == ATTNVK_OK && !k->vendor) s = avk_fail(ATTNVK_ERROR_BACKEND, "vendor implementation returned no kernel");
    return s;
}

static attnvk_status cuda_prepare(avk_bdev *dev, const attnvk_problem *p, const attnvk_kernel_options *o,
                                  avk_bkernel **out, attnvk_kernel_info *info)
{
    avk_bkernel *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s;
    if (o->implementation && strcmp(o->implementation, "attnvk") != 0) {
        s = prepare_vendor(dev, p, o, k, info);
        if (s != ATTNVK_OK) {
            free(k);
            return s;
        }
        *out = k;
        return ATTNVK_OK;
    }

    int decode = avk_is_decode(p) && o->split_kv != 1;
    const int pack = p->q_format == ATTNVK_KV_FP8 ? 1 : avk_gqa_pack(p, p->seq_q, 0); /* wgmma-fp8: a head a CTA */
    s = avk_cuda_select(&dev->info, dev->cc_major, dev->smem_optin, p, o, decode, pack, &k->cfg);
    if (s != ATTNVK_OK) {
        free(k);
        return s;
    }
    /* mma-decode: a CTA's warps take key_warps tiles per round; a split is whole rounds */
    const avk_native_shape shape = {
        .br = k->cfg.br, .threads = k->cfg.threads,
        .split_round = k->cfg.bc * (k->cfg.key_warps > 0 ? k->cfg.key_warps : 1),
        .resident = avk_cuda_resident(&k->cfg, dev->smem_per_sm), .whole_waves = k->cfg.whole_waves,
        .compute_units = dev->sm_count, .smem = avk_cuda_config_smem(&k->cfg), .dilated_view = k->cfg.dilated_view,
        .persistent = k->cfg.persistent};
    s = avk_native_plan(&avk_cuda_native_driver, &k->native, p, o, pack, &shape, 0);
    if (s != ATTNVK_OK) {
        free(k);
        return s;
    }
    k->cfg.split = k->native.split_build;
    k->native.tensor_maps = k->cfg.wgmma == 2 ? 2 + k->cfg.mask_tma : 0; /* wgmma-ws: K's and V's (and the mask's) */
    k->native.tensor_map_rows = k->cfg.bc;

    s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) {
        free(k);
        return s;
    }
    s = load_module(dev, &k->cfg, &k->mod);
    if (s == ATTNVK_OK) {
        k->native.fwd = k->mod->fwd;
        k->native.reduce = k->mod->reduce;
        k->native.v_transpose = k->mod->v_transpose;
        s = avk_native_alloc_workspace(&avk_cuda_native_driver, dev, &k->native);
    }
    avk_cuda_pop(dev);
    if (s != ATTNVK_OK) {
        free(k);
        return s;
    }

    char arch[16];
    avk_cuda_arch_name(dev->cc_major, dev->cc_minor, arch, sizeof arch);
    snprintf(info->variant, sizeof info->variant, "%s", k->cfg.variant);
    avk_native_describe(&k->native, k->cfg.bc, info);
    const char *copy = avk_cuda_decode_copy(&k->cfg, dev->cc_major, p->page_size > 0);
    snprintf(info->params, sizeof info->params,
             "arch=%s regs=%d local=%d smem=%zu pack=%d key_warps=%d stages=%d%s%s col_warps=%d split_keys=%u kv=%s "
             "cubin=%s",
             arch, k->mod->registers, k->mod->local_bytes, shape.smem, pack, k->cfg.key_warps, k->cfg.kv_stages,
             copy ? " copy=" : "", copy ? copy : "", k->cfg.col_warps, k->native.args.split_keys,
             attnvk_kv_format_name(p->kv_format), k->mod->from_cache ? "cached" : "nvrtc");
    *out = k;
    return ATTNVK_OK;
}

static attnvk_status cuda_dispatch(avk_bdev *dev, avk_bkernel *k, const avk_dispatch *a, double *device_ms)
{
    if (k->vendor && a->stream)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the cuda vendor baselines run on attnvk's stream only");
    attnvk_status cs = avk_cuda_check_stream(dev, a->stream);
    if (cs != ATTNVK_OK) return cs;
    if (k->vendor) { /* an async run completes before returning: allowed */
        attnvk_status s = avk_cuda_push(dev);
        if (s != ATTNVK_OK) return s;
        s = avk_cuda_time_begin(dev);
        for (int i = 0; i < a->launches && s == ATTNVK_OK; ++i) s = avk_cuda_vendor_enqueue(dev, k->vendor, a);
        if (s == ATTNVK_OK) s = avk_cuda_time_end(dev, device_ms);
        if (s == ATTNVK_OK) *device_ms /= a->launches;
        avk_cuda_pop(dev);
        return s;
    }
    return avk_native_dispatch(&avk_cuda_native_driver, dev, &k->native, a, device_ms);
}

static void cuda_release_kernel(avk_bdev *dev, avk_bkernel *k)
{
    if (!k) return;
    if (k->vendor) avk_cuda_vendor_release(dev, k->vendor);
    avk_cuda_backward_release(dev, k->bwd);
    avk_native_release(&avk_cuda_native_driver, dev, &k->native);
    free(k);
}

/* attnvk_kernel_backward: attnvk's kernel (cuda_backward.c); the vendor baselines answer through
 * cuda_vendor.c (UNSUPPORTED with the reason where they have none), timed as their forward is */
static attnvk_status cuda_backward(avk_bdev *dev, avk_bkernel *k, const avk_backward_dispatch *a, double *device_ms)
{
    if (k->vendor) {
        attnvk_status s = avk_cuda_push(dev);
        if (s != ATTNVK_OK) return s;
        s = avk_cuda_time_begin(dev);
        if (s == ATTNVK_OK) s = avk_cuda_vendor_backward(dev, k->vendor, a);
        if (s == ATTNVK_OK) s = avk_cuda_time_end(dev, device_ms);
        avk_cuda_pop(dev);
        return s;
    }
    return avk_cuda_backward(dev, &k->native, &k->bwd, a, device_ms);
}

void avk_cuda_default_variant(const attnvk_device_info *info, char *out, size_t n)
{
    int sm = 0;
    sscanf(info->architecture, "sm_%d", &sm);
    int major = sm / 10;
    attnvk_problem p = {.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = 4096, .seq_kv = 4096, .head_dim = 128,
                        .dtype = info->fp16 ? ATTNVK_F16 : ATTNVK_F32};
    attnvk_kernel_options o = {0};
    avk_cuda_config c;
    if (avk_cuda_select(info, major, info->shared_memory_per_group, &p, &o, 0, 1, &c) == ATTNVK_OK)
        snprintf(out, n, "%s %dx%d", c.variant, c.br, c.bc);
    else
        snprintf(out, n, "none");
}

/* what avk_cuda_parse_variant accepts */
static const char *const cuda_variants[] = {"wgmma", "wgmma-ws", "wgmma-fp8", "wgmma-ws-fp8", "mma16", "mma16-qs", "mma32", "mma32-qs", "mma-decode", "tiled", "simt", NULL};

/* `attnvk tune`: configurations of attnvk's kernel for p (cuda/cuda_tuning.c) */
static int cuda_tuning_candidates(avk_bdev *dev, const attnvk_problem *p, avk_tuning *out, int max)
{
    return avk_cuda_tuning_candidates(&dev->info, dev->cc_major, dev->smem_optin, p, avk_is_decode(p),
                                      avk_gqa_pack(p, p->seq_q, 0), out, max);
}

const attnvk_backend avk_backend_cuda = {
    .api = ATTNVK_API_CUDA,
    .init = avk_cuda_init,
    .describe = avk_cuda_describe,
    .open = avk_cuda_open,
    .close = avk_cuda_close,
    .alloc = avk_cuda_alloc,
    .release = avk_cuda_release,
    .upload = avk_cuda_upload,
    .download = avk_cuda_download,
    .implementations = cuda_implementations,
    .prepare = cuda_prepare,
    .dispatch = cuda_dispatch,
    .release_kernel = cuda_release_kernel,
    .variants = cuda_variants,
    .read_bandwidth = avk_cuda_read_bandwidth,
    .measure_peak = avk_cuda_measure_peak,
    .wrap = avk_cuda_wrap,
    .native = avk_cuda_native,
    .wait = avk_cuda_wait,
    .tuning_candidates = cuda_tuning_candidates,
    .backward = cuda_backward,
    .merge = avk_cuda_merge,
    .ring_comm = &avk_cuda_ring_comm,
};
