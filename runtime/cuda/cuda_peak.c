/* `attnvk peak` on a CUDA device (core/peak.h): native/peak.cu compiled by
 * NVRTC for the device's architecture; copy bandwidth, f32 FMA, f16x2 FMA and
 * the tensor cores through the paths attnvk's bodies use: mma.sync m16n8k16
 * (sm_80+) and, on Hopper (sm_90a), wgmma m64n256k16 (the larger one is the
 * record's; the path names both). Events time each run; the iteration count
 * grows until one run takes avk_peak_target_ms; best of a few runs. */
#include "cuda/cuda_peak.h"
#include "core/embedded.h"
#include "core/peak.h"
#include "cuda/cuda_internal.h"
#include "cuda/cuda_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

AVK_EMBEDDED(avk_cuda_peak_source)

enum { THREADS = 256, BLOCKS_PER_SM = 8, MMA_THREADS = 128, WGMMA_BLOCKS_PER_SM = 3 };

attnvk_status avk_cuda_peak_compile(const char *arch, void **cubin, size_t *size)
{
    *cubin = NULL;
    *size = 0;
    const avk_nvrtc *rt = avk_nvrtc_load();
    if (!rt) return ATTNVK_ERROR_UNAVAILABLE;
    char *text = malloc(avk_cuda_peak_source_size + 1);
    if (!text) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    memcpy(text, avk_cuda_peak_source, avk_cuda_peak_source_size);
    text[avk_cuda_peak_source_size] = '\0';
    char opt_arch[64];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
    const char *opts[] = {opt_arch, "-default-device"};
    nvrtcProgram prog;
    nvrtcResult r = rt->nvrtcCreateProgram(&prog, text, "peak.cu", 0, NULL, NULL);
    free(text);
    if (r != NVRTC_SUCCESS) return avk_fail(ATTNVK_ERROR_COMPILE, "nvrtcCreateProgram: %s", rt->nvrtcGetErrorString(r));
    r = rt->nvrtcCompileProgram(prog, 2, opts);
    attnvk_status s = ATTNVK_OK;
    if (r != NVRTC_SUCCESS) {
        char log[2048] = "(no log)";
        size_t n = 0;
        if (rt->nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 0 && n < sizeof log)
            rt->nvrtcGetProgramLog(prog, log);
        s = avk_fail(ATTNVK_ERROR_COMPILE, "NVRTC %s for the peak kernels (%s): %s", rt->nvrtcGetErrorString(r), arch, log);
    } else if (rt->nvrtcGetCUBINSize(prog, size) != NVRTC_SUCCESS || *size == 0 || !(*cubin = malloc(*size)) ||
               rt->nvrtcGetCUBIN(prog, *cubin) != NVRTC_SUCCESS) {
        free(*cubin);
        *cubin = NULL;
        *size = 0;
        s = avk_fail(ATTNVK_ERROR_COMPILE, "NVRTC produced no cubin for the peak kernels (%s)", arch);
    }
    rt->nvrtcDestroyProgram(&prog);
    return s;
}

typedef struct peak_run {
    avk_cuda_device *dev;
    CUfunction fn;
    unsigned blocks, threads;
    void **params;
    unsigned *iters; /* where the kernel's loop count sits in params, NULL: none */
} peak_run;

static attnvk_status run_once(void *ctx, uint32_t iters, double *ms)
{
    peak_run *r = ctx;
    avk_cuda_device *dev = r->dev;
    if (r->iters) *r->iters = iters;
    attnvk_status s = avk_cuda_time_begin(dev);
    if (s == ATTNVK_OK)
        s = avk_cuda_check(dev, dev->cu->cuLaunchKernel(r->fn, r->blocks, 1, 1, r->threads, 1, 1, 0, dev->stream,
                                                        r->params, NULL),
                           "cuLaunchKernel(peak)");
    if (s == ATTNVK_OK) s = avk_cuda_time_end(dev, ms);
    return s;
}

static unsigned sms(const avk_cuda_device *dev) { return (unsigned)(dev->sm_count > 0 ? dev->sm_count : 80); }

