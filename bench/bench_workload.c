#include "bench_workload.h"

#include "core/error.h"
#include "core/numeric.h"
#include "core/parallel.h"
#include "core/q_format.h"
#include "core/reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Full checks up to this many rows and reference FLOPs (a few seconds on 2 cores). */
enum { FULL_CHECK_MAX_ROWS = 8192 };
static const double full_check_max_flops = 2e9;

uint64_t bench_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t bench_case_seed(uint64_t seed, const char *case_name)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the name */
    for (const unsigned char *c = (const unsigned char *)case_name; *c; ++c) h = (h ^ *c) * 0x100000001b3ull;
    return bench_mix64(seed ^ bench_mix64(h));
}

int bench_workload_wants_full(const attnvk_problem *p)
{
    double rows = (double)p->batch * p->heads * p->seq_q;
    return rows <= FULL_CHECK_MAX_ROWS && attnvk_problem_flops(p) <= full_check_max_flops;
}

static int compare_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static size_t flat_row(const attnvk_problem *p, size_t bh, long i)
{
    if (i < 0) i = 0;
    if (i >= p->seq_q) i = p->seq_q - 1;
    return bh * (size_t)p->seq_q + (size_t)i;
}

/* Rows most likely to show a bug, then seeded random ones; sorted, unique. */
static size_t sample_rows(const attnvk_problem *p, uint64_t seed, size_t *rows)
{
    size_t bh_count = (size_t)p->batch * p->heads, total = bh_count * (size_t)p->seq_q, n = 0;
    size_t mid = bh_count / 2, last_bh = bh_count - 1;
    long nq = p->seq_q, nk = p->seq_kv;
    rows[n++] = 0;
    rows[n++] = total - 1;
    rows[n++] = flat_row(p, 0, nq - 1);    /* last row of the first head */
    rows[n++] = flat_row(p, last_bh, 0);   /* first row of the last head */
    if (p->causal) {
        long edge = nq > nk ? nq - nk : 0; /* first row that sees a key (and the empty one before it) */
        rows[n++] = flat_row(p, mid, edge - 1);
        rows[n++] = flat_row(p, mid, edge);
        rows[n++] = flat_row(p, mid, edge + 1);
    }
    static const long tile_edges[] = {63, 64, 127, 128}; /* common tile heights */
    for (size_t t = 0; t < sizeof tile_edges / sizeof *tile_edges; ++t)
        if (tile_edges[t] < nq) rows[n++] = flat_row(p, mid, tile_edges[t]);
    uint64_t s = seed;
    while (n < BENCH_SAMPLED_ROWS) {
        s = bench_mix64(s);
        rows[n++] = (size_t)(s % total);
    }
    qsort(rows, n, sizeof *rows, compare_size);
    size_t unique = 0;
    for (size_t i = 0; i < n; ++i)
        if (unique == 0 || rows[i] != rows[unique - 1]) rows[unique++] = rows[i];
    return unique;
}

static double host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (double)pages * (double)page : 0;
}

static size_t mask_elements(const attnvk_problem *p)
{
    return p->mask ? (size_t)p->mask_batch * p->mask_heads * p->seq_q * (size_t)p->seq_kv : 0;
}

/* f32 Q, K, V, a mask, and the float64 reference of every row when checked in full (fp8 queries: their bytes too). */
static double host_bytes(const attnvk_problem *p, int full)
{
    double nq = (double)attnvk_q_elements(p), nkv = (double)attnvk_kv_elements(p) + (double)attnvk_v_elements(p);
    return 4.0 * (nq + nkv + (double)mask_elements(p)) + (double)attnvk_block_layout_bytes(p) +
           (full ? 8.0 * (double)attnvk_o_elements(p) : 0) + (avk_q_is_fp8(p) ? nq : 0);
}

/* The reference of the checked rows, with the problem's score inputs. */
static void reference_rows(const bench_workload *w, const float *k, const float *v, double *out)
{
    avk_reference_job job = {.p = &w->p, .q = w->q, .k = k, .v = v, .mask = w->mask, .sinks = w->sinks,
                             .alibi_slopes = w->slopes, .block_layout = w->layout, .rows = w->rows,
                             .nrows = w->nrows, .out_f64 = out};
    avk_reference_run(&job);
}

typedef struct mask_job {
    float *mask;
    uint64_t seed;
} mask_job;

/* -inf at 10% of the entries, each from its own counter (any slicing gives the same mask) */
static void mask_slice(void *ctx, size_t begin, size_t end)
{
    const mask_job *j = ctx;
    for (size_t i = begin; i < end; ++i)
        if (bench_mix64(j->seed + (uint64_t)i * 0xd1b54a32d192ed03ull) % 10 == 0) j->mask[i] = -INFINITY;
}

/* Seeded score inputs: a mask with 10% -inf (the rest normal, as its dtype
 * holds them), normal sinks, ggml's ALiBi slopes. */
