/* Score modifications, the visible band and the softmax of the cuDNN SDPA
 * graph (see cudnn_scores.h). Every intermediate is a virtual f32 (int32 for
 * indices, boolean for comparisons) tensor of the scores' shape. */
#include "cuda/cudnn_scores.h"

#include <math.h>

static const cudnnDataType_t f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32, boolean = CUDNN_DATA_BOOLEAN;

static avk_dnn_shape scores_shape(const attnvk_problem *p)
{
    return avk_dnn_dense(p->batch, p->heads, p->seq_q, p->seq_kv);
}

static avk_dnn_shape per_row_shape(const attnvk_problem *p)
{
    return avk_dnn_dense(p->batch, p->heads, p->seq_q, 1);
}

/* A per-head f32 input [1][H][1][1] (sinks, ALiBi slopes). */
static cudnnBackendDescriptor_t per_head(avk_dnn_builder *b, const char *name, int64_t uid, const attnvk_problem *p)
{
    return avk_dnn_tensor(b, name, uid, f32, avk_dnn_dense(1, p->heads, 1, 1), false);
}

avk_dnn_shape avk_dnn_layout_shape(const attnvk_problem *p, int64_t heads, int64_t seq, int64_t dim)
{
    const int64_t B = p->batch, D = dim;
    avk_dnn_shape s = {{B, heads, seq, D}, {0, 0, 0, 1}};
    if (p->layout == ATTNVK_LAYOUT_BHSD) {
        s.strides[0] = heads * seq * D;
        s.strides[1] = seq * D;
        s.strides[2] = D;
    } else {
        s.strides[0] = seq * heads * D;
        s.strides[1] = D;
        s.strides[2] = heads * D;
    }
    return s;
}

avk_dnn_shape avk_dnn_transposed(avk_dnn_shape s)
{
    int64_t swap = s.dims[2];
    s.dims[2] = s.dims[3];
    s.dims[3] = swap;
    swap = s.strides[2];
    s.strides[2] = s.strides[3];
    s.strides[3] = swap;
    return s;
}

