/* attnvk's CPU backward pass: FlashAttention-2's, in f32 on the host.
 *
 * From the forward's O and LSE, nothing of size Nq x Nk is kept: every pass
 * recomputes a row's P over one key tile as exp(s - LSE). Three passes, each
 * writing what it alone owns, so no two threads add into one value and the
 * order of every sum is fixed (the runs are bit-identical, no atomics):
 *   rows:  D_i = rowsum(dO_i * O_i);
 *   keys:  a work item is (b, kv head g, AVK_CPU_BWD_KEYS keys): over every
 *          query row of g's heads that sees one of them, dV += P^T dO and
 *          dK += dS'^T Q (dS' = P (dP - D) times the softcap's derivative);
 *   query: a work item is (b, h, AVK_CPU_BWD_ROWS queries): over the key
 *          tiles they see, dQ += dS' K, and each row's share of d(sink).
 * K and V tiles are transposed so the dot products run as axpy loops over
 * keys, which the compiler vectorises; f16/bf16 storage is converted per row. */
#include "cpu/cpu_flash.h"
#include "core/error.h"
#include "core/kv_cache.h"
#include "core/layout.h"
#include "core/parallel.h"
#include "core/reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct bwd_ctx {
    const avk_cpu_backward_job *job;
    const attnvk_problem *p;
    int D, Dv, G, nkb, nqb;
    size_t es, items;
    float scale;
    float *delta;      /* [B*H*Nq]: D_i */
    double *sink_share; /* [B*H*Nq]: -P_sink * D_i, summed per head in a fixed order at the end */
    _Atomic size_t next;
    _Atomic int out_of_memory;
} bwd_ctx;

/* What a query row needs for its scores (rows are (b*H + h)*Nq + i). */
typedef struct bwd_row {
    int b, h, i, lo, hi, len;
    long long pos;
    float lse, delta, slope;
    size_t mask_off; /* element offset of the row's mask */
} bwd_row;

typedef struct scratch {
    float *kt, *vt, *kr;  /* a key tile: K^T [D][KB], V^T [Dv][KB], K [KB][D] */
    float *acc_a, *acc_b; /* keys: dK [KB][D], dV [KB][Dv]; query: dQ [QB][D] */
    float *q, *d_o;       /* one row's, or the query block's [QB][D], [QB][Dv] */
    float *prob, *ds, *mask; /* [KB] */
    float *tmp;           /* max(D, Dv) */
} scratch;

static size_t row_index(const attnvk_problem *p, int b, int h, int i) { return ((size_t)b * p->heads + h) * p->seq_q + i; }

static int seq_len(const bwd_ctx *c, int b)
{
    const int32_t *lens = c->job->fwd.seq_lens;
    return lens && avk_problem_has_seq_lens(c->p) ? avk_seq_len(c->p, lens, b) : c->p->seq_kv;
}

static void load_row(const bwd_ctx *c, const void *base, size_t elem, int n, float *dst)
{
    attnvk_unpack(c->p->dtype, (const char *)base + elem * c->es, dst, (size_t)n);
}

static void store_row(const bwd_ctx *c, void *base, size_t elem, const float *src, int n)
{
    attnvk_pack(c->p->dtype, src, (char *)base + elem * c->es, (size_t)n);
}

static void setup_row(const bwd_ctx *c, bwd_row *r, int b, int h, int i)
{
    const attnvk_problem *p = c->p;
    const size_t ri = row_index(p, b, h, i);
    r->b = b, r->h = h, r->i = i;
    r->len = seq_len(c, b);
    avk_visible_range(p, i, r->len, &r->lo, &r->hi);
    r->pos = avk_row_position(p, i, r->len);
    r->lse = c->job->fwd.lse[ri];
    r->delta = c->delta[ri];
    r->slope = p->alibi ? c->job->fwd.alibi_slopes[h] : 0.f;
    if (p->mask) {
        const size_t mb = p->mask_batch > 1 ? (size_t)b : 0, mh = p->mask_heads > 1 ? (size_t)h : 0;
        r->mask_off = ((mb * p->mask_heads + mh) * p->seq_q + i) * (size_t)p->seq_kv;
    }
}

