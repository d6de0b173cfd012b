/* rocBLAS's materialised-P backward (issue #18): the shared unfused plan
 * (core/unfused_plan.h) as rocblas_gemm_strided_batched_ex calls around
 * kernels/softmax_rows.hip's backward row kernel, as cuda/cublas_backward.c
 * runs it on cuBLAS and opencl/cl_clblast_backward.c on CLBlast:
 *   S = scale Q.K^T, dP = dO.V^T      f32 [B*H][Nq][Nk] (the forward's scores buffer, and dP)
 *   row kernel: D_i, P = exp(S' - LSE) over S, dS = P (dP - D_i) over dP, in the problem's type
 *   dV = P^T.dO, dK = scale dS^T.Q, dQ = scale dS.K, f32 accumulation into the gradients
 *     (f32 problems) or an f32 workspace converted at the end (f16/bf16)
 *   d(sink) = -sum exp(sink - LSE) D_i, per head in a fixed order.
 * rocBLAS is column-major: row-major C = op(A).op(B) runs as C^T = op(B)^T.op(A)^T.
 * GQA sums dK/dV in one GEMM over the group's stacked rows (BHSD) or as
 * beta = 1 GEMMs in stream order (BSHD), and the kernels use no atomics.
 * rocBLAS's GEMMs themselves may split k across workgroups summed with
 * atomics where the handle's atomics mode allows it (the library's default
 * in the ROCm 6 releases): `deterministic` runs this backward's GEMMs with
 * rocblas_atomics_not_allowed (restoring the handle's mode after), which
 * makes two runs bit-identical; a rocBLAS without rocblas_set_atomics_mode
 * (before ROCm 3.8) refuses it. Build-verified only: no AMD GPU here. */
#include "hip/hip_rocblas_internal.h"
#include "core/error.h"
#include "core/kv_cache.h" /* avk_problem_features */
#include "core/unfused_plan.h"
#include "hip/hip_modules.h"

#include <stdint.h>
#include <stdlib.h>

/* workgroup of the f32-to-16-bit conversion, and its grid's cap */
enum { CONVERT_THREADS = 256, CONVERT_MAX_BLOCKS = 65535 };

static const char *row_entry(attnvk_dtype d, int mod)
{
    static const char *const names[2][3] = {
        {"avk_softmax_bwd_f32", "avk_softmax_bwd_f16", "avk_softmax_bwd_bf16"},
        {"avk_softmax_bwd_f32_mod", "avk_softmax_bwd_f16_mod", "avk_softmax_bwd_bf16_mod"}};
    return names[mod != 0][d == ATTNVK_F16 ? 1 : d == ATTNVK_BF16 ? 2 : 0];
}

void avk_hip_rocblas_backward_free(avk_hip_device *dev, avk_hip_rocblas_kernel *k)
{
    void *bufs[] = {k->bwd_dp, k->bwd_share, k->bwd_grads};
    for (int i = 0; i < 3; ++i)
        if (bufs[i]) dev->hip->hipFree(bufs[i]);
    k->bwd_dp = k->bwd_share = k->bwd_grads = NULL;
    k->bwd_rows = k->sink_grad = k->convert = NULL;
}

/* A workspace the device's free memory must hold; short of it, UNSUPPORTED with the bytes. */
static attnvk_status alloc(avk_hip_device *dev, uint64_t bytes, const char *what, void **out)
{
    size_t free_bytes = 0, total = 0;
    attnvk_status s = avk_hip_check(dev, dev->hip->hipMemGetInfo(&free_bytes, &total), "hipMemGetInfo");
    if (s != ATTNVK_OK) return s;
    if (bytes > free_bytes || dev->hip->hipMalloc(out, (size_t)bytes) != hipSuccess) {
        *out = NULL;
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "rocblas unfused backward could not allocate its %llu-byte %s (%zu bytes free)",
                        (unsigned long long)bytes, what, free_bytes);
    }
    return ATTNVK_OK;
}

