#include "cl_checks.h"
#include "core/cache_cases.h"
#include "core/kv_build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *shape_of(const attnvk_problem *p, char *buf, size_t n)
{
    snprintf(buf, n, "B%d H%d/%d Nq%d Nk%d D%d %s %s%s", p->batch, p->heads, p->kv_heads, p->seq_q, p->seq_kv,
             p->head_dim, attnvk_dtype_name(p->dtype), p->layout == ATTNVK_LAYOUT_BHSD ? "bhsd" : "bshd",
             p->causal ? " causal" : "");
    return buf;
}

int avk_cl_check_lse(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                     const char *label, uint64_t seed)
{
    float *q, *k, *v;
    avk_test_inputs(p, seed, &q, &k, &v);
    size_t nq = attnvk_q_elements(p), nrows = (size_t)p->batch * p->heads * p->seq_q;
    float *o = malloc(nq * sizeof(float)), *lse = malloc(nrows * sizeof(float));
    float *oref = malloc(nq * sizeof(float)), *lref = malloc(nrows * sizeof(float));
    attnvk_kernel_info info;
    double ms;
    char shape[160];
    attnvk_status s = attnvk_attention_host(dev, p, opts, q, k, v, o, lse, &info, &ms);
    int ok = 0;
    if (s != ATTNVK_OK) {
        printf("FAIL %-28s %s: %s: %s\n", label, shape_of(p, shape, sizeof shape), attnvk_status_name(s),
               attnvk_last_error());
    } else {
        attnvk_reference(p, q, k, v, oref, lref);
        attnvk_check c = attnvk_check_output(p, q, k, v, o, NULL, 0);
        double tol = p->dtype == ATTNVK_F32 ? 1e-5 : 1e-4, worst = 0;
        size_t bad = 0, empty = 0;
        for (size_t r = 0; r < nrows; ++r) {
            if (isinf(lref[r]) && lref[r] < 0) {
                empty++;
                if (!(isinf(lse[r]) && lse[r] < 0)) bad++;
                continue;
            }
            double err = fabs((double)lse[r] - lref[r]) / fmax(1.0, fabs(lref[r]));
            if (!(err <= tol)) bad++; /* NaN counts as bad */
            if (err > worst || isnan(err)) worst = err;
        }
        ok = c.passed && bad == 0;
        printf("%s %-28s %s: %s split %d O rel_l2 %.2e, LSE worst %.2e (%zu rows, %zu empty, %zu bad)\n",
               ok ? "ok  " : "FAIL", label, shape_of(p, shape, sizeof shape), info.variant, info.split_kv, c.rel_l2,
               worst, nrows, empty, bad);
    }
    fflush(stdout);
    free(q), free(k), free(v), free(o), free(lse), free(oref), free(lref);
    return ok;
}

static attnvk_status upload(attnvk_device *dev, attnvk_dtype dt, const float *src, size_t n, attnvk_buffer **out)
{
    size_t bytes = n * attnvk_dtype_size(dt);
    void *packed = malloc(bytes);
    attnvk_pack(dt, src, packed, n);
    attnvk_status s = attnvk_buffer_create(dev, bytes, out);
    if (s == ATTNVK_OK) s = attnvk_buffer_write(*out, 0, packed, bytes);
    free(packed);
    return s;
}

