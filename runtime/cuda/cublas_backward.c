/* cuBLAS's materialised-P backward (issue #18): the shared unfused plan
 * (core/unfused_plan.h) as cublasGemmStridedBatchedEx calls around
 * native/softmax.cu's backward row kernel, as opencl/cl_clblast_backward.c
 * runs it on CLBlast:
 *   S = scale Q.K^T, dP = dO.V^T      f32 [B*H][Nq][Nk] (the forward's scores buffer, and dP)
 *   row kernel: D_i, P = exp(S' - LSE) over S, dS = P (dP - D_i) over dP, in the problem's type
 *   dV = P^T.dO, dK = scale dS^T.Q, dQ = scale dS.K, f32 accumulation into the gradients
 *     (f32 problems) or an f32 workspace converted at the end (f16/bf16)
 *   d(sink) = -sum exp(sink - LSE) D_i, per head in a fixed order.
 * cuBLAS is column-major: row-major C = op(A).op(B) runs as C^T = op(B)^T.op(A)^T.
 * GQA sums dK/dV in one GEMM over the group's stacked rows (BHSD) or as
 * beta = 1 GEMMs in stream order (BSHD): no atomics, deterministic. */
#include "cuda/cublas_internal.h"
#include "core/error.h"
#include "core/kv_cache.h" /* avk_problem_features */

#include <stdint.h>
#include <stdio.h>

const char *avk_cublas_bwd_entry(attnvk_dtype d, int mod)
{
    static const char *const names[2][3] = {
        {"avk_softmax_bwd_f32", "avk_softmax_bwd_f16", "avk_softmax_bwd_bf16"},
        {"avk_softmax_bwd_f32_mod", "avk_softmax_bwd_f16_mod", "avk_softmax_bwd_bf16_mod"}};
    return names[mod != 0][d == ATTNVK_F16 ? 1 : d == ATTNVK_BF16 ? 2 : 0];
}

static attnvk_status alloc(avk_cuda_device *dev, uint64_t bytes, const char *what, CUdeviceptr *out)
{
    CUresult r = dev->cu->cuMemAlloc(out, (size_t)bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuBLAS unfused backward could not allocate its %llu-byte %s",
                        (unsigned long long)bytes, what);
    return avk_cuda_check(dev, r, "cuMemAlloc(cuBLAS backward)");
}

/* Kernels and buffers, on the first backward call. */
static attnvk_status make_backward(avk_cuda_device *dev, avk_cublas_unfused *k)
{
    if (k->bwd_rows) return ATTNVK_OK;
    const attnvk_problem *p = &k->problem;
    const uint64_t rows = (uint64_t)p->batch * p->heads * p->seq_q;
    const uint64_t grads = p->dtype == ATTNVK_F32 ? 0
                                                  : (uint64_t)(attnvk_q_elements(p) + attnvk_kv_elements(p) +
                                                               attnvk_v_elements(p)) * sizeof(float);
    attnvk_status s = alloc(dev, k->plan.scores_bytes, "dP/dS workspace (B*H*Nq*Nk f32)", &k->bwd_dp);
    if (s == ATTNVK_OK) s = alloc(dev, rows * sizeof(float), "d(sink) shares", &k->bwd_share);
    if (s == ATTNVK_OK && grads) s = alloc(dev, grads, "f32 gradient workspace", &k->bwd_grads);
    CUfunction f[3] = {0};
    const char *names[3] = {avk_cublas_bwd_entry(p->dtype, k->score_mod), "avk_sink_grad",
                            p->dtype == ATTNVK_BF16 ? "avk_convert_bf16" : "avk_convert_f16"};
    for (int i = 0; i < 3 && s == ATTNVK_OK; ++i)
        s = avk_cuda_check(dev, dev->cu->cuModuleGetFunction(&f[i], k->module, names[i]), names[i]);
    if (s != ATTNVK_OK) return s;
    k->bwd_rows = f[0], k->sink_grad = f[1], k->convert = f[2];
    return ATTNVK_OK;
}

/* each plan operand's buffer; S, dP and the gradients are written in f32 */
typedef struct operands {
    CUdeviceptr base[AVK_UNFUSED_DV + 1];
} operands;

