/* The CUDA backward pass (issue #18): native/attn_bwd.cu's kernels, their
 * tile table and NVRTC options, and the run behind attnvk_kernel_backward:
 * D_i (and the sink shares), dK/dV, dQ, d(sink), in that order on the
 * device's stream, timed by its events. The mma body's default sums dQ by
 * atomics inside the dK/dV kernel; the deterministic mode (and the simt
 * body, always) runs a dQ kernel that owns its rows: bit-identical runs. */
#include "cuda/cuda_backward.h"
#include "core/kv_cache.h" /* avk_score_mod_bits */
#include "cuda/cuda_kernels.h"

#include "../../native/attn_bwd_params.h"
#include "../../native/attn_params_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kernels are data: Dk range (Dv within it too), body, tiles. mma entries
 * apply from sm_80 to f16/bf16 with Dk and Dv multiples of 16; the simt ones
 * take the rest. Register budget (no spills on sm_80/sm_90a, test_cuda_nvrtc):
 * a dK/dV warp holds (Dk + Dv) / wn / 2 accumulators and 16 x bq of S^T and
 * dP^T each; a dQ warp Dk / 2 and 16 x kb. mma tiles from an H100 sweep
 * (session 17, dQ by atomics, f16 B=4 N=4k H*D=2048, ATTNVK_CUDA_BWD_TILES):
 * D=128 bc/bq 64/32 8.43 ms, 64/64 7.93, 128/32 8.74, 128/64 7.57; D=64 64/32
 * 8.72, 64/64 9.02, 128/64 8.84, 128/32 10.99. */
static const struct {
    int mma, min_dim, max_dim;
    int bc, bq, wn, qb, kb, threads;
} bwd_table[] = {
    {1, 16, 64, 64, 32, 1, 64, 64, 0},
    {1, 65, 128, 128, 64, 1, 64, 64, 0},
    {1, 129, 256, 64, 32, 2, 64, 32, 0},
    {0, 1, 128, 32, 32, 0, 32, 32, 256},
    {0, 129, 256, 16, 16, 0, 16, 16, 256},
};

int avk_cuda_bwd_threads(const avk_cuda_bwd_config *c, avk_cuda_bwd_kernel kind)
{
    if (!c->mma) return c->threads;
    return kind == AVK_BWD_KERNEL_DQ ? c->qb / 16 * 32 : c->bc / 16 * c->wn * 32;
}

size_t avk_cuda_bwd_smem(const avk_cuda_bwd_config *c, avk_cuda_bwd_kernel kind)
{
    const size_t dk = (size_t)c->head_dim, dv = (size_t)c->head_dim_v;
    const int dq = kind == AVK_BWD_KERNEL_DQ;
    const size_t rows_a = (size_t)(dq ? c->qb : c->bc), rows_b = (size_t)(dq ? c->kb : c->bq);
    if (c->mma) { /* attn_bwd_mma.h: f16 rows + 8 of both tiles (dK/dV: Q/dO in two stages, their rows' LSE and
                   * D_i, and with the atomics' dQ, dS^T: a row of bq + 8 per key) */
        if (dq) return (rows_a + rows_b) * (dk + 8 + dv + 8) * 2;
        const size_t ds = kind == AVK_BWD_KERNEL_DKDV_DQ ? rows_a * (rows_b + 8) * 2 : 0;
        return (rows_a + 2 * rows_b) * (dk + 8 + dv + 8) * 2 + ds + 2 * 2 * rows_b * 4;
    }
    /* attn_bwd_simt.h: f32 rows + 1 of both tiles, P and dS [rows][cols + 1], LSE and D_i */
    const size_t rq = dq ? rows_a : rows_b, ck = dq ? rows_b : rows_a;
    return ((rows_a + rows_b) * (dk + 1 + dv + 1) + 2 * rq * (ck + 1) + 2 * rq) * 4;
}