int avk_cl_check_row_range(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                           int begin, int count, const char *label, uint64_t seed)
{
    float *q, *k, *v;
    avk_test_inputs(p, seed, &q, &k, &v);
    /* O's rows hold Dv values (Q's and K's Dk) */
    size_t nq = attnvk_q_elements(p), no = attnvk_o_elements(p), es = attnvk_dtype_size(p->dtype);
    float *o = malloc(no * sizeof(float));
    float *nan_f = malloc(no * sizeof(float));
    void *packed = malloc(no * es);
    for (size_t i = 0; i < no; ++i) nan_f[i] = NAN;
    attnvk_buffer *bq = NULL, *bk = NULL, *bv = NULL, *bo = NULL;
    attnvk_kernel *kern = NULL;
    attnvk_kernel_info info;
    double ms;
    char shape[160];
    attnvk_status s = attnvk_kernel_prepare(dev, p, opts, &kern, &info);
    if (s == ATTNVK_OK) s = upload(dev, p->dtype, q, nq, &bq);
    if (s == ATTNVK_OK) s = upload(dev, p->dtype, k, attnvk_kv_elements(p), &bk);
    if (s == ATTNVK_OK) s = upload(dev, p->dtype, v, attnvk_v_elements(p), &bv);
    if (s == ATTNVK_OK) s = upload(dev, p->dtype, nan_f, no, &bo);
    if (s == ATTNVK_OK) s = attnvk_kernel_run(kern, bq, bk, bv, bo, NULL, begin, count, &ms);
    if (s == ATTNVK_OK) s = attnvk_buffer_read(bo, 0, packed, no * es);
    int ok = 0;
    if (s != ATTNVK_OK) {
        printf("FAIL %-28s %s: %s: %s\n", label, shape_of(p, shape, sizeof shape), attnvk_status_name(s),
               attnvk_last_error());
    } else {
        attnvk_unpack(p->dtype, packed, o, no);
        size_t nbh = (size_t)p->batch * p->heads, n = nbh * (size_t)count, r = 0;
        size_t *rows = malloc(n * sizeof *rows);
        for (size_t bh = 0; bh < nbh; ++bh)
            for (int i = begin; i < begin + count; ++i) rows[r++] = bh * (size_t)p->seq_q + (size_t)i;
        attnvk_check in_range = attnvk_check_output(p, q, k, v, o, rows, n);
        /* untouched rows: every element outside the range is still NaN */
        size_t written_outside = 0, d = (size_t)attnvk_problem_head_dim_v(p);
        for (int b = 0; b < p->batch; ++b)
            for (int h = 0; h < p->heads; ++h)
                for (int i = 0; i < p->seq_q; ++i) {
                    if (i >= begin && i < begin + count) continue;
                    size_t off = p->layout == ATTNVK_LAYOUT_BHSD ? (((size_t)b * p->heads + h) * p->seq_q + i) * d
                                                                : (((size_t)b * p->seq_q + i) * p->heads + h) * d;
                    for (size_t j = 0; j < d; ++j) written_outside += !isnan(o[off + j]);
                }
        attnvk_check whole = attnvk_check_output(p, q, k, v, o, NULL, 0);
        ok = in_range.passed && written_outside == 0 && (count == p->seq_q || (!whole.passed && whole.nonfinite > 0));
        printf("%s %-28s %s: %s rows %d+%d rel_l2 %.2e, %zu written outside, whole output %s (%zu NaN)\n",
               ok ? "ok  " : "FAIL", label, shape_of(p, shape, sizeof shape), info.variant, begin, count,
               in_range.rel_l2, written_outside, whole.passed ? "passes" : "fails", whole.nonfinite);
        free(rows);
    }
    fflush(stdout);
    attnvk_kernel_destroy(kern);
    attnvk_buffer_destroy(bq), attnvk_buffer_destroy(bk), attnvk_buffer_destroy(bv), attnvk_buffer_destroy(bo);
    free(q), free(k), free(v), free(o), free(nan_f), free(packed);
    return ok;
}

int avk_cl_check_skip_tile_fails(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                 const char *label, uint64_t seed)
{
    float *q, *k, *v;
    avk_test_inputs(p, seed, &q, &k, &v);
    float *o = malloc(attnvk_q_elements(p) * sizeof(float));
    attnvk_kernel_options wrong = *opts;
    wrong.test_flags |= ATTNVK_TEST_SKIP_LAST_KV_TILE;
    attnvk_kernel_info info;
    double ms;
    char shape[160];
    attnvk_status s = attnvk_attention_host(dev, p, &wrong, q, k, v, o, NULL, &info, &ms);
    int ok = 0;
    if (s != ATTNVK_OK) {
        printf("FAIL %-28s %s: %s: %s\n", label, shape_of(p, shape, sizeof shape), attnvk_status_name(s),
               attnvk_last_error());
    } else {
        attnvk_check c = attnvk_check_output(p, q, k, v, o, NULL, 0);
        ok = !c.passed;
        printf("%s %-28s %s: %s skipping the last K/V tile gives rel_l2 %.2e: check %s (as it must)\n",
               ok ? "ok  " : "FAIL", label, shape_of(p, shape, sizeof shape), info.variant, c.rel_l2,
               c.passed ? "passes" : "fails");
    }
    fflush(stdout);
    free(q), free(k), free(v), free(o);
    return ok;
}

