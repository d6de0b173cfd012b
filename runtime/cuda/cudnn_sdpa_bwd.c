/* cuDNN fused SDPA backward (see cudnn_sdpa_bwd.h).
 *
 * The operation graph is the one cudnn-frontend's composite SDPA backward node
 * emits on cuDNN 9.x, which the runtime-fusion engines recognise as flash
 * attention's backward:
 *   D  = sum_d(dO * O) * 1             (row_dot: a real f32 tensor)
 *   S  = Q x K^T * scale, score modifications (mask as bias, ALiBi)
 *   E  = exp(band(S - stats))          (causal/window -inf after the stats)
 *   dV = E^T x dO                      (E^T in the I/O type; GQA: per query head, then summed)
 *   dS = (dO x V^T - D) * E * scale
 *   dK = dS^T x Q                      (GQA: likewise)
 *   dQ = dS x K                        (through an f32 accumulator, or directly when deterministic)
 *
 * Stats: attnvk's forward LSE (f32 [B][H][Nq], natural log of the sum of
 * exp over the scaled, modified logits, the sink included) is exactly cuDNN's
 * softmax stats (max + log sum, natural log, f32 [B][H][Nq][1]), so the graph
 * reads the LSE buffer the caller's forward wrote: no conversion and no
 * second forward inside the vendor kernel. */
#include "cuda/cudnn_sdpa_bwd.h"
#include "cuda/cudnn_scores.h"
#include "core/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;

/* Device tensors of the variant pack; the last two are the graph's own memory. */
enum {
    BOUND_Q, BOUND_K, BOUND_V, BOUND_O, BOUND_DO, BOUND_STATS, BOUND_DQ, BOUND_DK, BOUND_DV,
    BOUND_MASK, BOUND_ALIBI, BOUND_ROW_DOT, BOUND_DQ_ACCUM, BOUND_COUNT
};
static const int64_t bound_uids[BOUND_COUNT] = {
    AVK_DNN_UID_Q,  AVK_DNN_UID_K,    AVK_DNN_UID_V,            AVK_DNN_UID_O,       AVK_DNN_UID_DO,
    AVK_DNN_UID_STATS, AVK_DNN_UID_DQ, AVK_DNN_UID_DK,          AVK_DNN_UID_DV,      AVK_DNN_UID_MASK,
    AVK_DNN_UID_ALIBI_SLOPES, AVK_DNN_UID_ROW_DOT, AVK_DNN_UID_DQ_ACCUM};

struct avk_cudnn_bwd {
    attnvk_problem problem;
    int deterministic;
    avk_dnn_builder graph; /* tensors, operations, graph, plan: alive while the plan is */
    avk_dnn_plan plan;
    avk_dnn_score_values values; /* by-value scalars: read from here at execute */
    float one;
    cudnnBackendDescriptor_t variant_pack;
    CUdeviceptr bound[BOUND_COUNT]; /* what the variant pack was built for */
    CUdeviceptr workspace, row_dot, dq_accum;
    size_t dq_accum_bytes;
};

static const char *version_text(char *buf, size_t n)
{
    snprintf(buf, n, "%zu.%zu.%zu", avk_dnn_version_number / 10000, avk_dnn_version_number % 10000 / 100,
             avk_dnn_version_number % 100);
    return buf;
}

