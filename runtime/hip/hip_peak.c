/* `attnvk peak` on a HIP device (core/peak.h): native/peak.cu compiled by
 * hipRTC for the device's gfx target (cached like any hipRTC module); copy
 * bandwidth, f32 FMA, packed f16 FMA, and the matrix units the native bodies
 * use: MFMA 32x32x8 f16 (gfx908/gfx90a/gfx94x) or WMMA 16x16x16 f16 (gfx11),
 * "none" where the target has neither kernel. Events time each run; the
 * iteration count grows until one run takes avk_peak_target_ms; best of a
 * few runs. Build-verified here; measured only on an AMD GPU. */
#include "hip/hip_peak.h"
#include "core/embedded.h"
#include "core/peak.h"
#include "hip/hip_internal.h"
#include "hip/hip_modules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

AVK_EMBEDDED(avk_hip_peak_source)

enum { THREADS = 256, BLOCKS_PER_CU = 8 };

/* The source as hipRTC takes it (NUL-terminated; the caller frees text). */
attnvk_status avk_hip_peak_source_text(avk_hip_source *src, char **text)
{
    *text = malloc(avk_hip_peak_source_size + 1);
    if (!*text) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    memcpy(*text, avk_hip_peak_source, avk_hip_peak_source_size);
    (*text)[avk_hip_peak_source_size] = '\0';
    *src = (avk_hip_source){.name = "peak.hip", .text = *text};
    return ATTNVK_OK;
}

typedef struct peak_run {
    avk_hip_device *dev;
    hipFunction_t fn;
    unsigned blocks;
    void **params;
    unsigned *iters;
} peak_run;

static attnvk_status run_once(void *ctx, uint32_t iters, double *ms)
{
    peak_run *r = ctx;
    avk_hip_device *dev = r->dev;
    if (r->iters) *r->iters = iters;
    attnvk_status s = avk_hip_time_begin(dev);
    if (s == ATTNVK_OK)
        s = avk_hip_check(dev, dev->hip->hipModuleLaunchKernel(r->fn, r->blocks, 1, 1, THREADS, 1, 1, 0, dev->stream,
                                                               r->params, NULL),
                          "hipModuleLaunchKernel(peak)");
    if (s == ATTNVK_OK) s = avk_hip_time_end(dev, ms);
    return s;
}

static unsigned cus(const avk_hip_device *dev) { return (unsigned)(dev->info.compute_units > 0 ? dev->info.compute_units : 64); }

static attnvk_status copy_peak(avk_hip_device *dev, hipModule_t module, avk_peak_sample *out)
{
    size_t free_bytes = 0, total = 0, bytes = (size_t)1 << 30;
    if (dev->hip->hipMemGetInfo(&free_bytes, &total) == hipSuccess && bytes > free_bytes / 4) bytes = free_bytes / 4;
    bytes &= ~(size_t)0xffff;
    void *src = NULL, *dst = NULL;
    unsigned long long vectors = bytes / 16;
    void *params[] = {&src, &dst, &vectors};
    peak_run r = {.dev = dev, .blocks = cus(dev) * BLOCKS_PER_CU, .params = params};
    attnvk_status s = avk_hip_get_function(dev, module, "avk_peak_copy", &r.fn);
    if (s == ATTNVK_OK) s = avk_hip_check(dev, dev->hip->hipMalloc(&src, bytes), "hipMalloc(peak copy source)");
    if (s == ATTNVK_OK) s = avk_hip_check(dev, dev->hip->hipMalloc(&dst, bytes), "hipMalloc(peak copy destination)");
    uint32_t iters = 1;
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_peak_time(run_once, &r, avk_peak_target_ms(0), 1, &iters, &ms);
    if (s == ATTNVK_OK) out->value = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
    if (dst && !dev->lost) dev->hip->hipFree(dst);
    if (src && !dev->lost) dev->hip->hipFree(src);
    return s;
}

