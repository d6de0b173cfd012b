#include "vk_test_cases.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void tally(vk_tally *t, int ok) { ok ? ++t->passed : ++t->failed; }

static void note_worst(vk_tally *t, const char *variant, double rel_l2)
{
    int i = 0;
    while (i < t->n_worst && strcmp(t->worst[i].variant, variant) != 0) ++i;
    if (i == t->n_worst) {
        if (t->n_worst == (int)(sizeof t->worst / sizeof *t->worst)) return;
        snprintf(t->worst[i].variant, sizeof t->worst[i].variant, "%s", variant);
        t->worst[i].rel_l2 = 0;
        ++t->n_worst;
    }
    if (rel_l2 > t->worst[i].rel_l2 || isnan(rel_l2)) t->worst[i].rel_l2 = rel_l2;
    ++t->worst[i].cases;
}

static void shape_text(const attnvk_problem *p, char *out, size_t n)
{
    char dv[16] = ""; /* "/Dv" where V's head dim differs */
    if (attnvk_problem_head_dim_v(p) != p->head_dim) snprintf(dv, sizeof dv, "/%d", attnvk_problem_head_dim_v(p));
    snprintf(out, n, "B%d H%d/%d Nq%d Nk%d D%d%s %s %s%s", p->batch, p->heads, p->kv_heads, p->seq_q, p->seq_kv,
             p->head_dim, dv, attnvk_dtype_name(p->dtype), p->layout == ATTNVK_LAYOUT_BHSD ? "bhsd" : "bshd",
             p->causal ? " causal" : "");
}

/* Largest |lse - ref| over rows; -inf must match -inf exactly. */
static double lse_error(const attnvk_problem *p, const float *q, const float *k, const float *v, const float *lse)
{
    size_t rows = (size_t)p->batch * p->heads * p->seq_q;
    float *ref_o = malloc(attnvk_o_elements(p) * sizeof(float));
    float *ref_lse = malloc(rows * sizeof(float));
    double worst = 0;
    if (!ref_o || !ref_lse) worst = INFINITY;
    else {
        attnvk_reference(p, q, k, v, ref_o, ref_lse);
        for (size_t r = 0; r < rows; ++r) {
            if (isinf(ref_lse[r]) || isinf(lse[r])) {
                if (!(isinf(ref_lse[r]) && isinf(lse[r]) && ref_lse[r] < 0 && lse[r] < 0)) worst = INFINITY;
                continue;
            }
            double d = fabs((double)lse[r] - ref_lse[r]);
            if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
        }
    }
    free(ref_o);
    free(ref_lse);
    return worst;
}

void vk_case(vk_tally *t, attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
             const char *label, int check_lse, int expect_pass)
{
    float *q, *k, *v;
    avk_test_inputs(p, t->seed++, &q, &k, &v);
    size_t rows = (size_t)p->batch * p->heads * p->seq_q;
    float *o = malloc(attnvk_o_elements(p) * sizeof(float));
    float *lse = check_lse ? malloc(rows * sizeof(float)) : NULL;
    attnvk_kernel_info info;
    memset(&info, 0, sizeof info);
    char shape[160];
    shape_text(p, shape, sizeof shape);
    double ms = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    attnvk_status s = attnvk_attention_host(dev, p, opts, q, k, v, o, lse, &info, &ms);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall_s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    int ok;
    if (s != ATTNVK_OK) {
        printf("FAIL %-30s %s: %s: %s\n", label, shape, attnvk_status_name(s), attnvk_last_error());
        ok = 0;
    } else {
        attnvk_check c = attnvk_check_output(p, q, k, v, o, NULL, 0);
        double lse_err = check_lse ? lse_error(p, q, k, v, lse) : 0;
        double lse_tol = p->dtype == ATTNVK_F32 ? 1e-4 : 1e-2;
        int right = c.passed && lse_err <= lse_tol;
        ok = expect_pass ? right : !right;
        char key[64];
        snprintf(key, sizeof key, "%.40s/%s", info.variant, attnvk_dtype_name(p->dtype));
        if (expect_pass) note_worst(t, key, c.rel_l2);
        printf("%s %-30s %s: %s %dx%d split %d rel_l2 %.2e nonfinite %zu%s", ok ? "ok  " : "FAIL", label, shape,
               info.variant, info.tile_br, info.tile_bc, info.split_kv, c.rel_l2, c.nonfinite,
               expect_pass ? "" : " (expected to fail the check)");
        if (check_lse) printf(" lse_err %.2e", lse_err);
        printf(" (%.2f s)\n", wall_s);
    }
    fflush(stdout);
    tally(t, ok);
    free(q);
    free(k);
    free(v);
    free(o);
    free(lse);
}