/* $ATTNVK_CUDA_BWD_TILES "bc=,bq=,wn=,qb=,kb=" over the table's tiles (sweeps); 0 on a bad string */
static int tiles_override(avk_cuda_bwd_config *cfg)
{
    const char *env = getenv("ATTNVK_CUDA_BWD_TILES");
    if (!env || !*env) return 1;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", env);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int v = 0;
        char key[8];
        if (sscanf(tok, "%7[a-z]=%d", key, &v) != 2 || v <= 0) return 0;
        const int tile = strcmp(key, "wn") != 0;
        if (tile ? v % 16 != 0 || v > 256 : v > 4) return 0;
        if (!strcmp(key, "bc")) cfg->bc = v;
        else if (!strcmp(key, "bq")) cfg->bq = v;
        else if (!strcmp(key, "wn")) cfg->wn = v;
        else if (!strcmp(key, "qb")) cfg->qb = v;
        else if (!strcmp(key, "kb")) cfg->kb = v;
        else return 0;
    }
    return 1;
}

attnvk_status avk_cuda_bwd_select(int cc_major, size_t smem_optin, const attnvk_problem *p, avk_cuda_bwd_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    const int dk = p->head_dim, dv = p->head_dim_v > 0 ? p->head_dim_v : p->head_dim;
    const int dmax = dk > dv ? dk : dv;
    cfg->dtype = p->dtype;
    cfg->head_dim = dk;
    cfg->head_dim_v = dv;
    cfg->score_mod = (int)avk_score_mod_bits(p);
    const int tensor = cc_major >= 8 && p->dtype != ATTNVK_F32 && dk % 16 == 0 && dv % 16 == 0;
    for (size_t i = 0; i < sizeof bwd_table / sizeof *bwd_table; ++i) {
        if (bwd_table[i].mma && !tensor) continue;
        if (dmax < bwd_table[i].min_dim || dmax > bwd_table[i].max_dim) continue;
        cfg->mma = bwd_table[i].mma;
        cfg->bc = bwd_table[i].bc, cfg->bq = bwd_table[i].bq, cfg->wn = bwd_table[i].wn;
        cfg->qb = bwd_table[i].qb, cfg->kb = bwd_table[i].kb, cfg->threads = bwd_table[i].threads;
        /* an mma warp's columns of dK and dV come in n-tile pairs */
        if (cfg->mma && (dk % (16 * cfg->wn) || dv % (16 * cfg->wn))) continue;
        if (!tiles_override(cfg))
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "ATTNVK_CUDA_BWD_TILES: '%s' is not bc=,bq=,qb=,kb= (multiples of 16 up to 256) and wn= (1-4)",
                            getenv("ATTNVK_CUDA_BWD_TILES"));
        size_t need = 0;
        for (int kind = 0; kind < AVK_BWD_KERNELS; ++kind) {
            const size_t n = avk_cuda_bwd_smem(cfg, (avk_cuda_bwd_kernel)kind);
            need = n > need ? n : need;
        }
        if (smem_optin && need > smem_optin) continue;
        return ATTNVK_OK;
    }
    return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                    "cuda: the backward pass takes head dims up to 256 (got %d/%d) that fit the device's shared memory",
                    dk, dv);
}

int avk_cuda_bwd_options(const avk_cuda_bwd_config *c, const char *arch,
                         char s[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN], const char **opts)
{
    int n = 0;
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "--gpu-architecture=%s", arch);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-std=c++17");
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_D=%d", c->head_dim);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_DV=%d", c->head_dim_v);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_DTYPE=%d", (int)c->dtype);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_BWD_MMA=%d", c->mma);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_BWD_BC=%d", c->bc);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_BWD_BQ=%d", c->bq);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_BWD_WN=%d", c->wn > 0 ? c->wn : 1);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_BWD_QB=%d", c->qb);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_BWD_KB=%d", c->kb);
    snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_BWD_THREADS=%d", c->threads);
    if (c->score_mod) snprintf(s[n++], AVK_CUDA_OPTION_LEN, "-DAVK_SCORE_MOD=%d", c->score_mod);
    for (int i = 0; i < n; ++i) opts[i] = s[i];
    return n;
}