static attnvk_status fma_peak(avk_hip_device *dev, hipModule_t module, int f16, avk_peak_sample *out)
{
    snprintf(out->path, sizeof out->path, "%s", f16 ? "v_pk_fma_f16" : "fma f32");
    void *res = NULL;
    unsigned blocks = cus(dev) * BLOCKS_PER_CU, iters_arg = 1;
    float mf = 0.5f, cf = 0.25f;
    unsigned mh = 0x38003800u, ch = 0x34003400u;
    void *params[] = {&res, &iters_arg, f16 ? (void *)&mh : (void *)&mf, f16 ? (void *)&ch : (void *)&cf};
    peak_run r = {.dev = dev, .blocks = blocks, .params = params, .iters = &iters_arg};
    attnvk_status s = avk_hip_get_function(dev, module, f16 ? "avk_peak_fma_f16" : "avk_peak_fma_f32", &r.fn);
    if (s == ATTNVK_OK) s = avk_hip_check(dev, dev->hip->hipMalloc(&res, (size_t)blocks * THREADS * 4), "hipMalloc");
    uint32_t iters = 64;
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_peak_time(run_once, &r, avk_peak_target_ms(0), 1u << 24, &iters, &ms);
    /* a loop trip: 128 FMAs per thread, 2 FLOPs each */
    if (s == ATTNVK_OK) out->value = (double)blocks * THREADS * iters * 128 * 2 / (ms * 1e-3) / 1e9;
    if (res && !dev->lost) dev->hip->hipFree(res);
    return s;
}

static attnvk_status matrix_peak(avk_hip_device *dev, hipModule_t module, avk_peak_sample *out)
{
    snprintf(out->path, sizeof out->path, "none");
    const char *arch = dev->info.architecture;
    int units = avk_hip_matrix_units(arch);
    hipFunction_t fn = NULL;
    if (units == 0) return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s has no MFMA or WMMA", arch);
    const char *name = units == 1 ? "avk_peak_mfma" : "avk_peak_wmma";
    if (dev->hip->hipModuleGetFunction(&fn, module, name) != hipSuccess)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s: native/peak.cu has no %s kernel for this target", arch, name);
    snprintf(out->path, sizeof out->path, "%s", units == 1 ? "MFMA 32x32x8 f16->f32" : "WMMA 16x16x16 f16->f32 (wave32)");
    void *ab = NULL, *res = NULL;
    unsigned blocks = cus(dev) * BLOCKS_PER_CU, iters_arg = 1;
    void *params[] = {&ab, &res, &iters_arg};
    peak_run r = {.dev = dev, .fn = fn, .blocks = blocks, .params = params, .iters = &iters_arg};
    attnvk_status s = avk_hip_check(dev, dev->hip->hipMalloc(&ab, 1024), "hipMalloc(peak matrix operands)");
    if (s == ATTNVK_OK) s = avk_hip_check(dev, dev->hip->hipMemsetD8(ab, 0x3c, 1024), "hipMemsetD8");
    if (s == ATTNVK_OK) s = avk_hip_check(dev, dev->hip->hipMalloc(&res, (size_t)blocks * THREADS * 4), "hipMalloc");
    uint32_t iters = 16;
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_peak_time(run_once, &r, avk_peak_target_ms(0), 1u << 24, &iters, &ms);
    /* a loop trip: MFMA 4 waves x 4 of 32x32x8; WMMA 8 waves x 8 of 16x16x16; 2 FLOPs per MAC */
    double per_block = units == 1 ? 4.0 * 4 * 32 * 32 * 8 * 2 : 8.0 * 8 * 16 * 16 * 16 * 2;
    if (s == ATTNVK_OK) out->value = (double)blocks * iters * per_block / (ms * 1e-3) / 1e9;
    if (res && !dev->lost) dev->hip->hipFree(res);
    if (ab && !dev->lost) dev->hip->hipFree(ab);
    return s;
}

attnvk_status avk_hip_measure_peak(avk_bdev *dev, int kind, struct avk_peak_sample *out)
{
    if (kind < 0 || kind >= AVK_PEAK_KIND_COUNT) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown peak kind %d", kind);
    attnvk_status s = avk_hip_use(dev);
    if (s != ATTNVK_OK) return s;
    avk_hip_source src;
    char *text = NULL;
    s = avk_hip_peak_source_text(&src, &text);
    hipModule_t module = NULL;
    char origin[64];
    if (s == ATTNVK_OK) s = avk_hip_load_module(dev, NULL, &src, &module, origin, sizeof origin);
    free(text);
    if (s == ATTNVK_OK) {
        switch (kind) {
        case AVK_PEAK_COPY: s = copy_peak(dev, module, out); break;
        case AVK_PEAK_FMA_F32: s = fma_peak(dev, module, 0, out); break;
        case AVK_PEAK_FMA_F16: s = fma_peak(dev, module, 1, out); break;
        default: s = matrix_peak(dev, module, out); break;
        }
    }
    if (module && !dev->lost) dev->hip->hipModuleUnload(module);
    return s;
}