cudnnDataType_t avk_dnn_io_type(attnvk_dtype d)
{
    return d == ATTNVK_F16 ? CUDNN_DATA_HALF : d == ATTNVK_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

avk_dnn_band avk_dnn_band_of(const attnvk_problem *p)
{
    avk_dnn_band band = {0};
    const int bottom_right = p->align != ATTNVK_ALIGN_TOP_LEFT;
    const int32_t offset = bottom_right ? p->seq_kv - p->seq_q : 0; /* i' - i */
    const int window_right = p->window && p->window_right >= 0, window_left = p->window && p->window_left >= 0;
    if (p->causal || window_right) {
        band.right = 1;
        /* causal (j <= i') is inside any window_right >= 0 */
        const int32_t right = p->causal ? 0 : p->window_right;
        band.right_bottom = bottom_right && !p->mask && !p->alibi;
        band.right_shift = band.right_bottom ? right : right + offset;
    }
    if (window_left) {
        band.left = 1;
        /* j >= i' - left  <=>  j + (left + 1 - offset) > i */
        band.left_bound = (float)(p->window_left + 1 - offset);
    }
    return band;
}

void avk_dnn_score_values_init(const attnvk_problem *p, avk_dnn_score_values *v)
{
    const avk_dnn_band band = avk_dnn_band_of(p);
    v->scale = attnvk_problem_scale(p);
    /* cuDNN before 9.10 wants the lowest float for masked scores, as cudnn-frontend does */
    v->neg_inf = avk_dnn_version_number >= 91000 ? -INFINITY : -3.402823466e38f;
    v->softcap = p->softcap;
    v->left_bound = band.left_bound;
    v->seq_q = p->seq_q;
    v->seq_kv = p->seq_kv;
    v->right_shift = band.right_shift;
}

/* s -> softcap * tanh(s / softcap) */
static cudnnBackendDescriptor_t softcap(avk_dnn_builder *b, const attnvk_problem *p, avk_dnn_score_values *v,
                                        cudnnBackendDescriptor_t s)
{
    const avk_dnn_shape shape = scores_shape(p);
    cudnnBackendDescriptor_t cap = avk_dnn_scalar(b, "softcap", 0, f32, &v->softcap);
    cudnnBackendDescriptor_t divided = avk_dnn_virtual(b, "S/softcap", f32, shape);
    cudnnBackendDescriptor_t tanh_out = avk_dnn_virtual(b, "tanh(S/softcap)", f32, shape);
    cudnnBackendDescriptor_t capped = avk_dnn_virtual(b, "S capped", f32, shape);
    avk_dnn_pointwise(b, "div_by_soft_cap", CUDNN_POINTWISE_DIV, f32, -1, s, cap, NULL, divided);
    avk_dnn_pointwise(b, "activation", CUDNN_POINTWISE_TANH_FWD, f32, -1, divided, NULL, NULL, tanh_out);
    avk_dnn_pointwise(b, "mul_by_soft_cap", CUDNN_POINTWISE_MUL, f32, -1, tanh_out, cap, NULL, capped);
    return capped;
}

/* s + mask, the mask broadcast over batch and heads where it has one of them */
static cudnnBackendDescriptor_t bias(avk_dnn_builder *b, const attnvk_problem *p, cudnnBackendDescriptor_t s)
{
    const cudnnDataType_t mask_type = p->mask_dtype == ATTNVK_F16 ? CUDNN_DATA_HALF : f32;
    cudnnBackendDescriptor_t mask = avk_dnn_tensor(
        b, "mask", AVK_DNN_UID_MASK, mask_type, avk_dnn_dense(p->mask_batch, p->mask_heads, p->seq_q, p->seq_kv), false);
    cudnnBackendDescriptor_t out = avk_dnn_virtual(b, "S+mask", f32, scores_shape(p));
    avk_dnn_pointwise(b, "bias_add", CUDNN_POINTWISE_ADD, f32, -1, s, mask, NULL, out);
    return out;
}

/* s + slope[h] * (col - row); cuDNN's ALiBi is top-left (i' = i), which
 * avk_cudnn_sdpa_supports makes sure of */
static cudnnBackendDescriptor_t alibi(avk_dnn_builder *b, const attnvk_problem *p, cudnnBackendDescriptor_t s)
{
    const avk_dnn_shape shape = scores_shape(p);
    cudnnBackendDescriptor_t slopes = per_head(b, "alibi slopes", AVK_DNN_UID_ALIBI_SLOPES, p);
    cudnnBackendDescriptor_t row = avk_dnn_virtual(b, "alibi row", i32, shape);
    cudnnBackendDescriptor_t col = avk_dnn_virtual(b, "alibi col", i32, shape);
    cudnnBackendDescriptor_t distance = avk_dnn_virtual(b, "col-row", i32, shape);
    cudnnBackendDescriptor_t linear = avk_dnn_virtual(b, "slope*(col-row)", f32, shape);
    cudnnBackendDescriptor_t out = avk_dnn_virtual(b, "S+alibi", f32, shape);
    avk_dnn_pointwise(b, "gen_row_idx_alibi", CUDNN_POINTWISE_GEN_INDEX, i32, 2, s, NULL, NULL, row);
    avk_dnn_pointwise(b, "gen_col_idx_alibi", CUDNN_POINTWISE_GEN_INDEX, i32, 3, s, NULL, NULL, col);
    avk_dnn_pointwise(b, "sub_col_row_alibi", CUDNN_POINTWISE_SUB, i32, -1, col, row, NULL, distance);
    avk_dnn_pointwise(b, "mul_slope_alibi", CUDNN_POINTWISE_MUL, f32, -1, distance, slopes, NULL, linear);
    avk_dnn_pointwise(b, "add_alibi", CUDNN_POINTWISE_ADD, f32, -1, s, linear, NULL, out);
    return out;
}

/* The -inf every band selects, one by-value scalar for all of them. */
static cudnnBackendDescriptor_t neg_inf_scalar(avk_dnn_builder *b, avk_dnn_score_values *v,
                                               cudnnBackendDescriptor_t *made)
{
    if (!*made) *made = avk_dnn_scalar(b, "-inf", AVK_DNN_UID_NEG_INF, f32, &v->neg_inf);
    return *made;
}

/* keep (i, j) iff row [+ Nk - Nq] [+ shift] >= col, else -inf */
static cudnnBackendDescriptor_t right_bound(avk_dnn_builder *b, const attnvk_problem *p, avk_dnn_score_values *v,
                                            const avk_dnn_band *band, cudnnBackendDescriptor_t *neg_inf_made,
                                            cudnnBackendDescriptor_t s)
{
    const avk_dnn_shape shape = scores_shape(p);
    cudnnBackendDescriptor_t seq_q = NULL, seq_kv = NULL;
    if (band->right_bottom) {
        seq_q = avk_dnn_scalar(b, "seq_q", AVK_DNN_UID_SEQ_Q, i32, &v->seq_q);
        seq_kv = avk_dnn_scalar(b, "seq_kv", AVK_DNN_UID_SEQ_KV, i32, &v->seq_kv);
    }
    cudnnBackendDescriptor_t neg_inf = neg_inf_scalar(b, v, neg_inf_made);
    cudnnBackendDescriptor_t shift =
        band->right_shift ? avk_dnn_scalar(b, "right shift", 0, i32, &v->right_shift) : NULL;
    cudnnBackendDescriptor_t row = avk_dnn_virtual(b, "row", i32, shape);
    cudnnBackendDescriptor_t col = avk_dnn_virtual(b, "col", i32, shape);
    cudnnBackendDescriptor_t row_plus = band->right_bottom ? avk_dnn_virtual(b, "row+Nk", i32, shape) : NULL;
    cudnnBackendDescriptor_t diag = band->right_bottom ? avk_dnn_virtual(b, "row+Nk-Nq", i32, shape) : row;
    cudnnBackendDescriptor_t shifted = shift ? avk_dnn_virtual(b, "row+shift", i32, shape) : diag;
    cudnnBackendDescriptor_t keep = avk_dnn_virtual(b, "keep", boolean, shape);
    cudnnBackendDescriptor_t masked = avk_dnn_virtual(b, "S masked", f32, shape);
    avk_dnn_pointwise(b, "gen_row_index", CUDNN_POINTWISE_GEN_INDEX, f32, 2, s, NULL, NULL, row);
    avk_dnn_pointwise(b, "gen_col_index", CUDNN_POINTWISE_GEN_INDEX, f32, 3, s, NULL, NULL, col);
    if (band->right_bottom) {
        avk_dnn_pointwise(b, "row+skv", CUDNN_POINTWISE_ADD, i32, 3, row, seq_kv, NULL, row_plus);
        avk_dnn_pointwise(b, "row+skv-sq", CUDNN_POINTWISE_SUB, i32, 3, row_plus, seq_q, NULL, diag);
    }
    if (shift) avk_dnn_pointwise(b, "row+window", CUDNN_POINTWISE_ADD, i32, 3, diag, shift, NULL, shifted);
    avk_dnn_pointwise(b, "diag>=col", CUDNN_POINTWISE_CMP_GE, boolean, -1, shifted, col, NULL, keep);
    avk_dnn_pointwise(b, "causal select", CUDNN_POINTWISE_BINARY_SELECT, f32, -1, s, neg_inf, keep, masked);
    return masked;
}

/* keep (i, j) iff col + left_bound > row, else -inf */
static cudnnBackendDescriptor_t left_bound(avk_dnn_builder *b, const attnvk_problem *p, avk_dnn_score_values *v,
                                           cudnnBackendDescriptor_t neg_inf, cudnnBackendDescriptor_t s)
{
    const avk_dnn_shape shape = scores_shape(p);
    cudnnBackendDescriptor_t bound = avk_dnn_scalar(b, "left bound", 0, f32, &v->left_bound);
    cudnnBackendDescriptor_t row = avk_dnn_virtual(b, "row", i32, shape);
    cudnnBackendDescriptor_t col = avk_dnn_virtual(b, "col", i32, shape);
    cudnnBackendDescriptor_t col_plus = avk_dnn_virtual(b, "col+window", f32, shape);
    cudnnBackendDescriptor_t keep = avk_dnn_virtual(b, "keep", boolean, shape);
    cudnnBackendDescriptor_t masked = avk_dnn_virtual(b, "S windowed", f32, shape);
    avk_dnn_pointwise(b, "gen_row_index", CUDNN_POINTWISE_GEN_INDEX, f32, 2, s, NULL, NULL, row);
    avk_dnn_pointwise(b, "gen_col_index", CUDNN_POINTWISE_GEN_INDEX, f32, 3, s, NULL, NULL, col);
    avk_dnn_pointwise(b, "col+window", CUDNN_POINTWISE_ADD, f32, 3, col, bound, NULL, col_plus);
    avk_dnn_pointwise(b, "col+window>row", CUDNN_POINTWISE_CMP_GT, boolean, -1, col_plus, row, NULL, keep);
    avk_dnn_pointwise(b, "window select", CUDNN_POINTWISE_BINARY_SELECT, f32, -1, s, neg_inf, keep, masked);
    return masked;
}

cudnnBackendDescriptor_t avk_dnn_score_values_mods(avk_dnn_builder *b, const attnvk_problem *p,
                                                   avk_dnn_score_values *v, cudnnBackendDescriptor_t scores)
{
    /* cudnn-frontend's order: score modifier (softcap), bias, ALiBi */
    cudnnBackendDescriptor_t s = scores;
    if (p->softcap > 0) s = softcap(b, p, v, s);
    if (p->mask) s = bias(b, p, s);
    if (p->alibi) s = alibi(b, p, s);
    return s;
}

cudnnBackendDescriptor_t avk_dnn_band_select(avk_dnn_builder *b, const attnvk_problem *p, avk_dnn_score_values *v,
                                             cudnnBackendDescriptor_t s)
{
    const avk_dnn_band band = avk_dnn_band_of(p);
    cudnnBackendDescriptor_t neg_inf = NULL;
    if (band.right) s = right_bound(b, p, v, &band, &neg_inf, s);
    if (band.left) s = left_bound(b, p, v, neg_inf_scalar(b, v, &neg_inf), s);
    return s;
}

cudnnBackendDescriptor_t avk_dnn_score_mods(avk_dnn_builder *b, const attnvk_problem *p, avk_dnn_score_values *v,
                                            cudnnBackendDescriptor_t scores)
{
    return avk_dnn_band_select(b, p, v, avk_dnn_score_values_mods(b, p, v, scores));
}

cudnnBackendDescriptor_t avk_dnn_softmax(avk_dnn_builder *b, const attnvk_problem *p, cudnnBackendDescriptor_t logits,
                                         int real_stats, cudnnDataType_t prob_type)
{
    const avk_dnn_shape scores = scores_shape(p), per_row = per_row_shape(p);
    cudnnBackendDescriptor_t max = avk_dnn_virtual(b, "M", f32, per_row);
    cudnnBackendDescriptor_t centered = avk_dnn_virtual(b, "S-M", f32, scores);
    cudnnBackendDescriptor_t e = avk_dnn_virtual(b, "exp(S-M)", f32, scores);
    cudnnBackendDescriptor_t sum = avk_dnn_virtual(b, "Z", f32, per_row);
    cudnnBackendDescriptor_t log_sum = avk_dnn_virtual(b, "log Z", f32, per_row);
    cudnnBackendDescriptor_t stats =
        avk_dnn_tensor(b, "stats", real_stats ? AVK_DNN_UID_STATS : 0, f32, per_row, !real_stats);
    cudnnBackendDescriptor_t prob = avk_dnn_virtual(b, "P", prob_type, scores);
    if (!p->sinks) {
        avk_dnn_reduction(b, "softmax max", CUDNN_REDUCE_TENSOR_MAX, logits, max);
        avk_dnn_pointwise(b, "softmax sub", CUDNN_POINTWISE_SUB, f32, -1, logits, max, NULL, centered);
        avk_dnn_pointwise(b, "softmax exp", CUDNN_POINTWISE_EXP, f32, -1, centered, NULL, NULL, e);
        avk_dnn_reduction(b, "softmax sum", CUDNN_REDUCE_TENSOR_ADD, e, sum);
    } else {
        /* M = max(sink, max_j s), Z = exp(sink - M) + sum_j exp(s - M) */
        cudnnBackendDescriptor_t sink = per_head(b, "sink", AVK_DNN_UID_SINKS, p);
        cudnnBackendDescriptor_t row_max = avk_dnn_virtual(b, "max_j S", f32, per_row);
        cudnnBackendDescriptor_t sink_centered = avk_dnn_virtual(b, "sink-M", f32, per_row);
        cudnnBackendDescriptor_t sink_e = avk_dnn_virtual(b, "exp(sink-M)", f32, per_row);
        cudnnBackendDescriptor_t row_sum = avk_dnn_virtual(b, "sum_j exp(S-M)", f32, per_row);
        avk_dnn_reduction(b, "softmax max", CUDNN_REDUCE_TENSOR_MAX, logits, row_max);
        avk_dnn_pointwise(b, "max_sink", CUDNN_POINTWISE_MAX, f32, -1, row_max, sink, NULL, max);
        avk_dnn_pointwise(b, "softmax sub", CUDNN_POINTWISE_SUB, f32, -1, logits, max, NULL, centered);
        avk_dnn_pointwise(b, "softmax exp", CUDNN_POINTWISE_EXP, f32, -1, centered, NULL, NULL, e);
        avk_dnn_pointwise(b, "sub_sink", CUDNN_POINTWISE_SUB, f32, -1, sink, max, NULL, sink_centered);
        avk_dnn_pointwise(b, "exp_sink", CUDNN_POINTWISE_EXP, f32, -1, sink_centered, NULL, NULL, sink_e);
        avk_dnn_reduction(b, "softmax sum", CUDNN_REDUCE_TENSOR_ADD, e, row_sum);
        avk_dnn_pointwise(b, "add_sink", CUDNN_POINTWISE_ADD, f32, -1, row_sum, sink_e, NULL, sum);
    }
    avk_dnn_pointwise(b, "softmax log", CUDNN_POINTWISE_LOG, f32, -1, sum, NULL, NULL, log_sum);
    avk_dnn_pointwise(b, "softmax stats", CUDNN_POINTWISE_ADD, f32, -1, max, log_sum, NULL, stats);
    avk_dnn_pointwise(b, "softmax div", CUDNN_POINTWISE_DIV, f32, -1, e, sum, NULL, prob);
    return prob;
}
