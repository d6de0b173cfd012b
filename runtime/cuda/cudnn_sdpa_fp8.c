/* cuDNN's FP8 fused attention graph (see cudnn_sdpa_fp8.h). The order of
 * operations is cudnn-frontend's sdpa_fp8 node on cuDNN 9.x:
 *   S = Q x K^T (e4m3 in, f32 out), S * scale * descale_q * descale_k,
 *   the causal band, P = softmax (f32), amax_s = max |P|,
 *   P8 = P * scale_s (e4m3), O' = P8 x V, O' * descale_s * descale_v,
 *   amax_o = max |O'|, O = O' * scale_o (f16/bf16; e4m3 on Hopper). */
#include "cuda/cudnn_sdpa_fp8.h"
#include "core/error.h"
#include "core/q_format.h"

#include <stdlib.h>

/* e4m3's largest finite value: P (at most 1) is scaled onto the format's range */
#define FP8_E4M3_MAX 448.0f

attnvk_status avk_cudnn_fp8_supports(const attnvk_problem *p, int cc_major, size_t version)
{
    if (!avk_q_is_fp8(p) || p->kv_format != ATTNVK_KV_FP8)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN's FP8 attention reads Q, K and V all in e4m3 (q_format and kv_format fp8)");
    if (cc_major && cc_major < 9)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN's FP8 attention needs Hopper (compute capability 9.0) or newer");
    if (version && version < 90100)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN %zu.%zu predates FP8 attention (9.1)", version / 10000,
                        (version % 10000) / 100);
    if (p->dtype != ATTNVK_F16 && p->dtype != ATTNVK_BF16)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN's FP8 attention writes O in f16 or bf16 here");
    const int dv = attnvk_problem_head_dim_v(p);
    if (dv != p->head_dim || p->head_dim % 16 || p->head_dim > 256)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN's FP8 attention takes one head dim, a multiple of 16 up to 256 (Dk=%d, Dv=%d)",
                        p->head_dim, dv);
    if (p->softcap > 0 || p->alibi || p->mask || p->sinks)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN's FP8 attention takes no score modifications (softcap, ALiBi, masks, sinks)");
    const avk_dnn_band band = avk_dnn_band_of(p);
    if (band.left || (band.right && !p->causal))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN's FP8 attention takes a causal mask, not a window");
    if (p->causal && p->align != ATTNVK_ALIGN_TOP_LEFT && p->seq_q != p->seq_kv)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN's FP8 attention takes a top-left causal diagonal (or Nq = Nk; Nq=%d, Nk=%d)", p->seq_q,
                        p->seq_kv);
    return ATTNVK_OK;
}

/* slot i of the device array as a bound f32 [1][1][1][1] tensor */
static cudnnBackendDescriptor_t slot(avk_dnn_builder *b, const char *name, avk_dnn_fp8_slot i)
{
    return avk_dnn_tensor(b, name, AVK_DNN_UID_FP8_FIRST + i, CUDNN_DATA_FLOAT, avk_dnn_dense(1, 1, 1, 1), false);
}

/* y = x * factor in type (virtual, x's shape) */
static cudnnBackendDescriptor_t times(avk_dnn_builder *b, const char *name, cudnnBackendDescriptor_t x,
                                      cudnnBackendDescriptor_t factor, cudnnDataType_t type, avk_dnn_shape shape)
{
    cudnnBackendDescriptor_t y = avk_dnn_virtual(b, name, type, shape);
    avk_dnn_pointwise(b, name, CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, -1, x, factor, NULL, y);
    return y;
}

int avk_cudnn_fp8_o_in_e4m3(int cc_major) { return cc_major == 9; }