static attnvk_status upload(attnvk_device *dev, const attnvk_problem *p, const float *src, size_t n, attnvk_buffer **b)
{
    size_t bytes = n * attnvk_dtype_size(p->dtype);
    void *packed = malloc(bytes);
    if (!packed) return ATTNVK_ERROR_OUT_OF_MEMORY;
    attnvk_pack(p->dtype, src, packed, n);
    attnvk_status s = attnvk_buffer_create(dev, bytes, b);
    if (s == ATTNVK_OK) s = attnvk_buffer_write(*b, 0, packed, bytes);
    free(packed);
    return s;
}

void vk_case_row_ranges(vk_tally *t, attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                        const char *label)
{
    float *q, *k, *v;
    avk_test_inputs(p, t->seed++, &q, &k, &v);
    size_t nq = attnvk_q_elements(p), no = attnvk_o_elements(p), es = attnvk_dtype_size(p->dtype);
    float *o = malloc(no * sizeof(float));
    void *packed = malloc(no * es);
    attnvk_buffer *bq = NULL, *bk = NULL, *bv = NULL, *bo = NULL;
    attnvk_kernel *kern = NULL;
    attnvk_kernel_info info;
    attnvk_status s = attnvk_kernel_prepare(dev, p, opts, &kern, &info);
    if (s == ATTNVK_OK) s = upload(dev, p, q, nq, &bq);
    if (s == ATTNVK_OK) s = upload(dev, p, k, attnvk_kv_elements(p), &bk);
    if (s == ATTNVK_OK) s = upload(dev, p, v, attnvk_v_elements(p), &bv);
    float *nan_rows = malloc(no * sizeof(float));
    for (size_t i = 0; nan_rows && i < no; ++i) nan_rows[i] = NAN;
    if (s == ATTNVK_OK) s = upload(dev, p, nan_rows, no, &bo);
    int ok = s == ATTNVK_OK;
    /* pieces of 5, 17 and the rest; after the first, rows past it must still be NaN */
    int begin = 0, pieces[3] = {5, 17, p->seq_q - 22};
    for (int i = 0; ok && i < 3; ++i) {
        double ms;
        s = attnvk_kernel_run(kern, bq, bk, bv, bo, NULL, begin, pieces[i], &ms);
        ok = s == ATTNVK_OK && attnvk_buffer_read(bo, 0, packed, no * es) == ATTNVK_OK;
        if (!ok) break;
        attnvk_unpack(p->dtype, packed, o, no);
        begin += pieces[i];
        if (i == 0) { /* row `begin` of (b=0, h=0) was outside the range: still poisoned (O's rows: Dv) */
            size_t dv = (size_t)attnvk_problem_head_dim_v(p);
            size_t off = p->layout == ATTNVK_LAYOUT_BHSD ? (size_t)begin * dv : (size_t)begin * p->heads * dv;
            ok = isnan(o[off]);
            if (!ok) printf("FAIL %-30s row %d was written outside q_begin/q_count\n", label, begin);
        }
    }
    attnvk_check c = {0};
    if (ok) {
        c = attnvk_check_output(p, q, k, v, o, NULL, 0);
        ok = c.passed;
    }
    char shape[160];
    shape_text(p, shape, sizeof shape);
    printf("%s %-30s %s: q ranges 5+17+%d rel_l2 %.2e nonfinite %zu %s\n", ok ? "ok  " : "FAIL", label, shape,
           p->seq_q - 22, c.rel_l2, c.nonfinite, s == ATTNVK_OK ? "" : attnvk_last_error());
    tally(t, ok);
    attnvk_kernel_destroy(kern);
    attnvk_buffer_destroy(bq);
    attnvk_buffer_destroy(bk);
    attnvk_buffer_destroy(bv);
    attnvk_buffer_destroy(bo);
    free(nan_rows);
    free(packed);
    free(o);
    free(q);
    free(k);
    free(v);
}

void vk_expect_status(vk_tally *t, attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                      attnvk_status want, const char *label)
{
    attnvk_kernel *kern = NULL;
    attnvk_status s = attnvk_kernel_prepare(dev, p, opts, &kern, NULL);
    int ok = s == want && (want == ATTNVK_OK || *attnvk_last_error());
    printf("%s %-30s -> %s: %s\n", ok ? "ok  " : "FAIL", label, attnvk_status_name(s),
           s == ATTNVK_OK ? "" : attnvk_last_error());
    attnvk_kernel_destroy(kern);
    tally(t, ok);
}

void vk_print_worst(const vk_tally *t)
{
    for (int i = 0; i < t->n_worst; ++i)
        printf("worst rel_l2 %-12s %.3e over %d cases\n", t->worst[i].variant, t->worst[i].rel_l2, t->worst[i].cases);
}
