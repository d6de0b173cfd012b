/* The native backward pass's host side for CUDA and HIP (native_backward.h). */
#include "core/native_backward.h"
#include "core/error.h"
#include "core/tuning.h" /* avk_env_tiles */

#include "../../native/attn_bwd_params.h"
#include "../../native/attn_params_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kernels are data: Dk range (Dv within it too), body, tiles; the first row
 * that applies and fits the device's shared memory wins. mma rows (a mask of
 * the matrix paths they serve, AVK_BWD_TENSOR_*) apply to f16/bf16 with Dk
 * and Dv multiples of 16 where the backend has that path; the simt ones take
 * the rest. Register budget (test_cuda_nvrtc: at most 32 bytes of spills a
 * kernel on sm_80/sm_90a): a dK/dV warp holds (Dk + Dv) / wn / 2
 * accumulators and 16 x bq of S^T and dP^T each; a dQ warp Dk / 2 and
 * 16 x kb. The AMD rows fit 64 KiB of LDS with the matrix re-layout's
 * scratch on wave64 and wave32, each kernel whole wave64s, dK/dV split over
 * 2-4 warps (hipcc gfx90a: the re-layout's registers leave D=128 wn 1 with
 * 131 VGPRs spilled, wn 2 with 35); untuned, no AMD GPU has run them. The
 * last two simt rows are for 64 KiB of LDS (AMD): smaller tiles where the
 * first ones don't fit (BC x D a multiple of the threads, every listed D).
 * mma.sync tiles from an H100 sweep (session 17,
 * dQ by atomics, f16 B=4 N=4k H*D=2048, ATTNVK_CUDA_BWD_TILES): D=128 bc/bq
 * 64/32 8.43 ms, 64/64 7.93, 128/32 8.74, 128/64 7.57; D=64 64/32 8.72,
 * 64/64 9.02, 128/64 8.84, 128/32 10.99. */
enum { NV = AVK_BWD_TENSOR_MMA_SYNC, AMD = AVK_BWD_TENSOR_AMD, WG = AVK_BWD_TENSOR_WGMMA };
static const struct {
    int tensor, min_dim, max_dim; /* tensor: the paths an mma row serves, 0: a simt row */
    int bc, bq, wn, qb, kb, threads;
} bwd_table[] = {
    /* wgmma (Dk, Dv 64 or 128): two warpgroups of 64 keys; dQ's kernel (deterministic mode) mma.sync's */
    {WG, 16, 64, 128, 128, 1, 64, 64, 0},
    {WG, 65, 128, 128, 64, 1, 64, 64, 0},
    {NV | AMD, 16, 64, 64, 32, 1, 64, 64, 0},
    {NV, 65, 128, 128, 64, 1, 64, 64, 0},
    {NV, 129, 256, 64, 32, 2, 64, 32, 0},
    {AMD, 65, 128, 32, 32, 2, 64, 32, 0},
    {AMD, 65, 128, 32, 32, 1, 64, 32, 0}, /* Dk or Dv an odd multiple of 16 (80, 112) */
    {AMD, 129, 256, 16, 16, 4, 32, 16, 0},
    {AMD, 129, 256, 16, 16, 2, 32, 16, 0}, /* 160, 224 */
    {0, 1, 128, 32, 32, 0, 32, 32, 256},
    {0, 129, 256, 16, 16, 0, 16, 16, 256},
    {0, 65, 128, 32, 16, 0, 32, 16, 256},
    {0, 129, 256, 16, 8, 0, 16, 8, 256},
};

const char *const avk_native_bwd_kernel_names[AVK_BWD_ALL_KERNELS] = {
    "avk_bwd_pre", "avk_bwd_dkdv", "avk_bwd_dq", "avk_bwd_sinks", "avk_bwd_dq_convert", "avk_bwd_dkdv_dq"};

int avk_native_bwd_kernel_count(const avk_native_bwd_config *c) { return c->mma ? AVK_BWD_ALL_KERNELS : AVK_BWD_KERNELS; }