/* ---- the run ---- */

struct avk_cuda_bwd {
    avk_cuda_bwd_config cfg;
    CUmodule module;
    CUfunction pre, sinks, dq_convert;
    CUfunction tiled[AVK_BWD_KERNELS]; /* by avk_cuda_bwd_kernel; dK/dV with dQ's atomics: mma only */
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
    static const char *const names[] = {"avk_bwd_pre", "avk_bwd_sinks", "avk_bwd_dq_convert", "avk_bwd_dkdv",
                                        "avk_bwd_dq", "avk_bwd_dkdv_dq"};
    CUfunction *fns[] = {&b->pre, &b->sinks, &b->dq_convert, &b->tiled[AVK_BWD_KERNEL_DKDV], &b->tiled[AVK_BWD_KERNEL_DQ],
                         &b->tiled[AVK_BWD_KERNEL_DKDV_DQ]};
    const int nfns = b->cfg.mma ? 6 : 5;
    for (int i = 0; i < nfns && s == ATTNVK_OK; ++i)
        s = avk_cuda_check(dev, dev->cu->cuModuleGetFunction(fns[i], b->module, names[i]), names[i]);
    for (int kind = 0; kind < AVK_BWD_KERNELS && s == ATTNVK_OK; ++kind) {
        const size_t smem = avk_cuda_bwd_smem(&b->cfg, (avk_cuda_bwd_kernel)kind);
        if (b->tiled[kind] && smem > 48 * 1024)
            s = avk_cuda_check(dev, dev->cu->cuFuncSetAttribute(b->tiled[kind], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                                (int)smem),
                               "cuFuncSetAttribute(backward shared memory)");
    }
    if (s != ATTNVK_OK) {
        avk_cuda_backward_release(dev, b);
        return s;
    }
    *out = b;
    return ATTNVK_OK;
}

static attnvk_status launch(avk_cuda_device *dev, CUfunction f, unsigned gx, unsigned gy, unsigned gz, int threads,
                            size_t smem, avk_bwd_params *P, const char *what)
{
    void *args[] = {P};
    return avk_cuda_check(dev, dev->cu->cuLaunchKernel(f, gx, gy, gz, (unsigned)threads, 1, 1, (unsigned)smem, dev->stream,
                                                       args, NULL),
                          what);
}

static unsigned blocks(int n, int per) { return (unsigned)((n + per - 1) / per); }

