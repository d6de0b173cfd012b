/* The native flash kernel on AMD. Code objects hold many kernel instances
 * (hip_codegen.c); each is loaded once per device and kept until close.
 * Planning, partials and launches: the native host layer (core/native_flash.c,
 * shared with CUDA) over the driver table below. */
#include "core/split_plan.h"
#include "hip/hip_flash.h"
#include "hip/hip_kernels.h"
#include "hip/hip_modules.h"
#include "core/kv_cache.h" /* AVK_SCORE_FEATURES */
#include "core/native_flash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Embedded at build time: what hipRTC needs for an arch without objects. */
extern const unsigned char avk_hip_attn_source[];
extern const unsigned char avk_hip_portability_source[];
extern const unsigned char avk_hip_params_source[];
extern const unsigned char avk_hip_amd_portability_source[];
extern const unsigned char avk_hip_contract_source[];
extern const unsigned char avk_hip_scores_source[];
extern const unsigned char avk_hip_mma_source[];
extern const unsigned char avk_hip_args_source[];
extern const unsigned char avk_hip_flags_source[];
extern const unsigned char avk_hip_amd_matrix_source[];
extern const unsigned char avk_hip_amd_fragments_source[];
extern const unsigned char avk_hip_bwd_source[];
extern const unsigned char avk_hip_bwd_params_source[];
extern const unsigned char avk_hip_bwd_simt_source[];
extern const unsigned char avk_hip_bwd_mma_source[];

typedef struct avk_hip_module {
    struct avk_hip_module *next;
    char key[640];       /* "<variant>" for an embedded object, the -D options for hipRTC */
    char origin[96];
    hipModule_t module;
} avk_hip_module;

struct avk_hip_flash_kernel {
    avk_hip_config cfg;
    avk_native_kernel native; /* planned arguments, splits, partials, the two functions */
};

/* ---- the driver table of the native host layer ---- */
static attnvk_status drv_enter(void *ctx) { return avk_hip_use(ctx); }
static void drv_leave(void *ctx) { (void)ctx; }

static attnvk_status drv_alloc(void *ctx, size_t bytes, unsigned long long *addr)
{
    avk_hip_device *dev = ctx;
    void *ptr = NULL;
    attnvk_status s = avk_hip_check(dev, dev->hip->hipMalloc(&ptr, bytes), "hipMalloc(kernel workspace)");
    *addr = (unsigned long long)(size_t)ptr;
    return s;
}

static void drv_free(void *ctx, unsigned long long addr)
{
    avk_hip_device *dev = ctx;
    if (!dev->lost) dev->hip->hipFree((void *)(size_t)addr);
}

static attnvk_status drv_launch(void *ctx, void *stream, void *function, const unsigned grid[3], unsigned threads,
                                size_t smem, void **args, int early, const char *name)
{
    avk_hip_device *dev = ctx;
    (void)early; /* no programmatic dependent launch on HIP */
    hipStream_t on = stream ? (hipStream_t)stream : dev->stream;
    char what[96];
    snprintf(what, sizeof what, "hipModuleLaunchKernel(%s)", name);
    return avk_hip_check(dev,
                         dev->hip->hipModuleLaunchKernel((hipFunction_t)function, grid[0], grid[1], grid[2], threads,
                                                         1, 1, (unsigned)smem, on, args, NULL),
                         what);
}

static attnvk_status drv_time_begin(void *ctx) { return avk_hip_time_begin(ctx); }
static attnvk_status drv_time_end(void *ctx, double *ms) { return avk_hip_time_end(ctx, ms); }
static unsigned long long drv_address(const avk_bbuf *b) { return b ? (unsigned long long)(size_t)b->ptr : 0; }

const avk_native_driver avk_hip_native_driver = {"hip", drv_enter, drv_leave, drv_alloc, drv_free, drv_launch,
                                                 drv_time_begin, drv_time_end, drv_address, NULL, NULL};

void avk_hip_flash_close(avk_hip_device *dev)
{
    while (dev->modules) {
        avk_hip_module *m = dev->modules;
        dev->modules = m->next;
        if (!dev->lost) dev->hip->hipModuleUnload(m->module);
        free(m);
    }
}

