/* The native flash kernel on AMD. Code objects hold many kernel instances
 * (hip_codegen.c); each is loaded once per device and kept until close. */
#include "core/split_plan.h"
#include "hip/hip_flash.h"
#include "hip/hip_kernels.h"
#include "hip/hip_modules.h"
#include "../../native/attn_params_host.h"
#include "core/kernel_args.h"
#include "core/kv_cache.h" /* AVK_SCORE_FEATURES */
#include "core/layout.h"   /* avk_head_dim_v */

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

typedef struct avk_hip_module {
    struct avk_hip_module *next;
    char key[640];       /* "<variant>" for an embedded object, the -D options for hipRTC */
    char origin[96];
    hipModule_t module;
} avk_hip_module;

struct avk_hip_flash_kernel {
    attnvk_problem p;
    avk_hip_config cfg;
    hipFunction_t fwd, reduce;
    size_t lds;          /* dynamic LDS bytes */
    int splits;
    avk_kernel_args args;       /* the contract's scalars, planned at prepare */
    void *workspace;     /* split-KV partials: O then LSE */
    size_t part_o_bytes;
};

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
    out->features = AVK_SCORE_FEATURES | ATTNVK_FEATURE_HEAD_DIM_V;
    int embedded = 0;
    for (int i = 0; i < avk_hip_code_object_count; ++i)
        embedded |= strcmp(avk_hip_code_objects[i].arch, dev->info.architecture) == 0;
    if (!embedded && !avk_hiprtc_load()) {
        out->available = 0;
        snprintf(out->reason, sizeof out->reason, "no code object for %s is embedded and hipRTC is unavailable",
                 dev->info.architecture);
    }
}

void avk_hip_flash_source(const char *defines, avk_hip_source *out)
{
    static const char *const header_names[] = {"attn_portability.h", "attn_params.h", "amd_portability.h",
                                               "amd_matrix.h", "amd_fragments.h", "attn_contract.h",
                                               "contract/kernel_args.def", "contract/kernel_flags.h", "attn_scores.h",
                                               "attn_mma.h"};
    static const char *headers[10];
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
    const avk_hip_source src = {"attn_fwd.cu", (const char *)avk_hip_attn_source, defines, headers, header_names, 10};
    *out = src;
}

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
    if (k->workspace && !dev->lost && dev->hip->hipSetDevice(dev->ordinal) == hipSuccess)
        dev->hip->hipFree(k->workspace);
    free(k);
}

attnvk_status avk_hip_flash_prepare(avk_hip_device *dev, const attnvk_problem *p, const attnvk_kernel_options *o,
                                    avk_hip_flash_kernel **out, attnvk_kernel_info *info)
{
    avk_hip_flash_kernel *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    k->p = *p;
    /* decode shapes always run the split kernel (one split is a plain pass) */
    int decode = avk_is_decode(p) && o->split_kv != 1;
    attnvk_status s = avk_hip_select(&dev->info, p, o, decode, &k->cfg);
    if (s != ATTNVK_OK) {
        free(k);
        return s;
    }
    k->cfg.score_mod = (int)avk_score_mod_bits(p);
    const int bc = k->cfg.bc;
    /* HIP runs one head per workgroup over contiguous caches (no GQA packing,
     * paging or quantized caches yet: it does not declare them, so core refuses them) */
    avk_kernel_args_fill(&k->args, p, 0, p->seq_q, 1, o->write_lse);
    if (o->test_flags & ATTNVK_TEST_SKIP_LAST_KV_TILE) k->args.flags |= AVK_FLAG_SKIP_LAST_TILE;
    k->splits = avk_kernel_args_split(&k->args, p, k->cfg.br, bc, dev->info.compute_units, 1, 0, o->split_kv);
    if (k->splits > 1 && !k->cfg.split) k->cfg.split = 1; /* split_kv > 1 asked on a prefill shape */
    if ((long long)p->batch * k->splits > 65535 || p->heads > 65535) {
        long long z = (long long)p->batch * k->splits;
        free(k);
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "hip: grid too large (B*splits %lld, H %d; at most 65535 each)", z,
                        p->heads);
    }
    k->lds = avk_hip_config_dynamic_lds(&k->cfg);
    char fwd[128], reduce[128];
    avk_hip_kernel_names(&k->cfg, fwd, reduce, sizeof fwd);
    const avk_hip_module *m = NULL;
    s = avk_hip_use(dev);
    if (s == ATTNVK_OK) s = load_module(dev, &k->cfg, fwd, reduce, &m);
    if (s == ATTNVK_OK) s = avk_hip_get_function(dev, m->module, fwd, &k->fwd);
    if (s == ATTNVK_OK && k->cfg.split) s = avk_hip_get_function(dev, m->module, reduce, &k->reduce);
    if (s == ATTNVK_OK && k->cfg.split) {
        size_t rows = (size_t)k->splits * p->batch * p->heads * p->seq_q;
        k->part_o_bytes = rows * (size_t)avk_head_dim_v(p) * sizeof(float); /* partial O rows are O's (Dv) */
        s = avk_hip_check(dev, dev->hip->hipMalloc(&k->workspace, k->part_o_bytes + rows * sizeof(float)),
                          "hipMalloc(split-KV workspace)");
    }
    if (s != ATTNVK_OK) {
        avk_hip_flash_release(dev, k);
        return s;
    }
    snprintf(info->variant, sizeof info->variant, "%s", k->cfg.variant);
    info->tile_br = k->cfg.br;
    info->tile_bc = bc;
    info->workgroup_size = k->cfg.threads;
    info->split_kv = k->splits;
    info->workspace_bytes = k->workspace ? k->part_o_bytes + k->part_o_bytes / (size_t)avk_head_dim_v(p) : 0;
    snprintf(info->params, sizeof info->params, "arch=%.16s lds=%zu split_keys=%u kernel=%.80s code=%.60s",
             dev->info.architecture, k->lds, k->args.split_keys, fwd, m->origin);
    *out = k;
    return ATTNVK_OK;
}