static attnvk_status run(avk_cuda_device *dev, const avk_native_kernel *nk, avk_cuda_bwd *b,
                         const avk_backward_dispatch *a, double *device_ms)
{
    const attnvk_problem *p = &nk->p;
    const avk_cuda_bwd_config *c = &b->cfg;
    avk_bwd_params P;
    memset(&P, 0, sizeof P);
    avk_attn_params_set_args(&P.f, &nk->args);
    /* one head per CTA, every query row, one split: the forward's packing does not apply */
    P.f.pack = 1, P.f.q_begin = 0, P.f.q_count = (unsigned)p->seq_q, P.f.splits = 1;
    P.f.flags &= ~(AVK_FLAG_SPLIT | AVK_FLAG_SKIP_LAST_TILE);
    const avk_dispatch *f = &a->fwd;
    P.f.q = avk_cuda_ptr(f->q), P.f.k = avk_cuda_ptr(f->k), P.f.v = avk_cuda_ptr(f->v), P.f.o = avk_cuda_ptr(f->o);
    P.f.lse = avk_cuda_ptr(f->lse), P.f.seq_lens = avk_cuda_ptr(f->seq_lens), P.f.mask = avk_cuda_ptr(f->mask);
    P.f.sinks = avk_cuda_ptr(f->sinks), P.f.alibi_slopes = avk_cuda_ptr(f->alibi_slopes);
    P.d_o = avk_cuda_ptr(a->d_o), P.dq = avk_cuda_ptr(a->dq), P.dk = avk_cuda_ptr(a->dk), P.dv = avk_cuda_ptr(a->dv);
    P.d_sinks = avk_cuda_ptr(a->d_sinks);
    const int rows = p->batch * p->heads * p->seq_q;
    /* the mma body's default adds dQ by atomics into f32 sums; the deterministic mode (and the simt
     * body) run the dQ kernel, which owns its rows */
    const int atomic_dq = c->mma && !a->deterministic;
    const size_t r = (size_t)(rows > 0 ? rows : 1);
    const size_t acc_at = (2 * sizeof(float) * r + 255) / 256 * 256; /* red.v4 takes 16-byte-aligned rows */
    const size_t work_bytes = acc_at + (atomic_dq ? sizeof(float) * r * (size_t)p->head_dim : 0);
    CUdeviceptr work = 0;
    attnvk_status s = avk_cuda_check(dev, dev->cu->cuMemAlloc(&work, work_bytes), "cuMemAlloc(backward workspace)");
    if (s != ATTNVK_OK) return s;
    P.delta = work, P.sink_share = work + sizeof(float) * r;
    P.dq_acc = atomic_dq ? work + acc_at : 0;
    const avk_cuda_bwd_kernel keys = atomic_dq ? AVK_BWD_KERNEL_DKDV_DQ : AVK_BWD_KERNEL_DKDV;
    s = avk_cuda_time_begin(dev);
    if (s == ATTNVK_OK && rows > 0) s = launch(dev, b->pre, blocks(rows, 8), 1, 1, 256, 0, &P, "cuLaunchKernel(avk_bwd_pre)");
    if (s == ATTNVK_OK && p->seq_kv > 0)
        s = launch(dev, b->tiled[keys], blocks(p->seq_kv, c->bc), (unsigned)p->kv_heads, (unsigned)p->batch,
                   avk_cuda_bwd_threads(c, keys), avk_cuda_bwd_smem(c, keys), &P, "cuLaunchKernel(avk_bwd_dkdv)");
    if (s == ATTNVK_OK && rows > 0 && atomic_dq) {
        /* a grid-stride loop: a few waves of 256 threads */
        const size_t n = (size_t)rows * p->head_dim, want = (n + 255) / 256;
        s = launch(dev, b->dq_convert, (unsigned)(want < 65536 ? want : 65536), 1, 1, 256, 0, &P,
                   "cuLaunchKernel(avk_bwd_dq_convert)");
    } else if (s == ATTNVK_OK && p->seq_q > 0)
        s = launch(dev, b->tiled[AVK_BWD_KERNEL_DQ], blocks(p->seq_q, c->qb), (unsigned)p->heads, (unsigned)p->batch,
                   avk_cuda_bwd_threads(c, AVK_BWD_KERNEL_DQ), avk_cuda_bwd_smem(c, AVK_BWD_KERNEL_DQ), &P,
                   "cuLaunchKernel(avk_bwd_dq)");
    if (s == ATTNVK_OK && P.d_sinks)
        s = launch(dev, b->sinks, (unsigned)p->heads, 1, 1, 256, 0, &P, "cuLaunchKernel(avk_bwd_sinks)");
    if (s == ATTNVK_OK) s = avk_cuda_time_end(dev, device_ms);
    if (!dev->lost) dev->cu->cuMemFree(work);
    return s;
}

attnvk_status avk_cuda_backward(avk_cuda_device *dev, const avk_native_kernel *nk, avk_cuda_bwd **bwd,
                                const avk_backward_dispatch *a, double *device_ms)
{
    attnvk_status s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) return s;
    if (!*bwd) s = load(dev, &nk->p, bwd);
    if (s == ATTNVK_OK) s = run(dev, nk, *bwd, a, device_ms);
    avk_cuda_pop(dev);
    return s;
}