void avk_hip_flash_describe(avk_hip_device *dev, attnvk_impl_info *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "attnvk");
    out->fused = 1;
    out->available = 1;
    /* the native bodies' hooks and separate Dk/Dv (build-verified: no AMD GPU here) */
    out->features = AVK_SCORE_FEATURES | ATTNVK_FEATURE_HEAD_DIM_V | /* no AVK_POS_OFFSET build (attn_contract.h) */
                    ATTNVK_FEATURE_BLOCK_SPARSE | ATTNVK_FEATURE_DILATED; /* AVK_MOD_PATTERN builds, as CUDA's */
    int embedded = 0;
    for (int i = 0; i < avk_hip_code_object_count; ++i)
        embedded |= strcmp(avk_hip_code_objects[i].arch, dev->info.architecture) == 0;
    if (!embedded && !avk_hiprtc_load()) {
        out->available = 0;
        snprintf(out->reason, sizeof out->reason, "no code object for %s is embedded and hipRTC is unavailable",
                 dev->info.architecture);
    }
}

/* the native sources' headers, the forward's and the backward's */
static void native_source(const char *name, const unsigned char *text, const char *defines, avk_hip_source *out)
{
    static const char *const header_names[] = {"attn_portability.h", "attn_params.h", "amd_portability.h",
                                               "amd_matrix.h", "amd_fragments.h", "attn_contract.h",
                                               "contract/kernel_args.def", "contract/kernel_flags.h", "attn_scores.h",
                                               "attn_mma.h", "attn_bwd_params.h", "attn_bwd_simt.h",
                                               "attn_bwd_mma.h"};
    static const char *headers[13];
    headers[0] = (const char *)avk_hip_portability_source;
    headers[1] = (const char *)avk_hip_params_source;
    headers[2] = (const char *)avk_hip_amd_portability_source;
    headers[3] = (const char *)avk_hip_amd_matrix_source;
    headers[4] = (const char *)avk_hip_amd_fragments_source;
    headers[5] = (const char *)avk_hip_contract_source;
    headers[6] = (const char *)avk_hip_args_source;
    headers[7] = (const char *)avk_hip_flags_source;
    headers[8] = (const char *)avk_hip_scores_source;
    headers[9] = (const char *)avk_hip_mma_source;
    headers[10] = (const char *)avk_hip_bwd_params_source;
    headers[11] = (const char *)avk_hip_bwd_simt_source;
    headers[12] = (const char *)avk_hip_bwd_mma_source;
    const avk_hip_source src = {name, (const char *)text, defines, headers, header_names, 13};
    *out = src;
}

void avk_hip_flash_source(const char *defines, avk_hip_source *out)
{
    native_source("attn_fwd.cu", avk_hip_attn_source, defines, out);
}

void avk_hip_backward_source(const char *defines, avk_hip_source *out)
{
    native_source("attn_bwd.cu", avk_hip_bwd_source, defines, out);
}

const avk_native_kernel *avk_hip_flash_native(const avk_hip_flash_kernel *k) { return &k->native; }

/* The embedded object of cfg's variant if it holds cfg's kernels; else the
 * kernel source compiled for exactly cfg with hipRTC. */
static attnvk_status load_module(avk_hip_device *dev, const avk_hip_config *cfg, const char *fwd_name,
                                 const char *reduce_name, const avk_hip_module **out)
{
    char defines[320], key[640];
    avk_hip_config_defines(cfg, defines, sizeof defines);
    const avk_hip_code_object *co = avk_hip_find_code_object(dev->info.architecture, cfg->variant);
    int embedded = 0;
    if (co) { /* is this instance one the table put in the object? */
        avk_hip_config inst[64];
        int n = avk_hip_instances(dev->info.architecture, cfg->variant, inst, 64);
        for (int i = 0; i < n && i < 64; ++i) embedded |= memcmp(&inst[i], cfg, sizeof *cfg) == 0;
    }
    if (embedded)
        snprintf(key, sizeof key, "%s", cfg->variant);
    else
        snprintf(key, sizeof key, "%.300s -Davk_attn_fwd=%.120s -Davk_attn_reduce=%.120s", defines, fwd_name,
                 reduce_name);
    for (avk_hip_module *m = dev->modules; m; m = m->next)
        if (strcmp(m->key, key) == 0) {
            *out = m;
            return ATTNVK_OK;
        }
    avk_hip_module *m = calloc(1, sizeof *m);
    if (!m) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    snprintf(m->key, sizeof m->key, "%s", key);
    avk_hip_source src;
    avk_hip_flash_source(key, &src);
    /* an embedded object that lacks this instance must not be picked up */
    attnvk_status s =
        avk_hip_load_module(dev, embedded ? cfg->variant : NULL, &src, &m->module, m->origin, sizeof m->origin);
    if (s != ATTNVK_OK) {
        free(m);
        return s;
    }
    m->next = dev->modules;
    dev->modules = m;
    *out = m;
    return ATTNVK_OK;
}

