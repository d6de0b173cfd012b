/* Ring attention (context parallelism): one sequence across several ranks.
 * Each rank keeps its chunks of Q (core/ring_plan.h cuts them), computes
 * them against the K/V chunks that travel one rank along the ring per step,
 * and folds each block's (O, LSE) into an f32 accumulator with the
 * backend's merge (or on the host where a backend has none). K/V move by the
 * backend's device transport (core/ring_comm.h: NCCL) where one serves every
 * rank, overlapping the step's blocks, else through host memory. */
#include "core/ring.h"

#include "core/api_objects.h"
#include "core/error.h"
#include "core/problem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void attnvk_ring_options_init(attnvk_ring_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
}

double avk_ring_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static attnvk_status check_problem(const attnvk_problem *p)
{
    attnvk_status s = avk_problem_validate_rules(p); /* the kernel limits bind each chunk, not the whole */
    if (s != ATTNVK_OK) return s;
    const char *what = p->seq_q != p->seq_kv ? "seq_q != seq_kv (it splits one sequence attending to itself)"
                       : p->page_size > 0 || p->ragged ? "paged or ragged caches"
                       : p->kv_format != ATTNVK_KV_DTYPE ? "quantized caches"
                       : p->mask ? "masks"
                       : p->sinks ? "sinks"
                       : p->block_sparse || p->dilated_groups ? "sparse patterns"
                       : attnvk_problem_head_dim_v(p) != p->head_dim ? "Dv != D"
                       : NULL;
    return what ? avk_fail(ATTNVK_ERROR_UNSUPPORTED, "ring attention: %s not supported yet", what) : ATTNVK_OK;
}

static size_t chunk_elems(const attnvk_problem *p, int heads, int len)
{
    return (size_t)p->batch * heads * len * p->head_dim;
}

/* ---- buffers ---- */

static attnvk_status make_buffer(attnvk_device *dev, size_t bytes, attnvk_buffer **out)
{
    return attnvk_buffer_create(dev, bytes ? bytes : 4, out);
}

static attnvk_status rank_alloc(attnvk_ring *r, ring_rank *rk)
{
    const attnvk_problem *p = &r->p;
    size_t es = attnvk_dtype_size(p->dtype), rows = (size_t)p->batch * p->heads * r->max_chunk;
    size_t q_bytes = chunk_elems(p, p->heads, r->max_chunk) * es;
    attnvk_status s = ATTNVK_OK;
    for (int i = 0; i < rk->n && s == ATTNVK_OK; i++) {
        s = make_buffer(rk->dev, q_bytes, &rk->q[i]);
        if (s == ATTNVK_OK) s = make_buffer(rk->dev, q_bytes, &rk->o[i]);
        if (s == ATTNVK_OK) s = make_buffer(rk->dev, q_bytes, &rk->o_part[i]);
        if (s == ATTNVK_OK) s = make_buffer(rk->dev, rows * sizeof(float), &rk->lse_part[i]);
        if (s != ATTNVK_OK) break;
        if (rk->device_merge) {
            s = make_buffer(rk->dev, rows * p->head_dim * sizeof(float), &rk->acc_o[i]);
            if (s == ATTNVK_OK) s = make_buffer(rk->dev, rows * sizeof(float), &rk->acc_lse[i]);
        } else {
            rk->host_acc_o[i] = malloc(rows * p->head_dim * sizeof(float));
            rk->host_acc_lse[i] = malloc(rows * sizeof(float));
            if (!rk->host_acc_o[i] || !rk->host_acc_lse[i])
                s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "ring attention: no host memory for a merge accumulator");
        }
    }
    for (int set = 0; set < RING_KV_SETS && s == ATTNVK_OK; set++)
        for (int i = 0; i < rk->n && s == ATTNVK_OK; i++) {
            s = make_buffer(rk->dev, r->kv_slot_bytes, &rk->k[set][i]);
            if (s == ATTNVK_OK) s = make_buffer(rk->dev, r->kv_slot_bytes, &rk->v[set][i]);
        }
    if (s == ATTNVK_OK && p->alibi) s = make_buffer(rk->dev, (size_t)p->heads * sizeof(float), &rk->slopes);
    return s;
}

static void rank_free(ring_rank *rk)
{
    for (int i = 0; i < RING_SLOTS; i++) {
        attnvk_buffer *bufs[] = {rk->q[i], rk->o[i], rk->o_part[i], rk->lse_part[i], rk->acc_o[i], rk->acc_lse[i]};
        for (size_t b = 0; b < sizeof bufs / sizeof *bufs; b++) attnvk_buffer_destroy(bufs[b]);
        for (int set = 0; set < RING_KV_SETS; set++) {
            attnvk_buffer_destroy(rk->k[set][i]);
            attnvk_buffer_destroy(rk->v[set][i]);
        }
        free(rk->host_acc_o[i]);
        free(rk->host_acc_lse[i]);
    }
    attnvk_buffer_destroy(rk->slopes);
    for (int i = 0; i < rk->nkernels; i++) attnvk_kernel_destroy(rk->kernels[i].k);
    memset(rk, 0, sizeof *rk);
}

