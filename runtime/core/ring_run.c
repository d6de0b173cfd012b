/* Ring attention's schedule: G steps; at step s rank k holds the K/V chunks
 * that started on rank k - s, computes every visible (query chunk, key
 * chunk) block of its own, and folds each into its accumulator. The next
 * step's K/V transfer is started before the step's blocks, so a device
 * transport runs beside them. */
#include "core/ring.h"

#include "core/api_objects.h"
#include "core/error.h"
#include "core/ring_merge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ring_block {
    int q_slot, k_slot;
    int k_chunk;
    avk_ring_block_kind kind;
} ring_block;

/* The blocks rank k computes at step s, in order; returns their count. */
static int step_blocks(const attnvk_ring *r, int k, int step, ring_block out[RING_SLOTS * RING_SLOTS])
{
    const ring_rank *rk = &r->rank[k];
    const avk_ring_rules rules = {.causal = r->p.causal, .window = r->p.window, .window_left = r->p.window_left,
                                  .window_right = r->p.window_right};
    int src_chunks[RING_SLOTS], n = 0;
    int src_n = avk_ring_rank_chunks(&r->plan, avk_ring_source(&r->plan, k, step), src_chunks);
    for (int qi = 0; qi < rk->n; qi++)
        for (int ki = 0; ki < src_n; ki++) {
            avk_ring_block_kind kind = avk_ring_block(&r->plan, rk->chunk[qi], src_chunks[ki], &rules);
            if (kind != AVK_RING_SKIP)
                out[n++] = (ring_block){.q_slot = qi, .k_slot = ki, .k_chunk = src_chunks[ki], .kind = kind};
        }
    return n;
}

/* The kernel of a block: the problem's score modifications on lq queries at
 * i' = row + offset among lk keys (top-left), with its causal and window
 * bounds only where they cut through the block. */
static attnvk_status block_kernel(attnvk_ring *r, ring_rank *rk, int lq, int lk, int offset, int bounded,
                                  attnvk_kernel **out)
{
    if (!bounded && !r->p.alibi) offset = 0; /* nothing else reads i' */
    for (int i = 0; i < rk->nkernels; i++) {
        const ring_kernel *c = &rk->kernels[i];
        if (c->lq == lq && c->lk == lk && c->offset == offset && c->bounded == bounded) {
            *out = c->k;
            return ATTNVK_OK;
        }
    }
    if (rk->nkernels == RING_KERNELS)
        return avk_fail(ATTNVK_ERROR_BACKEND, "ring attention: more block shapes than expected");
    attnvk_problem b = r->p;
    b.seq_q = lq;
    b.seq_kv = lk;
    b.layout = ATTNVK_LAYOUT_BHSD;
    b.scale = attnvk_problem_scale(&r->p);
    b.align = ATTNVK_ALIGN_TOP_LEFT;
    b.position_offset = offset;
    if (!bounded) b.causal = b.window = 0;
    attnvk_status s = attnvk_kernel_prepare(rk->dev, &b, &r->opts.kernel, out, NULL);
    if (s == ATTNVK_OK)
        rk->kernels[rk->nkernels++] = (ring_kernel){.lq = lq, .lk = lk, .offset = offset, .bounded = bounded, .k = *out};
    return s;
}

static attnvk_status merge_on_host(attnvk_ring *r, ring_rank *rk, const ring_block *blk, int first, int last)
{
    const attnvk_problem *p = &r->p;
    int qc = rk->chunk[blk->q_slot], lq = avk_ring_chunk_len(&r->plan, qc);
    size_t rows = (size_t)p->batch * p->heads * lq;
    attnvk_status s = attnvk_buffer_read(rk->o_part[blk->q_slot], 0, r->staging,
                                         rows * p->head_dim * attnvk_dtype_size(p->dtype));
    if (s == ATTNVK_OK) s = attnvk_buffer_read(rk->lse_part[blk->q_slot], 0, r->staging_lse, rows * sizeof(float));
    if (s != ATTNVK_OK) return s;
    const avk_host_merge m = {.o_part = r->staging, .lse_part = r->staging_lse, .o_acc = rk->host_acc_o[blk->q_slot],
                              .lse_acc = rk->host_acc_lse[blk->q_slot], .o_out = last ? r->staging : NULL,
                              .dtype = p->dtype, .batch = p->batch, .heads = p->heads,
                              .rows_per_head = lq, .dv = p->head_dim, .first = first};
    avk_ring_merge_host(&m); /* in place: each row is read before it is written */
    return last ? attnvk_buffer_write(rk->o[blk->q_slot], 0, r->staging, rows * p->head_dim * attnvk_dtype_size(p->dtype))
                : ATTNVK_OK;
}

