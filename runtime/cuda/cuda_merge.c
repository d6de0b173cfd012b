/* Ring attention's merge on a CUDA device: native/ring_merge.cu compiled once
 * per device by NVRTC (its cubin cached on disk), loaded into the device's
 * primary context and launched on the device's own stream after the runs
 * before it, never synchronised here: later launches and copies on that
 * stream, and backend.wait (cuStreamSynchronize), come after it. */
#include "cuda/cuda_merge.h"
#include "core/cache.h"
#include "core/embedded.h"
#include "cuda/cuda_kernels.h" /* avk_cuda_arch_name */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

AVK_EMBEDDED(avk_cuda_merge_source)

/* A block: MERGE_ROWS_PER_GROUP rows of MERGE_ROW_LANES threads each (AVK_MERGE_ROWS, AVK_MERGE_LANES). */
enum { MERGE_ROW_LANES = 32, MERGE_ROWS_PER_GROUP = 4, MERGE_LOG = 2048 };

const char *const avk_cuda_merge_kernels[3] = {"avk_ring_merge_f32", "avk_ring_merge_f16", "avk_ring_merge_bf16"};

typedef struct avk_cuda_merge_module {
    CUmodule module;
    CUfunction fn[3];
} avk_cuda_merge_module;

static attnvk_status nvrtc_compile(const avk_nvrtc *rt, const char *text, const char **opts, int n, const char *arch,
                                   void **cubin, size_t *size)
{
    nvrtcProgram prog;
    nvrtcResult r = rt->nvrtcCreateProgram(&prog, text, "ring_merge.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) return avk_fail(ATTNVK_ERROR_COMPILE, "nvrtcCreateProgram: %s", rt->nvrtcGetErrorString(r));
    r = rt->nvrtcCompileProgram(prog, n, opts);
    attnvk_status s = ATTNVK_OK;
    if (r != NVRTC_SUCCESS) {
        char log[MERGE_LOG] = "(no log)";
        size_t len = 0;
        if (rt->nvrtcGetProgramLogSize(prog, &len) == NVRTC_SUCCESS && len > 0 && len < sizeof log)
            rt->nvrtcGetProgramLog(prog, log);
        s = avk_fail(ATTNVK_ERROR_COMPILE, "NVRTC %s for the ring merge (%s): %s", rt->nvrtcGetErrorString(r), arch, log);
    } else if (rt->nvrtcGetCUBINSize(prog, size) != NVRTC_SUCCESS || *size == 0 || !(*cubin = malloc(*size)) ||
               rt->nvrtcGetCUBIN(prog, *cubin) != NVRTC_SUCCESS) {
        free(*cubin);
        *cubin = NULL;
        *size = 0;
        s = avk_fail(ATTNVK_ERROR_COMPILE, "NVRTC produced no cubin for the ring merge (%s)", arch);
    }
    rt->nvrtcDestroyProgram(&prog);
    return s;
}

attnvk_status avk_cuda_merge_compile(const char *arch, int driver_version, void **cubin, size_t *size)
{
    *cubin = NULL;
    *size = 0;
    const avk_nvrtc *rt = avk_nvrtc_load();
    if (!rt) return ATTNVK_ERROR_UNAVAILABLE;
    char opt_arch[64], opt_lanes[48], opt_rows[48];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
    snprintf(opt_lanes, sizeof opt_lanes, "-DAVK_MERGE_LANES=%d", MERGE_ROW_LANES);
    snprintf(opt_rows, sizeof opt_rows, "-DAVK_MERGE_ROWS=%d", MERGE_ROWS_PER_GROUP);
    const char *opts[] = {opt_arch, opt_lanes, opt_rows, "-default-device"};
    const int n = (int)(sizeof opts / sizeof *opts);

    uint64_t key = avk_hash(avk_cuda_merge_source, avk_cuda_merge_source_size, 0x6d65726765ull);
    for (int i = 0; i < n; ++i) key = avk_hash(opts[i], strlen(opts[i]) + 1, key);
    const int versions[2] = {driver_version, rt->major * 1000 + rt->minor * 10};
    key = avk_hash(versions, sizeof versions, key);
    char path[1024];
    const int cached = avk_cache_path("cuda", key, "cubin", path, sizeof path);
    if (cached && (*cubin = avk_cache_load(path, key, size))) return ATTNVK_OK;

    char *text = malloc(avk_cuda_merge_source_size + 1); /* NVRTC takes a NUL-terminated source */
    if (!text) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    memcpy(text, avk_cuda_merge_source, avk_cuda_merge_source_size);
    text[avk_cuda_merge_source_size] = '\0';
    attnvk_status s = nvrtc_compile(rt, text, opts, n, arch, cubin, size);
    free(text);
    if (s == ATTNVK_OK && cached) avk_cache_store(path, key, *cubin, *size);
    return s;
}

/* The module, loaded once per device (the context is current). */
static attnvk_status merge_module(avk_cuda_device *dev, avk_cuda_merge_module **out)
{
    if (dev->merge) {
        *out = dev->merge;
        return ATTNVK_OK;
    }
    char arch[16];
    avk_cuda_arch_name(dev->cc_major, dev->cc_minor, arch, sizeof arch);
    void *cubin = NULL;
    size_t size = 0;
    attnvk_status s = avk_cuda_merge_compile(arch, dev->driver_version, &cubin, &size);
    if (s != ATTNVK_OK) return s;
    avk_cuda_merge_module *m = calloc(1, sizeof *m);
    if (!m) {
        free(cubin);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    s = avk_cuda_check(dev, dev->cu->cuModuleLoadData(&m->module, cubin), "cuModuleLoadData(ring merge)");
    free(cubin);
    for (int i = 0; i < 3 && s == ATTNVK_OK; ++i)
        s = avk_cuda_check(dev, dev->cu->cuModuleGetFunction(&m->fn[i], m->module, avk_cuda_merge_kernels[i]),
                           avk_cuda_merge_kernels[i]);
    if (s != ATTNVK_OK) {
        if (m->module && !dev->lost) dev->cu->cuModuleUnload(m->module);
        free(m);
        return s;
    }
    dev->merge = m;
    *out = m;
    return ATTNVK_OK;
}

void avk_cuda_merge_release(avk_cuda_device *dev)
{
    if (!dev->merge) return;
    if (!dev->lost) dev->cu->cuModuleUnload(dev->merge->module);
    free(dev->merge);
    dev->merge = NULL;
}

attnvk_status avk_cuda_merge(avk_bdev *dev, const avk_merge_args *a)
{
    const unsigned long long rows = (unsigned long long)a->batch * a->heads * a->rows_per_head;
    if (rows == 0) return ATTNVK_OK;
    if (rows > UINT32_MAX)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuda: a merge of %llu rows exceeds 32-bit row indexing", rows);
    attnvk_status s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) return s;
    avk_cuda_merge_module *m = NULL;
    s = merge_module(dev, &m);
    if (s == ATTNVK_OK) {
        CUdeviceptr o_part = avk_cuda_ptr(a->o_part), lse_part = avk_cuda_ptr(a->lse_part);
        CUdeviceptr o_acc = avk_cuda_ptr(a->o_acc), lse_acc = avk_cuda_ptr(a->lse_acc);
        CUdeviceptr o_out = avk_cuda_ptr(a->o_out); /* 0 when NULL */
        unsigned n_rows = (unsigned)rows, dv = (unsigned)a->dv, first = a->first != 0;
        void *params[] = {&o_part, &lse_part, &o_acc, &lse_acc, &o_out, &n_rows, &dv, &first};
        const int slot = a->dtype == ATTNVK_F16 ? 1 : a->dtype == ATTNVK_BF16 ? 2 : 0;
        const unsigned blocks = (unsigned)((rows + MERGE_ROWS_PER_GROUP - 1) / MERGE_ROWS_PER_GROUP);
        s = avk_cuda_check(dev,
                           dev->cu->cuLaunchKernel(m->fn[slot], blocks, 1, 1, MERGE_ROW_LANES * MERGE_ROWS_PER_GROUP, 1,
                                                   1, 0, dev->stream, params, NULL),
                           "cuLaunchKernel(ring merge)");
    }
    avk_cuda_pop(dev);
    return s;
}
