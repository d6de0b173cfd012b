/* The gradients' oracle checked against the definition: on tiny problems
 * with every score modification, attnvk_reference_backward's dQ, dK, dV and
 * d(sinks) equal central finite differences of the loss L = sum(O * dO), where
 * O is the forward reference in float64. Each step's size is the difference
 * of the two f32 inputs actually used, so rounding the perturbed input costs
 * nothing; what is left is the O(h^2) error of the central difference. */
#include "attnvk/attnvk.h"
#include "core/layout.h"
#include "core/reference.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ELEMS = 4096 };

typedef struct fd_case {
    const char *label;
    attnvk_problem p;
    int32_t lens[2]; /* kv_lens when ragged */
} fd_case;

typedef struct fd_inputs {
    float q[MAX_ELEMS], k[MAX_ELEMS], v[MAX_ELEMS], d_o[MAX_ELEMS], mask[MAX_ELEMS], sinks[16], slopes[16];
} fd_inputs;

/* L = sum(O * dO) with O in float64 (the reference's own rows, (b*H + h)*Nq + i) */
static double loss(const attnvk_problem *p, const fd_inputs *x, const int32_t *lens)
{
    const size_t rows = (size_t)p->batch * p->heads * p->seq_q;
    const int Dv = attnvk_problem_head_dim_v(p);
    double *o = malloc(sizeof(double) * rows * Dv), l = 0;
    if (!o) return NAN;
    avk_reference_job job = {.p = p, .q = x->q, .k = x->k, .v = x->v, .kv_lens = p->ragged ? lens : NULL,
                             .mask = p->mask ? x->mask : NULL, .sinks = p->sinks ? x->sinks : NULL,
                             .alibi_slopes = p->alibi ? x->slopes : NULL, .nrows = rows, .out_f64 = o};
    avk_reference_run(&job);
    for (int b = 0; b < p->batch; ++b)
        for (int h = 0; h < p->heads; ++h)
            for (int i = 0; i < p->seq_q; ++i) {
                const size_t r = ((size_t)b * p->heads + h) * p->seq_q + i;
                for (int d = 0; d < Dv; ++d) l += o[r * Dv + d] * x->d_o[avk_o_offset(p, b, h, i) + d];
            }
    free(o);
    return l;
}

