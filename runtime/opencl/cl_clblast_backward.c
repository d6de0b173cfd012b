/* CLBlast's materialised-P backward (issue #18), f32: the shared unfused plan
 * (core/unfused_plan.h) run as CLBlastSgemmBatched calls around
 * opencl/softmax.cl's backward row kernel:
 *   S = scale Q.K^T, dP = dO.V^T          (GEMMs, f32 scores [B*H][Nq][Nk])
 *   P = exp(S' - LSE), dS = P (dP - D)    (avk_softmax_bwd_rows, D_i = rowsum(dO*O))
 *   dV = P^T.dO, dK = scale dS^T.Q, dQ = scale dS.K   (GEMMs into the gradients)
 *   d(sink) = -sum exp(sink - LSE) D       (avk_sink_grad, fixed order)
 * GQA sums dK/dV over a group's heads inside one GEMM (BHSD) or as beta = 1
 * GEMMs in call order (BSHD): no atomics, bit-identical runs. The scores and
 * dP are allocated whole on the first call; where they cannot be, UNSUPPORTED. */
#include "opencl/cl_kernels.h"
#include "opencl/cl_program.h"

#include "core/error.h"
#include "core/unfused_plan.h"

#include <stdio.h>
#include <stdlib.h>

enum { BWD_WG = 128 };

/* Kernels and the two score-sized buffers, on the first backward call. */
static attnvk_status make_backward(avk_bdev *dev, avk_bkernel *k, const avk_unfused_plan *plan)
{
    if (k->bwd_rows) return ATTNVK_OK;
    const attnvk_problem *p = &k->p;
    const uint64_t elements = plan->scores_bytes / sizeof(float), max_elements = avk_clblast_max_elements();
    const uint64_t io_bytes = (uint64_t)(2 * attnvk_q_elements(p) + 3 * attnvk_o_elements(p) +
                                         2 * attnvk_kv_elements(p) + 2 * attnvk_v_elements(p)) *
                              sizeof(float);
    if (elements > max_elements)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "clblast backward: the B*H*Nq*Nk scores hold %llu elements, past CLBlast's 32-bit indexing "
                        "(limit %llu)",
                        (unsigned long long)elements, (unsigned long long)max_elements);
    if (plan->scores_bytes > dev->caps.max_alloc || 2 * plan->scores_bytes + io_bytes > dev->caps.global_mem)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "clblast backward needs two %llu-byte score buffers (S/P and dP/dS, B*H*Nq*Nk f32) beside "
                        "%llu bytes of tensors; device allows %llu per allocation, %llu in all",
                        (unsigned long long)plan->scores_bytes, (unsigned long long)io_bytes,
                        (unsigned long long)dev->caps.max_alloc, (unsigned long long)dev->caps.global_mem);
    char options[128];
    snprintf(options, sizeof options, "-cl-std=CL1.2 -DAVK_SOFTMAX_WG=%d", BWD_WG);
    const avk_cl_source sources[] = {AVK_CL_SRC_SOFTMAX};
    cl_program prog;
    const size_t rows = (size_t)p->batch * p->heads * p->seq_q;
    attnvk_status s = avk_cl_program(dev, sources, 1, options, &prog);
    if (s == ATTNVK_OK) s = avk_cl_kernel(dev, prog, "avk_softmax_bwd_rows", BWD_WG, &k->bwd_rows);
    if (s == ATTNVK_OK) s = avk_cl_kernel(dev, prog, "avk_sink_grad", BWD_WG, &k->bwd_sinks);
    if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, (size_t)plan->scores_bytes, "clblast backward S/P", &k->bwd_scores);
    if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, (size_t)plan->scores_bytes, "clblast backward dP/dS", &k->bwd_dp);
    if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, rows * sizeof(float), "clblast d(sink) shares", &k->bwd_share);
    return s;
}

static cl_mem operand_mem(const avk_bkernel *k, const avk_backward_dispatch *a, avk_unfused_operand o)
{
    switch (o) {
    case AVK_UNFUSED_Q: return a->fwd.q->mem;
    case AVK_UNFUSED_K: return a->fwd.k->mem;
    case AVK_UNFUSED_V: return a->fwd.v->mem;
    case AVK_UNFUSED_O: return a->d_o->mem; /* the GEMMs read dO */
    case AVK_UNFUSED_S: return k->bwd_scores;
    case AVK_UNFUSED_DP: return k->bwd_dp;
    case AVK_UNFUSED_DQ: return a->dq->mem;
    case AVK_UNFUSED_DK: return a->dk->mem;
    default: return a->dv->mem;
    }
}