int avk_native_bwd_threads(const avk_native_bwd_config *c, int kernel)
{
    if (kernel != AVK_BWD_DKDV && kernel != AVK_BWD_DQ && kernel != AVK_BWD_DKDV_DQ) return 256;
    if (!c->mma) return c->threads;
    return kernel == AVK_BWD_DQ ? c->qb / 16 * 32 : c->bc / 16 * c->wn * 32;
}

size_t avk_native_bwd_smem(const avk_native_bwd_config *c, int kernel)
{
    if (kernel != AVK_BWD_DKDV && kernel != AVK_BWD_DQ && kernel != AVK_BWD_DKDV_DQ) return 0;
    const size_t dk = (size_t)c->head_dim, dv = (size_t)c->head_dim_v;
    const int dq = kernel == AVK_BWD_DQ;
    const size_t rows_a = (size_t)(dq ? c->qb : c->bc), rows_b = (size_t)(dq ? c->kb : c->bq);
    if (c->mma == 2 && !dq) { /* attn_bwd_sm90.h: 1 KiB of alignment slack, K and V, two stages of Q and dO
                               * (swizzled, unpadded), dS^T and two buffers of dQ's 64 x 64 f32 blocks with the
                               * atomics' dQ, two stages of LSE and D_i */
        const size_t ds = kernel == AVK_BWD_DKDV_DQ ? rows_a * rows_b * 2 + 2 * (rows_b / 64) * (dk / 64) * 64 * 64 * 4 : 0;
        return 1024 + (rows_a + 2 * rows_b) * (dk + dv) * 2 + ds + 2 * 2 * rows_b * 4;
    }
    if (c->mma) { /* attn_bwd_mma.h: f16 rows + 8 of both tiles (dK/dV: Q/dO in two stages, their rows' LSE and
                   * D_i, and with the atomics' dQ, dS^T: a row of bq + 8 per key) */
        if (dq) return (rows_a + rows_b) * (dk + 8 + dv + 8) * 2;
        const size_t ds = kernel == AVK_BWD_DKDV_DQ ? rows_a * (rows_b + 8) * 2 : 0;
        return (rows_a + 2 * rows_b) * (dk + 8 + dv + 8) * 2 + ds + 2 * 2 * rows_b * 4;
    }
    /* attn_bwd_simt.h: f32 rows + 1 of both tiles, P and dS [rows][cols + 1], LSE and D_i */
    const size_t rq = dq ? rows_a : rows_b, ck = dq ? rows_b : rows_a;
    return ((rows_a + rows_b) * (dk + 1 + dv + 1) + 2 * rq * (ck + 1) + 2 * rq) * 4;
}

size_t avk_native_bwd_smem_max(const avk_native_bwd_config *c)
{
    size_t need = 0;
    for (int k = 0; k < avk_native_bwd_kernel_count(c); ++k) {
        const size_t n = avk_native_bwd_smem(c, k);
        need = n > need ? n : need;
    }
    return need;
}

int avk_native_bwd_threads_max(const avk_native_bwd_config *c)
{
    const int a = avk_native_bwd_threads(c, AVK_BWD_DKDV), b = avk_native_bwd_threads(c, AVK_BWD_DQ);
    return a > b ? a : b;
}

size_t avk_native_bwd_static_smem(const avk_native_bwd_device *dev, const avk_native_bwd_config *c)
{
    const int wave = dev->wave > 0 ? dev->wave : 32;
    return c->mma ? (size_t)((avk_native_bwd_threads_max(c) + wave - 1) / wave) * dev->mma_static_per_wave : 0;
}

/* $ATTNVK_CUDA_BWD_TILES "bc=,bq=,wn=,qb=,kb=" over the table's mma tiles (sweeps); 0 on a bad string */
static int tiles_override(avk_native_bwd_config *cfg)
{
    if (!cfg->mma) return 1;
    static const char *const keys[5] = {"bc", "bq", "wn", "qb", "kb"};
    int v[5] = {cfg->bc, cfg->bq, cfg->wn, cfg->qb, cfg->kb};
    if (!avk_env_tiles("ATTNVK_CUDA_BWD_TILES", keys, 5, v) || v[2] > 4) return 0;
    for (int k = 0; k < 5; ++k)
        if (k != 2 && v[k] % 16) return 0;
    cfg->bc = v[0], cfg->bq = v[1], cfg->wn = v[2], cfg->qb = v[3], cfg->kb = v[4];
    return 1;
}

