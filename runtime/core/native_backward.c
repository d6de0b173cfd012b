/* The native backward pass's host side for CUDA and HIP (native_backward.h). */
#include "core/native_backward.h"
#include "core/error.h"

#include "../../native/attn_bwd_params.h"
#include "../../native/attn_params_host.h"

#include <stdio.h>
#include <string.h>

/* Kernels are data: Dk range (Dv within it too), body, tiles; the first row
 * that applies and fits the device's shared memory wins. mma rows apply to
 * f16/bf16 with Dk and Dv multiples of 16 where the backend has tensor cores;
 * the simt ones take the rest. Register budget (no spills on sm_80/sm_90a,
 * test_cuda_nvrtc): a dK/dV warp holds (Dk + Dv) / wn / 2 accumulators and
 * 16 x bq of S^T and dP^T each; a dQ warp Dk / 2 and 16 x kb. The last two
 * simt rows are for 64 KiB of LDS (AMD): smaller tiles where the first ones
 * don't fit (BC x D a multiple of the threads, every listed D). Not yet
 * tuned on a GPU. */
static const struct {
    int mma, min_dim, max_dim;
    int bc, bq, wn, qb, kb, threads;
} bwd_table[] = {
    {1, 16, 64, 64, 64, 1, 64, 64, 0},
    {1, 65, 128, 64, 32, 1, 64, 64, 0},
    {1, 129, 256, 64, 32, 2, 64, 32, 0},
    {0, 1, 128, 32, 32, 0, 32, 32, 256},
    {0, 129, 256, 16, 16, 0, 16, 16, 256},
    {0, 65, 128, 32, 16, 0, 32, 16, 256},
    {0, 129, 256, 16, 8, 0, 16, 8, 256},
};

const char *const avk_native_bwd_kernel_names[AVK_BWD_KERNELS] = {"avk_bwd_pre", "avk_bwd_dkdv", "avk_bwd_dq",
                                                                  "avk_bwd_sinks"};

int avk_native_bwd_threads(const avk_native_bwd_config *c, int dq)
{
    if (!c->mma) return c->threads;
    return dq ? c->qb / 16 * 32 : c->bc / 16 * c->wn * 32;
}

size_t avk_native_bwd_smem(const avk_native_bwd_config *c, int dq)
{
    const size_t dk = (size_t)c->head_dim, dv = (size_t)c->head_dim_v;
    const size_t rows_a = (size_t)(dq ? c->qb : c->bc), rows_b = (size_t)(dq ? c->kb : c->bq);
    if (c->mma) /* attn_bwd_mma.h: f16 rows + 8 of both tiles (dK/dV: and the rows' LSE and D_i) */
        return (rows_a + rows_b) * (dk + 8 + dv + 8) * 2 + (dq ? 0 : 2 * rows_b * 4);
    /* attn_bwd_simt.h: f32 rows + 1 of both tiles, P and dS [rows][cols + 1], LSE and D_i */
    const size_t rq = dq ? rows_a : rows_b, ck = dq ? rows_b : rows_a;
    return ((rows_a + rows_b) * (dk + 1 + dv + 1) + 2 * rq * (ck + 1) + 2 * rq) * 4;
}

attnvk_status avk_native_bwd_select(const char *api, int tensor_cores, size_t smem_limit, const attnvk_problem *p,
                                    avk_native_bwd_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    const int dk = p->head_dim, dv = p->head_dim_v > 0 ? p->head_dim_v : p->head_dim;
    const int dmax = dk > dv ? dk : dv;
    cfg->dtype = p->dtype;
    cfg->head_dim = dk;
    cfg->head_dim_v = dv;
    const int tensor = tensor_cores && p->dtype != ATTNVK_F32 && dk % 16 == 0 && dv % 16 == 0;
    for (size_t i = 0; i < sizeof bwd_table / sizeof *bwd_table; ++i) {
        if (bwd_table[i].mma && !tensor) continue;
        if (dmax < bwd_table[i].min_dim || dmax > bwd_table[i].max_dim) continue;
        cfg->mma = bwd_table[i].mma;
        cfg->bc = bwd_table[i].bc, cfg->bq = bwd_table[i].bq, cfg->wn = bwd_table[i].wn;
        cfg->qb = bwd_table[i].qb, cfg->kb = bwd_table[i].kb, cfg->threads = bwd_table[i].threads;
        /* an mma warp's columns of dK and dV come in n-tile pairs */
        if (cfg->mma && (dk % (16 * cfg->wn) || dv % (16 * cfg->wn))) continue;
        /* a simt thread owns as many elements of dK, dV and dQ as the others */
        if (!cfg->mma && ((cfg->bc * dk) % cfg->threads || (cfg->bc * dv) % cfg->threads ||
                          (cfg->qb * dk) % cfg->threads))
            continue;
        const size_t need = avk_native_bwd_smem(cfg, 0) > avk_native_bwd_smem(cfg, 1) ? avk_native_bwd_smem(cfg, 0)
                                                                                      : avk_native_bwd_smem(cfg, 1);
        if (smem_limit && need > smem_limit) continue;
        return ATTNVK_OK;
    }
    return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                    "%s: the backward pass takes head dims up to 256 (got %d/%d) that fit the device's shared memory",
                    api, dk, dv);
}

