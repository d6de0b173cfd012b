/* attnvk's CPU flash attention: FlashAttention-2's forward pass on the host.
 *
 * A work item is (b, kv head g, a block of queries): its rows are the
 * block's queries times the G = H / H_kv query heads sharing g, query-major
 * (the kernel contract's GQA packing), so each K/V tile is decoded once for
 * all of them. Per key tile of bc keys (the job's, else AVK_CPU_TILE_BC): K is decoded (any kv
 * format, paged or contiguous) and transposed to Kt [D][BC], V to Vt
 * [BC][Dv padded]; then per 4 rows S = Q Kt (cpu_simd's gemm4), the score
 * modifications, the row's visible range, the online softmax in base 2 and
 * O += P Vt. Items are taken from a shared counter by avk_cpu_threads()
 * threads, the heaviest (last query blocks, for causal rows) first.
 *
 * Dilated attention runs as strided views, as Vulkan's and OpenCL's kernels do
 * (kernel_flags.h's AVK_FLAG_DILATED_VIEW): an item is (b, head h, segment,
 * block of the active residue class's rows), its rows and keys every r-th row
 * from seg * s + o, so a rate-r group costs N s / r^2 pairs; an item with the
 * segment's first block also writes the segment's inactive rows (zeros). */
#include "cpu/cpu_flash.h"
#include "cpu/cpu_simd.h"
#include "core/error.h"
#include "core/kv_cache.h"
#include "core/layout.h"
#include "core/parallel.h"
#include "core/q_format.h"
#include "core/reference.h"
#include "core/sparse.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453

const char *avk_cpu_flash_isa(void) { return avk_cpu_simd_get()->isa; }

/* ---- host conversions that vectorise (numeric.c's are exact but branchy) ---- */