static operands operands_of(const avk_cublas_unfused *k, const avk_backward_dispatch *a)
{
    const attnvk_problem *p = &k->problem;
    operands o = {{0}};
    o.base[AVK_UNFUSED_Q] = avk_cuda_ptr(a->fwd.q), o.base[AVK_UNFUSED_K] = avk_cuda_ptr(a->fwd.k);
    o.base[AVK_UNFUSED_V] = avk_cuda_ptr(a->fwd.v), o.base[AVK_UNFUSED_O] = avk_cuda_ptr(a->d_o);
    o.base[AVK_UNFUSED_S] = k->scores, o.base[AVK_UNFUSED_DP] = k->bwd_dp;
    if (p->dtype == ATTNVK_F32) {
        o.base[AVK_UNFUSED_DQ] = avk_cuda_ptr(a->dq), o.base[AVK_UNFUSED_DK] = avk_cuda_ptr(a->dk);
        o.base[AVK_UNFUSED_DV] = avk_cuda_ptr(a->dv);
    } else {
        o.base[AVK_UNFUSED_DQ] = k->bwd_grads;
        o.base[AVK_UNFUSED_DK] = o.base[AVK_UNFUSED_DQ] + attnvk_q_elements(p) * sizeof(float);
        o.base[AVK_UNFUSED_DV] = o.base[AVK_UNFUSED_DK] + attnvk_kv_elements(p) * sizeof(float);
    }
    return o;
}

/* One plan GEMM. Inputs are in the problem's type: Q, K, V, dO, and P/dS
 * in place over the f32 S/dP rows (pitch and offsets counted in f32). */
static attnvk_status run_gemm(avk_cublas_unfused *k, const operands *o, const avk_unfused_gemm *g)
{
    const attnvk_problem *p = &k->problem;
    const size_t es = attnvk_dtype_size(p->dtype);
    const cudaDataType io = avk_cublas_type(p->dtype);
    const long long per_f32 = (long long)(sizeof(float) / es);
    const int a_scores = g->a == AVK_UNFUSED_S || g->a == AVK_UNFUSED_DP;
    const int b_scores = g->b == AVK_UNFUSED_S || g->b == AVK_UNFUSED_DP;
    const long long am = a_scores ? per_f32 : 1, bm = b_scores ? per_f32 : 1;
    const char *a = (const char *)(uintptr_t)o->base[g->a] + g->a_offset * am * (long long)es;
    const char *b = (const char *)(uintptr_t)o->base[g->b] + g->b_offset * bm * (long long)es;
    char *c = (char *)(uintptr_t)o->base[g->c] + g->c_offset * (long long)sizeof(float);
    const float alpha = g->scaled ? k->scale : 1.0f, beta = g->accumulate ? 1.0f : 0.0f;
    /* C^T (n x m) = op(B)^T (n x k) . op(A)^T (k x m) */
    return avk_cublas_gemm(k, g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, g->n,
                           g->m, g->k, &alpha, b, io, (int)(g->ldb * bm), g->b_stride * bm, a, io, (int)(g->lda * am),
                           g->a_stride * am, &beta, c, CUDA_R_32F, g->ldc, g->c_stride, g->count, g->what);
}

static attnvk_status launch(avk_cuda_device *dev, CUfunction f, unsigned blocks, unsigned threads, void **args,
                            const char *what)
{
    return avk_cuda_check(dev, dev->cu->cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, dev->stream, args, NULL),
                          what);
}