static attnvk_status function(avk_cuda_device *dev, CUmodule module, const char *name, CUfunction *fn)
{
    return avk_cuda_check(dev, dev->cu->cuModuleGetFunction(fn, module, name), name);
}

/* Two buffers of 1 GiB (far past the 50 MB L2), less when memory is short. */
static attnvk_status copy_peak(avk_cuda_device *dev, CUmodule module, avk_peak_sample *out)
{
    size_t free_bytes = 0, total = 0, bytes = (size_t)1 << 30;
    if (dev->cu->cuMemGetInfo(&free_bytes, &total) == CUDA_SUCCESS && bytes > free_bytes / 4) bytes = free_bytes / 4;
    bytes &= ~(size_t)0xffff;
    CUdeviceptr src = 0, dst = 0;
    unsigned long long vectors = bytes / 16;
    void *params[] = {&src, &dst, &vectors};
    peak_run r = {.dev = dev, .blocks = sms(dev) * BLOCKS_PER_SM, .threads = THREADS, .params = params};
    attnvk_status s = function(dev, module, "avk_peak_copy", &r.fn);
    if (s == ATTNVK_OK) s = avk_cuda_check(dev, dev->cu->cuMemAlloc(&src, bytes), "cuMemAlloc(peak copy source)");
    if (s == ATTNVK_OK) s = avk_cuda_check(dev, dev->cu->cuMemAlloc(&dst, bytes), "cuMemAlloc(peak copy destination)");
    uint32_t iters = 1;
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_peak_time(run_once, &r, avk_peak_target_ms(0), 1, &iters, &ms);
    if (s == ATTNVK_OK) out->value = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
    if (dst && !dev->lost) dev->cu->cuMemFree(dst);
    if (src && !dev->lost) dev->cu->cuMemFree(src);
    return s;
}

/* f32: m = 0.5, c = 0.25; f16x2: the same as half bit patterns (x settles at 0.5) */
static attnvk_status fma_peak(avk_cuda_device *dev, CUmodule module, int f16, avk_peak_sample *out)
{
    snprintf(out->path, sizeof out->path, "%s", f16 ? "fma.rn.f16x2" : "fma.rn.f32");
    CUdeviceptr res = 0;
    unsigned blocks = sms(dev) * BLOCKS_PER_SM;
    unsigned iters_arg = 1;
    float mf = 0.5f, cf = 0.25f;
    unsigned mh = 0x38003800u, ch = 0x34003400u;
    void *params[] = {&res, &iters_arg, f16 ? (void *)&mh : (void *)&mf, f16 ? (void *)&ch : (void *)&cf};
    peak_run r = {.dev = dev, .blocks = blocks, .threads = THREADS, .params = params, .iters = &iters_arg};
    attnvk_status s = function(dev, module, f16 ? "avk_peak_fma_f16" : "avk_peak_fma_f32", &r.fn);
    if (s == ATTNVK_OK)
        s = avk_cuda_check(dev, dev->cu->cuMemAlloc(&res, (size_t)blocks * THREADS * 4), "cuMemAlloc(peak FMA output)");
    uint32_t iters = 64;
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_peak_time(run_once, &r, avk_peak_target_ms(0), 1u << 24, &iters, &ms);
    /* a loop trip: 128 FMAs per thread (f16: 64 f16x2, two FMAs each), 2 FLOPs per FMA */
    if (s == ATTNVK_OK) out->value = (double)blocks * THREADS * iters * 128 * 2 / (ms * 1e-3) / 1e9;
    if (res && !dev->lost) dev->cu->cuMemFree(res);
    return s;
}

/* mma.sync: 8 m16n8k16 (4096 FLOPs each) per warp a loop trip;
 * wgmma: 8 m64n256k16 (524288 FLOPs each) per warpgroup a loop trip */
