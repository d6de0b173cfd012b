/* The CPU reference: closed-form cases, GQA mapping, an independent naive
 * loop, and the CPU backend through the public API on the feature matrix. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static attnvk_problem make(int b, int h, int hkv, int nq, int nk, int d, int causal)
{
    attnvk_problem p = {.batch = b, .heads = h, .kv_heads = hkv, .seq_q = nq, .seq_kv = nk, .head_dim = d, .causal = causal, .scale = 0, .dtype = ATTNVK_F32, .layout = ATTNVK_LAYOUT_BHSD};
    return p;
}

/* Straightforward single-threaded bhsd attention, written independently. */
static void naive(const attnvk_problem *p, const float *q, const float *k, const float *v, double *o)
{
    int D = p->head_dim, rep = p->heads / p->kv_heads;
    double sc = p->scale > 0 ? p->scale : 1.0 / sqrt(D);
    double *s = malloc(sizeof(double) * p->seq_kv);
    for (int b = 0; b < p->batch; ++b)
        for (int h = 0; h < p->heads; ++h)
            for (int i = 0; i < p->seq_q; ++i) {
                const float *qi = q + (((size_t)b * p->heads + h) * p->seq_q + i) * D;
                double *oi = o + (((size_t)b * p->heads + h) * p->seq_q + i) * D;
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j < p->seq_kv; ++j) {
                    if (p->causal && j > i + p->seq_kv - p->seq_q) { s[j] = -INFINITY; continue; }
                    const float *kj = k + (((size_t)b * p->kv_heads + h / rep) * p->seq_kv + j) * D;
                    double acc = 0;
                    for (int d = 0; d < D; ++d) acc += (double)qi[d] * kj[d];
                    s[j] = acc * sc;
                    if (s[j] > mx) mx = s[j];
                }
                for (int d = 0; d < D; ++d) oi[d] = 0;
                if (mx == -INFINITY) continue;
                for (int j = 0; j < p->seq_kv; ++j) {
                    if (s[j] == -INFINITY) continue;
                    double e = exp(s[j] - mx);
                    sum += e;
                    const float *vj = v + (((size_t)b * p->kv_heads + h / rep) * p->seq_kv + j) * D;
                    for (int d = 0; d < D; ++d) oi[d] += e * vj[d];
                }
                for (int d = 0; d < D; ++d) oi[d] /= sum;
            }
    free(s);
}

static int closed_form(void)
{
    int passed = 0;
    /* identical keys -> every weight equal -> mean of V */
    attnvk_problem p = make(1, 1, 1, 3, 5, 4, 0);
    float q[12], k[24], v[24], o[12];
    attnvk_fill_random(q, 12, 1);
    attnvk_fill_random(v, 20, 2);
    for (int j = 0; j < 5; ++j)
        for (int d = 0; d < 4; ++d) k[j * 4 + d] = 0.25f * (float)(d + 1);
    attnvk_reference(&p, q, k, v, o, NULL);
    double err = 0;
    for (int i = 0; i < 3; ++i)
        for (int d = 0; d < 4; ++d) {
            double mean = 0;
            for (int j = 0; j < 5; ++j) mean += v[j * 4 + d] / 5.0;
            err = fmax(err, fabs(o[i * 4 + d] - mean));
        }
    EXPECT(err < 1e-6, "identical keys give the mean of V (err %g)", err);
    passed += err < 1e-6;

    /* one dominant score -> that V row */
    p = make(1, 1, 1, 1, 6, 4, 0);
    float q1[4] = {1, 0, 0, 0};
    attnvk_fill_random(k, 24, 3);
    for (int j = 0; j < 6; ++j) k[j * 4] = 0.01f * (float)j;
    k[3 * 4] = 200.0f; /* scale 1/2: score 100 vs ~0 */
    attnvk_fill_random(v, 24, 4);
    attnvk_reference(&p, q1, k, v, o, NULL);
    err = 0;
    for (int d = 0; d < 4; ++d) err = fmax(err, fabs(o[d] - v[3 * 4 + d]));
    EXPECT(err < 1e-6, "dominant score selects its V row (err %g)", err);
    passed += err < 1e-6;

    /* causal, Nq == Nk: row 0 sees only key 0 -> v0 */
    p = make(1, 1, 1, 5, 5, 4, 1);
    float q5[20], k5[20], v5[20], o5[20], lse[5];
    attnvk_fill_random(q5, 20, 5);
    attnvk_fill_random(k5, 20, 6);
    attnvk_fill_random(v5, 20, 7);
    attnvk_reference(&p, q5, k5, v5, o5, lse);
    err = 0;
    for (int d = 0; d < 4; ++d) err = fmax(err, fabs(o5[d] - v5[d]));
    double s00 = 0;
    for (int d = 0; d < 4; ++d) s00 += (double)q5[d] * k5[d];
    EXPECT(err < 1e-7 && fabs(lse[0] - s00 * 0.5) < 1e-5, "causal row 0 is v0 (err %g, lse %g vs %g)", err, lse[0], s00 * 0.5);
    passed += err < 1e-7;

    /* causal Nq > Nk: the first Nq-Nk rows see nothing -> zeros, lse -inf */
    p = make(1, 1, 1, 4, 2, 4, 1);
    float o4[16];
    attnvk_reference(&p, q5, k5, v5, o4, lse);
    int zeros = 1;
    for (int i = 0; i < 2 * 4; ++i) zeros &= o4[i] == 0.0f;
    EXPECT(zeros && isinf(lse[0]) && lse[0] < 0 && isfinite(lse[2]), "rows with no visible key are zero");
    passed += zeros;
    return passed;
}