int avk_cl_expect_status(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                         attnvk_status want, const char *fragment, const char *label)
{
    attnvk_kernel *kern = NULL;
    attnvk_status s = attnvk_kernel_prepare(dev, p, opts, &kern, NULL);
    const char *msg = s == ATTNVK_OK ? "" : attnvk_last_error();
    int ok = s == want && (!fragment || strstr(msg, fragment));
    printf("%s %-28s -> %s: %s\n", ok ? "ok  " : "FAIL", label, attnvk_status_name(s), msg);
    fflush(stdout);
    attnvk_kernel_destroy(kern);
    return ok;
}

int avk_cl_check_cache_scores(attnvk_device *dev, const attnvk_problem *p_in, const int32_t *lens_in, int nlens,
                              const attnvk_kernel_options *opts, const char *label, uint64_t seed)
{
    attnvk_problem p = *p_in;
    int32_t lens[64];
    for (int b = 0; b < p.batch && b < 64; ++b) lens[b] = lens_in[b % nlens];
    if (p.page_size > 0) { /* a garbage column past every sequence, spare pages nobody owns */
        p.max_pages = (p.seq_kv + p.page_size - 1) / p.page_size + 1;
        p.num_pages = 0;
        p.num_pages = avk_kv_pages_needed(&p, lens) + 3;
    }
    const size_t nq = attnvk_q_elements(&p), nkv = attnvk_kv_elements(&p), es = attnvk_dtype_size(p.dtype);
    const size_t nmask = p.mask ? (size_t)p.mask_batch * p.mask_heads * p.seq_q * (size_t)p.seq_kv : 0;
    float *q = NULL, *k = NULL, *v = NULL;
    const int have = p.batch <= 64 && avk_random_inputs(&p, seed, &q, &k, &v);
    float *kd = malloc(nkv * sizeof(float) + 1), *vd = malloc(nkv * sizeof(float) + 1), *o = malloc(nq * sizeof(float));
    float *mask = malloc(nmask * sizeof(float) + 1), *sinks = malloc(sizeof(float) * p.heads);
    float *slopes = malloc(sizeof(float) * p.heads);
    void *qraw = malloc(nq * es), *oraw = malloc(nq * es), *mraw = malloc(nmask * sizeof(float) + 1);
    avk_kv_host cache;
    attnvk_buffer *bq = NULL, *bk = NULL, *bv = NULL, *bo = NULL, *bt = NULL, *bl = NULL, *bs = NULL;
    attnvk_buffer *bm = NULL, *bsk = NULL, *bal = NULL;
    attnvk_kernel *kern = NULL;
    attnvk_kernel_info info;
    memset(&info, 0, sizeof info);
    attnvk_status s = have && kd && vd && o && mask && sinks && slopes && qraw && oraw && mraw
                          ? attnvk_problem_validate(&p)
                          : ATTNVK_ERROR_OUT_OF_MEMORY;
    const int built = s == ATTNVK_OK && (s = avk_kv_build(&p, k, v, lens, seed ^ 0x5eed, &cache)) == ATTNVK_OK;
    if (s == ATTNVK_OK) s = avk_kv_host_decoded(&p, &cache, kd, vd);
    if (s == ATTNVK_OK) s = attnvk_kernel_prepare(dev, &p, opts, &kern, &info);
    if (s == ATTNVK_OK) {
        attnvk_fill_random(mask, nmask, seed ^ 0x6d61736bu);
        for (size_t i = 0; i < nmask; ++i)
            if ((i * 2654435761u + seed) % 10 == 0) mask[i] = -INFINITY;
        attnvk_round_to_dtype(p.mask_dtype, mask, nmask);
        attnvk_fill_random(sinks, (size_t)p.heads, seed ^ 0x73696e6bu);
        attnvk_alibi_slopes(p.heads, slopes);
        attnvk_pack(p.dtype, q, qraw, nq);
        attnvk_pack(p.mask_dtype, mask, mraw, nmask);
        memset(oraw, 0xff, nq * es); /* NaN: rows left unwritten cannot pass */
        const size_t mbytes = nmask * attnvk_dtype_size(p.mask_dtype);
        struct { const void *src; size_t bytes; attnvk_buffer **buf; } up[] = {
            {qraw, nq * es, &bq},
            {cache.k, cache.bytes, &bk},
            {cache.v, cache.bytes, &bv},
            {oraw, nq * es, &bo},
            {cache.block_table, cache.block_table ? sizeof(int32_t) * (size_t)p.batch * p.max_pages : 0, &bt},
            {cache.seq_lens, cache.seq_lens ? sizeof(int32_t) * (size_t)p.batch : 0, &bl},
            {cache.kv_scales, cache.kv_scales ? sizeof(float) * 2 * p.kv_heads : 0, &bs},
            {mraw, p.mask ? mbytes : 0, &bm},
            {sinks, p.sinks ? sizeof(float) * p.heads : 0, &bsk},
            {slopes, p.alibi ? sizeof(float) * p.heads : 0, &bal},
        };
        for (size_t i = 0; i < sizeof up / sizeof *up && s == ATTNVK_OK; ++i) {
            if (!up[i].bytes) continue;
            s = attnvk_buffer_create(dev, up[i].bytes, up[i].buf);
            if (s == ATTNVK_OK) s = attnvk_buffer_write(*up[i].buf, 0, up[i].src, up[i].bytes);
        }
        attnvk_tensors t = {.q = bq, .k = bk, .v = bv, .o = bo, .block_table = bt, .seq_lens = bl, .kv_scales = bs,
                            .mask = bm, .sinks = bsk, .alibi_slopes = bal};
        double ms;
        if (s == ATTNVK_OK) s = attnvk_kernel_run_tensors(kern, &t, 0, 0, &ms);
        if (s == ATTNVK_OK) s = attnvk_buffer_read(bo, 0, oraw, nq * es);
    }
    int ok = 0;
    if (s != ATTNVK_OK) {
        printf("FAIL %-28s %s\n", label, attnvk_last_error());
    } else {
        attnvk_unpack(p.dtype, oraw, o, nq);
        const attnvk_host_inputs in = {.q = q, .k = kd, .v = vd, .kv_lens = cache.seq_lens, .mask = p.mask ? mask : NULL,
                                       .sinks = p.sinks ? sinks : NULL, .alibi_slopes = p.alibi ? slopes : NULL};
        const attnvk_check c = attnvk_check_output_inputs(&p, &in, o, NULL, 0);
        ok = c.passed;
        printf("%s %-28s B%d H%d/%d Nq%d Nk%d D%d kv=%s page=%d: %s %dx%d split %d rel_l2 %.2e nonfinite %zu\n",
               ok ? "ok  " : "FAIL", label, p.batch, p.heads, p.kv_heads, p.seq_q, p.seq_kv, p.head_dim,
               attnvk_kv_format_name(p.kv_format), p.page_size, info.variant, info.tile_br, info.tile_bc, info.split_kv,
               c.rel_l2, c.nonfinite);
    }
    fflush(stdout);
    attnvk_kernel_destroy(kern);
    attnvk_buffer *bufs[] = {bq, bk, bv, bo, bt, bl, bs, bm, bsk, bal};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; ++i) attnvk_buffer_destroy(bufs[i]);
    if (built) avk_kv_host_free(&cache);
    free(q), free(k), free(v), free(kd), free(vd), free(o), free(mask), free(sinks), free(slopes);
    free(qraw), free(oraw), free(mraw);
    return ok;
}
