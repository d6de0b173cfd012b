/* The native kernels' host side for CUDA and HIP (native_flash.h). */
#include "core/native_flash.h"
#include "core/test_hooks.h"
#include "core/error.h"
#include "core/layout.h" /* avk_head_dim_v */
#include "../../native/attn_params_host.h"

#include <string.h>

attnvk_status avk_native_plan(const avk_native_driver *d, avk_native_kernel *k, const attnvk_problem *p,
                              const attnvk_kernel_options *o, int pack, const avk_native_shape *shape,
                              int force_split)
{
    k->p = *p;
    k->shape = *shape;
    avk_kernel_args_fill(&k->args, p, 0, p->seq_q, pack, o->write_lse);
    if (shape->dilated_view) avk_kernel_args_dilated_view(&k->args, p);
    if (o->test_flags & ATTNVK_TEST_SKIP_LAST_KV_TILE) k->args.flags |= AVK_FLAG_SKIP_LAST_TILE;
    /* over the keys a row block may see; avk_locate counts the splits from its first visible tile */
    k->splits = avk_kernel_args_split(&k->args, p, shape->br, shape->split_round, shape->compute_units,
                                      shape->resident, shape->whole_waves, o->split_kv);
    k->split_build = k->splits > 1 || force_split;
    if ((long long)p->batch * k->splits > 65535 || p->heads / pack > 65535)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s: grid too large (B*splits %lld, H %d; at most 65535 each)",
                        d->api, (long long)p->batch * k->splits, p->heads);
    const long long blocks = (long long)avk_grid_row_blocks(&k->args, p, (int)p->seq_q, shape->br) * (p->heads / pack) *
                             p->batch * k->splits;
    if (shape->persistent && blocks > 0x7fffffffLL)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s: a persistent kernel counts its blocks in 31 bits (%lld blocks)",
                        d->api, blocks);
    return ATTNVK_OK;
}

/* The counter of a persistent kernel that takes its blocks from memory (shape.persistent 2), zeroed */
static attnvk_status alloc_sched(const avk_native_driver *d, void *ctx, avk_native_kernel *k)
{
    if (k->shape.persistent != 2) return ATTNVK_OK;
    if (!d->zero) return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s: no device counter for a persistent kernel", d->api);
    attnvk_status s = d->alloc(ctx, 4, &k->sched);
    if (s == ATTNVK_OK) s = d->zero(ctx, k->sched, 4);
    return s;
}

attnvk_status avk_native_alloc_workspace(const avk_native_driver *d, void *ctx, avk_native_kernel *k)
{
    attnvk_status s = alloc_sched(d, ctx, k);
    if (s == ATTNVK_OK && k->v_transpose) {
        k->vt_bytes = (size_t)k->p.batch * (size_t)k->p.kv_heads * (size_t)avk_head_dim_v(&k->p) *
                      (size_t)AVK_FP8_VT_KEYS(k->p.seq_kv);
        s = d->alloc(ctx, k->vt_bytes, &k->vt);
    }
    if (s == ATTNVK_OK && k->split_build) {
        const size_t rows = (size_t)k->splits * k->p.batch * k->p.heads * k->p.seq_q;
        k->part_o_bytes = rows * (size_t)avk_head_dim_v(&k->p) * sizeof(float); /* partial O rows are O's (Dv) */
        s = d->alloc(ctx, k->part_o_bytes + rows * sizeof(float), &k->workspace);
    }
    if (s != ATTNVK_OK) { /* the caller frees k without a release */
        if (k->vt) d->free(ctx, k->vt);
        if (k->sched) d->free(ctx, k->sched);
        k->vt = k->sched = 0;
    }
    return s;
}

void avk_native_describe(const avk_native_kernel *k, int bc, attnvk_kernel_info *info)
{
    info->tile_br = k->shape.br;
    info->tile_bc = bc;
    info->workgroup_size = k->shape.threads;
    info->split_kv = k->splits;
    info->workspace_bytes = (k->workspace ? k->part_o_bytes + k->part_o_bytes / (size_t)avk_head_dim_v(&k->p) : 0) +
                            k->vt_bytes;
}

/* The attention grid of one CTA a block: row blocks, head groups, B x splits */
static void block_grid(const avk_native_kernel *k, int q_count, unsigned grid[3])
{
    grid[0] = (unsigned)avk_grid_row_blocks(&k->args, &k->p, q_count, k->shape.br);
    grid[1] = (unsigned)(k->p.heads / (int)k->args.pack);
    grid[2] = (unsigned)(k->p.batch * k->splits);
}

/* The grid a launch takes: a persistent kernel's CTAs (an SM's worth each, no more than blocks)
 * take the blocks in turn */
static void launch_grid(const avk_native_kernel *k, int q_count, unsigned grid[3])
{
    block_grid(k, q_count, grid);
    if (!k->shape.persistent) return;
    const unsigned long long blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
    const unsigned long long ctas = (unsigned long long)(k->shape.compute_units > 0 ? k->shape.compute_units : 1) *
                                    (unsigned long long)(k->shape.resident > 0 ? k->shape.resident : 1);
    grid[0] = (unsigned)(blocks < ctas ? blocks : ctas);
    grid[1] = grid[2] = 1;
}

