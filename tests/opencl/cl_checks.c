#include "cl_checks.h"

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
    size_t nq = attnvk_q_elements(p), es = attnvk_dtype_size(p->dtype);
    float *o = malloc(nq * sizeof(float));
    float *nan_f = malloc(nq * sizeof(float));
    void *packed = malloc(nq * es);
    for (size_t i = 0; i < nq; ++i) nan_f[i] = NAN;
    attnvk_buffer *bq = NULL, *bk = NULL, *bv = NULL, *bo = NULL;
    attnvk_kernel *kern = NULL;
    attnvk_kernel_info info;
    double ms;
    char shape[160];
    attnvk_status s = attnvk_kernel_prepare(dev, p, opts, &kern, &info);
    if (s == ATTNVK_OK) s = upload(dev, p->dtype, q, nq, &bq);
    if (s == ATTNVK_OK) s = upload(dev, p->dtype, k, attnvk_kv_elements(p), &bk);
    if (s == ATTNVK_OK) s = upload(dev, p->dtype, v, attnvk_kv_elements(p), &bv);
    if (s == ATTNVK_OK) s = upload(dev, p->dtype, nan_f, nq, &bo);
    if (s == ATTNVK_OK) s = attnvk_kernel_run(kern, bq, bk, bv, bo, NULL, begin, count, &ms);
    if (s == ATTNVK_OK) s = attnvk_buffer_read(bo, 0, packed, nq * es);
    int ok = 0;
    if (s != ATTNVK_OK) {
        printf("FAIL %-28s %s: %s: %s\n", label, shape_of(p, shape, sizeof shape), attnvk_status_name(s),
               attnvk_last_error());
    } else {
        attnvk_unpack(p->dtype, packed, o, nq);
        size_t nbh = (size_t)p->batch * p->heads, n = nbh * (size_t)count, r = 0;
        size_t *rows = malloc(n * sizeof *rows);
        for (size_t bh = 0; bh < nbh; ++bh)
            for (int i = begin; i < begin + count; ++i) rows[r++] = bh * (size_t)p->seq_q + (size_t)i;
        attnvk_check in_range = attnvk_check_output(p, q, k, v, o, rows, n);
        /* untouched rows: every element outside the range is still NaN */
        size_t written_outside = 0, d = (size_t)p->head_dim;
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