attnvk_status avk_cudnn_bwd_supports(const attnvk_problem *p, int cc_major, int deterministic, int wants_d_sinks)
{
    const size_t version = avk_dnn_version_number; /* 0: not loaded (the host checks) */
    const int dk = p->head_dim, dv = attnvk_problem_head_dim_v(p);
    char v[32];
    version_text(v, sizeof v);
    if (p->q_format != ATTNVK_KV_DTYPE || p->kv_format != ATTNVK_KV_DTYPE)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cudnn backward: the graph takes 16-bit Q, K and V (no fp8 or "
                                                  "quantized inputs)");
    if (p->softcap > 0)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cudnn backward: a softcap needs its score modifier's bprop in the graph, which attnvk's "
                        "cuDNN backward graph does not have");
    if (wants_d_sinks)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cudnn backward: attnvk's cuDNN backward graph does not compute d(sinks) (run it without a "
                        "d_sinks buffer)");
    if (version == 91000 || version == 91001)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN %s's SDPA backward has known bugs (cudnn-frontend refuses it; 9.10.2 fixes them)", v);
    if (p->seq_q == 1 && p->seq_kv == 1)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN's SDPA backward does not take Nq = Nk = 1");
    if (version && version <= 91500 && p->seq_kv % 128)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN %s's SDPA backward needs Nk a multiple of 128 without a padding mask (Nk=%d; 9.16 "
                        "lifts that)",
                        v, p->seq_kv);
    if (cc_major == 0 || cc_major == 9) {
        /* Hopper: what the forward takes (multiples of 8, <= 256), but 9.11/9.12 only 192/128 in between */
        if (version >= 91100 && version < 91300 && dk > 128 && dk <= 192 && dv > 64 && dv <= 128 && dv != 128 &&
            dk != 192)
            return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                            "cuDNN %s's SDPA backward takes Dk in 129..192 only as Dk=192, Dv=128 (Dk=%d, Dv=%d)", v,
                            dk, dv);
    } else if (cc_major == 10 && version >= 91100) {
        if (dk == 192 ? dv != 128 : dk > 128 || dv > 128)
            return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                            "cuDNN's SDPA backward on Blackwell takes head dims <= 128, or Dk=192 with Dv=128 (Dk=%d, "
                            "Dv=%d)",
                            dk, dv);
    } else if (dk > 128 || dv > 128) {
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN's SDPA backward takes head dims <= 128 on compute capability %d (Dk=%d, Dv=%d)",
                        cc_major, dk, dv);
    }
    if (deterministic && cc_major >= 10)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cudnn backward: cuDNN's deterministic SDPA backward on compute capability %d needs engine "
                        "knobs attnvk does not set",
                        cc_major);
    return ATTNVK_OK;
}

/* A [B][heads][Nk][Nq] view of a [B][heads][Nq][Nk] dense tensor (E^T, dS^T) in type. */
static cudnnBackendDescriptor_t transposed_scores(avk_dnn_builder *b, const char *name, const attnvk_problem *p,
                                                  cudnnDataType_t type, cudnnBackendDescriptor_t scores)
{
    const avk_dnn_shape t = avk_dnn_transposed(avk_dnn_dense(p->batch, p->heads, p->seq_q, p->seq_kv));
    cudnnBackendDescriptor_t view = avk_dnn_virtual(b, name, type, t);
    avk_dnn_reshape(b, name, scores, view);
    return view;
}

/* out = lhs x rhs per query head; with GQA/MQA (Hkv < H) through a virtual
 * [B][H][Nk][dim] product summed over each group of H/Hkv heads into out. */
static void grouped_matmul(avk_dnn_builder *b, const char *name, const attnvk_problem *p, int64_t dim,
                           cudnnBackendDescriptor_t lhs, cudnnBackendDescriptor_t rhs, cudnnBackendDescriptor_t out)
{
    if (p->kv_heads == p->heads) {
        avk_dnn_matmul(b, name, lhs, rhs, out);
        return;
    }
    cudnnBackendDescriptor_t full = avk_dnn_virtual(b, "per query head", avk_dnn_io_type(p->dtype),
                                                    avk_dnn_dense(p->batch, p->heads, p->seq_kv, dim));
    avk_dnn_matmul(b, name, lhs, rhs, full);
    avk_dnn_reduction(b, "sum over the group", CUDNN_REDUCE_TENSOR_ADD, full, out);
}