static void fill_params(const avk_native_driver *d, const avk_native_kernel *k, const avk_dispatch *a,
                        avk_attn_params *P)
{
    memset(P, 0, sizeof *P);
    P->q = d->address(a->q);
    P->k = d->address(a->k);
    P->v = d->address(a->v);
    P->o = d->address(a->o);
    P->lse = d->address(a->lse);
    P->block_table = d->address(a->block_table);
    P->seq_lens = d->address(a->seq_lens);
    P->kv_scales = d->address(a->kv_scales);
    P->alibi_slopes = d->address(a->alibi_slopes);
    P->sinks = d->address(a->sinks);
    P->mask = d->address(a->mask);
    P->q_scales = d->address(a->q_scales);
    P->vt = k->vt;
    if (k->workspace) {
        P->part_o = k->workspace;
        P->part_lse = k->workspace + k->part_o_bytes;
    }
    avk_kernel_args args = k->args;
    args.q_begin = (U32)a->q_begin;
    args.q_count = (U32)a->q_count;
    avk_attn_params_set_args(P, &args);
    unsigned grid[3];
    block_grid(k, a->q_count, grid);
    P->grid_x = grid[0];
    P->grid_y = grid[1];
    P->items = grid[0] * grid[1] * grid[2]; /* avk_native_plan keeps it within 31 bits for persistent kernels */
    P->sched = k->sched;
}

/* The merge's block (avk_attn_reduce): a group of Dv/4 lanes per
 * AVK_MERGE_BATCH splits, up to AVK_MERGE_MAX_THREADS threads, so each group
 * loads its splits in one round trip. H100, B=1, 128k keys, 47 splits: one
 * group of Dv lanes 0.198-0.200 ms, six groups 0.195. */
static unsigned merge_threads(int dv, int splits)
{
    const int lanes = dv / 4, cap = AVK_MERGE_MAX_THREADS / lanes > 0 ? AVK_MERGE_MAX_THREADS / lanes : 1;
    const int groups = (splits + AVK_MERGE_BATCH - 1) / AVK_MERGE_BATCH;
    return (unsigned)(lanes * (groups < 1 ? 1 : groups < cap ? groups : cap));
}

/* One run: the attention grid (row blocks, head groups, B x splits), then
 * the merge (rows, H, B; merge_threads) where the build splits. */
static attnvk_status launch(const avk_native_driver *d, void *ctx, const avk_native_kernel *k, const avk_dispatch *a,
                            void **args)
{
    if (k->v_transpose) { /* 64-key blocks of every (kv head, batch) */
        const unsigned blocks[3] = {(unsigned)(AVK_FP8_VT_KEYS(k->p.seq_kv) / 64), (unsigned)k->p.kv_heads,
                                    (unsigned)k->p.batch};
        attnvk_status s = d->launch(ctx, a->stream, k->v_transpose, blocks, 256, 0, args, 0, "avk_fp8_v_transpose");
        if (s != ATTNVK_OK) return s;
    }
    unsigned grid[3];
    launch_grid(k, a->q_count, grid);
    attnvk_status s = d->launch(ctx, a->stream, k->fwd, grid, (unsigned)k->shape.threads, k->shape.smem, args, 0, "avk_attn_fwd");
    if (s != ATTNVK_OK || !k->split_build) return s;
    const unsigned merge[3] = {(unsigned)a->q_count, (unsigned)k->p.heads, (unsigned)k->p.batch};
    return d->launch(ctx, a->stream, k->reduce, merge, merge_threads(avk_head_dim_v(&k->p), k->splits), 0, args, 1,
                     "avk_attn_reduce");
}

attnvk_status avk_native_dispatch(const avk_native_driver *d, void *ctx, const avk_native_kernel *k,
                                  const avk_dispatch *a, double *device_ms)
{
    attnvk_status rows = avk_dilated_view_rows(&k->args, &k->p, a->q_begin, a->q_count);
    if (rows != ATTNVK_OK) return rows;
    avk_attn_params P;
    fill_params(d, k, a, &P);
    _Alignas(64) unsigned char maps[AVK_MAX_TENSOR_MAPS][128];
    void *args[1 + AVK_MAX_TENSOR_MAPS] = {&P};
    for (int i = 0; i < k->tensor_maps; ++i) args[1 + i] = maps[i];
    attnvk_status s = d->enter(ctx);
    if (s != ATTNVK_OK) return s;
    if (k->tensor_maps) s = d->tensor_maps ? d->tensor_maps(ctx, k, &P, maps)
                                           : avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s: no tensor maps", d->api);
    if (s != ATTNVK_OK) {
        d->leave(ctx);
        return s;
    }
    if (!a->async) s = d->time_begin(ctx);
    for (int i = 0; i < a->launches && s == ATTNVK_OK; ++i) s = launch(d, ctx, k, a, args);
    if (s == ATTNVK_OK && !a->async) s = d->time_end(ctx, device_ms);
    if (s == ATTNVK_OK && !a->async) *device_ms /= a->launches;
    d->leave(ctx);
    return s;
}

void avk_native_release(const avk_native_driver *d, void *ctx, avk_native_kernel *k)
{
    if ((!k->workspace && !k->vt && !k->sched) || d->enter(ctx) != ATTNVK_OK) return;
    if (k->workspace) d->free(ctx, k->workspace);
    if (k->vt) d->free(ctx, k->vt);
    if (k->sched) d->free(ctx, k->sched);
    k->workspace = k->vt = k->sched = 0;
    d->leave(ctx);
}
