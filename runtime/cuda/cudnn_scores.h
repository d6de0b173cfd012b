/* The part of the cuDNN SDPA graph between the two matmuls: score
 * modifications (softcap, additive mask as cuDNN's bias, ALiBi), the visible
 * band (causal and window bounds as generated-index comparisons that select
 * -inf) and the softmax with an optional sink, lowered the way cudnn-frontend's
 * composite SDPA node lowers them for cuDNN 9.x before 9.21's unified ops.
 * Private to cudnn_*.c; what cuDNN refuses is decided in cudnn_sdpa.c. */
#ifndef ATTNVK_CUDNN_SCORES_H
#define ATTNVK_CUDNN_SCORES_H

#include "cuda/cudnn_graph.h"

/* Unique ids of the tensors the variant pack binds; fresh ones follow. */
enum {
    AVK_DNN_UID_Q = 1,
    AVK_DNN_UID_K,
    AVK_DNN_UID_V,
    AVK_DNN_UID_O,
    AVK_DNN_UID_SCALE,
    AVK_DNN_UID_NEG_INF,
    AVK_DNN_UID_SEQ_Q,
    AVK_DNN_UID_SEQ_KV,
    AVK_DNN_UID_STATS,
    AVK_DNN_UID_MASK,         /* mask_dtype [mask_batch][mask_heads][Nq][Nk] */
    AVK_DNN_UID_SINKS,        /* f32 [H] */
    AVK_DNN_UID_ALIBI_SLOPES, /* f32 [H] */
    /* the backward's (cudnn_sdpa_bwd.c) */
    AVK_DNN_UID_DO,
    AVK_DNN_UID_DQ,
    AVK_DNN_UID_DK,
    AVK_DNN_UID_DV,
    AVK_DNN_UID_ONE,
    AVK_DNN_UID_ROW_DOT,  /* f32 [B][H][Nq][1] sum_d dO*O, in attnvk's memory */
    AVK_DNN_UID_DQ_ACCUM, /* f32 [B][H][Nq][Dk], in attnvk's memory */
    /* the FP8 forward's (cudnn_sdpa_fp8.c): f32 [1][1][1][1] each, in order of avk_dnn_fp8_slot */
    AVK_DNN_UID_FP8_FIRST,
    AVK_DNN_UID_FIRST_FREE = 100
};

/* Q, K, V, O or their gradients ([B][heads][seq][dim] logical) in p's
 * layout: Q and K rows hold Dk values, V and O rows Dv. */
avk_dnn_shape avk_dnn_layout_shape(const attnvk_problem *p, int64_t heads, int64_t seq, int64_t dim);
/* The last two dims and strides swapped (K as K^T, P as P^T). */
avk_dnn_shape avk_dnn_transposed(avk_dnn_shape s);
/* f16 -> HALF, bf16 -> BFLOAT16, else FLOAT */
cudnnDataType_t avk_dnn_io_type(attnvk_dtype d);

/* Key j is visible to row i iff (no right bound or j <= i' + right) and
 * (no left bound or j >= i' - left), as cuDNN's graph writes it:
 *   right: row [+ Nk - Nq] [+ right_shift] >= col,
 *   left:  col + left_bound > row (left_bound a float, as cudnn-frontend has it). */
typedef struct avk_dnn_band {
    int right;          /* causal or window_right >= 0 */
    int right_bottom;   /* the row index gets + Nk - Nq from by-value seq lengths */
    int32_t right_shift;
    int left;           /* window_left >= 0 */
    float left_bound;   /* window_left + 1 - (i' - i) */
} avk_dnn_band;

/* Bottom-right right bounds keep cuDNN's bottom-right form (+ Nk - Nq), except
 * beside a mask or ALiBi, which cuDNN takes only with the top-left form: with
 * fixed lengths that is the same diagonal, shifted right by Nk - Nq. */
avk_dnn_band avk_dnn_band_of(const attnvk_problem *p);

/* Host values of the by-value scalars; they must live as long as the plan. */
typedef struct avk_dnn_score_values {
    float scale, neg_inf, softcap, left_bound;
    int32_t seq_q, seq_kv, right_shift;
} avk_dnn_score_values;

void avk_dnn_score_values_init(const attnvk_problem *p, avk_dnn_score_values *v);

/* scores (f32 [B][H][Nq][Nk], already scaled) -> the logits the softmax
 * reads: avk_dnn_score_values_mods, then avk_dnn_band_select. */
cudnnBackendDescriptor_t avk_dnn_score_mods(avk_dnn_builder *b, const attnvk_problem *p, avk_dnn_score_values *v,
                                            cudnnBackendDescriptor_t scores);

/* The modifications that change a score's value (softcap, mask as bias,
 * ALiBi), in cudnn-frontend's order. */
cudnnBackendDescriptor_t avk_dnn_score_values_mods(avk_dnn_builder *b, const attnvk_problem *p,
                                                   avk_dnn_score_values *v, cudnnBackendDescriptor_t scores);
/* -inf outside the visible band (causal/window bounds); s itself without one.
 * The backward applies it after subtracting the stats, as cudnn-frontend does. */
cudnnBackendDescriptor_t avk_dnn_band_select(avk_dnn_builder *b, const attnvk_problem *p, avk_dnn_score_values *v,
                                             cudnnBackendDescriptor_t s);

/* Returns P = softmax(logits) in prob_type, with the sink (f32 [1][H][1][1])
 * in the denominator when p has sinks; stats = max + log(sum) per row is a
 * bound output (real_stats) or a virtual one (some engines want it bound). */
cudnnBackendDescriptor_t avk_dnn_softmax(avk_dnn_builder *b, const attnvk_problem *p, cudnnBackendDescriptor_t logits,
                                         int real_stats, cudnnDataType_t prob_type);

#endif