void avk_native_bwd_defines(const avk_native_bwd_config *c, char *out, size_t n)
{
    snprintf(out, n,
             "-DAVK_D=%d -DAVK_DV=%d -DAVK_DTYPE=%d -DAVK_BWD_MMA=%d -DAVK_BWD_BC=%d -DAVK_BWD_BQ=%d -DAVK_BWD_WN=%d "
             "-DAVK_BWD_QB=%d -DAVK_BWD_KB=%d -DAVK_BWD_THREADS=%d -DAVK_SCORE_MOD=%d",
             c->head_dim, c->head_dim_v, (int)c->dtype, c->mma, c->bc, c->bq, c->wn > 0 ? c->wn : 1, c->qb, c->kb,
             c->threads, c->score_mod);
}

static unsigned blocks(int n, int per) { return (unsigned)((n + per - 1) / per); }

/* the kernels' one argument: the forward's (one head per CTA, every query
 * row, one split: its packing does not apply), dO and the gradients */
static void fill_params(const avk_native_driver *d, const avk_native_kernel *nk, const avk_backward_dispatch *a,
                        avk_bwd_params *P)
{
    memset(P, 0, sizeof *P);
    avk_attn_params_set_args(&P->f, &nk->args);
    P->f.pack = 1, P->f.q_begin = 0, P->f.q_count = (unsigned)nk->p.seq_q, P->f.splits = 1;
    P->f.flags &= ~(AVK_FLAG_SPLIT | AVK_FLAG_SKIP_LAST_TILE);
    const avk_dispatch *f = &a->fwd;
    P->f.q = d->address(f->q), P->f.k = d->address(f->k), P->f.v = d->address(f->v), P->f.o = d->address(f->o);
    P->f.lse = d->address(f->lse), P->f.seq_lens = d->address(f->seq_lens), P->f.mask = d->address(f->mask);
    P->f.sinks = d->address(f->sinks), P->f.alibi_slopes = d->address(f->alibi_slopes);
    P->d_o = d->address(a->d_o), P->dq = d->address(a->dq), P->dk = d->address(a->dk), P->dv = d->address(a->dv);
    P->d_sinks = d->address(a->d_sinks);
}

attnvk_status avk_native_backward(const avk_native_driver *d, void *ctx, const avk_native_kernel *nk,
                                  const avk_native_bwd_config *c, void *const fn[AVK_BWD_KERNELS],
                                  const avk_backward_dispatch *a, double *device_ms)
{
    const attnvk_problem *p = &nk->p;
    avk_bwd_params P;
    fill_params(d, nk, a, &P);
    void *args[] = {&P};
    const int rows = p->batch * p->heads * p->seq_q;
    unsigned long long work = 0;
    attnvk_status s = d->alloc(ctx, 2 * sizeof(float) * (size_t)(rows > 0 ? rows : 1), &work);
    if (s != ATTNVK_OK) return s;
    P.delta = work, P.sink_share = work + sizeof(float) * (size_t)rows;
    /* grids: pre a warp per row (8 per CTA of 256), dK/dV (key blocks, kv heads, B),
     * dQ (query blocks, heads, B), sinks a CTA per head */
    const unsigned grids[AVK_BWD_KERNELS][3] = {
        {blocks(rows, 8), 1, 1},
        {blocks(p->seq_kv, c->bc), (unsigned)p->kv_heads, (unsigned)p->batch},
        {blocks(p->seq_q, c->qb), (unsigned)p->heads, (unsigned)p->batch},
        {(unsigned)p->heads, 1, 1},
    };
    const int threads[AVK_BWD_KERNELS] = {256, avk_native_bwd_threads(c, 0), avk_native_bwd_threads(c, 1), 256};
    const size_t smem[AVK_BWD_KERNELS] = {0, avk_native_bwd_smem(c, 0), avk_native_bwd_smem(c, 1), 0};
    const int runs[AVK_BWD_KERNELS] = {rows > 0, p->seq_kv > 0, p->seq_q > 0, P.d_sinks != 0};
    s = d->time_begin(ctx);
    for (int i = 0; i < AVK_BWD_KERNELS && s == ATTNVK_OK; ++i)
        if (runs[i])
            s = d->launch(ctx, NULL, fn[i], grids[i], (unsigned)threads[i], smem[i], args, 0,
                          avk_native_bwd_kernel_names[i]);
    if (s == ATTNVK_OK) s = d->time_end(ctx, device_ms);
    d->free(ctx, work);
    return s;
}