static void fill_params(const avk_hip_flash_kernel *k, const avk_dispatch *a, avk_attn_params *P)
{
    memset(P, 0, sizeof *P);
    P->q = (unsigned long long)(size_t)a->q->ptr;
    P->k = (unsigned long long)(size_t)a->k->ptr;
    P->v = (unsigned long long)(size_t)a->v->ptr;
    P->o = (unsigned long long)(size_t)a->o->ptr;
    P->lse = a->lse ? (unsigned long long)(size_t)a->lse->ptr : 0;
    P->alibi_slopes = a->alibi_slopes ? (unsigned long long)(size_t)a->alibi_slopes->ptr : 0;
    P->sinks = a->sinks ? (unsigned long long)(size_t)a->sinks->ptr : 0;
    P->mask = a->mask ? (unsigned long long)(size_t)a->mask->ptr : 0;
    if (k->workspace) {
        P->part_o = (unsigned long long)(size_t)k->workspace;
        P->part_lse = P->part_o + k->part_o_bytes;
    }
    avk_kernel_args args = k->args;
    args.q_begin = (U32)a->q_begin;
    args.q_count = (U32)a->q_count;
    avk_attn_params_set_args(P, &args);
}

/* One launch: the attention kernel, then the split-KV reduce where it splits. */
static attnvk_status launch(avk_hip_device *dev, avk_hip_flash_kernel *k, const avk_dispatch *a, void **args)
{
    unsigned blocks = (unsigned)((a->q_count + k->cfg.br - 1) / k->cfg.br);
    attnvk_status s = avk_hip_check(dev,
                          dev->hip->hipModuleLaunchKernel(k->fwd, blocks, (unsigned)k->p.heads,
                                                          (unsigned)(k->p.batch * k->splits), (unsigned)k->cfg.threads,
                                                          1, 1, (unsigned)k->lds, dev->stream, args, NULL),
                          "hipModuleLaunchKernel(avk_attn_fwd)");
    if (s == ATTNVK_OK && k->cfg.split)
        s = avk_hip_check(dev,
                          dev->hip->hipModuleLaunchKernel(k->reduce, (unsigned)a->q_count, (unsigned)k->p.heads,
                                                          (unsigned)k->p.batch, (unsigned)avk_head_dim_v(&k->p), 1, 1,
                                                          0,
                                                          dev->stream, args, NULL),
                          "hipModuleLaunchKernel(avk_attn_reduce)");
    return s;
}

attnvk_status avk_hip_flash_dispatch(avk_hip_device *dev, avk_hip_flash_kernel *k, const avk_dispatch *a,
                                     double *device_ms)
{
    avk_attn_params P;
    fill_params(k, a, &P);
    void *args[] = {&P};
    attnvk_status s = avk_hip_use(dev);
    if (s == ATTNVK_OK) s = avk_hip_time_begin(dev);
    for (int i = 0; i < a->launches && s == ATTNVK_OK; ++i) s = launch(dev, k, a, args);
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_hip_time_end(dev, &ms);
    *device_ms = ms / a->launches;
    return s;
}