/* Adds the backward's operations; v and *one hold the by-value scalars. */
static void build_backward(avk_dnn_builder *b, const attnvk_problem *p, avk_dnn_score_values *v, float *one,
                           int deterministic)
{
    const cudnnDataType_t io = avk_dnn_io_type(p->dtype);
    const int64_t B = p->batch, H = p->heads, Hkv = p->kv_heads, Nq = p->seq_q, Nk = p->seq_kv;
    const int64_t Dk = p->head_dim, Dv = attnvk_problem_head_dim_v(p);
    const avk_dnn_shape k_rows = avk_dnn_layout_shape(p, Hkv, Nk, Dk), scores = avk_dnn_dense(B, H, Nq, Nk);
    const avk_dnn_shape per_row = avk_dnn_dense(B, H, Nq, 1);

    cudnnBackendDescriptor_t q = avk_dnn_tensor(b, "Q", AVK_DNN_UID_Q, io, avk_dnn_layout_shape(p, H, Nq, Dk), false);
    cudnnBackendDescriptor_t kt = avk_dnn_tensor(b, "K^T", AVK_DNN_UID_K, io, avk_dnn_transposed(k_rows), false);
    cudnnBackendDescriptor_t vt = avk_dnn_tensor(b, "V^T", AVK_DNN_UID_V, io,
                                                 avk_dnn_transposed(avk_dnn_layout_shape(p, Hkv, Nk, Dv)), false);
    cudnnBackendDescriptor_t o = avk_dnn_tensor(b, "O", AVK_DNN_UID_O, io, avk_dnn_layout_shape(p, H, Nq, Dv), false);
    cudnnBackendDescriptor_t d_o =
        avk_dnn_tensor(b, "dO", AVK_DNN_UID_DO, io, avk_dnn_layout_shape(p, H, Nq, Dv), false);
    cudnnBackendDescriptor_t stats = avk_dnn_tensor(b, "stats (LSE)", AVK_DNN_UID_STATS, f32, per_row, false);
    cudnnBackendDescriptor_t dq = avk_dnn_tensor(b, "dQ", AVK_DNN_UID_DQ, io, avk_dnn_layout_shape(p, H, Nq, Dk), false);
    cudnnBackendDescriptor_t dk = avk_dnn_tensor(b, "dK", AVK_DNN_UID_DK, io, k_rows, false);
    cudnnBackendDescriptor_t dv =
        avk_dnn_tensor(b, "dV", AVK_DNN_UID_DV, io, avk_dnn_layout_shape(p, Hkv, Nk, Dv), false);
    cudnnBackendDescriptor_t scale = avk_dnn_scalar(b, "scale", AVK_DNN_UID_SCALE, f32, &v->scale);
    cudnnBackendDescriptor_t unit = avk_dnn_scalar(b, "one", AVK_DNN_UID_ONE, f32, one);

    /* D = rowsum(dO * O), times the (absent) dropout's 1 as the pattern has it */
    cudnnBackendDescriptor_t d_o_o = avk_dnn_virtual(b, "dO*O", f32, avk_dnn_dense(B, H, Nq, Dv));
    cudnnBackendDescriptor_t row_sum = avk_dnn_virtual(b, "sum dO*O", f32, per_row);
    cudnnBackendDescriptor_t row_dot = avk_dnn_tensor(b, "D", AVK_DNN_UID_ROW_DOT, f32, per_row, false);
    avk_dnn_pointwise(b, "mul_dO_O", CUDNN_POINTWISE_MUL, f32, -1, d_o, o, NULL, d_o_o);
    avk_dnn_reduction(b, "reduce_dO_o", CUDNN_REDUCE_TENSOR_ADD, d_o_o, row_sum);
    avk_dnn_pointwise(b, "scale_dropout_inv", CUDNN_POINTWISE_MUL, f32, -1, row_sum, unit, NULL, row_dot);

    /* E = exp(band(mods(Q.K^T * scale) - stats)) */
    cudnnBackendDescriptor_t s = avk_dnn_virtual(b, "S", f32, scores);
    cudnnBackendDescriptor_t scaled = avk_dnn_virtual(b, "S*scale", f32, scores);
    cudnnBackendDescriptor_t centered = avk_dnn_virtual(b, "S-stats", f32, scores);
    cudnnBackendDescriptor_t e = avk_dnn_virtual(b, "exp(S-stats)", f32, scores);
    avk_dnn_matmul(b, "matmul_Q_KT", q, kt, s);
    avk_dnn_pointwise(b, "mul_s_attn_scale", CUDNN_POINTWISE_MUL, f32, -1, s, scale, NULL, scaled);
    cudnnBackendDescriptor_t logits = avk_dnn_score_values_mods(b, p, v, scaled);
    avk_dnn_pointwise(b, "sub_s_m", CUDNN_POINTWISE_SUB, f32, -1, logits, stats, NULL, centered);
    cudnnBackendDescriptor_t banded = avk_dnn_band_select(b, p, v, centered);
    avk_dnn_pointwise(b, "exp_s", CUDNN_POINTWISE_EXP, f32, -1, banded, NULL, NULL, e);

    /* dV = E^T x dO */
    grouped_matmul(b, "matmul_pT_dO", p, Dv, transposed_scores(b, "reshape_p", p, io, e), d_o, dv);

    /* dS = (dO x V^T - D) * E * scale */
    cudnnBackendDescriptor_t dp = avk_dnn_virtual(b, "dP", f32, scores);
    cudnnBackendDescriptor_t dp_centered = avk_dnn_virtual(b, "dP-D", f32, scores);
    cudnnBackendDescriptor_t ds_unscaled = avk_dnn_virtual(b, "(dP-D)*E", f32, scores);
    cudnnBackendDescriptor_t ds = avk_dnn_virtual(b, "dS", f32, scores);
    avk_dnn_matmul(b, "matmul_dO_VT", d_o, vt, dp);
    avk_dnn_pointwise(b, "sub_dP_softmax_sum", CUDNN_POINTWISE_SUB, f32, -1, dp, row_dot, NULL, dp_centered);
    avk_dnn_pointwise(b, "mul_dP_exp_s", CUDNN_POINTWISE_MUL, f32, -1, dp_centered, e, NULL, ds_unscaled);
    avk_dnn_pointwise(b, "mul_dS_attn_scale", CUDNN_POINTWISE_MUL, f32, -1, ds_unscaled, scale, NULL, ds);

    /* dK = dS^T x Q */
    grouped_matmul(b, "matmul_dST_Q", p, Dk, transposed_scores(b, "reshape_dS", p, io, ds), q, dk);

    /* dQ = dS x K: K^T's memory seen as K rows; the f32 accumulator's atomics
     * are what a deterministic run leaves out (cudnn-frontend's "dP workspace") */
    cudnnBackendDescriptor_t k = avk_dnn_virtual(b, "K", io, k_rows);
    avk_dnn_reshape(b, "reshape_k", kt, k);
    if (deterministic) {
        avk_dnn_matmul(b, "matmul_dS_K", ds, k, dq);
    } else {
        cudnnBackendDescriptor_t accum =
            avk_dnn_tensor(b, "dQ accumulator", AVK_DNN_UID_DQ_ACCUM, f32, avk_dnn_dense(B, H, Nq, Dk), false);
        avk_dnn_matmul(b, "matmul_dS_K", ds, k, accum);
        avk_dnn_pointwise(b, "identity_dQ", CUDNN_POINTWISE_IDENTITY, f32, -1, accum, NULL, NULL, dq);
    }
}