static attnvk_status run_rows(avk_cuda_device *dev, avk_cublas_unfused *k, const avk_backward_dispatch *a)
{
    const attnvk_problem *p = &k->problem;
    avk_unfused_row_args r;
    avk_unfused_row_args_of(p, avk_cublas_softmax_flags(p), &r);
    CUdeviceptr lse = avk_cuda_ptr(a->fwd.lse), o = avk_cuda_ptr(a->fwd.o), d_o = avk_cuda_ptr(a->d_o);
    CUdeviceptr slopes = avk_cuda_ptr(a->fwd.alibi_slopes), sinks = avk_cuda_ptr(a->fwd.sinks);
    CUdeviceptr mask = avk_cuda_ptr(a->fwd.mask);
    if ((p->alibi && !slopes) || (p->sinks && !sinks) || (p->mask && !mask))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "cuBLAS unfused backward: the problem's ALiBi slopes, sinks or mask buffer is missing");
    void *args[] = {&k->scores, &k->bwd_dp,    &lse,    &o,        &d_o,          &k->bwd_share, &r.seq_q, &r.seq_kv,
                    &r.dv,      &r.o_batch,    &r.o_head, &r.o_row, &r.causal,     &r.heads,      &r.flags, &r.window_left,
                    &r.window_right, &r.softcap, &slopes, &sinks,  &mask,         &r.mask_b,     &r.mask_h};
    const unsigned rows = (unsigned)((size_t)p->batch * p->heads * p->seq_q);
    attnvk_status s = launch(dev, k->bwd_rows, rows, (unsigned)k->threads, args, "cuLaunchKernel(backward rows)");
    if (s != ATTNVK_OK || !a->d_sinks) return s;
    CUdeviceptr d_sinks = avk_cuda_ptr(a->d_sinks);
    void *sink_args[] = {&k->bwd_share, &d_sinks, &r.batch, &r.heads, &r.seq_q};
    return launch(dev, k->sink_grad, (unsigned)p->heads, (unsigned)k->threads, sink_args, "cuLaunchKernel(d(sink))");
}

/* f32 workspace gradients into the 16-bit outputs */
static attnvk_status convert_grads(avk_cuda_device *dev, avk_cublas_unfused *k, const operands *o,
                                   const avk_backward_dispatch *a)
{
    const attnvk_problem *p = &k->problem;
    const avk_unfused_operand which[3] = {AVK_UNFUSED_DQ, AVK_UNFUSED_DK, AVK_UNFUSED_DV};
    const avk_bbuf *dst[3] = {a->dq, a->dk, a->dv};
    const size_t count[3] = {attnvk_q_elements(p), attnvk_kv_elements(p), attnvk_v_elements(p)};
    attnvk_status s = ATTNVK_OK;
    for (int i = 0; i < 3 && s == ATTNVK_OK; ++i) {
        CUdeviceptr src = o->base[which[i]], out = avk_cuda_ptr(dst[i]);
        long long n = (long long)count[i];
        void *args[] = {&src, &out, &n};
        const size_t blocks = (count[i] + 255) / 256;
        s = launch(dev, k->convert, (unsigned)(blocks < 65535 ? blocks : 65535), 256, args, "cuLaunchKernel(convert)");
    }
    return s;
}

typedef struct cublas_steps {
    avk_cuda_device *dev;
    avk_cublas_unfused *k;
    const avk_backward_dispatch *a;
    operands o;
} cublas_steps;

static attnvk_status step_gemm(void *ctx, const avk_unfused_gemm *g)
{
    cublas_steps *c = ctx;
    return run_gemm(c->k, &c->o, g);
}

static attnvk_status step_rows(void *ctx)
{
    cublas_steps *c = ctx;
    return run_rows(c->dev, c->k, c->a);
}

static attnvk_status step_convert(void *ctx)
{
    cublas_steps *c = ctx;
    return convert_grads(c->dev, c->k, &c->o, c->a);
}

attnvk_status avk_cublas_unfused_backward(avk_cuda_device *dev, avk_cublas_unfused *k, const avk_backward_dispatch *a)
{
    attnvk_status s = make_backward(dev, k);
    if (s != ATTNVK_OK) return s;
    cublas_steps c = {.dev = dev, .k = k, .a = a, .o = operands_of(k, a)};
    const avk_unfused_backward_steps steps = {.ctx = &c, .gemm = step_gemm, .rows = step_rows, .convert = step_convert};
    s = avk_unfused_backward_run(&k->problem, &k->plan, &steps);
    if (s == ATTNVK_OK) {
        snprintf(a->info->implementation, sizeof a->info->implementation, "cublas");
        snprintf(a->info->variant, sizeof a->info->variant, "cublas-unfused-bwd");
    }
    return s;
}