void avk_hip_flash_release(avk_hip_device *dev, avk_hip_flash_kernel *k)
{
    if (!k) return;
    avk_native_release(&avk_hip_native_driver, dev, &k->native);
    free(k);
}

attnvk_status avk_hip_flash_prepare(avk_hip_device *dev, const attnvk_problem *p, const attnvk_kernel_options *o,
                                    avk_hip_flash_kernel **out, attnvk_kernel_info *info)
{
    avk_hip_flash_kernel *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    /* decode shapes always run the split kernel (one split is a plain pass) */
    int decode = avk_is_decode(p) && o->split_kv != 1;
    attnvk_status s = avk_hip_select(&dev->info, p, o, decode, &k->cfg);
    if (s != ATTNVK_OK) {
        free(k);
        return s;
    }
    k->cfg.score_mod = (int)avk_score_mod_bits(p);
    /* HIP runs one head per workgroup over contiguous caches (no GQA packing,
     * paging or quantized caches yet: it does not declare them, so core refuses them) */
    const avk_native_shape shape = {.br = k->cfg.br, .threads = k->cfg.threads, .split_round = k->cfg.bc,
                                    .resident = 1, .whole_waves = 0, .compute_units = dev->info.compute_units,
                                    .smem = avk_hip_config_dynamic_lds(&k->cfg)};
    s = avk_native_plan(&avk_hip_native_driver, &k->native, p, o, 1, &shape, k->cfg.split);
    if (s != ATTNVK_OK) {
        free(k);
        return s;
    }
    k->cfg.split = k->native.split_build; /* split_kv > 1 asked on a prefill shape builds the split kernel */
    char fwd[128], reduce[128];
    avk_hip_kernel_names(&k->cfg, fwd, reduce, sizeof fwd);
    const avk_hip_module *m = NULL;
    hipFunction_t fn = NULL;
    s = avk_hip_use(dev);
    if (s == ATTNVK_OK) s = load_module(dev, &k->cfg, fwd, reduce, &m);
    if (s == ATTNVK_OK) s = avk_hip_get_function(dev, m->module, fwd, &fn);
    k->native.fwd = fn;
    if (s == ATTNVK_OK && k->cfg.split) s = avk_hip_get_function(dev, m->module, reduce, &fn);
    if (k->cfg.split) k->native.reduce = fn;
    if (s == ATTNVK_OK) s = avk_native_alloc_workspace(&avk_hip_native_driver, dev, &k->native);
    if (s != ATTNVK_OK) {
        avk_hip_flash_release(dev, k);
        return s;
    }
    snprintf(info->variant, sizeof info->variant, "%s", k->cfg.variant);
    avk_native_describe(&k->native, k->cfg.bc, info);
    snprintf(info->params, sizeof info->params, "arch=%.16s lds=%zu split_keys=%u kernel=%.80s code=%.60s",
             dev->info.architecture, shape.smem, k->native.args.split_keys, fwd, m->origin);
    *out = k;
    return ATTNVK_OK;
}

attnvk_status avk_hip_flash_dispatch(avk_hip_device *dev, avk_hip_flash_kernel *k, const avk_dispatch *a,
                                     double *device_ms)
{
    return avk_native_dispatch(&avk_hip_native_driver, dev, &k->native, a, device_ms);
}
