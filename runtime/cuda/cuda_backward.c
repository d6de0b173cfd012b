/* The CUDA backward pass (issue #18): native/attn_bwd.cu's kernels from the
 * shared tile table (core/native_backward.c), compiled with NVRTC, loaded
 * once per kernel and run by the shared host layer on the device's stream,
 * timed by its events. Deterministic by construction. */
#include "cuda/cuda_backward.h"
#include "core/kv_cache.h" /* avk_score_mod_bits */
#include "cuda/cuda_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

attnvk_status avk_cuda_bwd_select(int cc_major, size_t smem_optin, const attnvk_problem *p, avk_native_bwd_config *cfg)
{
    /* the mma body is mma.sync m16n8k16: sm_80 on; its wgmma dK/dV kernels on Hopper (sm_90a),
     * unless $ATTNVK_CUDA_BWD_WGMMA is 0 */
    const char *wg = getenv("ATTNVK_CUDA_BWD_WGMMA");
    const int tensor = (cc_major >= 8 ? AVK_BWD_TENSOR_MMA_SYNC : 0) |
                       (cc_major == 9 && !(wg && !strcmp(wg, "0")) ? AVK_BWD_TENSOR_WGMMA : 0);
    const avk_native_bwd_device dev = {"cuda", tensor, smem_optin, 32, 0};
    attnvk_status s = avk_native_bwd_select_on(&dev, p, cfg);
    cfg->score_mod = (int)avk_score_mod_bits(p);
    return s;
}

int avk_cuda_bwd_options(const avk_native_bwd_config *c, const char *arch,
                         char s[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN], const char **opts)
{
    int n = 0;
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "--gpu-architecture=%s", arch);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-std=c++17");
    char defines[AVK_CUDA_MAX_OPTIONS * 24];
    avk_native_bwd_defines(c, defines, sizeof defines);
    char *save = NULL;
    for (char *d = strtok_r(defines, " ", &save); d && n < AVK_CUDA_MAX_OPTIONS; d = strtok_r(NULL, " ", &save))
        snprintf(s[n++], AVK_CUDA_OPTION_LEN, "%s", d);
    n = avk_cuda_extra_defines(s, n);
    for (int i = 0; i < n; ++i) opts[i] = s[i];
    return n;
}

/* ---- the run ---- */

struct avk_cuda_bwd {
    avk_native_bwd_config cfg;
    CUmodule module;
    void *fn[AVK_BWD_ALL_KERNELS];
};

void avk_cuda_backward_release(avk_cuda_device *dev, avk_cuda_bwd *b)
{
    if (!b) return;
    if (b->module && !dev->lost) dev->cu->cuModuleUnload(b->module);
    free(b);
}

/* compiles (or takes from the cache) and loads the kernels for p; in the device's context */
static attnvk_status load(avk_cuda_device *dev, const attnvk_problem *p, avk_cuda_bwd **out)
{
    avk_cuda_bwd *b = calloc(1, sizeof *b);
    if (!b) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s = avk_cuda_bwd_select(dev->cc_major, dev->smem_optin, p, &b->cfg);
    char arch[16];
    avk_cuda_arch_name(dev->cc_major, dev->cc_minor, arch, sizeof arch);
    void *cubin = NULL;
    size_t size = 0;
    if (s == ATTNVK_OK) s = avk_cuda_compile_backward(&b->cfg, arch, dev->driver_version, NULL, &cubin, &size, NULL, NULL, 0);
    if (s == ATTNVK_OK) s = avk_cuda_check(dev, dev->cu->cuModuleLoadData(&b->module, cubin), "cuModuleLoadData(backward)");
    free(cubin);
    for (int i = 0; s == ATTNVK_OK && i < avk_native_bwd_kernel_count(&b->cfg); ++i) {
        CUfunction f = NULL;
        s = avk_cuda_check(dev, dev->cu->cuModuleGetFunction(&f, b->module, avk_native_bwd_kernel_names[i]),
                           avk_native_bwd_kernel_names[i]);
        b->fn[i] = f;
        const size_t smem = avk_native_bwd_smem(&b->cfg, i);
        if (s == ATTNVK_OK && smem > 48 * 1024)
            s = avk_cuda_check(dev, dev->cu->cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem),
                               "cuFuncSetAttribute(backward shared memory)");
    }
    if (s != ATTNVK_OK) {
        avk_cuda_backward_release(dev, b);
        return s;
    }
    *out = b;
    return ATTNVK_OK;
}

attnvk_status avk_cuda_backward(avk_cuda_device *dev, const avk_native_kernel *nk, avk_cuda_bwd **bwd,
                                const avk_backward_dispatch *a, double *device_ms)
{
    attnvk_status s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) return s;
    if (!*bwd) s = load(dev, &nk->p, bwd);
    if (s == ATTNVK_OK)
        s = avk_native_backward(&avk_cuda_native_driver, dev, nk, &(*bwd)->cfg, (*bwd)->fn, a, device_ms);
    avk_cuda_pop(dev);
    return s;
}
