/* The gradients' oracle: attention's backward pass in float64, by the
 * formulas of attnvk_kernel_backward. O and the LSE come from the forward
 * reference in float64; then two passes that each own what they write, so
 * threads never share a sum and the result does not depend on them:
 *   rows: D_i = dO_i . O_i, dQ_i and the row's share of d(sink);
 *   keys: dK_j and dV_j over every query row of the group that sees key j.
 * Every pair's P and dS are recomputed from the scores, exactly. */
#include "core/layout.h"
#include "core/parallel.h"
#include "core/reference.h"

#include <math.h>
#include <stdlib.h>

typedef struct bwd_ctx {
    const attnvk_problem *p;
    const attnvk_host_inputs *in;
    const attnvk_host_grads *g;
    double *o, *lse;        /* the forward's, [rows][Dv] and [rows]; rows are (b*H + h)*Nq + i */
    double *delta;          /* [rows]: D_i */
    double *sink_share;     /* [rows]: -P_sink * D_i */
    double scale;
    int group;              /* query heads per kv head */
} bwd_ctx;

static size_t row_of(const attnvk_problem *p, int b, int h, int i)
{
    return ((size_t)b * p->heads + h) * p->seq_q + i;
}

/* Pair (row of (b, h, i), key j), visible: P_ij in *prob and the gradient of
 * the loss with respect to scale * q.k (dS times the score's derivative). */
static double pair_grad(const bwd_ctx *c, int b, int h, int i, int j, int len, double *prob)
{
    const attnvk_problem *p = c->p;
    const int D = p->head_dim, Dv = avk_head_dim_v(p), g = h / c->group;
    const size_t r = row_of(p, b, h, i);
    const float *qr = c->in->q + avk_q_offset(p, b, h, i), *kr = c->in->k + avk_kv_offset(p, b, g, j);
    const float *vr = c->in->v + avk_v_offset(p, b, g, j), *dor = c->g->d_o + avk_o_offset(p, b, h, i);
    double dot = 0, dp = 0, dsdx;
    for (int d = 0; d < D; ++d) dot += (double)qr[d] * kr[d];
    for (int d = 0; d < Dv; ++d) dp += (double)dor[d] * vr[d];
    const double slope = p->alibi ? c->in->alibi_slopes[h] : 0.0;
    const double s = avk_reference_score(p, dot, c->scale, slope, avk_row_position(p, i, len),
                                         avk_reference_mask_row(p, c->in->mask, b, h, i), j, &dsdx);
    *prob = exp(s - c->lse[r]); /* a -inf score (masked) gives 0 */
    return *prob == 0 ? 0.0 : *prob * (dp - c->delta[r]) * dsdx;
}

static void rows_pass(void *ctx, size_t begin, size_t end)
{
    const bwd_ctx *c = ctx;
    const attnvk_problem *p = c->p;
    const int D = p->head_dim, Dv = avk_head_dim_v(p);
    double *acc = malloc(sizeof(double) * (size_t)D);
    if (!acc) return;
    for (size_t r = begin; r < end; ++r) {
        const int i = (int)(r % (size_t)p->seq_q), h = (int)(r / (size_t)p->seq_q % (size_t)p->heads);
        const int b = (int)(r / ((size_t)p->seq_q * p->heads)), g = h / c->group;
        const int len = avk_seq_len(p, c->in->kv_lens, b);
        const float *dor = c->g->d_o + avk_o_offset(p, b, h, i);
        double delta = 0;
        for (int d = 0; d < Dv; ++d) delta += (double)dor[d] * c->o[r * Dv + d];
        c->delta[r] = delta;
        for (int d = 0; d < D; ++d) acc[d] = 0;
        c->sink_share[r] = 0;
        if (c->lse[r] != -INFINITY) { /* else no key and no sink: O is zero, so is every gradient */
            int lo, hi;
            avk_visible_range(p, i, len, &lo, &hi);
            for (int j = lo; j < hi; ++j) {
                double prob;
                const double dx = pair_grad(c, b, h, i, j, len, &prob);
                const float *kr = c->in->k + avk_kv_offset(p, b, g, j);
                for (int d = 0; d < D; ++d) acc[d] += dx * kr[d];
            }
            if (p->sinks) c->sink_share[r] = -exp((double)c->in->sinks[h] - c->lse[r]) * delta;
        }
        float *dq = c->g->dq + avk_q_offset(p, b, h, i);
        for (int d = 0; d < D; ++d) dq[d] = (float)(acc[d] * c->scale);
    }
    free(acc);
}