attnvk_status avk_native_bwd_select_on(const avk_native_bwd_device *dev, const attnvk_problem *p,
                                       avk_native_bwd_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    const int dk = p->head_dim, dv = p->head_dim_v > 0 ? p->head_dim_v : p->head_dim;
    const int dmax = dk > dv ? dk : dv, wave = dev->wave > 0 ? dev->wave : 32;
    cfg->dtype = p->dtype;
    cfg->head_dim = dk;
    cfg->head_dim_v = dv;
    const int tensor = p->dtype != ATTNVK_F32 && dk % 16 == 0 && dv % 16 == 0 ? dev->tensor : 0;
    for (size_t i = 0; i < sizeof bwd_table / sizeof *bwd_table; ++i) {
        if (bwd_table[i].tensor && !(bwd_table[i].tensor & tensor)) continue;
        if (dmax < bwd_table[i].min_dim || dmax > bwd_table[i].max_dim) continue;
        cfg->mma = bwd_table[i].tensor == WG ? 2 : bwd_table[i].tensor != 0;
        if (cfg->mma == 2 && (dk % 64 || dv % 64)) continue;
        cfg->bc = bwd_table[i].bc, cfg->bq = bwd_table[i].bq, cfg->wn = bwd_table[i].wn;
        cfg->qb = bwd_table[i].qb, cfg->kb = bwd_table[i].kb, cfg->threads = bwd_table[i].threads;
        /* an mma warp's columns of dK and dV come in n-tile pairs */
        if (cfg->mma && (dk % (16 * cfg->wn) || dv % (16 * cfg->wn))) continue;
        /* a simt thread owns as many elements of dK, dV and dQ as the others */
        if (!cfg->mma && ((cfg->bc * dk) % cfg->threads || (cfg->bc * dv) % cfg->threads ||
                          (cfg->qb * dk) % cfg->threads))
            continue;
        if (!tiles_override(cfg))
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "ATTNVK_CUDA_BWD_TILES: '%s' is not bc=,bq=,qb=,kb= (multiples of 16 up to 256) and wn= (1-4)",
                            getenv("ATTNVK_CUDA_BWD_TILES"));
        if (cfg->mma == 2 && (cfg->bc % 64 || cfg->bc > 192 || (cfg->bq != 64 && cfg->bq != 128) || cfg->wn != 1))
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "ATTNVK_CUDA_BWD_TILES: the wgmma backward takes bc=64, 128 or 192, bq=64 or 128 and wn=1 "
                            "(ATTNVK_CUDA_BWD_WGMMA=0 for the mma.sync body)");
        /* a matrix instruction takes a whole wave: mma kernels of whole waves */
        if (cfg->mma &&
            (avk_native_bwd_threads(cfg, AVK_BWD_DKDV) % wave || avk_native_bwd_threads(cfg, AVK_BWD_DQ) % wave))
            continue;
        if (dev->smem_limit && avk_native_bwd_smem_max(cfg) + avk_native_bwd_static_smem(dev, cfg) > dev->smem_limit)
            continue;
        return ATTNVK_OK;
    }
    return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                    "%s: the backward pass takes head dims up to 256 (got %d/%d) that fit the device's shared memory",
                    dev->api, dk, dv);
}

void avk_native_bwd_defines(const avk_native_bwd_config *c, char *out, size_t n)
{
    snprintf(out, n,
             "-DAVK_D=%d -DAVK_DV=%d -DAVK_DTYPE=%d -DAVK_BWD_MMA=%d -DAVK_BWD_BC=%d -DAVK_BWD_BQ=%d -DAVK_BWD_WN=%d "
             "-DAVK_BWD_QB=%d -DAVK_BWD_KB=%d -DAVK_BWD_THREADS=%d -DAVK_SCORE_MOD=%d",
             c->head_dim, c->head_dim_v, (int)c->dtype, c->mma, c->bc, c->bq, c->wn > 0 ? c->wn : 1, c->qb, c->kb,
             c->threads, c->score_mod);
}