/* One plan GEMM as a batched call: per-entry offsets from the strides. */
static attnvk_status run_gemm(avk_bdev *dev, const avk_bkernel *k, const avk_backward_dispatch *a,
                              const avk_unfused_gemm *g, size_t *off, float *coef)
{
    const size_t n = (size_t)g->count;
    size_t *ao = off, *bo = off + n, *co = off + 2 * n;
    float *alphas = coef, *betas = coef + n;
    const float alpha = g->scaled ? attnvk_problem_scale(&k->p) : 1.0f, beta = g->accumulate ? 1.0f : 0.0f;
    for (size_t i = 0; i < n; ++i) {
        ao[i] = (size_t)(g->a_offset + (int64_t)i * g->a_stride);
        bo[i] = (size_t)(g->b_offset + (int64_t)i * g->b_stride);
        co[i] = (size_t)(g->c_offset + (int64_t)i * g->c_stride);
        alphas[i] = alpha, betas[i] = beta;
    }
    return avk_clblast_sgemm(dev, g->trans_a, g->trans_b, (size_t)g->m, (size_t)g->n, (size_t)g->k, alphas,
                             operand_mem(k, a, g->a), ao, (size_t)g->lda, operand_mem(k, a, g->b), bo, (size_t)g->ldb,
                             betas, operand_mem(k, a, g->c), co, (size_t)g->ldc, n, g->what);
}

#define SET_ARG(kernel, idx, value)                                                          \
    do {                                                                                     \
        cl_int e_ = avk_cl.SetKernelArg((kernel), (cl_uint)(idx), sizeof(value), &(value)); \
        if (e_ != CL_SUCCESS) return avk_cl_fail(e_, "clSetKernelArg");                      \
    } while (0)

/* The row kernel over every (b, h, i), then d(sink) per head. */
static attnvk_status run_rows(avk_bdev *dev, const avk_bkernel *k, const avk_backward_dispatch *a)
{
    const attnvk_problem *p = &k->p;
    const avk_cl_strides so = avk_cl_layout_strides(p, attnvk_problem_head_dim_v(p));
    const cl_long o_batch = so.q_batch, o_head = so.q_head, o_row = so.q_row;
    const cl_int nq = p->seq_q, nk = p->seq_kv, dv = attnvk_problem_head_dim_v(p), causal = p->causal,
                 heads = p->heads, batch = p->batch;
    const cl_int window_left = p->window ? p->window_left : -1, window_right = p->window ? p->window_right : -1;
    const cl_int flags = (p->alibi ? 1 : 0) | (p->sinks ? 2 : 0) | (p->mask ? 4 : 0) |
                         (p->mask && p->mask_dtype == ATTNVK_F16 ? 8 : 0) | (p->align == ATTNVK_ALIGN_TOP_LEFT ? 16 : 0);
    const cl_float softcap = p->softcap;
    const cl_mem slopes = a->fwd.alibi_slopes ? a->fwd.alibi_slopes->mem : NULL;
    const cl_mem sinks = a->fwd.sinks ? a->fwd.sinks->mem : NULL, mask = a->fwd.mask ? a->fwd.mask->mem : NULL;
    const cl_long mask_pair = (cl_long)p->seq_q * p->seq_kv;
    const cl_long mask_b = p->mask && p->mask_batch > 1 ? mask_pair * p->mask_heads : 0,
                  mask_h = p->mask && p->mask_heads > 1 ? mask_pair : 0;
    if ((p->alibi && !slopes) || (p->sinks && !sinks) || (p->mask && !mask))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "clblast backward: the problem's ALiBi slopes, sinks or mask buffer is missing");
    const cl_mem args[] = {k->bwd_scores, k->bwd_dp, a->fwd.lse->mem, a->fwd.o->mem, a->d_o->mem, k->bwd_share};
    for (int i = 0; i < 6; ++i) SET_ARG(k->bwd_rows, i, args[i]);
    SET_ARG(k->bwd_rows, 6, nq);
    SET_ARG(k->bwd_rows, 7, nk);
    SET_ARG(k->bwd_rows, 8, dv);
    SET_ARG(k->bwd_rows, 9, o_batch);
    SET_ARG(k->bwd_rows, 10, o_head);
    SET_ARG(k->bwd_rows, 11, o_row);
    SET_ARG(k->bwd_rows, 12, causal);
    SET_ARG(k->bwd_rows, 13, heads);
    SET_ARG(k->bwd_rows, 14, flags);
    SET_ARG(k->bwd_rows, 15, window_left);
    SET_ARG(k->bwd_rows, 16, window_right);
    SET_ARG(k->bwd_rows, 17, softcap);
    SET_ARG(k->bwd_rows, 18, slopes);
    SET_ARG(k->bwd_rows, 19, sinks);
    SET_ARG(k->bwd_rows, 20, mask);
    SET_ARG(k->bwd_rows, 21, mask_b);
    SET_ARG(k->bwd_rows, 22, mask_h);
    const size_t global[3] = {BWD_WG, (size_t)p->seq_q, (size_t)p->batch * p->heads}, local[3] = {BWD_WG, 1, 1};
    cl_int err = avk_cl.EnqueueNDRangeKernel(dev->queue, k->bwd_rows, 3, NULL, global, local, 0, NULL, NULL);
    if (err != CL_SUCCESS) return avk_cl_fail(err, "enqueue the backward row kernel");
    if (!a->d_sinks) return ATTNVK_OK;
    SET_ARG(k->bwd_sinks, 0, k->bwd_share);
    SET_ARG(k->bwd_sinks, 1, a->d_sinks->mem);
    SET_ARG(k->bwd_sinks, 2, batch);
    SET_ARG(k->bwd_sinks, 3, heads);
    SET_ARG(k->bwd_sinks, 4, nq);
    const size_t sg[2] = {BWD_WG, (size_t)p->heads}, sl[2] = {BWD_WG, 1};
    err = avk_cl.EnqueueNDRangeKernel(dev->queue, k->bwd_sinks, 2, NULL, sg, sl, 0, NULL, NULL);
    return err == CL_SUCCESS ? ATTNVK_OK : avk_cl_fail(err, "enqueue the d(sink) kernel");
}