/* ---- transports ---- */

static void pick_transport(attnvk_ring *r)
{
    const attnvk_backend *b = r->rank[0].dev->backend;
    int same = 1;
    for (int i = 1; i < r->ranks; i++) same &= r->rank[i].dev->backend == b;
    snprintf(r->transport, sizeof r->transport, "host");
    if (!same) {
        snprintf(r->fallback, sizeof r->fallback, "the ranks are on different APIs");
        return;
    }
    if (!b->ring_comm) {
        snprintf(r->fallback, sizeof r->fallback, "%s has no device transport", attnvk_api_name(b->api));
        return;
    }
    avk_bdev *devs[AVK_RING_MAX_RANKS];
    for (int i = 0; i < r->ranks; i++) devs[i] = r->rank[i].dev->bdev;
    attnvk_status s = b->ring_comm->create(devs, r->ranks, &r->comm);
    if (s != ATTNVK_OK) {
        snprintf(r->fallback, sizeof r->fallback, "%s", attnvk_last_error());
        r->comm = NULL;
        return;
    }
    r->comm_ops = b->ring_comm;
    snprintf(r->transport, sizeof r->transport, "%s",
             r->comm_ops->name_of ? r->comm_ops->name_of(r->comm) : r->comm_ops->name);
}

attnvk_status avk_ring_shift_kv(attnvk_ring *r, int from, int to, double *host_ms)
{
    int slots = r->rank[0].n, count = 2 * slots, g = r->ranks;
    if (r->comm) {
        avk_bbuf *send[2 * RING_SLOTS * AVK_RING_MAX_RANKS], *recv[2 * RING_SLOTS * AVK_RING_MAX_RANKS];
        size_t bytes[2 * RING_SLOTS];
        for (int i = 0; i < count; i++) bytes[i] = r->kv_slot_bytes;
        for (int k = 0; k < g; k++)
            for (int i = 0; i < slots; i++) {
                ring_rank *rk = &r->rank[k];
                send[k * count + 2 * i] = rk->k[from][i]->bbuf;
                send[k * count + 2 * i + 1] = rk->v[from][i]->bbuf;
                recv[k * count + 2 * i] = rk->k[to][i]->bbuf;
                recv[k * count + 2 * i + 1] = rk->v[to][i]->bbuf;
                rk->dev->async_pending = 1; /* the transfers run on the device */
            }
        const avk_ring_shift sh = {.send = send, .recv = recv, .bytes = bytes, .count = count};
        return r->comm_ops->shift(r->comm, &sh);
    }
    double t0 = avk_ring_now_ms();
    attnvk_status s = ATTNVK_OK;
    for (int k = 0; k < g && s == ATTNVK_OK; k++) {
        ring_rank *src = &r->rank[k], *dst = &r->rank[(k + 1) % g];
        for (int i = 0; i < slots && s == ATTNVK_OK; i++) {
            s = attnvk_buffer_read(src->k[from][i], 0, r->staging, r->kv_slot_bytes);
            if (s == ATTNVK_OK) s = attnvk_buffer_write(dst->k[to][i], 0, r->staging, r->kv_slot_bytes);
            if (s == ATTNVK_OK) s = attnvk_buffer_read(src->v[from][i], 0, r->staging, r->kv_slot_bytes);
            if (s == ATTNVK_OK) s = attnvk_buffer_write(dst->v[to][i], 0, r->staging, r->kv_slot_bytes);
        }
    }
    *host_ms += avk_ring_now_ms() - t0;
    return s;
}

/* ---- create / destroy ---- */

/* The whole problem's rules, what the ring supports, and the kernel limits of its
 * longest (query chunk, key chunk) block; *plan holds the cut. */
static attnvk_status check_ring(const attnvk_problem *p, int ranks, const attnvk_ring_options *opts,
                                avk_ring_plan *plan)
{
    if (ranks < 1 || ranks > AVK_RING_MAX_RANKS)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring attention: %d ranks, want 1..%d", ranks,
                        AVK_RING_MAX_RANKS);
    if (opts && opts->struct_size < sizeof *opts)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "ring options: struct_size %zu is too small (call attnvk_ring_options_init)", opts->struct_size);
    attnvk_status s = check_problem(p);
    if (s != ATTNVK_OK) return s;
    const int zigzag = p->causal && !(opts && opts->contiguous);
    if (!avk_ring_plan_make(plan, ranks, p->seq_q, zigzag))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring attention: %d tokens cannot be cut into %d chunks",
                        p->seq_q, (zigzag ? 2 : 1) * ranks);
    attnvk_problem block = *p;
    block.seq_q = block.seq_kv = avk_ring_chunk_len(plan, 0); /* the first chunks are the longest */
    if (avk_problem_validate_kernel_limits(&block) != ATTNVK_OK) {
        char why[256]; /* the message is formatted into the error buffer it quotes */
        snprintf(why, sizeof why, "%s", attnvk_last_error());
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring attention over %d ranks: a chunk of %d tokens: %s",
                        ranks, block.seq_q, why);
    }
    return ATTNVK_OK;
}