static attnvk_status score_inputs(bench_workload *w, uint64_t seed)
{
    const attnvk_problem *p = &w->p;
    w->nmask = mask_elements(p);
    if (p->mask) w->mask = malloc(sizeof(float) * w->nmask);
    if (p->sinks) w->sinks = malloc(sizeof(float) * p->heads);
    if (p->alibi) w->slopes = malloc(sizeof(float) * p->heads);
    if ((p->mask && !w->mask) || (p->sinks && !w->sinks) || (p->alibi && !w->slopes))
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the score inputs");
    if (w->mask) {
        avk_fill_random_dtype(p->mask_dtype, w->mask, NULL, w->nmask, seed * 3 + 4);
        mask_job j = {w->mask, seed};
        avk_parallel_for(w->nmask, (size_t)1 << 16, 1, mask_slice, &j);
    }
    if (w->sinks) attnvk_fill_random(w->sinks, (size_t)p->heads, seed * 3 + 5);
    if (w->slopes) attnvk_alibi_slopes(p->heads, w->slopes);
    return ATTNVK_OK;
}

/* A block-sparse case's layout, from its pattern and seed, and the FLOPs of its visible pairs. */
static attnvk_status sparse_inputs(bench_workload *w, const bench_block_pattern *pattern, uint64_t seed)
{
    const attnvk_problem *p = &w->p;
    w->flops = attnvk_problem_flops(p); /* exact for dilated attention too */
    if (!p->block_sparse) return ATTNVK_OK;
    if (!pattern || pattern->kind == BENCH_LAYOUT_NONE || p->layout_batch != 1 || p->layout_heads != 1)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "a block-sparse case needs the pattern of its [1,1,rows,cols] layout (--block-layout)");
    w->layout = malloc(attnvk_block_layout_bytes(p));
    if (!w->layout) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the block layout");
    sparse_fill_layout(p, pattern, seed * 3 + 6, w->layout);
    const attnvk_host_inputs in = {.block_layout = w->layout};
    w->flops = attnvk_flops_inputs(p, &in);
    return ATTNVK_OK;
}

int bench_workload_fits_host(const attnvk_problem *p, int full, char *why, size_t n)
{
    double need = host_bytes(p, full), have = host_memory_bytes();
    if (!(have > 0 && need > 0.8 * have)) return 1;
    snprintf(why, n, "the inputs need %.1f GiB of host memory, the host has %.1f GiB", need / 1073741824.0,
             have / 1073741824.0);
    return 0;
}

/* fp8 queries: Q in e4m3 with one scale (stored per query head: attnvk's
 * form) from its largest magnitude, as the cache's K and V have, so cuDNN's
 * per-tensor FP8 SDPA reads the same bytes; q becomes what the kernel decodes
 * (the normal inputs are gone). */
static attnvk_status quantize_q(bench_workload *w)
{
    const attnvk_problem *p = &w->p;
    w->q_fp8 = malloc(avk_q_bytes(p));
    w->q_scales = malloc(sizeof(float) * (size_t)p->heads);
    if (!w->q_fp8 || !w->q_scales) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for fp8 queries");
    avk_q_fp8_scales(p, w->q, w->q_scales);
    avk_fp8_one_scale(w->q_scales, p->heads);
    avk_q_encode(p, w->q, w->q_scales, w->q_fp8);
    avk_q_decode(p, w->q_fp8, w->q_scales, w->q);
    return ATTNVK_OK;
}

/* The cache the kernel reads (quantized, paged with shuffled pages); K and V
 * (and fp8 queries' Q) become its decoded values after the reference on the
 * inputs is kept. */
static attnvk_status build_cache(bench_workload *w, uint64_t seed)
{
    const attnvk_problem *p = &w->p;
    attnvk_status s = avk_kv_build_scaled(p, w->k, w->v, NULL, seed ^ 0x9a9e5, 1, &w->cache);
    if (s != ATTNVK_OK) return s;
    w->has_cache = 1;
    if (p->kv_format != ATTNVK_KV_DTYPE) {
        w->ref_inputs = malloc(sizeof(double) * w->nrows * (size_t)attnvk_problem_head_dim_v(p));
        if (!w->ref_inputs) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the reference rows");
        reference_rows(w, w->k, w->v, w->ref_inputs);
    }
    if (avk_q_is_fp8(p) && (s = quantize_q(w)) != ATTNVK_OK) return s;
    return avk_kv_host_decoded(p, &w->cache, w->k, w->v);
}

/* The packed copies the uploads use, when the host has room for them beside
 * the f32 values (else each upload packs its own pieces). */