void avk_native_bwd_describe(const avk_native_bwd_config *c, int atomic_dq, attnvk_kernel_info *info)
{
    snprintf(info->implementation, sizeof info->implementation, "attnvk");
    snprintf(info->variant, sizeof info->variant, "bwd-%s", c->mma == 2 ? "wgmma" : c->mma ? "mma" : "simt");
    info->tile_br = c->bq, info->tile_bc = c->bc;
    info->workgroup_size = avk_native_bwd_threads(c, atomic_dq ? AVK_BWD_DKDV_DQ : AVK_BWD_DKDV);
    info->split_kv = 1;
    snprintf(info->params, sizeof info->params, "dq=%s qb=%d kb=%d wn=%d dq_threads=%d",
             atomic_dq ? "atomics" : "kernel", c->qb, c->kb, c->wn > 0 ? c->wn : 1,
             atomic_dq ? 0 : avk_native_bwd_threads(c, AVK_BWD_DQ));
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
                                  const avk_native_bwd_config *c, void *const fn[AVK_BWD_ALL_KERNELS],
                                  const avk_backward_dispatch *a, double *device_ms)
{
    const attnvk_problem *p = &nk->p;
    avk_bwd_params P;
    fill_params(d, nk, a, &P);
    void *args[] = {&P};
    const int rows = p->batch * p->heads * p->seq_q;
    const int atomic_dq = c->mma && !a->deterministic && fn[AVK_BWD_DKDV_DQ];
    const size_t r = (size_t)(rows > 0 ? rows : 1);
    const size_t acc_at = (2 * sizeof(float) * r + 255) / 256 * 256; /* red.v4 takes 16-byte-aligned rows */
    /* the wgmma body's dQ sums: whole 64-row blocks a (b, h) (avk_bwd_dq_acc_at) */
    const size_t acc_rows = c->mma == 2 ? (size_t)p->batch * p->heads * (size_t)((p->seq_q + 63) / 64 * 64) : r;
    unsigned long long work = 0;
    attnvk_status s = d->alloc(ctx, acc_at + (atomic_dq ? sizeof(float) * acc_rows * (size_t)p->head_dim : 0), &work);
    if (s != ATTNVK_OK) return s;
    P.delta = work, P.sink_share = work + sizeof(float) * r;
    P.dq_acc = atomic_dq ? work + acc_at : 0;
    /* in order: pre (a warp per row, 8 per CTA of 256), dK/dV (key blocks, kv heads, B) — with dQ's
     * atomics, then their conversion (a grid-stride loop) — or dQ (query blocks, heads, B), sinks
     * (a CTA per head) */
    const int keys = atomic_dq ? AVK_BWD_DKDV_DQ : AVK_BWD_DKDV;
    const size_t convert = ((size_t)rows * p->head_dim + 255) / 256;
    const struct {
        int kernel, runs;
        unsigned grid[3];
    } steps[] = {
        {AVK_BWD_PRE, rows > 0, {blocks(rows, 8), 1, 1}},
        {keys, p->seq_kv > 0, {blocks(p->seq_kv, c->bc), (unsigned)p->kv_heads, (unsigned)p->batch}},
        {AVK_BWD_DQ_CONVERT, atomic_dq && rows > 0, {(unsigned)(convert < 65536 ? convert : 65536), 1, 1}},
        {AVK_BWD_DQ, !atomic_dq && p->seq_q > 0, {blocks(p->seq_q, c->qb), (unsigned)p->heads, (unsigned)p->batch}},
        {AVK_BWD_SINKS, P.d_sinks != 0, {(unsigned)p->heads, 1, 1}},
    };
    s = d->time_begin(ctx);
    for (size_t i = 0; i < sizeof steps / sizeof *steps && s == ATTNVK_OK; ++i) {
        const int k = steps[i].kernel;
        if (steps[i].runs)
            s = d->launch(ctx, NULL, fn[k], steps[i].grid, (unsigned)avk_native_bwd_threads(c, k),
                          avk_native_bwd_smem(c, k), args, 0, avk_native_bwd_kernel_names[k]);
    }
    if (s == ATTNVK_OK) s = d->time_end(ctx, device_ms);
    d->free(ctx, work);
    if (s == ATTNVK_OK) avk_native_bwd_describe(c, atomic_dq, a->info);
    return s;
}
