/* The NVRTC options of a forward configuration (its -D defines, the target, the
 * user's ATTNVK_CUDA_DEFINES): what the compiler and the kernel cache key see. */
#include "cuda/cuda_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void avk_cuda_arch_name(int cc_major, int cc_minor, char *out, size_t n)
{
    snprintf(out, n, "sm_%d%d%s", cc_major, cc_minor, cc_major == 9 ? "a" : "");
}

int avk_cuda_build_options(const avk_cuda_config *c, const char *arch,
                           char s[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN], const char **opts)
{
    int n = 0;
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "--gpu-architecture=%s", arch);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-std=c++17");
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_D=%d", c->head_dim);
    if (avk_cuda_dim_v(c) != c->head_dim) snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_DV=%d", avk_cuda_dim_v(c));
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_DTYPE=%d", (int)c->dtype);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_BR=%d", c->br);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_BC=%d", c->bc);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_THREADS=%d", c->threads);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_MMA=%d", c->mma);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_WGMMA=%d", c->wgmma);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_TILED=%d", c->tiled);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_DS=%d", c->tiled ? c->lanes_per_row : 0);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_WM=%d", c->mma ? c->rows_per_warp / 16 : 0);
    if (c->mma && !c->wgmma && !c->key_warps && avk_cuda_col_warps(c) > 1)
        snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_WN=%d", avk_cuda_col_warps(c));
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_QREG=%d", c->qreg);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_SPLIT=%d", c->split);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_KV_FORMAT=%d", (int)c->kv_format);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_KEY_WARPS=%d", c->key_warps);
    if (c->key_warps && c->paged) snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_KV_PAGED=1");
    if (c->paged > 0) snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_PAGE_SIZE=%d", c->paged);
    if (c->score_mod) snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_SCORE_MOD=%d", c->score_mod);
    if (c->pos_offset) snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_POS_OFFSET=1");
    if (c->dilated_view) snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_DILATED_VIEW=1");
    if (c->fp8) snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_FP8=1");
    if (c->persistent) snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_PERSISTENT=%d", c->persistent);
    if (c->mask_tma) snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_MASK_TMA=1");
    if (c->min_ctas > 1) snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_MINB=%d", c->min_ctas);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_KV_STAGES=%d", c->kv_stages > 0 ? c->kv_stages : 2);
    n = avk_cuda_extra_defines(s, n);
    for (int i = 0; i < n; ++i) opts[i] = s[i];
    return n;
}

int avk_cuda_extra_defines(char s[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN], int n)
{
    const char *extra = getenv("ATTNVK_CUDA_DEFINES");
    char copy[512];
    snprintf(copy, sizeof copy, "%s", extra ? extra : "");
    char *save = NULL;
    for (char *tok = strtok_r(copy, " ", &save); tok && n < AVK_CUDA_MAX_OPTIONS; tok = strtok_r(NULL, " ", &save))
        if (strncmp(tok, "-D", 2) == 0 || strncmp(tok, "-U", 2) == 0) snprintf(s[n++], AVK_CUDA_OPTION_LEN, "%s", tok);
    return n;
}