static void alloc_packed(bench_workload *w, double need)
{
    const attnvk_problem *p = &w->p;
    if (p->dtype == ATTNVK_F32) return;
    const int cache = p->kv_format != ATTNVK_KV_DTYPE || p->page_size > 0; /* K and V upload from the cache */
    size_t es = attnvk_dtype_size(p->dtype), nq = avk_q_is_fp8(p) ? 0 : attnvk_q_elements(p); /* fp8: q_fp8 */
    size_t nk = cache ? 0 : attnvk_kv_elements(p), nv = cache ? 0 : attnvk_v_elements(p);
    double have = host_memory_bytes(), extra = (double)es * ((double)nq + (double)nk + (double)nv);
    if (have > 0 && need + extra > 0.8 * have) return;
    if (nq) w->q_packed = malloc(nq * es);
    if (nk) w->k_packed = malloc(nk * es);
    if (nv) w->v_packed = malloc(nv * es);
    if ((nq && !w->q_packed) || (nk && !w->k_packed) || (nv && !w->v_packed)) {
        free(w->q_packed);
        free(w->k_packed);
        free(w->v_packed);
        w->q_packed = w->k_packed = w->v_packed = NULL;
    }
}

attnvk_status bench_workload_create(const attnvk_problem *p, uint64_t seed, int full, bench_workload *w)
{
    return bench_workload_create_pattern(p, NULL, seed, full, w);
}

attnvk_status bench_workload_create_pattern(const attnvk_problem *p, const bench_block_pattern *pattern, uint64_t seed,
                                            int full, bench_workload *w)
{
    memset(w, 0, sizeof *w);
    w->p = *p;
    size_t nq = attnvk_q_elements(p), nkv = attnvk_kv_elements(p), nv = attnvk_v_elements(p);
    size_t total_rows = (size_t)p->batch * p->heads * p->seq_q;
    double need = host_bytes(p, full);
    char why[160];
    if (!bench_workload_fits_host(p, full, why, sizeof why)) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "%s", why);
    w->full = full;
    w->nrows = full ? total_rows : BENCH_SAMPLED_ROWS;
    w->q = malloc(nq * sizeof(float));
    w->k = malloc(nkv * sizeof(float));
    w->v = malloc(nv * sizeof(float));
    w->rows = malloc(w->nrows * sizeof(size_t));
    if (!w->q || !w->k || !w->v || !w->rows) {
        bench_workload_destroy(w);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the inputs (%.1f GiB)",
                        need / 1073741824.0);
    }
    alloc_packed(w, need);
    avk_fill_random_dtype(p->dtype, w->q, w->q_packed, nq, seed * 3 + 1);
    avk_fill_random_dtype(p->dtype, w->k, w->k_packed, nkv, seed * 3 + 2);
    avk_fill_random_dtype(p->dtype, w->v, w->v_packed, nv, seed * 3 + 3);
    if (full)
        for (size_t r = 0; r < total_rows; ++r) w->rows[r] = r;
    else
        w->nrows = sample_rows(p, seed, w->rows);
    w->ref = malloc(sizeof(double) * w->nrows * (size_t)attnvk_problem_head_dim_v(p));
    if (!w->ref || score_inputs(w, seed) != ATTNVK_OK) {
        bench_workload_destroy(w);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the reference rows");
    }
    attnvk_status sparse = sparse_inputs(w, pattern, seed);
    if (sparse != ATTNVK_OK) {
        bench_workload_destroy(w);
        return sparse;
    }
    if (p->kv_format != ATTNVK_KV_DTYPE || p->page_size > 0) {
        attnvk_status s = build_cache(w, seed);
        if (s != ATTNVK_OK) {
            bench_workload_destroy(w);
            return s;
        }
    }
    reference_rows(w, w->k, w->v, w->ref);
    return ATTNVK_OK;
}

void bench_workload_destroy(bench_workload *w)
{
    free(w->q);
    free(w->k);
    free(w->v);
    free(w->q_packed);
    free(w->k_packed);
    free(w->v_packed);
    free(w->rows);
    free(w->ref);
    free(w->ref_inputs);
    free(w->q_fp8);
    free(w->q_scales);
    free(w->mask);
    free(w->sinks);
    free(w->slopes);
    free(w->layout);
    if (w->has_cache) avk_kv_host_free(&w->cache);
    memset(w, 0, sizeof *w);
}

/* Same measure as attnvk_check_output, against the cached reference rows. */
attnvk_check bench_workload_compare(const bench_workload *w, const float *o_rows)
{
    return bench_workload_compare_to(w, w->ref, o_rows);
}

attnvk_check bench_workload_compare_to(const bench_workload *w, const double *ref, const float *o_rows)
{
    attnvk_check c = {.tolerance = avk_forward_tolerance(&w->p)}; /* the FP8 forward's 5e-2 (core/q_format.h) */
    size_t D = (size_t)attnvk_problem_head_dim_v(&w->p); /* O's rows */
    double diff2 = 0, ref2 = 0;
    for (size_t s = 0; s < w->nrows * D; ++s) {
        double r = ref[s], x = o_rows[s];
        if (!isfinite(x)) {
            ++c.nonfinite;
            continue;
        }
        double e = fabs(x - r);
        diff2 += e * e;
        ref2 += r * r;
        if (e > c.max_abs) c.max_abs = e;
    }
    c.rows_checked = w->nrows;
    c.rel_l2 = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2); /* all-masked rows are exact zeros */
    c.passed = c.nonfinite == 0 && c.rel_l2 <= c.tolerance;
    return c;
}