/* Central differences of L over every element of t[0..n) against the analytic g; rel-L2 of the difference. */
static double fd_check(const attnvk_problem *p, fd_inputs *x, const int32_t *lens, float *t, size_t n,
                       const float *g)
{
    double num = 0, den = 0;
    for (size_t e = 0; e < n; ++e) {
        const float saved = t[e];
        const float step = 1e-3f * (fabsf(saved) > 1 ? fabsf(saved) : 1.f);
        t[e] = saved + step;
        const double up_x = t[e], up = loss(p, x, lens);
        t[e] = saved - step;
        const double down_x = t[e], down = loss(p, x, lens);
        t[e] = saved;
        const double fd = (up - down) / (up_x - down_x);
        num += (fd - g[e]) * (fd - g[e]);
        den += fd * fd;
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static attnvk_problem tiny(int B, int H, int Hkv, int Nq, int Nk, int D)
{
    return (attnvk_problem){.batch = B, .heads = H, .kv_heads = Hkv, .seq_q = Nq, .seq_kv = Nk, .head_dim = D};
}

int main(void)
{
    const uint64_t seed = avk_test_seed();
    fd_case cases[16];
    int n = 0;
    cases[n++] = (fd_case){.label = "plain GQA 2 bshd", .p = tiny(1, 4, 2, 5, 7, 8)};
    cases[n - 1].p.layout = ATTNVK_LAYOUT_BSHD;
    cases[n++] = (fd_case){.label = "causal Nq>Nk (empty rows)", .p = tiny(1, 2, 1, 7, 5, 4)};
    cases[n - 1].p.causal = 1;
    cases[n++] = (fd_case){.label = "causal Nq>Nk + sinks", .p = tiny(1, 2, 1, 7, 5, 4)};
    cases[n - 1].p.causal = 1, cases[n - 1].p.sinks = 1;
    cases[n++] = (fd_case){.label = "softcap + alibi + window", .p = tiny(1, 2, 2, 6, 9, 4)};
    cases[n - 1].p.softcap = 1.5f, cases[n - 1].p.alibi = 1, cases[n - 1].p.window = 1,
        cases[n - 1].p.window_left = 3, cases[n - 1].p.window_right = 1;
    cases[n++] = (fd_case){.label = "mask (-inf) + sinks MQA", .p = tiny(2, 3, 1, 4, 6, 4)};
    cases[n - 1].p.mask = 1, cases[n - 1].p.mask_batch = 2, cases[n - 1].p.mask_heads = 3, cases[n - 1].p.sinks = 1;
    cases[n++] = (fd_case){.label = "top-left causal + softcap + scale", .p = tiny(1, 2, 1, 5, 8, 4)};
    cases[n - 1].p.causal = 1, cases[n - 1].p.align = ATTNVK_ALIGN_TOP_LEFT, cases[n - 1].p.softcap = 2,
        cases[n - 1].p.scale = 0.7f;
    cases[n++] = (fd_case){.label = "ragged causal", .p = tiny(2, 2, 1, 3, 6, 4), .lens = {4, 6}};
    cases[n - 1].p.ragged = 1, cases[n - 1].p.causal = 1;
    int passed = 0, failed = 0;
    fd_inputs *x = calloc(1, sizeof *x);
    float *dq = malloc(sizeof(float) * MAX_ELEMS), *dk = malloc(sizeof(float) * MAX_ELEMS);
    float *dv = malloc(sizeof(float) * MAX_ELEMS), *ds = malloc(sizeof(float) * 16);
    if (!x || !dq || !dk || !dv || !ds) return 1;
    for (int c = 0; c < n; ++c) {
        const attnvk_problem *p = &cases[c].p;
        EXPECT(attnvk_problem_validate(p) == ATTNVK_OK, "%s: %s", cases[c].label, attnvk_last_error());
        const size_t nq = attnvk_q_elements(p), nk = attnvk_kv_elements(p), nv = attnvk_v_elements(p);
        const size_t no = attnvk_o_elements(p), nmask = (size_t)p->mask_batch * p->mask_heads * p->seq_q * p->seq_kv;
        const uint64_t s = seed + 97 * (uint64_t)c;
        attnvk_fill_random(x->q, nq, s);
        attnvk_fill_random(x->k, nk, s + 1);
        attnvk_fill_random(x->v, nv, s + 2);
        attnvk_fill_random(x->d_o, no, s + 3);
        attnvk_fill_random(x->sinks, (size_t)p->heads, s + 4);
        attnvk_alibi_slopes(p->heads, x->slopes);
        if (p->mask) {
            attnvk_fill_random(x->mask, nmask, s + 5);
            for (size_t e = 0; e < nmask; e += 5) x->mask[e] = -INFINITY;
        }
        for (size_t e = 0; e < MAX_ELEMS; ++e) dq[e] = dk[e] = dv[e] = NAN;
        for (int h = 0; h < 16; ++h) ds[h] = NAN;
        const attnvk_host_inputs in = {.q = x->q, .k = x->k, .v = x->v, .kv_lens = p->ragged ? cases[c].lens : NULL,
                                       .mask = p->mask ? x->mask : NULL, .sinks = p->sinks ? x->sinks : NULL,
                                       .alibi_slopes = p->alibi ? x->slopes : NULL};
        const attnvk_host_grads g = {.d_o = x->d_o, .dq = dq, .dk = dk, .dv = dv, .d_sinks = ds};
        attnvk_reference_backward(p, &in, &g);
        const double eq = fd_check(p, x, cases[c].lens, x->q, nq, dq);
        const double ek = fd_check(p, x, cases[c].lens, x->k, nk, dk);
        const double ev = fd_check(p, x, cases[c].lens, x->v, nv, dv);
        const double es = p->sinks ? fd_check(p, x, cases[c].lens, x->sinks, (size_t)p->heads, ds) : 0;
        const double tol = 1e-5; /* central differences of step 1e-3: O(1e-6 * third derivative) */
        const int ok = eq <= tol && ek <= tol && ev <= tol && es <= tol; /* NaN fails */
        printf("%s %-36s dq %.1e dk %.1e dv %.1e dsinks %.1e\n", ok ? "ok  " : "FAIL", cases[c].label, eq, ek, ev, es);
        ok ? ++passed : ++failed;
    }
    free(x), free(dq), free(dk), free(dv), free(ds);
    return avk_test_finish(passed, failed + avk_test_failures);
}
