/* One tolerance table and one comparison, used by every test and bench check. */
#include "attnvk/attnvk.h"
#include "core/layout.h"
#include "core/q_format.h"
#include "core/reference.h"

#include <math.h>
#include <stdlib.h>

double attnvk_tolerance(attnvk_dtype d)
{
    switch (d) {
    case ATTNVK_F32: return 1e-5;
    case ATTNVK_F16:
    case ATTNVK_BF16: return 5e-3;
    }
    return 0;
}

double attnvk_backward_tolerance(attnvk_dtype d)
{
    /* dS = P (dP - D) cancels, and dK/dV sum many rows: looser than the forward's */
    return d == ATTNVK_F32 ? 1e-4 : 1e-2;
}

attnvk_check attnvk_check_output(const attnvk_problem *p, const float *q, const float *k, const float *v,
                                 const float *o, const size_t *rows, size_t nrows)
{
    return attnvk_check_output_ragged(p, q, k, v, NULL, o, rows, nrows);
}

attnvk_check attnvk_check_output_ragged(const attnvk_problem *p, const float *q, const float *k, const float *v,
                                        const int32_t *kv_lens, const float *o, const size_t *rows, size_t nrows)
{
    const attnvk_host_inputs in = {.q = q, .k = k, .v = v, .kv_lens = kv_lens};
    return attnvk_check_output_inputs(p, &in, o, rows, nrows);
}

attnvk_check attnvk_check_output_inputs(const attnvk_problem *p, const attnvk_host_inputs *in, const float *o,
                                        const size_t *rows, size_t nrows)
{
    attnvk_check c = {.tolerance = avk_forward_tolerance(p)}; /* the FP8 forward's 5e-2 (q_format.h) */
    size_t total_rows = (size_t)p->batch * p->heads * p->seq_q;
    if (!rows) nrows = total_rows;
    const int D = avk_head_dim_v(p); /* O's rows */
    size_t *all = NULL;
    double *ref = malloc(sizeof(double) * nrows * D);
    if (!rows) {
        all = calloc(nrows, sizeof(size_t));
        for (size_t r = 0; all && r < nrows; ++r) all[r] = r;
        rows = all;
    }
    if (!ref || !rows) {
        free(ref);
        free(all);
        c.rel_l2 = INFINITY; /* can't check: never a pass */
        return c;
    }
    avk_reference_job job = {.p = p, .q = in->q, .k = in->k, .v = in->v, .kv_lens = in->kv_lens,
                             .mask = in->mask, .sinks = in->sinks, .alibi_slopes = in->alibi_slopes,
                             .block_layout = in->block_layout,
                             .rows = rows, .nrows = nrows, .out_f64 = ref};
    avk_reference_run(&job);
    double diff2 = 0, ref2 = 0;
    for (size_t s = 0; s < nrows; ++s) {
        size_t row = rows[s];
        int i = (int)(row % (size_t)p->seq_q);
        int h = (int)((row / (size_t)p->seq_q) % (size_t)p->heads);
        int b = (int)(row / ((size_t)p->seq_q * p->heads));
        const float *orow = o + avk_o_offset(p, b, h, i);
        for (int d = 0; d < D; ++d) {
            double r = ref[s * D + d], x = orow[d];
            if (!isfinite(x)) {
                ++c.nonfinite;
                continue;
            }
            double e = fabs(x - r);
            diff2 += e * e;
            ref2 += r * r;
            if (e > c.max_abs) c.max_abs = e;
        }
    }
    c.rows_checked = nrows;
    /* all-masked outputs are exact zeros: measure them absolutely */
    c.rel_l2 = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    c.passed = c.nonfinite == 0 && c.rel_l2 <= c.tolerance;
    free(ref);
    free(all);
    return c;
}

/* d(sink_h) = -sum over the rows of P_sink * D_i, D_i = rowsum(dO * O): the terms carry O's
 * storage rounding and, of either sign, may cancel to far below their size, so the error is
 * judged against the terms' magnitude, sum of P_sink * rowsum|dO * O| (from the reference's O
 * and LSE), where that is larger than the sum's: the relative error of an ill-conditioned sum
 * fails a correct kernel on some seeds (a bf16 CPU run at 1.7e-2 against 1e-2 did). */
double attnvk_dsinks_error(const attnvk_problem *p, const attnvk_host_inputs *in, const float *d_o, const float *ds,
                           const float *ref_ds)
{
    const int B = p->batch, H = p->heads, Nq = p->seq_q, Dv = avk_head_dim_v(p);
    const size_t rows = (size_t)B * H * Nq;
    float *o = malloc(sizeof(float) * rows * Dv), *lse = malloc(sizeof(float) * rows);
    double num = 0, den = 0, terms = 0;
    int finite = o && lse;
    if (finite) attnvk_reference_inputs(p, in, o, lse);
    for (int h = 0; finite && h < H; ++h) {
        finite = isfinite(ds[h]);
        double t = 0;
        for (int b = 0; b < B; ++b)
            for (int i = 0; i < Nq; ++i) {
                const float *orow = o + avk_o_offset(p, b, h, i), *drow = d_o + avk_o_offset(p, b, h, i);
                const float l = lse[((size_t)b * H + h) * Nq + i];
                double mag = 0;
                for (int d = 0; d < Dv; ++d) mag += fabs((double)drow[d] * orow[d]);
                if (isfinite(l)) t += exp((double)in->sinks[h] - l) * mag;
            }
        num += ((double)ds[h] - ref_ds[h]) * ((double)ds[h] - ref_ds[h]);
        den += (double)ref_ds[h] * ref_ds[h];
        terms += t * t;
    }
    free(o);
    free(lse);
    if (!finite) return NAN; /* a NaN/Inf gradient, or no memory to judge it: never a pass */
    const double scale = den > terms ? den : terms;
    return scale > 0 ? sqrt(num / scale) : sqrt(num);
}
