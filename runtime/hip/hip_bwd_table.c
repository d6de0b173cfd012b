/* The HIP backward pass's configurations (issue #18): the shared tile table
 * (core/native_backward.c) under AMD's LDS, the instances the embedded "bwd"
 * code object of each gfx target holds, and their kernel names. Host logic
 * only: the build-time generator, the backend and the tests share it. */
#include "hip/hip_kernels.h"

#include "../../native/amd_fragments.h" /* the matrix re-layout's scratch per wave */

#include <stdio.h>
#include <string.h>

enum { AVK_HIP_BWD_LDS = 65536 };

attnvk_status avk_hip_bwd_select(const attnvk_device_info *info, const attnvk_problem *p, avk_native_bwd_config *cfg)
{
    /* the mma body (attn_bwd_mma.h) through amd_matrix.h where the forward's mma variants run:
     * MFMA (gfx90a, gfx94x) and WMMA (gfx11); the simt body elsewhere and for f32 */
    const char *arch = info->architecture;
    const avk_native_bwd_device dev = {
        .api = "hip",
        .tensor = avk_hip_arch_matrix(arch) ? AVK_BWD_TENSOR_AMD : 0,
        .smem_limit = info->shared_memory_per_group ? (size_t)info->shared_memory_per_group : AVK_HIP_BWD_LDS,
        .wave = info->subgroup_sizes[0] ? info->subgroup_sizes[0] : avk_hip_arch_wave(arch),
        .mma_static_per_wave = AVK_SCRATCH_U16_PER_WAVE * 2,
    };
    return avk_native_bwd_select_on(&dev, p, cfg);
}

int avk_hip_bwd_instances(const char *arch, avk_native_bwd_config *out, int max)
{
    /* the head dims training runs most; others (and score mods) compile with hipRTC */
    static const int dims[] = {64, 128};
    attnvk_device_info info;
    avk_hip_synthetic_device(arch, &info);
    int n = 0;
    for (int dt = ATTNVK_F32; dt <= ATTNVK_BF16; ++dt)
        for (size_t i = 0; i < sizeof dims / sizeof *dims; ++i) {
            attnvk_problem p;
            memset(&p, 0, sizeof p);
            p.head_dim = dims[i];
            p.dtype = (attnvk_dtype)dt;
            avk_native_bwd_config c;
            if (avk_hip_bwd_select(&info, &p, &c) != ATTNVK_OK) continue;
            if (n < max) out[n] = c;
            ++n;
        }
    return n;
}

void avk_hip_bwd_kernel_name(const avk_native_bwd_config *c, int kernel, char *out, size_t n)
{
    static const char *const dtypes[] = {"f32", "f16", "bf16"};
    char dims[24], mod[16] = "";
    if (c->head_dim_v != c->head_dim) snprintf(dims, sizeof dims, "d%dv%d", c->head_dim, c->head_dim_v);
    else snprintf(dims, sizeof dims, "d%d", c->head_dim);
    if (c->score_mod) snprintf(mod, sizeof mod, "_mod%d", c->score_mod);
    char warps[16] = ""; /* the mma body's warps per key group */
    if (c->mma && c->wn > 1) snprintf(warps, sizeof warps, "w%d", c->wn);
    snprintf(out, n, "%s_%s_%s_%s_%dx%d%s_%dx%d_t%d%s", avk_native_bwd_kernel_names[kernel], c->mma ? "mma" : "simt",
             dims, dtypes[c->dtype], c->bc, c->bq, warps, c->qb, c->kb, c->threads, mod);
}

void avk_hip_bwd_defines(const avk_native_bwd_config *c, char *out, size_t n)
{
    avk_native_bwd_defines(c, out, n);
    /* amd_matrix.h sizes its scratch by the workgroup's threads (else for 1024) */
    if (c->mma) {
        const size_t used = strlen(out);
        if (used < n) snprintf(out + used, n - used, " -DAVK_THREADS=%d", avk_native_bwd_threads_max(c));
    }
    for (int k = 0; k < avk_native_bwd_kernel_count(c); ++k) {
        char name[128];
        avk_hip_bwd_kernel_name(c, k, name, sizeof name);
        const size_t used = strlen(out);
        if (used < n) snprintf(out + used, n - used, " -D%s=%s", avk_native_bwd_kernel_names[k], name);
    }
}
