/* The HIP backward pass (issue #18): native/attn_bwd.cu from the shared tile
 * table, its mma body on MFMA/WMMA (through native/amd_matrix.h, f16/bf16)
 * and its simt body elsewhere (hip_bwd_table.c), taken from the gfx target's
 * embedded "bwd" object when it holds the configuration, else compiled with
 * hipRTC; run by the shared host layer (core/native_backward.c), whose mma
 * default adds dQ by atomics and whose deterministic mode does not.
 * Build-verified only: no AMD GPU here. */
#include "hip/hip_backward.h"
#include "core/kv_cache.h" /* avk_score_mod_bits */
#include "core/native_backward.h"
#include "hip/hip_flash.h"
#include "hip/hip_kernels.h"
#include "hip/hip_modules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct avk_hip_bwd {
    avk_native_bwd_config cfg;
    hipModule_t module;
    void *fn[AVK_BWD_ALL_KERNELS]; /* avk_native_bwd_kernel_count of them (the simt body has no dK/dV with dQ) */
    char origin[96];
};

void avk_hip_backward_release(avk_hip_device *dev, avk_hip_bwd *b)
{
    if (!b) return;
    if (b->module && !dev->lost) dev->hip->hipModuleUnload(b->module);
    free(b);
}

/* 1 when the arch's embedded backward object holds cfg's kernels */
static int embedded(const char *arch, const avk_native_bwd_config *cfg)
{
    avk_native_bwd_config inst[32];
    const int n = avk_hip_bwd_instances(arch, inst, 32);
    for (int i = 0; i < n && i < 32; ++i)
        if (!memcmp(&inst[i], cfg, sizeof *cfg)) return 1;
    return 0;
}

static attnvk_status load(avk_hip_device *dev, const attnvk_problem *p, avk_hip_bwd **out)
{
    avk_hip_bwd *b = calloc(1, sizeof *b);
    if (!b) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s = avk_hip_bwd_select(&dev->info, p, &b->cfg);
    b->cfg.score_mod = (int)avk_score_mod_bits(p);
    char defines[1024];
    avk_hip_bwd_defines(&b->cfg, defines, sizeof defines);
    avk_hip_source src;
    avk_hip_backward_source(defines, &src);
    /* an embedded object that lacks this instance must not be picked up */
    const char *object = embedded(dev->info.architecture, &b->cfg) ? AVK_HIP_BWD_OBJECT : NULL;
    if (s == ATTNVK_OK) s = avk_hip_load_module(dev, object, &src, &b->module, b->origin, sizeof b->origin);
    for (int i = 0; i < avk_native_bwd_kernel_count(&b->cfg) && s == ATTNVK_OK; ++i) {
        char name[128];
        avk_hip_bwd_kernel_name(&b->cfg, i, name, sizeof name);
        hipFunction_t f = NULL;
        s = avk_hip_get_function(dev, b->module, name, &f);
        b->fn[i] = f;
    }
    if (s != ATTNVK_OK) {
        avk_hip_backward_release(dev, b);
        return s;
    }
    *out = b;
    return ATTNVK_OK;
}

attnvk_status avk_hip_backward(avk_hip_device *dev, const avk_native_kernel *nk, avk_hip_bwd **bwd,
                               const avk_backward_dispatch *a, double *device_ms)
{
    attnvk_status s = avk_hip_use(dev);
    if (s == ATTNVK_OK && !*bwd) s = load(dev, &nk->p, bwd);
    if (s == ATTNVK_OK)
        s = avk_native_backward(&avk_hip_native_driver, dev, nk, &(*bwd)->cfg, (*bwd)->fn, a, device_ms);
    return s;
}
