/* The unfused baselines' GEMM plan (see unfused_plan.h). */
#include "core/unfused_plan.h"
#include "core/error.h"
#include "core/kv_cache.h" /* avk_problem_features */

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int fits_int(int64_t x) { return x >= 0 && x <= INT_MAX; }

attnvk_status avk_unfused_plan_make(const attnvk_problem *p, avk_unfused_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    const int64_t B = p->batch, H = p->heads, Hkv = p->kv_heads, G = H / Hkv;
    const int64_t Nq = p->seq_q, Nk = p->seq_kv, D = p->head_dim, Dv = attnvk_problem_head_dim_v(p);
    plan->scores_bytes = (uint64_t)(B * H * Nq) * (uint64_t)Nk * sizeof(float);
    int64_t rows, ld_q, ld_kv, calls;
    if (p->layout == ATTNVK_LAYOUT_BHSD) {
        rows = G * Nq; /* the G heads sharing a KV head are contiguous: one GEMM */
        ld_q = ld_kv = D;
        calls = 1;
    } else {
        rows = Nq;
        ld_q = H * D;
        ld_kv = Hkv * D;
        calls = H <= B * G ? H : B * G;
    }
    if (!fits_int(rows) || !fits_int(ld_q) || !fits_int(Nk * 2) || !fits_int(B * Hkv))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "unfused baseline: GEMM sizes exceed 32-bit BLAS arguments");
    plan->calls = calloc((size_t)calls, sizeof *plan->calls);
    if (!plan->calls) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    plan->rows = (int)rows;
    plan->ld_q = (int)ld_q;
    plan->ld_kv = (int)ld_kv;
    /* V and O: the same layout in rows of Dv (Dv <= Dk, so the pitches fit too) */
    plan->ld_o = (int)(ld_q / D * Dv);
    plan->ld_v = (int)(ld_kv / D * Dv);
    plan->call_count = (int)calls;
    avk_unfused_call *c = plan->calls;
    if (p->layout == ATTNVK_LAYOUT_BHSD) {
        c[0] = (avk_unfused_call){0, 0, 0, 0, 0, G * Nq * D, Nk * D, G * Nq * Nk, Nk * Dv, G * Nq * Dv, (int)(B * Hkv), 0};
    } else if (calls == H) {
        /* one call per head, batched over b */
        for (int64_t h = 0; h < H; ++h)
            c[h] = (avk_unfused_call){h * D,      (h / G) * D,  h * Nq * Nk,  (h / G) * Dv, h * Dv, Nq * H * D,
                                      Nk * Hkv * D, H * Nq * Nk, Nk * Hkv * Dv, Nq * H * Dv, (int)B, (int)(h % G)};
    } else {
        /* one call per (b, r), batched over the KV heads g: h = g*G + r */
        for (int64_t b = 0; b < B; ++b)
            for (int64_t r = 0; r < G; ++r)
                c[b * G + r] = (avk_unfused_call){b * Nq * H * D + r * D, b * Nk * Hkv * D, (b * H + r) * Nq * Nk,
                                                  b * Nk * Hkv * Dv,      b * Nq * H * Dv + r * Dv,
                                                  G * D,                  D,
                                                  G * Nq * Nk,            Dv,
                                                  G * Dv,                 (int)Hkv,
                                                  (int)r};
    }
    return ATTNVK_OK;
}

void avk_unfused_plan_free(avk_unfused_plan *plan)
{
    free(plan->calls);
    plan->calls = NULL;
    plan->call_count = 0;
}

/* An operand's first element, batch stride and row pitch in call c. */
static void operand(const attnvk_problem *p, const avk_unfused_plan *plan, const avk_unfused_call *c,
                    avk_unfused_operand o, int64_t *offset, int64_t *stride, int *ld)
{
    switch (o) {
    case AVK_UNFUSED_Q:
    case AVK_UNFUSED_DQ: *offset = c->q_offset, *stride = c->q_stride, *ld = plan->ld_q; break;
    case AVK_UNFUSED_K:
    case AVK_UNFUSED_DK: *offset = c->kv_offset, *stride = c->kv_stride, *ld = plan->ld_kv; break;
    case AVK_UNFUSED_V:
    case AVK_UNFUSED_DV: *offset = c->v_offset, *stride = c->v_stride, *ld = plan->ld_v; break;
    case AVK_UNFUSED_O: *offset = c->o_offset, *stride = c->o_stride, *ld = plan->ld_o; break;
    default: *offset = c->s_offset, *stride = c->s_stride, *ld = p->seq_kv; break; /* S, dP */
    }
}