static attnvk_status merge_on_device(attnvk_ring *r, ring_rank *rk, const ring_block *blk, int first, int last)
{
    const attnvk_problem *p = &r->p;
    int qi = blk->q_slot;
    const avk_merge_args a = {.o_part = rk->o_part[qi]->bbuf, .lse_part = rk->lse_part[qi]->bbuf,
                              .o_acc = rk->acc_o[qi]->bbuf, .lse_acc = rk->acc_lse[qi]->bbuf,
                              .o_out = last ? rk->o[qi]->bbuf : NULL, .dtype = p->dtype, .batch = p->batch, .heads = p->heads,
                              .rows_per_head = avk_ring_chunk_len(&r->plan, rk->chunk[qi]), .dv = p->head_dim,
                              .first = first};
    attnvk_status s = rk->dev->backend->merge(rk->dev->bdev, &a);
    rk->dev->async_pending = 1;
    return s;
}

typedef struct ring_progress {
    int total[AVK_RING_MAX_RANKS][RING_SLOTS]; /* blocks each query chunk meets in a run */
    int done[AVK_RING_MAX_RANKS][RING_SLOTS];
    int blocks;
} ring_progress;

static attnvk_status run_step(attnvk_ring *r, int k, int step, int kv_set, ring_progress *pr)
{
    ring_rank *rk = &r->rank[k];
    ring_block blocks[RING_SLOTS * RING_SLOTS];
    int n = step_blocks(r, k, step, blocks);
    attnvk_status s = ATTNVK_OK;
    for (int i = 0; i < n && s == ATTNVK_OK; i++) {
        const ring_block *b = &blocks[i];
        int lq = avk_ring_chunk_len(&r->plan, rk->chunk[b->q_slot]), lk = avk_ring_chunk_len(&r->plan, b->k_chunk);
        attnvk_kernel *kern;
        s = block_kernel(r, rk, lq, lk, avk_ring_offset(&r->plan, rk->chunk[b->q_slot], b->k_chunk),
                         b->kind == AVK_RING_BOUNDED, &kern);
        if (s != ATTNVK_OK) break;
        const attnvk_tensors t = {.q = rk->q[b->q_slot], .k = rk->k[kv_set][b->k_slot], .v = rk->v[kv_set][b->k_slot],
                                  .o = rk->o_part[b->q_slot], .lse = rk->lse_part[b->q_slot],
                                  .alibi_slopes = rk->slopes};
        int first = pr->done[k][b->q_slot] == 0, last = ++pr->done[k][b->q_slot] == pr->total[k][b->q_slot];
        pr->blocks++;
        if (rk->device_merge) {
            s = attnvk_kernel_run_async(kern, &t, NULL);
            if (s == ATTNVK_OK) s = merge_on_device(r, rk, b, first, last);
        } else {
            s = attnvk_kernel_run_tensors(kern, &t, 0, 0, NULL);
            if (s == ATTNVK_OK) s = merge_on_host(r, rk, b, first, last);
        }
    }
    return s;
}

attnvk_status attnvk_ring_run(attnvk_ring *r, unsigned flags, attnvk_ring_stats *stats)
{
    if (!r) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring run: no ring");
    if (flags & ~(unsigned)ATTNVK_RING_NO_TRANSFERS)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring run: unknown flags 0x%x", flags);
    if (!r->uploaded) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring run: no inputs uploaded (attnvk_ring_upload)");
    const int g = r->ranks, transfers = !(flags & ATTNVK_RING_NO_TRANSFERS);
    ring_progress *pr = calloc(1, sizeof *pr);
    if (!pr) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "ring run: no host memory");
    for (int k = 0; k < g; k++)
        for (int step = 0; step < g; step++) {
            ring_block blocks[RING_SLOTS * RING_SLOTS];
            int n = step_blocks(r, k, step, blocks);
            for (int i = 0; i < n; i++) pr->total[k][blocks[i].q_slot]++;
        }
    double t0 = avk_ring_now_ms(), host_ms = 0;
    attnvk_status s = ATTNVK_OK;
    for (int step = 0; step < g && s == ATTNVK_OK; step++) {
        int kv_set = transfers ? ring_kv_set(step) : 0, more = transfers && step + 1 < g;
        if (more) s = avk_ring_shift_kv(r, kv_set, ring_kv_set(step + 1), &host_ms);
        /* ranks that merge on their device enqueue and go on; the others run to the end in turn */
        for (int pass = 0; pass < 2 && s == ATTNVK_OK; pass++)
            for (int k = 0; k < g && s == ATTNVK_OK; k++)
                if (r->rank[k].device_merge == (pass == 0)) s = run_step(r, k, step, kv_set, pr);
        if (s == ATTNVK_OK && more && r->comm) s = r->comm_ops->join(r->comm);
    }
    for (int k = 0; k < g; k++) { /* every rank, even after a failure: nothing may still run */
        attnvk_status w = attnvk_device_wait(r->rank[k].dev);
        if (s == ATTNVK_OK) s = w;
    }
    if (stats) {
        stats->total_ms = avk_ring_now_ms() - t0;
        stats->transfer_ms = !transfers ? 0 : r->comm ? r->comm_ops->take_elapsed_ms(r->comm) : host_ms;
        stats->steps = g;
        stats->blocks = pr->blocks;
    } else if (r->comm) {
        r->comm_ops->take_elapsed_ms(r->comm);
    }
    free(pr);
    return s;
}