attnvk_status attnvk_ring_validate(const attnvk_problem *p, int ranks, const attnvk_ring_options *opts)
{
    avk_ring_plan plan;
    if (!p) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring attention: no problem given");
    return check_ring(p, ranks, opts, &plan);
}

attnvk_status attnvk_ring_create(attnvk_device *const *devs, int ranks, const attnvk_problem *p,
                                 const attnvk_ring_options *opts, attnvk_ring **out)
{
    if (!out) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring attention: no place for the ring");
    *out = NULL;
    if (!devs || !p) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring attention: no devices or problem given");
    avk_ring_plan plan;
    attnvk_status s = check_ring(p, ranks, opts, &plan);
    if (s != ATTNVK_OK) return s;
    for (int i = 0; i < ranks; i++)
        if (!devs[i]) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring attention: rank %d has no device", i);
    attnvk_ring *r = calloc(1, sizeof *r);
    if (!r) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "ring attention: no host memory");
    r->p = *p;
    if (opts) r->opts = *opts;
    else attnvk_ring_options_init(&r->opts);
    r->opts.kernel.write_lse = 1;
    r->ranks = ranks;
    r->plan = plan;
    r->max_chunk = avk_ring_chunk_len(&r->plan, 0); /* the first chunks are the longest */
    r->kv_slot_bytes = chunk_elems(p, p->kv_heads, r->max_chunk) * attnvk_dtype_size(p->dtype);
    r->rank = calloc((size_t)ranks, sizeof *r->rank);
    size_t host_bytes = chunk_elems(p, p->heads, r->max_chunk) * sizeof(float);
    r->staging = malloc(host_bytes > r->kv_slot_bytes ? host_bytes : r->kv_slot_bytes);
    r->staging_f32 = malloc(host_bytes);
    r->staging_lse = malloc((size_t)p->batch * p->heads * r->max_chunk * sizeof(float));
    if (!r->rank || !r->staging || !r->staging_f32 || !r->staging_lse) {
        attnvk_ring_destroy(r);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "ring attention: no host memory");
    }
    for (int i = 0; i < ranks && s == ATTNVK_OK; i++) {
        ring_rank *rk = &r->rank[i];
        rk->dev = devs[i];
        rk->device_merge = devs[i]->backend->merge != NULL;
        rk->n = avk_ring_rank_chunks(&r->plan, i, rk->chunk);
        s = rank_alloc(r, rk);
    }
    if (s == ATTNVK_OK && r->opts.transport != ATTNVK_RING_HOST) {
        pick_transport(r);
        if (!r->comm && r->opts.transport == ATTNVK_RING_DEVICE)
            s = avk_fail(ATTNVK_ERROR_UNSUPPORTED, "ring attention: no device transport: %s", r->fallback);
    } else if (s == ATTNVK_OK) {
        snprintf(r->transport, sizeof r->transport, "host");
    }
    if (s != ATTNVK_OK) {
        attnvk_ring_destroy(r);
        return s;
    }
    *out = r;
    return ATTNVK_OK;
}

void attnvk_ring_destroy(attnvk_ring *r)
{
    if (!r) return;
    if (r->comm) r->comm_ops->destroy(r->comm);
    for (int i = 0; r->rank && i < r->ranks; i++) {
        attnvk_device_wait(r->rank[i].dev); /* nothing may still use the buffers */
        rank_free(&r->rank[i]);
    }
    free(r->rank);
    free(r->staging);
    free(r->staging_f32);
    free(r->staging_lse);
    free(r);
}

int attnvk_ring_shard(const attnvk_ring *r, int rank, int begin[2], int end[2])
{
    if (!r || rank < 0 || rank >= r->ranks) return 0;
    const ring_rank *rk = &r->rank[rank];
    for (int i = 0; i < rk->n; i++) {
        begin[i] = r->plan.begin[rk->chunk[i]];
        end[i] = r->plan.begin[rk->chunk[i] + 1];
    }
    return rk->n;
}

const char *attnvk_ring_transport_name(const attnvk_ring *r, const char **fallback_reason)
{
    if (fallback_reason) *fallback_reason = r && r->fallback[0] ? r->fallback : NULL;
    return r ? r->transport : "";
}