static void values_init(avk_cudnn_bwd *k, const attnvk_problem *p)
{
    avk_dnn_score_values_init(p, &k->values);
    k->one = 1.0f;
}

attnvk_status avk_cudnn_bwd_check_descriptors(const attnvk_problem *p, int deterministic, int *ops)
{
    avk_cudnn_bwd *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    values_init(k, p);
    avk_dnn_builder_init(&k->graph, AVK_DNN_UID_FIRST_FREE);
    build_backward(&k->graph, p, &k->values, &k->one, deterministic);
    if (ops) *ops = k->graph.op_count;
    attnvk_status s = ATTNVK_OK;
    if (!avk_dnn_builder_ok(&k->graph)) {
        char text[512];
        s = avk_fail(ATTNVK_ERROR_BACKEND, "cuDNN backward descriptor '%s': %s", k->graph.failed_at,
                     avk_dnn_text(k->graph.status, text, sizeof text));
    }
    avk_dnn_builder_free(&k->graph);
    free(k);
    return s;
}

void avk_cudnn_bwd_release(avk_cuda_device *dev, avk_cudnn_bwd *k)
{
    if (!k) return;
    CUdeviceptr mine[] = {k->workspace, k->row_dot, k->dq_accum};
    for (size_t i = 0; i < sizeof mine / sizeof *mine; ++i)
        if (mine[i] && !dev->lost) dev->cu->cuMemFree(mine[i]);
    if (k->variant_pack) avk_dnn.cudnnBackendDestroyDescriptor(k->variant_pack);
    avk_dnn_builder_free(&k->graph);
    free(k);
}

static attnvk_status device_alloc(avk_cuda_device *dev, size_t bytes, CUdeviceptr *out, const char *what)
{
    return avk_cuda_check(dev, dev->cu->cuMemAlloc(out, bytes ? bytes : 1), what);
}