/* Keys [t0, t0 + n) of (b, g) into the scratch's transposed tiles (and K's rows when kr). */
static void load_tile(const bwd_ctx *c, scratch *w, int b, int g, int t0, int n, int kr)
{
    const attnvk_problem *p = c->p;
    const int D = c->D, Dv = c->Dv;
    for (int jj = 0; jj < n; ++jj) {
        load_row(c, c->job->fwd.k, avk_kv_offset(p, b, g, t0 + jj), D, w->tmp);
        for (int d = 0; d < D; ++d) w->kt[(size_t)d * AVK_CPU_BWD_KEYS + jj] = w->tmp[d];
        if (kr) memcpy(w->kr + (size_t)jj * D, w->tmp, sizeof(float) * (size_t)D);
        load_row(c, c->job->fwd.v, avk_v_offset(p, b, g, t0 + jj), Dv, w->tmp);
        for (int d = 0; d < Dv; ++d) w->vt[(size_t)d * AVK_CPU_BWD_KEYS + jj] = w->tmp[d];
    }
}

/* A row's P and dS' over tile keys [a, e) (tile-relative, the tile at t0): q unscaled, d_o its dO. */
static void row_grads(const bwd_ctx *c, scratch *w, const bwd_row *r, const float *restrict q,
                      const float *restrict d_o, int t0, int a, int e)
{
    const attnvk_problem *p = c->p;
    float *restrict s = w->prob, *restrict dp = w->ds;
    for (int j = a; j < e; ++j) s[j] = 0, dp[j] = 0;
    for (int d = 0; d < c->D; ++d) {
        const float x = q[d], *restrict kt = w->kt + (size_t)d * AVK_CPU_BWD_KEYS;
        for (int j = a; j < e; ++j) s[j] += x * kt[j];
    }
    for (int d = 0; d < c->Dv; ++d) {
        const float x = d_o[d], *restrict vt = w->vt + (size_t)d * AVK_CPU_BWD_KEYS;
        for (int j = a; j < e; ++j) dp[j] += x * vt[j];
    }
    const float *mask = NULL;
    if (p->mask) {
        if (p->mask_dtype == ATTNVK_F32) {
            mask = (const float *)c->job->fwd.mask + r->mask_off + t0;
        } else {
            attnvk_unpack(ATTNVK_F16, (const uint16_t *)c->job->fwd.mask + r->mask_off + t0 + a, w->mask + a,
                          (size_t)(e - a));
            mask = w->mask;
        }
    }
    const float cap = p->softcap, inv_cap = cap > 0 ? 1.0f / cap : 0.f;
    for (int j = a; j < e; ++j) {
        float x = s[j] * c->scale, dsdx = 1.f;
        if (cap > 0) {
            const float t = tanhf(x * inv_cap);
            x = cap * t;
            dsdx = 1.f - t * t;
        }
        if (p->alibi) x += r->slope * (float)((long long)(t0 + j) - r->pos);
        if (mask) x += mask[j];
        const float prob = expf(x - r->lse); /* a masked -inf score gives 0 */
        s[j] = prob;
        dp[j] = prob == 0.f ? 0.f : prob * (dp[j] - r->delta) * dsdx;
    }
}

/* the tile-relative keys [*a, *e) of [t0, t0 + n) row r sees; 0 when none (or the row has no softmax) */
static int row_span(const bwd_row *r, int t0, int n, int *a, int *e)
{
    *a = (r->lo > t0 ? r->lo : t0) - t0;
    *e = (r->hi < t0 + n ? r->hi : t0 + n) - t0;
    return *a < *e && r->lse != -INFINITY;
}

/* ---- pass 1: D_i ---- */

static void delta_pass(void *ctx, size_t begin, size_t end)
{
    bwd_ctx *c = ctx;
    const attnvk_problem *p = c->p;
    float *o = malloc(sizeof(float) * (size_t)c->Dv * 2);
    if (!o) {
        c->out_of_memory = 1;
        return;
    }
    float *d_o = o + c->Dv;
    for (size_t r = begin; r < end; ++r) {
        const int i = (int)(r % (size_t)p->seq_q), h = (int)(r / (size_t)p->seq_q % (size_t)p->heads);
        const int b = (int)(r / ((size_t)p->seq_q * p->heads));
        load_row(c, c->job->fwd.o, avk_o_offset(p, b, h, i), c->Dv, o);
        load_row(c, c->job->d_o, avk_o_offset(p, b, h, i), c->Dv, d_o);
        float sum = 0;
        for (int d = 0; d < c->Dv; ++d) sum += o[d] * d_o[d];
        c->delta[r] = sum;
    }
    free(o);
}

/* ---- pass 2: dK and dV by key blocks ---- */