static attnvk_status mma_run(avk_cuda_device *dev, CUmodule module, int wgmma, double *gflops)
{
    CUdeviceptr ab = 0, res = 0;
    unsigned blocks = sms(dev) * (wgmma ? WGMMA_BLOCKS_PER_SM : BLOCKS_PER_SM);
    unsigned iters_arg = 1;
    void *mma_params[] = {&ab, &res, &iters_arg}, *wgmma_params[] = {&res, &iters_arg};
    peak_run r = {.dev = dev, .blocks = blocks, .threads = MMA_THREADS, .params = wgmma ? wgmma_params : mma_params,
                  .iters = &iters_arg};
    attnvk_status s = function(dev, module, wgmma ? "avk_peak_wgmma" : "avk_peak_mma", &r.fn);
    if (s == ATTNVK_OK) s = avk_cuda_check(dev, dev->cu->cuMemAlloc(&ab, 32 * 6 * 4), "cuMemAlloc(peak MMA operands)");
    if (s == ATTNVK_OK) /* f16 0x3c3c, about 1.06, everywhere */
        s = avk_cuda_check(dev, dev->cu->cuMemsetD8Async(ab, 0x3c, 32 * 6 * 4, dev->stream), "cuMemsetD8Async");
    if (s == ATTNVK_OK)
        s = avk_cuda_check(dev, dev->cu->cuMemAlloc(&res, (size_t)blocks * MMA_THREADS * 4), "cuMemAlloc(peak MMA output)");
    uint32_t iters = 16;
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_peak_time(run_once, &r, avk_peak_target_ms(0), 1u << 24, &iters, &ms);
    double flops = wgmma ? (double)blocks * iters * 8 * 64 * 256 * 16 * 2
                         : (double)blocks * (MMA_THREADS / 32) * iters * 8 * 16 * 8 * 16 * 2;
    if (s == ATTNVK_OK) *gflops = flops / (ms * 1e-3) / 1e9;
    if (res && !dev->lost) dev->cu->cuMemFree(res);
    if (ab && !dev->lost) dev->cu->cuMemFree(ab);
    return s;
}

static attnvk_status matrix_peak(avk_cuda_device *dev, CUmodule module, avk_peak_sample *out)
{
    snprintf(out->path, sizeof out->path, "none");
    if (dev->cc_major < 8)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "sm_%d%d: attnvk's tensor-core bodies need mma.sync (sm_80+)",
                        dev->cc_major, dev->cc_minor);
    double mma = 0, wg = 0;
    attnvk_status s = mma_run(dev, module, 0, &mma);
    if (s != ATTNVK_OK) return s;
    snprintf(out->path, sizeof out->path, "mma.sync m16n8k16 f16->f32");
    out->value = mma;
    if (dev->cc_major != 9) return ATTNVK_OK;
    s = mma_run(dev, module, 1, &wg);
    if (s != ATTNVK_OK) return s;
    if (wg > mma) {
        snprintf(out->path, sizeof out->path, "wgmma m64n256k16 f16->f32 (mma.sync %.1f TFLOP/s)", mma / 1000);
        out->value = wg;
    } else {
        snprintf(out->path, sizeof out->path, "mma.sync m16n8k16 f16->f32 (wgmma %.1f TFLOP/s)", wg / 1000);
    }
    return ATTNVK_OK;
}

attnvk_status avk_cuda_measure_peak(avk_bdev *dev, int kind, struct avk_peak_sample *out)
{
    if (kind < 0 || kind >= AVK_PEAK_KIND_COUNT) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown peak kind %d", kind);
    char arch[16];
    avk_cuda_arch_name(dev->cc_major, dev->cc_minor, arch, sizeof arch);
    void *cubin = NULL;
    size_t size = 0;
    attnvk_status s = avk_cuda_peak_compile(arch, &cubin, &size);
    if (s != ATTNVK_OK) return s;
    s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) {
        free(cubin);
        return s;
    }
    CUmodule module = NULL;
    s = avk_cuda_check(dev, dev->cu->cuModuleLoadData(&module, cubin), "cuModuleLoadData(peak)");
    free(cubin);
    if (s == ATTNVK_OK) {
        switch (kind) {
        case AVK_PEAK_COPY: s = copy_peak(dev, module, out); break;
        case AVK_PEAK_FMA_F32: s = fma_peak(dev, module, 0, out); break;
        case AVK_PEAK_FMA_F16: s = fma_peak(dev, module, 1, out); break;
        default: s = matrix_peak(dev, module, out); break;
        }
    }
    if (module && !dev->lost) dev->cu->cuModuleUnload(module);
    avk_cuda_pop(dev);
    return s;
}