static int gqa_mapping(void)
{
    /* V of kv head g is all (g + 1): query head h must read g = h / (H / Hkv) */
    attnvk_problem p = make(2, 8, 2, 3, 4, 8, 0);
    size_t nq = attnvk_q_elements(&p), nkv = attnvk_kv_elements(&p);
    float *q = malloc(nq * 4), *k = malloc(nkv * 4), *v = malloc(nkv * 4), *o = malloc(nq * 4);
    attnvk_fill_random(q, nq, 8);
    attnvk_fill_random(k, nkv, 9);
    for (size_t e = 0; e < nkv; ++e) v[e] = (float)((e / (4 * 8)) % 2 + 1);
    attnvk_reference(&p, q, k, v, o, NULL);
    int ok = 1;
    for (int b = 0; b < 2; ++b)
        for (int h = 0; h < 8; ++h)
            ok &= fabsf(o[(((size_t)b * 8 + h) * 3) * 8] - (float)(h / 4 + 1)) < 1e-6f;
    EXPECT(ok, "GQA 8:2 maps heads 0-3 to kv 0 and 4-7 to kv 1");
    free(q);
    free(k);
    free(v);
    free(o);
    return ok;
}

static int against_naive(uint64_t seed)
{
    static const int shapes[][7] = {
        {2, 4, 2, 17, 33, 16, 0}, {1, 8, 2, 40, 40, 80, 1}, {1, 4, 1, 1, 300, 256, 0},
        {2, 2, 2, 9, 50, 32, 1},  {1, 6, 3, 64, 31, 64, 1},
    };
    int passed = 0;
    for (size_t c = 0; c < sizeof shapes / sizeof *shapes; ++c) {
        const int *s = shapes[c];
        attnvk_problem p = make(s[0], s[1], s[2], s[3], s[4], s[5], s[6]);
        p.scale = c == 2 ? 0.3f : 0.0f;
        float *q, *k, *v;
        avk_test_inputs(&p, seed + c, &q, &k, &v);
        size_t n = attnvk_q_elements(&p);
        double *ref = malloc(n * sizeof(double));
        float *o = malloc(n * sizeof(float));
        naive(&p, q, k, v, ref);
        attnvk_reference(&p, q, k, v, o, NULL);
        double d2 = 0, r2 = 0;
        for (size_t e = 0; e < n; ++e) {
            d2 += (o[e] - ref[e]) * (o[e] - ref[e]);
            r2 += ref[e] * ref[e];
        }
        double rel = sqrt(d2 / r2);
        EXPECT(rel < 1e-7, "reference vs naive case %zu: rel %g", c, rel);
        /* the sampled-row path agrees with the full one */
        size_t rows[3] = {0, n / p.head_dim / 2, n / p.head_dim - 1};
        attnvk_check ck = attnvk_check_output(&p, q, k, v, o, rows, 3);
        EXPECT(ck.passed && ck.rows_checked == 3, "row-sampled check case %zu: %g", c, ck.rel_l2);
        passed += rel < 1e-7 && ck.passed;
        free(q);
        free(k);
        free(v);
        free(ref);
        free(o);
    }
    return passed;
}

/* The CPU backend through the public API: every feature case, three dtypes. */
static int cpu_backend(uint64_t seed)
{
    attnvk_context *ctx;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 0;
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_CPU);
    int passed = 0;
    attnvk_problem cases[64];
    const char *labels[64];
    attnvk_dtype dts[3] = {ATTNVK_F32, ATTNVK_F16, ATTNVK_BF16};
    for (int t = 0; t < 3 && dev; ++t) {
        int n = avk_test_feature_cases(dts[t], cases, labels, 64);
        for (int i = 0; i < n; ++i) {
            int ok = avk_test_run_case(dev, &cases[i], NULL, labels[i], seed + (uint64_t)i, 0);
            EXPECT(ok, "cpu %s", labels[i]);
            passed += ok;
        }
    }
    /* the deliberately wrong kernel is caught */
    attnvk_kernel_options wrong = {.test_flags = ATTNVK_TEST_SKIP_LAST_KV_TILE};
    attnvk_problem p = make(1, 2, 2, 16, 200, 32, 0);
    float *q, *k, *v;
    avk_test_inputs(&p, seed, &q, &k, &v);
    float *o = malloc(attnvk_q_elements(&p) * 4);
    EXPECT(attnvk_attention_host(dev, &p, &wrong, q, k, v, o, NULL, NULL, NULL) == ATTNVK_OK, "wrong kernel runs");
    attnvk_check c = attnvk_check_output(&p, q, k, v, o, NULL, 0);
    EXPECT(!c.passed && c.rel_l2 > 1e-2, "skipping the last K/V tile is caught (rel %g)", c.rel_l2);
    passed += !c.passed;
    /* NaN never passes */
    o[5] = NAN;
    attnvk_fill_random(o, 4, 1);
    attnvk_reference(&p, q, k, v, o, NULL);
    o[7] = NAN;
    c = attnvk_check_output(&p, q, k, v, o, NULL, 0);
    EXPECT(!c.passed && c.nonfinite == 1, "a NaN fails the check");
    passed += !c.passed;
    free(q);
    free(k);
    free(v);
    free(o);
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return passed;
}

int main(void)
{
    uint64_t seed = avk_test_seed();
    int passed = closed_form() + gqa_mapping() + against_naive(seed) + cpu_backend(seed);
    return avk_test_finish(passed, 0);
}