static void keys_item(const bwd_ctx *c, scratch *w, size_t item)
{
    const attnvk_problem *p = c->p;
    const int D = c->D, Dv = c->Dv;
    const int kb = (int)(item % (size_t)c->nkb), g = (int)(item / (size_t)c->nkb % (size_t)p->kv_heads);
    const int b = (int)(item / (size_t)c->nkb / (size_t)p->kv_heads);
    const int t0 = kb * AVK_CPU_BWD_KEYS, n = p->seq_kv - t0 < AVK_CPU_BWD_KEYS ? p->seq_kv - t0 : AVK_CPU_BWD_KEYS;
    float *restrict dk = w->acc_a, *restrict dv = w->acc_b;
    memset(dk, 0, sizeof(float) * (size_t)n * D);
    memset(dv, 0, sizeof(float) * (size_t)n * Dv);
    load_tile(c, w, b, g, t0, n, 0);
    for (int h = g * c->G; h < (g + 1) * c->G; ++h)
        for (int i = 0; i < p->seq_q; ++i) {
            bwd_row r;
            int a, e;
            setup_row(c, &r, b, h, i);
            if (!row_span(&r, t0, n, &a, &e)) continue;
            load_row(c, c->job->fwd.q, avk_q_offset(p, b, h, i), D, w->q);
            load_row(c, c->job->d_o, avk_o_offset(p, b, h, i), Dv, w->d_o);
            row_grads(c, w, &r, w->q, w->d_o, t0, a, e);
            for (int j = a; j < e; ++j) {
                const float pj = w->prob[j], sj = w->ds[j];
                float *restrict dkj = dk + (size_t)j * D, *restrict dvj = dv + (size_t)j * Dv;
                for (int d = 0; d < D; ++d) dkj[d] += sj * w->q[d];
                for (int d = 0; d < Dv; ++d) dvj[d] += pj * w->d_o[d];
            }
        }
    for (int j = 0; j < n; ++j) {
        float *dkj = dk + (size_t)j * D;
        for (int d = 0; d < D; ++d) dkj[d] *= c->scale;
        store_row(c, c->job->dk, avk_kv_offset(p, b, g, t0 + j), dkj, D);
        store_row(c, c->job->dv, avk_v_offset(p, b, g, t0 + j), dv + (size_t)j * Dv, Dv);
    }
}

/* ---- pass 3: dQ by query blocks ---- */

static void query_item(const bwd_ctx *c, scratch *w, size_t item)
{
    const attnvk_problem *p = c->p;
    const int D = c->D, Dv = c->Dv;
    const int qb = (int)(item % (size_t)c->nqb), h = (int)(item / (size_t)c->nqb % (size_t)p->heads);
    const int b = (int)(item / (size_t)c->nqb / (size_t)p->heads), g = h / c->G;
    const int i0 = qb * AVK_CPU_BWD_ROWS, nq = p->seq_q - i0 < AVK_CPU_BWD_ROWS ? p->seq_q - i0 : AVK_CPU_BWD_ROWS;
    bwd_row rows[AVK_CPU_BWD_ROWS];
    int kl = p->seq_kv, kh = 0;
    for (int r = 0; r < nq; ++r) {
        setup_row(c, &rows[r], b, h, i0 + r);
        load_row(c, c->job->fwd.q, avk_q_offset(p, b, h, i0 + r), D, w->q + (size_t)r * D);
        load_row(c, c->job->d_o, avk_o_offset(p, b, h, i0 + r), Dv, w->d_o + (size_t)r * Dv);
        if (rows[r].lo < rows[r].hi && rows[r].lse != -INFINITY) {
            if (rows[r].lo < kl) kl = rows[r].lo;
            if (rows[r].hi > kh) kh = rows[r].hi;
        }
    }
    float *restrict dq = w->acc_a;
    memset(dq, 0, sizeof(float) * (size_t)nq * D);
    for (int t0 = kl; t0 < kh; t0 += AVK_CPU_BWD_KEYS) {
        const int n = kh - t0 < AVK_CPU_BWD_KEYS ? kh - t0 : AVK_CPU_BWD_KEYS;
        load_tile(c, w, b, g, t0, n, 1);
        for (int r = 0; r < nq; ++r) {
            int a, e;
            if (!row_span(&rows[r], t0, n, &a, &e)) continue;
            row_grads(c, w, &rows[r], w->q + (size_t)r * D, w->d_o + (size_t)r * Dv, t0, a, e);
            float *restrict dqr = dq + (size_t)r * D;
            for (int j = a; j < e; ++j) {
                const float sj = w->ds[j], *restrict kj = w->kr + (size_t)j * D;
                for (int d = 0; d < D; ++d) dqr[d] += sj * kj[d];
            }
        }
    }
    for (int r = 0; r < nq; ++r) {
        float *dqr = dq + (size_t)r * D;
        for (int d = 0; d < D; ++d) dqr[d] *= c->scale;
        store_row(c, c->job->dq, avk_q_offset(p, b, h, i0 + r), dqr, D);
        const size_t ri = row_index(p, b, h, i0 + r);
        c->sink_share[ri] = p->sinks && rows[r].lse != -INFINITY
            ? -exp((double)c->job->fwd.sinks[h] - rows[r].lse) * rows[r].delta
            : 0.0;
    }
}