/* Kernels (from the forward's softmax module) and buffers, on the first backward call. */
static attnvk_status make_backward(avk_hip_device *dev, avk_hip_rocblas_kernel *k, const avk_unfused_plan *plan)
{
    if (k->bwd_rows) return ATTNVK_OK;
    const attnvk_problem *p = &k->p;
    const uint64_t rows = (uint64_t)p->batch * p->heads * p->seq_q;
    const uint64_t grads = p->dtype == ATTNVK_F32 ? 0
                                                  : (uint64_t)(attnvk_q_elements(p) + attnvk_kv_elements(p) +
                                                               attnvk_v_elements(p)) * sizeof(float);
    attnvk_status s = ATTNVK_OK;
    if (!k->bwd_dp) s = alloc(dev, plan->scores_bytes, "dP/dS workspace (B*H*Nq*Nk f32)", &k->bwd_dp);
    if (s == ATTNVK_OK && !k->bwd_share) s = alloc(dev, rows * sizeof(float), "d(sink) shares", &k->bwd_share);
    if (s == ATTNVK_OK && grads && !k->bwd_grads) s = alloc(dev, grads, "f32 gradient workspace", &k->bwd_grads);
    hipFunction_t f[3] = {0};
    const char *names[3] = {row_entry(p->dtype, k->score_mod), "avk_sink_grad",
                            p->dtype == ATTNVK_BF16 ? "avk_convert_bf16" : "avk_convert_f16"};
    for (int i = 0; i < 3 && s == ATTNVK_OK; ++i) s = avk_hip_get_function(dev, k->module, names[i], &f[i]);
    if (s != ATTNVK_OK) return s;
    k->sink_grad = f[1], k->convert = f[2];
    k->bwd_rows = f[0]; /* last: marks the backward made */
    return ATTNVK_OK;
}

/* each plan operand's buffer; S, dP and the gradients are written in f32 */
typedef struct operands {
    char *base[AVK_UNFUSED_DV + 1];
} operands;

static operands operands_of(const avk_hip_rocblas_kernel *k, const avk_backward_dispatch *a)
{
    const attnvk_problem *p = &k->p;
    operands o = {{0}};
    o.base[AVK_UNFUSED_Q] = a->fwd.q->ptr, o.base[AVK_UNFUSED_K] = a->fwd.k->ptr;
    o.base[AVK_UNFUSED_V] = a->fwd.v->ptr, o.base[AVK_UNFUSED_O] = a->d_o->ptr;
    o.base[AVK_UNFUSED_S] = k->scores, o.base[AVK_UNFUSED_DP] = k->bwd_dp;
    if (p->dtype == ATTNVK_F32) {
        o.base[AVK_UNFUSED_DQ] = a->dq->ptr, o.base[AVK_UNFUSED_DK] = a->dk->ptr, o.base[AVK_UNFUSED_DV] = a->dv->ptr;
    } else {
        o.base[AVK_UNFUSED_DQ] = k->bwd_grads;
        o.base[AVK_UNFUSED_DK] = o.base[AVK_UNFUSED_DQ] + attnvk_q_elements(p) * sizeof(float);
        o.base[AVK_UNFUSED_DV] = o.base[AVK_UNFUSED_DK] + attnvk_kv_elements(p) * sizeof(float);
    }
    return o;
}

/* One plan GEMM. Inputs are in the problem's type: Q, K, V, dO, and P/dS
 * in place over the f32 S/dP rows (pitch and offsets counted in f32). */
