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
    AVK_DNN_UID_FIRST_FREE = 100
};

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

/* scores (f32 [B][H][Nq][Nk], already scaled) -> the logits the softmax reads. */
cudnnBackendDescriptor_t avk_dnn_score_mods(avk_dnn_builder *b, const attnvk_problem *p, avk_dnn_score_values *v,
                                            cudnnBackendDescriptor_t scores);

/* Returns P = softmax(logits) in prob_type, with the sink (f32 [1][H][1][1])
 * in the denominator when p has sinks; stats = max + log(sum) per row is a
 * bound output (real_stats) or a virtual one (some engines want it bound). */
cudnnBackendDescriptor_t avk_dnn_softmax(avk_dnn_builder *b, const attnvk_problem *p, cudnnBackendDescriptor_t logits,
                                         int real_stats, cudnnDataType_t prob_type);

#endif
