/* The backward pass's host side (bench_backward.h): dO and the float64
 * reference gradients on slices of (batch, KV head), so a large case costs the
 * reference of one or two heads' groups rather than of the whole problem. */
#include "bench_backward.h"

#include "core/error.h"
#include "core/layout.h"
#include "core/numeric.h"

#include <stdlib.h>
#include <string.h>

/* Every slice is checked up to this many reference FLOPs (the backward's 2.5x of the forward). */
static const double full_grad_check_flops = 5e9;

/* The slice as a problem of its own: one batch, the G query heads of one KV head, BHSD. */
static attnvk_problem slice_problem(const attnvk_problem *p)
{
    attnvk_problem sp = *p;
    sp.batch = 1;
    sp.heads = p->heads / p->kv_heads;
    sp.kv_heads = 1;
    sp.layout = ATTNVK_LAYOUT_BHSD;
    sp.mask_batch = 1;
    if (p->mask && p->mask_heads > 1) sp.mask_heads = sp.heads;
    return sp;
}

size_t bench_grad_slice_elements(const attnvk_problem *p, int which)
{
    const size_t G = (size_t)(p->heads / p->kv_heads), Dk = (size_t)p->head_dim, Dv = (size_t)avk_head_dim_v(p);
    if (which == 0) return G * (size_t)p->seq_q * Dk;
    return (size_t)p->seq_kv * (which == 1 ? Dk : Dv);
}

void bench_grad_gather(const attnvk_problem *p, const bench_grad_slice *s, int which, const float *full, float *out)
{
    const int G = p->heads / p->kv_heads, Dk = p->head_dim, Dv = avk_head_dim_v(p);
    if (which == 0 || which == 3) {
        const int D = which == 0 ? Dk : Dv;
        for (int h = 0; h < G; ++h)
            for (int i = 0; i < p->seq_q; ++i) {
                const int head = s->kv_head * G + h;
                size_t from = which == 0 ? avk_q_offset(p, s->b, head, i) : avk_o_offset(p, s->b, head, i);
                memcpy(out + ((size_t)h * p->seq_q + i) * D, full + from, sizeof(float) * (size_t)D);
            }
        return;
    }
    const int D = which == 1 ? Dk : Dv;
    for (int j = 0; j < p->seq_kv; ++j) {
        size_t from = which == 1 ? avk_kv_offset(p, s->b, s->kv_head, j) : avk_v_offset(p, s->b, s->kv_head, j);
        memcpy(out + (size_t)j * D, full + from, sizeof(float) * (size_t)D);
    }
}

/* The reference gradients of one slice into dq, dk, dv. */
static attnvk_status slice_reference(const bench_grad_workload *w, const bench_grad_slice *s, float *dq, float *dk,
                                     float *dv)
{
    const attnvk_problem *p = &w->base.p;
    const attnvk_problem sp = slice_problem(p);
    const int G = sp.heads;
    float *q = malloc(sizeof(float) * bench_grad_slice_elements(p, 0));
    float *k = malloc(sizeof(float) * bench_grad_slice_elements(p, 1));
    float *v = malloc(sizeof(float) * bench_grad_slice_elements(p, 2));
    float *d_o = malloc(sizeof(float) * (size_t)G * p->seq_q * avk_head_dim_v(p));
    attnvk_status st = ATTNVK_OK;
    if (!q || !k || !v || !d_o) {
        st = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the reference gradients");
    } else {
        bench_grad_gather(p, s, 0, w->base.q, q);
        bench_grad_gather(p, s, 1, w->base.k, k);
        bench_grad_gather(p, s, 2, w->base.v, v);
        bench_grad_gather(p, s, 3, w->d_o, d_o);
        const float *mask = NULL;
        if (p->mask) { /* [mask_batch][mask_heads][Nq][Nk]: the slice's heads are contiguous */
            size_t plane = (size_t)p->seq_q * p->seq_kv, mb = p->mask_batch > 1 ? (size_t)s->b : 0;
            size_t mh = p->mask_heads > 1 ? (size_t)s->kv_head * G : 0;
            mask = w->base.mask + (mb * p->mask_heads + mh) * plane;
        }
        const attnvk_host_inputs in = {.q = q, .k = k, .v = v, .mask = mask,
                                       .sinks = w->base.sinks ? w->base.sinks + (size_t)s->kv_head * G : NULL,
                                       .alibi_slopes = w->base.slopes ? w->base.slopes + (size_t)s->kv_head * G : NULL};
        const attnvk_host_grads g = {.d_o = d_o, .dq = dq, .dk = dk, .dv = dv};
        attnvk_reference_backward(&sp, &in, &g);
    }
    free(q);
    free(k);
    free(v);
    free(d_o);
    return st;
}

attnvk_status bench_grad_workload_create(const attnvk_problem *p, uint64_t seed, bench_grad_workload *w)
{
    memset(w, 0, sizeof *w);
    attnvk_status s = bench_workload_create(p, seed, bench_workload_wants_full(p), &w->base);
    if (s != ATTNVK_OK) return s;
    const size_t no = attnvk_o_elements(p);
    const int all = 2.5 * attnvk_problem_flops(p) <= full_grad_check_flops;
    w->nslices = all ? p->batch * p->kv_heads : (p->batch * p->kv_heads > 1 ? 2 : 1);
    w->d_o = malloc(sizeof(float) * no);
    w->slices = malloc(sizeof *w->slices * (size_t)w->nslices);
    const size_t nq = bench_grad_slice_elements(p, 0), nk = bench_grad_slice_elements(p, 1),
                 nv = bench_grad_slice_elements(p, 2);
    w->ref_dq = malloc(sizeof(float) * nq * (size_t)w->nslices);
    w->ref_dk = malloc(sizeof(float) * nk * (size_t)w->nslices);
    w->ref_dv = malloc(sizeof(float) * nv * (size_t)w->nslices);
    if (!w->d_o || !w->slices || !w->ref_dq || !w->ref_dk || !w->ref_dv) {
        bench_grad_workload_destroy(w);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for dO and the reference gradients");
    }
    /* dO in the dtype's values, like Q, K and V: every implementation reads the same numbers */
    avk_fill_random_dtype(p->dtype, w->d_o, NULL, no, seed * 3 + 6);
    if (all) {
        for (int i = 0; i < w->nslices; ++i) w->slices[i] = (bench_grad_slice){i / p->kv_heads, i % p->kv_heads};
    } else {
        w->slices[0] = (bench_grad_slice){0, 0};
        if (w->nslices > 1) w->slices[1] = (bench_grad_slice){p->batch - 1, p->kv_heads - 1};
    }
    for (int i = 0; i < w->nslices && s == ATTNVK_OK; ++i)
        s = slice_reference(w, &w->slices[i], w->ref_dq + nq * i, w->ref_dk + nk * i, w->ref_dv + nv * i);
    if (s != ATTNVK_OK) bench_grad_workload_destroy(w);
    return s;
}

void bench_grad_workload_destroy(bench_grad_workload *w)
{
    bench_workload_destroy(&w->base);
    free(w->d_o);
    free(w->slices);
    free(w->ref_dq);
    free(w->ref_dk);
    free(w->ref_dv);
    memset(w, 0, sizeof *w);
}