static attnvk_status run_gemm(const avk_hip_rocblas_kernel *k, const operands *o, const avk_unfused_gemm *g)
{
    const attnvk_problem *p = &k->p;
    const avk_rocblas_api *api = avk_hip_rocblas_api();
    const size_t es = attnvk_dtype_size(p->dtype);
    const rocblas_datatype io = avk_hip_rocblas_type(p->dtype);
    const int64_t per_f32 = (int64_t)(sizeof(float) / es);
    const int a_scores = g->a == AVK_UNFUSED_S || g->a == AVK_UNFUSED_DP;
    const int b_scores = g->b == AVK_UNFUSED_S || g->b == AVK_UNFUSED_DP;
    const int64_t am = a_scores ? per_f32 : 1, bm = b_scores ? per_f32 : 1;
    const char *a = o->base[g->a] + g->a_offset * am * (int64_t)es;
    const char *b = o->base[g->b] + g->b_offset * bm * (int64_t)es;
    char *c = o->base[g->c] + g->c_offset * (int64_t)sizeof(float);
    const float alpha = g->scaled ? attnvk_problem_scale(p) : 1.0f, beta = g->accumulate ? 1.0f : 0.0f;
    /* C^T (n x m) = op(B)^T (n x k) . op(A)^T (k x m); D is C */
    const rocblas_operation ta = g->trans_b ? rocblas_operation_transpose : rocblas_operation_none;
    const rocblas_operation tb = g->trans_a ? rocblas_operation_transpose : rocblas_operation_none;
    rocblas_status r = api->gemm(k->handle, ta, tb, g->n, g->m, g->k, &alpha, b, io, (rocblas_int)(g->ldb * bm),
                                 g->b_stride * bm, a, io, (rocblas_int)(g->lda * am), g->a_stride * am, &beta, c,
                                 rocblas_datatype_f32_r, g->ldc, g->c_stride, c, rocblas_datatype_f32_r, g->ldc,
                                 g->c_stride, g->count, rocblas_datatype_f32_r, rocblas_gemm_algo_standard, 0, 0);
    return avk_hip_rocblas_check(r, g->what);
}

static attnvk_status launch(avk_hip_device *dev, hipFunction_t f, unsigned blocks, unsigned threads, void **args,
                            const char *what)
{
    const hipError_t e = dev->hip->hipModuleLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, dev->stream, args, NULL);
    return avk_hip_check(dev, e, what);
}

static attnvk_status run_rows(avk_hip_device *dev, avk_hip_rocblas_kernel *k, const avk_backward_dispatch *a)
{
    const attnvk_problem *p = &k->p;
    avk_unfused_row_args r;
    avk_unfused_row_args_of(p, avk_hip_rocblas_softmax_flags(p), &r);
    void *lse = a->fwd.lse->ptr, *o = a->fwd.o->ptr, *d_o = a->d_o->ptr;
    void *slopes = a->fwd.alibi_slopes ? a->fwd.alibi_slopes->ptr : NULL;
    void *sinks = a->fwd.sinks ? a->fwd.sinks->ptr : NULL, *mask = a->fwd.mask ? a->fwd.mask->ptr : NULL;
    if ((p->alibi && !slopes) || (p->sinks && !sinks) || (p->mask && !mask))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "rocblas unfused backward: the problem's ALiBi slopes, sinks or mask buffer is missing");
    void *args[] = {&k->scores, &k->bwd_dp,    &lse,    &o,        &d_o,          &k->bwd_share, &r.seq_q, &r.seq_kv,
                    &r.dv,      &r.o_batch,    &r.o_head, &r.o_row, &r.causal,     &r.heads,      &r.flags, &r.window_left,
                    &r.window_right, &r.softcap, &slopes, &sinks,  &mask,         &r.mask_b,     &r.mask_h};
    /* prepare checked rows x threads against one launch's limit */
    const unsigned rows = (unsigned)((size_t)p->batch * p->heads * p->seq_q), threads = (unsigned)k->softmax_threads;
    attnvk_status s = launch(dev, k->bwd_rows, rows, threads, args, "hipModuleLaunchKernel(backward rows)");
    if (s != ATTNVK_OK || !a->d_sinks) return s;
    void *d_sinks = a->d_sinks->ptr;
    void *sink_args[] = {&k->bwd_share, &d_sinks, &r.batch, &r.heads, &r.seq_q};
    return launch(dev, k->sink_grad, (unsigned)p->heads, threads, sink_args, "hipModuleLaunchKernel(d(sink))");
}