/* items are (b*H_kv + g)*Nk + j: one key row of K and V each */
static void keys_pass(void *ctx, size_t begin, size_t end)
{
    const bwd_ctx *c = ctx;
    const attnvk_problem *p = c->p;
    const int D = p->head_dim, Dv = avk_head_dim_v(p);
    double *dk = malloc(sizeof(double) * (size_t)D), *dv = malloc(sizeof(double) * (size_t)Dv);
    for (size_t item = begin; dk && dv && item < end; ++item) {
        const int j = (int)(item % (size_t)p->seq_kv), g = (int)(item / (size_t)p->seq_kv % (size_t)p->kv_heads);
        const int b = (int)(item / ((size_t)p->seq_kv * p->kv_heads)), len = avk_seq_len(p, c->in->kv_lens, b);
        for (int d = 0; d < D; ++d) dk[d] = 0;
        for (int d = 0; d < Dv; ++d) dv[d] = 0;
        for (int h = g * c->group; h < (g + 1) * c->group && j < len; ++h)
            for (int i = 0; i < p->seq_q; ++i) {
                int lo, hi;
                avk_visible_range(p, i, len, &lo, &hi);
                if (j < lo || j >= hi || c->lse[row_of(p, b, h, i)] == -INFINITY) continue;
                double prob;
                const double dx = pair_grad(c, b, h, i, j, len, &prob);
                const float *qr = c->in->q + avk_q_offset(p, b, h, i), *dor = c->g->d_o + avk_o_offset(p, b, h, i);
                for (int d = 0; d < D; ++d) dk[d] += dx * qr[d];
                for (int d = 0; d < Dv; ++d) dv[d] += prob * dor[d];
            }
        float *dko = c->g->dk + avk_kv_offset(p, b, g, j), *dvo = c->g->dv + avk_v_offset(p, b, g, j);
        for (int d = 0; d < D; ++d) dko[d] = (float)(dk[d] * c->scale);
        for (int d = 0; d < Dv; ++d) dvo[d] = (float)dv[d];
    }
    free(dk);
    free(dv);
}

void attnvk_reference_backward(const attnvk_problem *p, const attnvk_host_inputs *in, const attnvk_host_grads *g)
{
    const size_t rows = (size_t)p->batch * p->heads * p->seq_q, Dv = (size_t)avk_head_dim_v(p);
    const size_t keys = (size_t)p->batch * p->kv_heads * p->seq_kv;
    bwd_ctx c = {.p = p, .in = in, .g = g, .scale = attnvk_problem_scale(p), .group = p->heads / p->kv_heads,
                 .o = malloc(sizeof(double) * rows * Dv), .lse = malloc(sizeof(double) * rows),
                 .delta = malloc(sizeof(double) * rows), .sink_share = malloc(sizeof(double) * rows)};
    if (c.o && c.lse && c.delta && c.sink_share) {
        avk_reference_job fwd = {.p = p, .q = in->q, .k = in->k, .v = in->v, .kv_lens = in->kv_lens,
                                 .mask = in->mask, .sinks = in->sinks, .alibi_slopes = in->alibi_slopes,
                                 .nrows = rows, .out_f64 = c.o, .lse_f64 = c.lse};
        avk_reference_run(&fwd);
        /* about 64k multiply-adds a slice at least, as the forward's */
        const size_t per_item = (size_t)p->seq_kv * ((size_t)p->head_dim + Dv) + 1;
        avk_parallel_for(rows, 65536 / per_item + 1, 1, rows_pass, &c);
        avk_parallel_for(keys, 65536 / per_item + 1, 1, keys_pass, &c);
        if (p->sinks && g->d_sinks)
            for (int h = 0; h < p->heads; ++h) { /* a fixed order: the same sum every run */
                double sum = 0;
                for (int b = 0; b < p->batch; ++b)
                    for (int i = 0; i < p->seq_q; ++i) sum += c.sink_share[row_of(p, b, h, i)];
                g->d_sinks[h] = (float)sum;
            }
    }
    free(c.o);
    free(c.lse);
    free(c.delta);
    free(c.sink_share);
}