void avk_dnn_build_sdpa_fp8(avk_dnn_builder *b, const attnvk_problem *p, avk_dnn_score_values *v, int real_stats,
                            int o_e4m3)
{
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT, e4m3 = CUDNN_DATA_FP8_E4M3;
    const cudnnDataType_t io = o_e4m3 ? e4m3 : avk_dnn_io_type(p->dtype);
    const int64_t B = p->batch, H = p->heads, Hkv = p->kv_heads, Nq = p->seq_q, Nk = p->seq_kv, D = p->head_dim;
    cudnnBackendDescriptor_t q = avk_dnn_tensor(b, "Q", AVK_DNN_UID_Q, e4m3, avk_dnn_layout_shape(p, H, Nq, D), false);
    cudnnBackendDescriptor_t k =
        avk_dnn_tensor(b, "K^T", AVK_DNN_UID_K, e4m3, avk_dnn_transposed(avk_dnn_layout_shape(p, Hkv, Nk, D)), false);
    cudnnBackendDescriptor_t vt = avk_dnn_tensor(b, "V", AVK_DNN_UID_V, e4m3, avk_dnn_layout_shape(p, Hkv, Nk, D), false);
    cudnnBackendDescriptor_t o = avk_dnn_tensor(b, "O", AVK_DNN_UID_O, io, avk_dnn_layout_shape(p, H, Nq, D), false);
    cudnnBackendDescriptor_t scale = avk_dnn_scalar(b, "scale", AVK_DNN_UID_SCALE, f32, &v->scale);
    const avk_dnn_shape scores = avk_dnn_dense(B, H, Nq, Nk), out = avk_dnn_dense(B, H, Nq, D);

    cudnnBackendDescriptor_t s = avk_dnn_virtual(b, "S", f32, scores);
    avk_dnn_matmul(b, "bmm1 Q.K^T", q, k, s);
    s = times(b, "attn_scale", s, scale, f32, scores);
    s = times(b, "descale_q", s, slot(b, "descale_q", AVK_DNN_FP8_DESCALE_Q), f32, scores);
    s = times(b, "descale_k", s, slot(b, "descale_k", AVK_DNN_FP8_DESCALE_K), f32, scores);
    cudnnBackendDescriptor_t logits = avk_dnn_score_mods(b, p, v, s); /* the causal band */
    cudnnBackendDescriptor_t prob = avk_dnn_softmax(b, p, logits, real_stats, f32);
    avk_dnn_reduction(b, "amax_s", CUDNN_REDUCE_TENSOR_AMAX, prob, slot(b, "amax_s", AVK_DNN_FP8_AMAX_S));
    cudnnBackendDescriptor_t p8 = times(b, "scale_s", prob, slot(b, "scale_s", AVK_DNN_FP8_SCALE_S), e4m3, scores);

    cudnnBackendDescriptor_t acc = avk_dnn_virtual(b, "O'", f32, out);
    avk_dnn_matmul(b, "bmm2 P8.V", p8, vt, acc);
    acc = times(b, "descale_s", acc, slot(b, "descale_s", AVK_DNN_FP8_DESCALE_S), f32, out);
    acc = times(b, "descale_v", acc, slot(b, "descale_v", AVK_DNN_FP8_DESCALE_V), f32, out);
    avk_dnn_reduction(b, "amax_o", CUDNN_REDUCE_TENSOR_AMAX, acc, slot(b, "amax_o", AVK_DNN_FP8_AMAX_O));
    avk_dnn_pointwise(b, "scale_o", CUDNN_POINTWISE_MUL, f32, -1, acc, slot(b, "scale_o", AVK_DNN_FP8_SCALE_O), NULL, o);
}

/* the index of the first of n values unlike values[0], or -1 */
static int first_unlike(const float *values, int n)
{
    for (int i = 1; i < n; ++i)
        if (values[i] != values[0]) return i;
    return -1;
}

attnvk_status avk_cudnn_fp8_bind_scales(avk_cuda_device *dev, const attnvk_problem *p, CUdeviceptr q_scales,
                                        CUdeviceptr kv_scales, CUdeviceptr slots, int o_e4m3, float *o_descale)
{
    const int H = p->heads, Hkv = p->kv_heads;
    float *qs = malloc(sizeof(float) * (size_t)(H + 2 * Hkv)), *kvs = qs ? qs + H : NULL;
    if (!qs) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s = avk_cuda_check(dev, dev->cu->cuMemcpyDtoH(qs, q_scales, sizeof(float) * (size_t)H), "fp8 Q scales");
    if (s == ATTNVK_OK)
        s = avk_cuda_check(dev, dev->cu->cuMemcpyDtoH(kvs, kv_scales, sizeof(float) * 2 * (size_t)Hkv), "fp8 K/V scales");
    if (s != ATTNVK_OK) {
        free(qs);
        return s;
    }
    const int iq = first_unlike(qs, H), ik = first_unlike(kvs, Hkv), iv = first_unlike(kvs + Hkv, Hkv);
    float values[AVK_DNN_FP8_SLOTS] = {0};
    values[AVK_DNN_FP8_DESCALE_Q] = qs[0];
    values[AVK_DNN_FP8_DESCALE_K] = kvs[0];
    values[AVK_DNN_FP8_DESCALE_V] = kvs[Hkv];
    free(qs);
    if (iq >= 0 || ik >= 0 || iv >= 0) {
        const char *which = iq >= 0 ? "Q" : ik >= 0 ? "K" : "V";
        const int at = iq >= 0 ? iq : ik >= 0 ? ik : iv;
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN's FP8 attention takes one scale per tensor; %s's head %d differs from head 0", which, at);
    }
    values[AVK_DNN_FP8_SCALE_S] = FP8_E4M3_MAX;
    values[AVK_DNN_FP8_DESCALE_S] = 1.0f / FP8_E4M3_MAX;
    /* O is a convex mix of V's rows: |O| <= max |V| = descale_v * 448 fits e4m3 once scaled by 1 / descale_v */
    const float descale_v = values[AVK_DNN_FP8_DESCALE_V] > 0 ? values[AVK_DNN_FP8_DESCALE_V] : 1.0f;
    values[AVK_DNN_FP8_SCALE_O] = o_e4m3 ? 1.0f / descale_v : 1.0f;
    *o_descale = o_e4m3 ? descale_v : 1.0f;
    return avk_cuda_check(dev, dev->cu->cuMemcpyHtoD(slots, values, sizeof values), "cuDNN fp8 scales");
}