/* f32 workspace gradients into the 16-bit outputs */
static attnvk_status convert_grads(avk_hip_device *dev, avk_hip_rocblas_kernel *k, const operands *o,
                                   const avk_backward_dispatch *a)
{
    const attnvk_problem *p = &k->p;
    const avk_unfused_operand which[3] = {AVK_UNFUSED_DQ, AVK_UNFUSED_DK, AVK_UNFUSED_DV};
    const avk_bbuf *dst[3] = {a->dq, a->dk, a->dv};
    const size_t count[3] = {attnvk_q_elements(p), attnvk_kv_elements(p), attnvk_v_elements(p)};
    attnvk_status s = ATTNVK_OK;
    for (int i = 0; i < 3 && s == ATTNVK_OK; ++i) {
        void *src = o->base[which[i]], *out = dst[i]->ptr;
        long long n = (long long)count[i];
        void *args[] = {&src, &out, &n};
        const size_t blocks = (count[i] + CONVERT_THREADS - 1) / CONVERT_THREADS;
        s = launch(dev, k->convert, (unsigned)(blocks < CONVERT_MAX_BLOCKS ? blocks : CONVERT_MAX_BLOCKS),
                   CONVERT_THREADS, args, "hipModuleLaunchKernel(convert)");
    }
    return s;
}

typedef struct rocblas_steps {
    avk_hip_device *dev;
    avk_hip_rocblas_kernel *k;
    const avk_backward_dispatch *a;
    operands o;
} rocblas_steps;

static attnvk_status step_gemm(void *ctx, const avk_unfused_gemm *g)
{
    rocblas_steps *c = ctx;
    return run_gemm(c->k, &c->o, g);
}

static attnvk_status step_rows(void *ctx)
{
    rocblas_steps *c = ctx;
    return run_rows(c->dev, c->k, c->a);
}

static attnvk_status step_convert(void *ctx)
{
    rocblas_steps *c = ctx;
    return convert_grads(c->dev, c->k, &c->o, c->a);
}

/* The plan's GEMMs and kernels in stream order (core/unfused_plan.h). */
static attnvk_status enqueue(avk_hip_device *dev, avk_hip_rocblas_kernel *k, const avk_unfused_plan *plan,
                             const avk_backward_dispatch *a)
{
    rocblas_steps c = {.dev = dev, .k = k, .a = a, .o = operands_of(k, a)};
    const avk_unfused_backward_steps steps = {.ctx = &c, .gemm = step_gemm, .rows = step_rows, .convert = step_convert};
    return avk_unfused_backward_run(&k->p, plan, &steps);
}

/* deterministic: the handle's atomics mode (in *saved) switched off for this run */
static attnvk_status atomics_off(const avk_hip_rocblas_kernel *k, rocblas_atomics_mode *saved)
{
    const avk_rocblas_api *api = avk_hip_rocblas_api();
    if (!api->get_atomics_mode || !api->set_atomics_mode)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "rocblas backward: the deterministic mode needs rocblas_set_atomics_mode, which this "
                        "rocBLAS lacks (before ROCm 3.8)");
    attnvk_status s = avk_hip_rocblas_check(api->get_atomics_mode(k->handle, saved), "rocblas_get_atomics_mode");
    if (s == ATTNVK_OK)
        s = avk_hip_rocblas_check(api->set_atomics_mode(k->handle, rocblas_atomics_not_allowed),
                                  "rocblas_set_atomics_mode");
    return s;
}

attnvk_status avk_hip_rocblas_backward(avk_hip_device *dev, avk_hip_rocblas_kernel *k, const avk_backward_dispatch *a,
                                       double *device_ms)
{
    *device_ms = 0;
    avk_unfused_plan plan;
    attnvk_status s = avk_unfused_plan_make(&k->p, &plan);
    if (s != ATTNVK_OK) return s;
    rocblas_atomics_mode saved = rocblas_atomics_allowed;
    int restore = 0;
    s = avk_hip_use(dev);
    if (s == ATTNVK_OK) s = make_backward(dev, k, &plan);
    if (s == ATTNVK_OK && a->deterministic) {
        s = atomics_off(k, &saved);
        restore = s == ATTNVK_OK;
    }
    if (s == ATTNVK_OK) s = avk_hip_time_begin(dev);
    if (s == ATTNVK_OK) s = enqueue(dev, k, &plan, a);
    /* waits for the run: the gradients are whole on return */
    if (s == ATTNVK_OK) s = avk_hip_time_end(dev, device_ms);
    if (restore) {
        attnvk_status r = avk_hip_rocblas_check(avk_hip_rocblas_api()->set_atomics_mode(k->handle, saved),
                                                "rocblas_set_atomics_mode (restore)");
        if (s == ATTNVK_OK) s = r;
    }
    avk_unfused_plan_free(&plan);
    return s;
}