static float *alloc_floats(size_t n) { return malloc(sizeof(float) * (n ? n : 1)); }

static void free_scratch(scratch *w)
{
    float *all[] = {w->kt, w->vt, w->kr, w->acc_a, w->acc_b, w->q, w->d_o, w->prob, w->ds, w->mask, w->tmp};
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i) free(all[i]);
}

/* A thread of pass 2 (keys != 0) or 3: takes items from the shared counter until none is left. */
static void worker(bwd_ctx *c, int keys)
{
    const size_t D = (size_t)c->D, Dv = (size_t)c->Dv, KB = AVK_CPU_BWD_KEYS, QB = AVK_CPU_BWD_ROWS;
    const size_t acc_rows = keys ? KB : QB;
    scratch w = {.kt = alloc_floats(D * KB), .vt = alloc_floats(Dv * KB), .kr = alloc_floats(KB * D),
                 .acc_a = alloc_floats(acc_rows * D), .acc_b = alloc_floats(KB * Dv), .q = alloc_floats(QB * D),
                 .d_o = alloc_floats(QB * Dv), .prob = alloc_floats(KB), .ds = alloc_floats(KB),
                 .mask = alloc_floats(KB), .tmp = alloc_floats(D > Dv ? D : Dv)};
    if (!w.kt || !w.vt || !w.kr || !w.acc_a || !w.acc_b || !w.q || !w.d_o || !w.prob || !w.ds || !w.mask || !w.tmp)
        c->out_of_memory = 1;
    else
        for (size_t item; (item = c->next++) < c->items;) keys ? keys_item(c, &w, item) : query_item(c, &w, item);
    free_scratch(&w);
}

static void keys_worker(void *ctx, size_t begin, size_t end)
{
    (void)begin, (void)end;
    worker(ctx, 1);
}

static void query_worker(void *ctx, size_t begin, size_t end)
{
    (void)begin, (void)end;
    worker(ctx, 0);
}

static void run_items(bwd_ctx *c, size_t items, void (*fn)(void *, size_t, size_t))
{
    c->items = items;
    c->next = 0;
    size_t threads = (size_t)avk_cpu_threads();
    if (threads > items) threads = items;
    if (threads) avk_parallel_for(threads, 1, 1, fn, c);
}

attnvk_status avk_cpu_backward_run(const avk_cpu_backward_job *job)
{
    const attnvk_problem *p = job->fwd.p;
    if (p->page_size > 0 || p->kv_format != ATTNVK_KV_DTYPE)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the cpu backward pass takes a contiguous K/V in the problem's dtype");
    bwd_ctx c = {.job = job, .p = p, .D = p->head_dim, .Dv = avk_head_dim_v(p), .G = p->heads / p->kv_heads,
                 .es = attnvk_dtype_size(p->dtype), .scale = attnvk_problem_scale(p)};
    c.nkb = (p->seq_kv + AVK_CPU_BWD_KEYS - 1) / AVK_CPU_BWD_KEYS;
    c.nqb = (p->seq_q + AVK_CPU_BWD_ROWS - 1) / AVK_CPU_BWD_ROWS;
    const size_t rows = (size_t)p->batch * p->heads * p->seq_q;
    c.delta = malloc(sizeof(float) * (rows ? rows : 1));
    c.sink_share = malloc(sizeof(double) * (rows ? rows : 1));
    if (c.delta && c.sink_share) {
        avk_parallel_for(rows, 256, 1, delta_pass, &c);
        if (!c.out_of_memory) run_items(&c, (size_t)p->batch * p->kv_heads * c.nkb, keys_worker);
        if (!c.out_of_memory) run_items(&c, (size_t)p->batch * p->heads * c.nqb, query_worker);
        if (!c.out_of_memory && p->sinks && job->d_sinks)
            for (int h = 0; h < p->heads; ++h) { /* a fixed order: the same sum every run */
                double sum = 0;
                for (int b = 0; b < p->batch; ++b)
                    for (int i = 0; i < p->seq_q; ++i) sum += c.sink_share[row_index(p, b, h, i)];
                job->d_sinks[h] = (float)sum;
            }
    }
    const int failed = !c.delta || !c.sink_share || c.out_of_memory;
    free(c.delta);
    free(c.sink_share);
    return failed ? avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the cpu backward pass") : ATTNVK_OK;
}