/* A marker kernel: its event bounds the time of what CLBlast enqueues. */
static attnvk_status mark(avk_bdev *dev, avk_bkernel *k, cl_event *event)
{
    const cl_int never = 0;
    SET_ARG(k->timestamp, 0, k->dummy);
    SET_ARG(k->timestamp, 1, never);
    const size_t one = 1;
    cl_int err = avk_cl.EnqueueNDRangeKernel(dev->queue, k->timestamp, 1, NULL, &one, &one, 0, NULL, event);
    return err == CL_SUCCESS ? ATTNVK_OK : avk_cl_fail(err, "enqueue timestamp kernel");
}

attnvk_status avk_clblast_backward(avk_bdev *dev, avk_bkernel *k, const avk_backward_dispatch *a, double *ms)
{
    avk_unfused_plan plan;
    attnvk_status s = avk_unfused_plan_make(&k->p, &plan);
    if (s != ATTNVK_OK) return s;
    s = make_backward(dev, k, &plan);
    int most = 1;
    for (int c = 0; c < plan.call_count; ++c) most = plan.calls[c].count > most ? plan.calls[c].count : most;
    size_t *off = malloc(sizeof(size_t) * 3 * (size_t)most);
    float *coef = malloc(sizeof(float) * 2 * (size_t)most);
    cl_event first = NULL, last = NULL;
    if (s == ATTNVK_OK && (!off || !coef)) s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (s == ATTNVK_OK) s = mark(dev, k, &first);
    /* S and dP of every call, the row step over all of them, then the gradients */
    for (int c = 0; c < plan.call_count && s == ATTNVK_OK; ++c)
        for (int i = 0; i < AVK_UNFUSED_BWD_ROW_STEP && s == ATTNVK_OK; ++i) {
            avk_unfused_gemm g;
            avk_unfused_backward_gemm(&k->p, &plan, c, i, &g);
            s = run_gemm(dev, k, a, &g, off, coef);
        }
    if (s == ATTNVK_OK) s = run_rows(dev, k, a);
    for (int c = 0; c < plan.call_count && s == ATTNVK_OK; ++c)
        for (int i = AVK_UNFUSED_BWD_ROW_STEP; i < AVK_UNFUSED_BWD_GEMMS && s == ATTNVK_OK; ++i) {
            avk_unfused_gemm g;
            avk_unfused_backward_gemm(&k->p, &plan, c, i, &g);
            s = run_gemm(dev, k, a, &g, off, coef);
        }
    if (s == ATTNVK_OK) s = mark(dev, k, &last);
    if (s == ATTNVK_OK) s = avk_cl_wait_timed(dev, first, last, ms);
    if (first || last) avk_cl.Finish(dev->queue);
    if (first) avk_cl.ReleaseEvent(first);
    if (last) avk_cl.ReleaseEvent(last);
    free(off);
    free(coef);
    avk_unfused_plan_free(&plan);
    if (s == ATTNVK_OK) {
        snprintf(a->info->implementation, sizeof a->info->implementation, "clblast");
        snprintf(a->info->variant, sizeof a->info->variant, "clblast-unfused-bwd");
    }
    return s;
}