attnvk_status avk_cudnn_bwd_prepare(avk_cuda_device *dev, cudnnHandle_t handle, const attnvk_problem *p,
                                    int deterministic, avk_cudnn_bwd **out)
{
    avk_cudnn_bwd *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    k->problem = *p;
    k->deterministic = deterministic;
    values_init(k, p);
    avk_dnn_builder_init(&k->graph, AVK_DNN_UID_FIRST_FREE);
    build_backward(&k->graph, p, &k->values, &k->one, deterministic);
    attnvk_status s = ATTNVK_OK;
    if (!avk_dnn_builder_ok(&k->graph)) {
        char text[512];
        s = avk_fail(ATTNVK_ERROR_BACKEND, "cuDNN backward descriptor '%s': %s", k->graph.failed_at,
                     avk_dnn_text(k->graph.status, text, sizeof text));
    }
    if (s == ATTNVK_OK) s = avk_dnn_make_plan(&k->graph, handle, "SDPA backward graph", &k->plan);
    const size_t rows = (size_t)p->batch * p->heads * p->seq_q;
    if (s == ATTNVK_OK && k->plan.workspace_bytes > 0)
        s = device_alloc(dev, (size_t)k->plan.workspace_bytes, &k->workspace, "cuDNN backward workspace");
    if (s == ATTNVK_OK) s = device_alloc(dev, rows * sizeof(float), &k->row_dot, "cuDNN backward sum(dO*O)");
    if (s == ATTNVK_OK && !deterministic) {
        k->dq_accum_bytes = rows * (size_t)p->head_dim * sizeof(float);
        s = device_alloc(dev, k->dq_accum_bytes, &k->dq_accum, "cuDNN backward dQ accumulator");
    }
    if (s != ATTNVK_OK) {
        avk_cudnn_bwd_release(dev, k);
        return s;
    }
    *out = k;
    return ATTNVK_OK;
}

attnvk_status avk_cudnn_bwd_run(avk_cuda_device *dev, cudnnHandle_t handle, avk_cudnn_bwd *k,
                                const avk_backward_dispatch *a)
{
    const attnvk_problem *p = &k->problem;
    const avk_dispatch *f = &a->fwd;
    if ((p->mask && !f->mask) || (p->alibi && !f->alibi_slopes) || !f->lse)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "cudnn backward: the LSE or a score input has no buffer");
    const CUdeviceptr ptrs[BOUND_COUNT] = {
        avk_cuda_ptr(f->q),   avk_cuda_ptr(f->k),   avk_cuda_ptr(f->v),   avk_cuda_ptr(f->o),
        avk_cuda_ptr(a->d_o), avk_cuda_ptr(f->lse), avk_cuda_ptr(a->dq),  avk_cuda_ptr(a->dk),
        avk_cuda_ptr(a->dv),  p->mask ? avk_cuda_ptr(f->mask) : 0,     p->alibi ? avk_cuda_ptr(f->alibi_slopes) : 0,
        k->row_dot,           k->dq_accum};
    if (!k->variant_pack || memcmp(ptrs, k->bound, sizeof ptrs) != 0) {
        int64_t uids[BOUND_COUNT];
        void *data[BOUND_COUNT];
        int n = 0;
        for (int i = 0; i < BOUND_COUNT; ++i) {
            if (!ptrs[i]) continue; /* a score input or the accumulator this graph lacks */
            uids[n] = bound_uids[i];
            data[n++] = (void *)(uintptr_t)ptrs[i];
        }
        attnvk_status s =
            avk_dnn_make_variant_pack(&k->graph, uids, data, n, (void *)(uintptr_t)k->workspace, &k->variant_pack);
        if (s != ATTNVK_OK) return s;
        memcpy(k->bound, ptrs, sizeof k->bound);
    }
    /* before 9.6 the accumulator starts from whatever it holds (cudnn-frontend clears it) */
    if (k->dq_accum && avk_dnn_version_number < 90600) {
        attnvk_status s = avk_cuda_check(dev, dev->cu->cuMemsetD8Async(k->dq_accum, 0, k->dq_accum_bytes, dev->stream),
                                         "cuMemsetD8Async(dQ accumulator)");
        if (s != ATTNVK_OK) return s;
    }
    cudnnStatus_t s = avk_dnn.cudnnBackendExecute(handle, k->plan.plan, k->variant_pack);
    if (s != CUDNN_STATUS_SUCCESS) {
        char text[512];
        return avk_fail(avk_dnn_status_kind(s), "cudnnBackendExecute (backward): %s", avk_dnn_text(s, text, sizeof text));
    }
    return ATTNVK_OK;
}