void avk_unfused_backward_gemm(const attnvk_problem *p, const avk_unfused_plan *plan, int call, int index,
                               avk_unfused_gemm *g)
{
    const int rows = plan->rows, nk = p->seq_kv, d = p->head_dim, dv = attnvk_problem_head_dim_v(p);
    const avk_unfused_call *c = &plan->calls[call];
    const int add = c->group_member > 0;
    /* what, a, b, c, trans_a, trans_b, m, n, k, scaled, accumulate */
    static const struct {
        const char *what;
        avk_unfused_operand a, b, c;
        int trans_a, trans_b;
    } table[AVK_UNFUSED_BWD_GEMMS] = {
        {"S = scale Q.K^T", AVK_UNFUSED_Q, AVK_UNFUSED_K, AVK_UNFUSED_S, 0, 1},
        {"dP = dO.V^T", AVK_UNFUSED_O, AVK_UNFUSED_V, AVK_UNFUSED_DP, 0, 1},
        {"dV = P^T.dO", AVK_UNFUSED_S, AVK_UNFUSED_O, AVK_UNFUSED_DV, 1, 0},
        {"dK = scale dS^T.Q", AVK_UNFUSED_DP, AVK_UNFUSED_Q, AVK_UNFUSED_DK, 1, 0},
        {"dQ = scale dS.K", AVK_UNFUSED_DP, AVK_UNFUSED_K, AVK_UNFUSED_DQ, 0, 0},
    };
    const int mnk[AVK_UNFUSED_BWD_GEMMS][3] = {
        {rows, nk, d}, {rows, nk, dv}, {nk, dv, rows}, {nk, d, rows}, {rows, d, nk}};
    memset(g, 0, sizeof *g);
    g->what = table[index].what;
    g->a = table[index].a, g->b = table[index].b, g->c = table[index].c;
    g->trans_a = table[index].trans_a, g->trans_b = table[index].trans_b;
    g->m = mnk[index][0], g->n = mnk[index][1], g->k = mnk[index][2];
    operand(p, plan, c, g->a, &g->a_offset, &g->a_stride, &g->lda);
    operand(p, plan, c, g->b, &g->b_offset, &g->b_stride, &g->ldb);
    operand(p, plan, c, g->c, &g->c_offset, &g->c_stride, &g->ldc);
    g->count = c->count;
    g->scaled = index == 0 || index == 3 || index == 4;
    g->accumulate = (index == 2 || index == 3) && add;
}

void avk_unfused_row_args_of(const attnvk_problem *p, int flags, avk_unfused_row_args *out)
{
    const int window = (avk_problem_features(p) & ATTNVK_FEATURE_WINDOW) != 0, dv = attnvk_problem_head_dim_v(p);
    const int bshd = p->layout == ATTNVK_LAYOUT_BSHD;
    const long long mask_pair = (long long)p->seq_q * p->seq_kv;
    *out = (avk_unfused_row_args){
        .seq_q = p->seq_q, .seq_kv = p->seq_kv, .dv = dv,
        .o_batch = (long long)p->heads * p->seq_q * dv,
        .o_head = bshd ? dv : (long long)p->seq_q * dv, .o_row = bshd ? (long long)p->heads * dv : dv,
        .causal = p->causal, .heads = p->heads, .batch = p->batch, .flags = flags,
        .window_left = window ? p->window_left : -1, .window_right = window ? p->window_right : -1,
        .softcap = p->softcap,
        .mask_b = p->mask && p->mask_batch > 1 ? mask_pair * p->mask_heads : 0,
        .mask_h = p->mask && p->mask_heads > 1 ? mask_pair : 0};
}

attnvk_status avk_unfused_backward_run(const attnvk_problem *p, const avk_unfused_plan *plan,
                                       const avk_unfused_backward_steps *steps)
{
    attnvk_status s = ATTNVK_OK;
    for (int part = 0; part < 2 && s == ATTNVK_OK; ++part) {
        const int first = part ? AVK_UNFUSED_BWD_ROW_STEP : 0, end = part ? AVK_UNFUSED_BWD_GEMMS : AVK_UNFUSED_BWD_ROW_STEP;
        for (int c = 0; c < plan->call_count && s == ATTNVK_OK; ++c)
            for (int i = first; i < end && s == ATTNVK_OK; ++i) {
                avk_unfused_gemm g;
                avk_unfused_backward_gemm(p, plan, c, i, &g);
                s = steps->gemm(steps->ctx, &g);
            }
        if (s == ATTNVK_OK && !part) s = steps->rows(steps->ctx);
    }
    if (s == ATTNVK_OK && p->dtype != ATTNVK_F32) s = steps->convert(steps->ctx);
    return s;
}