static inline float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* IEEE half to float, exact for every input (Inf, NaN, subnormals), no branches */
static inline float half_to_float(uint16_t h)
{
    const uint32_t w = (uint32_t)h << 16, sign = w & 0x80000000u, two_w = w + w;
    const float normalized = bits_f32((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
    const float denormalized = bits_f32((two_w >> 17) | (126u << 23)) - 0.5f;
    return bits_f32(sign | (two_w < (1u << 27) ? f32_bits(denormalized) : f32_bits(normalized)));
}

static void unpack_row(attnvk_dtype dt, const void *src, float *restrict dst, int n)
{
    if (dt == ATTNVK_F32) {
        memcpy(dst, src, sizeof(float) * (size_t)n);
    } else if (dt == ATTNVK_F16) {
        const uint16_t *restrict h = src;
        for (int i = 0; i < n; ++i) dst[i] = half_to_float(h[i]);
    } else {
        const uint16_t *restrict h = src;
        for (int i = 0; i < n; ++i) dst[i] = bits_f32((uint32_t)h[i] << 16);
    }
}

/* ---- the plan of one run ---- */

typedef struct flash_ctx {
    const avk_cpu_job *job;
    const attnvk_problem *p;
    const avk_cpu_simd *simd;
    int D, Dv, Dvp, G, QB, nqb, rmax; /* rmax: rows of the largest item, a multiple of 4 */
    int bc, kt_ld; /* keys per tile (the job's, else AVK_CPU_TILE_BC) and Kt's row pitch */
    size_t items, items_per_b, q_es, o_es, mask_es, k_rb, v_rb;
    float qscale;
    int mods;     /* softcap, ALiBi, a mask or a sparse pattern: scores leave the gemm in natural units */
    int sparse;   /* a block layout or dilation hides keys inside the rows' ranges */
    int view;     /* dilation as strided views (items: view_item) */
    int k_f32;    /* K rows are f32 values: transposed straight from the cache */
    int v_direct; /* V rows are contiguous f32 of a multiple of nc: P V reads them in place */
    size_t ldv;   /* with v_direct: floats between V rows */
    _Atomic size_t next;
    _Atomic int out_of_memory;
} flash_ctx;

typedef struct row_info {
    int h, i, lo, hi;
    long long pos;
    float slope, m, l;
    size_t mask_off; /* element offset of the row's mask (mask_dtype) */
    const uint8_t *layout_row; /* block-sparse: the row's blocks */
} row_info;

typedef struct scratch {
    float *q;   /* [rmax][D], scaled */
    float *kt;  /* [D][KT_LD] */
    float *vt;  /* [BC][Dvp] */
    float *s;   /* [4][BC] */
    float *o;   /* [rmax][Dvp] */
    float *tmp; /* max(D, Dv) */
    row_info *rows;
} scratch;

static size_t round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

/* Kt's row pitch: 16 floats past the tile, so its D rows do not share a few L1 sets (512-byte strides do) */
enum { KT_PAD = 16 };

/* n values of a K (which 0) or V (1) row as f32, decoded from the kv format */
static void kv_decode_row(const flash_ctx *c, const void *base, size_t row, size_t rb, int n, int which, int g,
                          float *dst)
{
    const attnvk_problem *p = c->p;
    const unsigned char *src = (const unsigned char *)base + row * rb;
    if (p->kv_format == ATTNVK_KV_DTYPE)
        unpack_row(p->dtype, src, dst, n);
    else
        attnvk_kv_decode(p->kv_format, n, src, dst, 1,
                         p->kv_format == ATTNVK_KV_FP8 ? c->job->kv_scales[which * p->kv_heads + g] : 1.f);
}

/* keys [t0, t0 + bc) of (b, g), key t being the cache's base + step t (a dilated view; else 0, 1):
 * K transposed into kt, V into vt's rows */
static void load_tile(const flash_ctx *c, scratch *w, int b, int g, int t0, int bc, int base, int step)
{
    const int D = c->D;
    for (int jj = 0; jj < bc; ++jj) {
        const size_t row = avk_kv_row_index(c->p, c->job->block_table, b, g, base + step * (t0 + jj));
        const float *restrict src = w->tmp;
        if (c->k_f32)
            src = (const float *)((const unsigned char *)c->job->k + row * c->k_rb);
        else
            kv_decode_row(c, c->job->k, row, c->k_rb, D, 0, g, w->tmp);
        float *restrict kt = w->kt + jj;
        for (int d = 0; d < D; ++d) kt[(size_t)d * c->kt_ld] = src[d];
        if (!c->v_direct) kv_decode_row(c, c->job->v, row, c->v_rb, c->Dv, 1, g, w->vt + (size_t)jj * c->Dvp);
    }
}

/* softcap, ALiBi and the mask on a row's visible scores s[a..e) of the tile at t0, then to base 2 */
static void score_mods(const flash_ctx *c, const row_info *r, float *restrict s, int a, int e, int t0)
{
    const attnvk_problem *p = c->p;
    if (p->softcap > 0) {
        const float cap = p->softcap, inv = 1.0f / p->softcap;
        for (int j = a; j < e; ++j) s[j] = cap * tanhf(s[j] * inv);
    }
    if (p->alibi)
        for (int j = a; j < e; ++j) s[j] += r->slope * (float)((long long)(t0 + j) - r->pos);
    if (p->mask) {
        if (p->mask_dtype == ATTNVK_F16) {
            const uint16_t *m = (const uint16_t *)c->job->mask + r->mask_off + t0;
            for (int j = a; j < e; ++j) s[j] += half_to_float(m[j]);
        } else {
            const float *m = (const float *)c->job->mask + r->mask_off + t0;
            for (int j = a; j < e; ++j) s[j] += m[j];
        }
    }
    if (c->sparse)
        for (int j = a; j < e; ++j)
            if (!avk_sparse_key_visible(p, r->layout_row, r->h, t0 + j)) s[j] = -INFINITY;
    for (int j = a; j < e; ++j) s[j] *= LOG2E;
}

/* Row r of an item of `rows` rows, reset; NULL for a padding row to the micro-tile (its Q zeroed: it sees nothing) */
static row_info *reset_row(const flash_ctx *c, scratch *w, int r, int rows)
{
    row_info *ri = &w->rows[r];
    memset(ri, 0, sizeof *ri);
    ri->m = -INFINITY;
    if (r < rows) return ri;
    memset(w->q + (size_t)r * c->D, 0, sizeof(float) * (size_t)c->D);
    return NULL;
}

/* Q's row (b, ri->h, ri->i) as f32, scaled, into the item's row r; fp8 queries
 * decoded with their head's scale first, then run as any other row (exact f32) */
static void load_q(const flash_ctx *c, scratch *w, int r, int b, const row_info *ri)
{
    float *q = w->q + (size_t)r * c->D;
    const char *src = (const char *)c->job->q + avk_q_offset(c->p, b, ri->h, ri->i) * c->q_es;
    if (avk_q_is_fp8(c->p)) attnvk_kv_decode(ATTNVK_KV_FP8, c->D, src, q, 1, c->job->q_scales[ri->h]);
    else unpack_row(c->p->dtype, src, q, c->D);
    for (int d = 0; d < c->D; ++d) q[d] *= c->qscale;
}

/* Rows of item: queries [i0, i0 + nq) x the G heads of g; returns the key range [*kl, *kh) any row sees */
static int setup_rows(const flash_ctx *c, scratch *w, int b, int g, int i0, int nq, int *kl, int *kh)
{
    const attnvk_problem *p = c->p;
    const avk_cpu_job *job = c->job;
    const int R = nq * c->G, R4 = (int)round_up((size_t)R, AVK_SIMD_ROWS);
    const int len = job->seq_lens && avk_problem_has_seq_lens(p) ? avk_seq_len(p, job->seq_lens, b) : p->seq_kv;
    *kl = INT_MAX, *kh = 0;
    for (int r = 0; r < R4; ++r) {
        row_info *ri = reset_row(c, w, r, R);
        if (!ri) continue;
        ri->i = i0 + r / c->G;
        ri->h = g * c->G + r % c->G;
        avk_visible_range(p, ri->i, len, &ri->lo, &ri->hi);
        avk_sparse_row_range(p, ri->h, ri->i, &ri->lo, &ri->hi);
        if (p->block_sparse) ri->layout_row = avk_layout_row(p, job->block_layout, b, ri->h, ri->i);
        if (job->drop_keys > 0) ri->hi = ri->hi - ri->lo > job->drop_keys ? ri->hi - job->drop_keys : ri->lo;
        ri->pos = avk_row_position(p, ri->i, len);
        ri->slope = p->alibi ? job->alibi_slopes[ri->h] : 0.f;
        if (p->mask) {
            const size_t mb = p->mask_batch > 1 ? (size_t)b : 0, mh = p->mask_heads > 1 ? (size_t)ri->h : 0;
            ri->mask_off = ((mb * p->mask_heads + mh) * p->seq_q + ri->i) * (size_t)p->seq_kv;
        }
        load_q(c, w, r, b, ri);
        if (ri->lo < ri->hi) {
            if (ri->lo < *kl) *kl = ri->lo;
            if (ri->hi > *kh) *kh = ri->hi;
        }
    }
    return R4;
}

/* The online softmax of one row over its scores in the tile: s becomes P (zero outside [a, e)) */
static void softmax_row(const flash_ctx *c, row_info *ri, float *restrict s, float *restrict o, int t0, int bc,
                        int width)
{
    const int a = (ri->lo > t0 ? ri->lo : t0) - t0, e = (ri->hi < t0 + bc ? ri->hi : t0 + bc) - t0;
    if (a >= e) {
        memset(s, 0, sizeof(float) * (size_t)width);
        return;
    }
    if (c->mods) score_mods(c, ri, s, a, e, t0);
    const float mx = c->simd->max(s + a, e - a), m = mx > ri->m ? mx : ri->m;
    if (m == -INFINITY) { /* every visible score masked to -inf so far */
        memset(s, 0, sizeof(float) * (size_t)width);
        return;
    }
    const float alpha = ri->m == -INFINITY ? 0.f : exp2f(ri->m - m);
    const float sum = c->simd->exp2_sum(s + a, e - a, m);
    memset(s, 0, sizeof(float) * (size_t)a);
    if (e < width) memset(s + e, 0, sizeof(float) * (size_t)(width - e));
    ri->l = ri->l * alpha + sum;
    ri->m = m;
    if (alpha != 1.f)
        for (int d = 0; d < c->Dv; ++d) o[d] *= alpha;
}

/* The sink, 1 / l, O in the problem's dtype and the row's log-sum-exp */
static void finish_row(const flash_ctx *c, const row_info *ri, int b, float *restrict o)
{
    const attnvk_problem *p = c->p;
    const avk_cpu_job *job = c->job;
    float m = ri->m, l = ri->l, alpha = 1.f;
    if (p->sinks) {
        const float sink = job->sinks[ri->h] * LOG2E, mf = sink > m ? sink : m;
        if (mf != -INFINITY) {
            alpha = m == -INFINITY ? 0.f : exp2f(m - mf);
            l = l * alpha + exp2f(sink - mf);
            m = mf;
        }
    }
    const float inv = l > 0 ? alpha / l : 0.f;
    for (int d = 0; d < c->Dv; ++d) o[d] *= inv;
    void *dst = (char *)job->o + avk_o_offset(p, b, ri->h, ri->i) * c->o_es;
    if (p->dtype == ATTNVK_F32)
        memcpy(dst, o, sizeof(float) * (size_t)c->Dv);
    else
        attnvk_pack(p->dtype, o, dst, (size_t)c->Dv);
    if (job->lse)
        job->lse[((size_t)b * p->heads + ri->h) * p->seq_q + ri->i] =
            l > 0 ? (float)(((double)m + log2((double)l)) * LN2) : -INFINITY;
}

/* Block-sparse: whether any row of the item has a live block among the tile's keys [t0, t0 + bc). */
static int tile_live(const flash_ctx *c, const scratch *w, int rows, int t0, int bc)
{
    const int bk = c->p->block_k, c0 = t0 / bk, c1 = (t0 + bc - 1) / bk;
    for (int r = 0; r < rows; ++r) {
        const row_info *ri = &w->rows[r];
        if (ri->lo >= ri->hi || ri->hi <= t0 || ri->lo >= t0 + bc) continue;
        for (int cb = c0; cb <= c1; ++cb)
            if (ri->layout_row[cb]) return 1;
    }
    return 0;
}

/* The rows' tile loop over keys [kl, kh) (view keys: base + step t) and O += P V in w->o */
static void attend_rows(const flash_ctx *c, scratch *w, int b, int g, int R4, int kl, int kh, int base, int step)
{
    const attnvk_problem *p = c->p;
    const avk_cpu_simd *simd = c->simd;
    const int D = c->D, Dvp = c->Dvp, nc = simd->nc, BC = c->bc;
    const float *vt = w->vt;
    size_t ldv = (size_t)Dvp;
    memset(w->o, 0, sizeof(float) * (size_t)R4 * Dvp);
    for (int t0 = kl; t0 < kh; t0 += BC) {
        const int bc = kh - t0 < BC ? kh - t0 : BC;
        if (p->block_sparse && !tile_live(c, w, R4, t0, bc)) continue; /* K/V of empty blocks are never read */
        load_tile(c, w, b, g, t0, bc, base, step);
        if (c->v_direct) vt = (const float *)c->job->v + avk_v_offset(p, b, g, base + step * t0), ldv = c->ldv * step;
        for (int r0 = 0; r0 < R4; r0 += AVK_SIMD_ROWS) {
            row_info *ri = &w->rows[r0];
            int width = 0; /* keys [0, width) of the tile some row of the group sees */
            for (int r = 0; r < AVK_SIMD_ROWS; ++r) {
                const int a = ri[r].lo > t0 ? ri[r].lo : t0, e = ri[r].hi < t0 + bc ? ri[r].hi : t0 + bc;
                if (a < e && e - t0 > width) width = e - t0;
            }
            if (!width) continue;
            for (int c0 = 0; c0 < width; c0 += nc)
                simd->gemm4(w->q + (size_t)r0 * D, (size_t)D, w->kt + c0, (size_t)c->kt_ld, w->s + c0, BC, D, 0);
            for (int r = 0; r < AVK_SIMD_ROWS; ++r)
                softmax_row(c, &ri[r], w->s + (size_t)r * BC, w->o + (size_t)(r0 + r) * Dvp, t0, bc, width);
            for (int d0 = 0; d0 < Dvp; d0 += nc)
                simd->gemm4(w->s, BC, vt + d0, ldv, w->o + (size_t)r0 * Dvp + d0, (size_t)Dvp, width, 1);
        }
    }
}

static void run_item(const flash_ctx *c, scratch *w, size_t item)
{
    const attnvk_problem *p = c->p;
    const int qb = c->nqb - 1 - (int)(item % (size_t)c->nqb); /* last blocks (most keys) first */
    const int g = (int)(item / (size_t)c->nqb % (size_t)p->kv_heads), b = (int)(item / (size_t)c->nqb / p->kv_heads);
    const int i0 = c->job->q_begin + qb * c->QB, iend = c->job->q_begin + c->job->q_count;
    const int nq = i0 + c->QB <= iend ? c->QB : iend - i0;
    int kl, kh;
    const int R4 = setup_rows(c, w, b, g, i0, nq, &kl, &kh);
    attend_rows(c, w, b, g, R4, kl, kh, 0, 1);
    for (int r = 0; r < nq * c->G; ++r) finish_row(c, &w->rows[r], b, w->o + (size_t)r * c->Dvp);
}

/* ---- dilated views: item = (b, h, segment, block of QB rows of the class o) ---- */

/* the class's rows (and keys) in a segment of length len: positions o, o + r, ... below len */
static int class_rows(avk_dilation d, int len) { return len > d.offset ? (len - d.offset + d.rate - 1) / d.rate : 0; }

/* Row blocks of a head's view items: per segment, ceil(rows of its longest class o / QB) (at least 1:
 * the segment's inactive rows are zeroed by its first block) */
static size_t view_blocks(const flash_ctx *c, avk_dilation d)
{
    const int n = c->p->seq_q, first = class_rows(d, d.segment < n ? d.segment : n);
    return (size_t)(first > 0 ? (first + c->QB - 1) / c->QB : 1);
}

static size_t view_items_per_head(const flash_ctx *c, avk_dilation d)
{
    const int n = c->p->seq_q;
    return (size_t)((n + d.segment - 1) / d.segment) * view_blocks(c, d);
}

/* O's row i of (b, h) as zeros, and its LSE -inf: an inactive dilated row */
static void zero_row(const flash_ctx *c, int b, int h, int i)
{
    const attnvk_problem *p = c->p;
    memset((char *)c->job->o + avk_o_offset(p, b, h, i) * c->o_es, 0, c->o_es * (size_t)c->Dv);
    if (c->job->lse) c->job->lse[((size_t)b * p->heads + h) * p->seq_q + i] = -INFINITY;
}

static void view_item(const flash_ctx *c, scratch *w, size_t item)
{
    const attnvk_problem *p = c->p;
    const int n = p->seq_q;
    int h = 0;
    size_t per = view_items_per_head(c, avk_dilation_of(p, 0));
    int b = (int)(item / c->items_per_b);
    item %= c->items_per_b;
    while (item >= per) item -= per, per = view_items_per_head(c, avk_dilation_of(p, ++h));
    const avk_dilation d = avk_dilation_of(p, h);
    const size_t blocks = view_blocks(c, d);
    const int seg0 = (int)(item / blocks) * d.segment, blk = (int)(item % blocks);
    const int len = n - seg0 < d.segment ? n - seg0 : d.segment, rows = class_rows(d, len);
    const int g = h / (p->heads / p->kv_heads), base = seg0 + d.offset, step = d.rate;
    if (blk == 0)
        for (int i = seg0; i < seg0 + len; ++i)
            if ((i - seg0) % d.rate != d.offset) zero_row(c, b, h, i);
    const int t_begin = blk * c->QB, nq = rows - t_begin < c->QB ? rows - t_begin : c->QB;
    if (nq <= 0) return;
    const int R4 = (int)round_up((size_t)nq, AVK_SIMD_ROWS);
    int kh = 0;
    for (int r = 0; r < R4; ++r) {
        row_info *ri = reset_row(c, w, r, nq);
        if (!ri) continue;
        const int t = t_begin + r;
        ri->h = h, ri->i = base + step * t; /* the problem's row: where O and LSE go */
        ri->lo = 0, ri->hi = p->causal ? t + 1 : rows; /* view keys: the class's, causal on view indices */
        load_q(c, w, r, b, ri);
        if (ri->hi > kh) kh = ri->hi;
    }
    attend_rows(c, w, b, g, R4, 0, kh, base, step);
    for (int r = 0; r < nq; ++r) finish_row(c, &w->rows[r], b, w->o + (size_t)r * c->Dvp);
}

static float *alloc_floats(size_t n)
{
    return aligned_alloc(64, round_up(n * sizeof(float) + 64, 64)); /* + 64: vector tails never leave it */
}

static void worker(void *ctx, size_t begin, size_t end)
{
    (void)begin, (void)end;
    flash_ctx *c = ctx;
    const size_t BC = (size_t)c->bc, KT_LD = (size_t)c->kt_ld, rmax = (size_t)c->rmax, D = (size_t)c->D, Dvp = (size_t)c->Dvp;
    scratch w = {.q = alloc_floats(rmax * D), .kt = alloc_floats(D * KT_LD), .vt = alloc_floats(BC * Dvp),
                 .s = alloc_floats(AVK_SIMD_ROWS * BC), .o = alloc_floats(rmax * Dvp),
                 .tmp = alloc_floats(D > Dvp ? D : Dvp), .rows = malloc(sizeof(row_info) * rmax)};
    if (!w.q || !w.kt || !w.vt || !w.s || !w.o || !w.tmp || !w.rows) {
        c->out_of_memory = 1;
    } else {
        /* zero: the padding columns of Vt (past Dv) and of Kt stay finite */
        memset(w.kt, 0, sizeof(float) * D * KT_LD);
        memset(w.vt, 0, sizeof(float) * BC * Dvp);
        for (size_t item; (item = c->next++) < c->items;) c->view ? view_item(c, &w, item) : run_item(c, &w, item);
    }
    free(w.q);
    free(w.kt);
    free(w.vt);
    free(w.s);
    free(w.o);
    free(w.tmp);
    free(w.rows);
}

attnvk_status avk_cpu_flash_run(const avk_cpu_job *job)
{
    const attnvk_problem *p = job->p;
    if (job->q_count <= 0 || p->batch <= 0) return ATTNVK_OK;
    flash_ctx c = {.job = job, .p = p, .simd = avk_cpu_simd_get()};
    c.D = p->head_dim;
    c.Dv = avk_head_dim_v(p);
    c.Dvp = (int)round_up((size_t)c.Dv, (size_t)c.simd->nc);
    c.G = p->heads / p->kv_heads;
    const int rows = job->rows > 0 ? job->rows : AVK_CPU_ROWS;
    c.bc = job->tile_bc > 0 ? job->tile_bc : AVK_CPU_TILE_BC;
    c.kt_ld = c.bc + KT_PAD;
    c.QB = c.G >= rows ? 1 : rows / c.G;
    if (c.QB > job->q_count) c.QB = job->q_count;
    c.nqb = (job->q_count + c.QB - 1) / c.QB;
    c.rmax = (int)round_up((size_t)c.QB * c.G, AVK_SIMD_ROWS);
    c.items = (size_t)p->batch * p->kv_heads * c.nqb;
    c.q_es = avk_q_element_bytes(p); /* 1 for fp8 queries; O keeps the dtype */
    c.o_es = attnvk_dtype_size(p->dtype);
    c.k_rb = attnvk_kv_row_bytes(p);
    attnvk_problem vview = *p;
    vview.head_dim = c.Dv;
    c.v_rb = attnvk_kv_row_bytes(&vview);
    /* dilation as strided views where the job runs every row (else, and with the test-only dropped keys,
     * the per-element pattern) */
    c.view = p->dilated_groups && job->q_begin == 0 && job->q_count == p->seq_q && job->drop_keys <= 0;
    if (c.view) {
        c.G = 1, c.QB = rows, c.rmax = (int)round_up((size_t)rows, AVK_SIMD_ROWS), c.items_per_b = 0;
        for (int h = 0; h < p->heads; ++h) c.items_per_b += view_items_per_head(&c, avk_dilation_of(p, h));
        c.items = (size_t)p->batch * c.items_per_b;
    }
    c.sparse = p->block_sparse || (p->dilated_groups && !c.view);
    c.mods = p->softcap > 0 || p->alibi || p->mask || c.sparse;
    c.k_f32 = p->kv_format == ATTNVK_KV_DTYPE && p->dtype == ATTNVK_F32;
    c.v_direct = c.k_f32 && p->page_size == 0 && c.Dv % c.simd->nc == 0;
    c.ldv = p->layout == ATTNVK_LAYOUT_BHSD ? (size_t)c.Dv : (size_t)p->kv_heads * c.Dv;
    c.qscale = attnvk_problem_scale(p) * (c.mods ? 1.0f : LOG2E);
    size_t threads = (size_t)avk_cpu_threads();
    if (threads > c.items) threads = c.items;
    avk_parallel_for(threads, 1, 1, worker, &c);
    if (c.out_of_memory) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the cpu kernel's tiles");
    return ATTNVK_OK;
}
