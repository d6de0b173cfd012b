/* The unfused (materialised scores) baselines' GEMM plan, shared by cuBLAS,
 * CLBlast and rocBLAS, forward and backward: how the (b, h) problems map onto
 * strided batches of row-major GEMMs for both layouts and GQA. The scores
 * S (and in the backward dP) are [B][H][Nq][Nk] f32 in every case. */
#ifndef ATTNVK_UNFUSED_PLAN_H
#define ATTNVK_UNFUSED_PLAN_H

#include "attnvk/attnvk.h"

#include <stdint.h>

/* One strided batch: `count` problems whose Q (and dQ), K (dK), S (P, dP, dS),
 * V (dV) and O (dO) operands start at the offsets (elements) and step by the
 * strides. Q and K rows hold Dk values, V and O rows Dv. group_member: which
 * of its KV group's query heads the call covers (BSHD with GQA); the backward
 * writes dK/dV with beta 0 for member 0 and adds the later members in call
 * order (a fixed-order sum, no atomics). BHSD stacks the group in one call. */
typedef struct avk_unfused_call {
    int64_t q_offset, kv_offset, s_offset, v_offset, o_offset;
    int64_t q_stride, kv_stride, s_stride, v_stride, o_stride;
    int count;
    int group_member;
} avk_unfused_call;

/* BHSD packs the H/Hkv query heads that share a KV head into one GEMM of
 * G*Nq rows (one call in all; dK/dV = dS^T.Q over the stacked rows sums the
 * group); BSHD loops over heads or over (batch, head in group), whichever
 * needs fewer calls. */
typedef struct avk_unfused_plan {
    int rows;            /* query rows per GEMM */
    int ld_q, ld_kv;     /* row pitch of Q and K, elements */
    int ld_o, ld_v;      /* of O and V (Dv rows) */
    int call_count;
    avk_unfused_call *calls;
    uint64_t scores_bytes; /* B*H*Nq*Nk*4: the workspace */
} avk_unfused_plan;

/* UNSUPPORTED when a size exceeds the 32-bit BLAS arguments. */
attnvk_status avk_unfused_plan_make(const attnvk_problem *p, avk_unfused_plan *plan);
void avk_unfused_plan_free(avk_unfused_plan *plan);

/* The backward's five GEMMs per call, in row-major terms (op(A) is m x k,
 * op(B) k x n, C m x n), in the order they run:
 *   S  = scale Q.K^T     dP = dO.V^T     (then the row kernel: P, dS)
 *   dV (+)= P^T.dO       dK (+)= scale dS^T.Q      dQ = scale dS.K
 * S and dP are written as f32; read (as P and dS) they hold the row kernel's
 * output, which an API may store in the compute dtype in place (same offsets
 * and pitch counted in f32). dV and dK are accumulated over the group (beta 1
 * for group members after the first). */
typedef enum avk_unfused_operand {
    AVK_UNFUSED_Q, AVK_UNFUSED_K, AVK_UNFUSED_V, AVK_UNFUSED_O, /* O: dO when read */
    AVK_UNFUSED_S, AVK_UNFUSED_DP,                               /* [B][H][Nq][Nk] f32 */
    AVK_UNFUSED_DQ, AVK_UNFUSED_DK, AVK_UNFUSED_DV
} avk_unfused_operand;

typedef struct avk_unfused_gemm {
    const char *what;          /* for error messages */
    avk_unfused_operand a, b, c;
    int trans_a, trans_b;      /* op(X) = X^T */
    int m, n, k;
    int lda, ldb, ldc;         /* row pitches, elements (S/dP: Nk) */
    int64_t a_offset, b_offset, c_offset, a_stride, b_stride, c_stride;
    int count;
    int scaled;                /* alpha = the problem's scale, else 1 */
    int accumulate;            /* beta = 1, else 0 */
} avk_unfused_gemm;

/* the row kernel (P and dS over S and dP) runs before GEMM AVK_UNFUSED_BWD_ROW_STEP */
enum { AVK_UNFUSED_BWD_GEMMS = 5, AVK_UNFUSED_BWD_ROW_STEP = 2 };

/* GEMM `index` (0..4) of the plan's call `call` for problem p. */
void avk_unfused_backward_gemm(const attnvk_problem *p, const avk_unfused_plan *plan, int call, int index,
                               avk_unfused_gemm *g);

/* The backward row kernel's scalar arguments (native/softmax.cu's
 * avk_softmax_bwd_rows, the HIP twin in runtime/hip/kernels/softmax_rows.hip),
 * the same for every API; flags: the API's softmax mod bits. O's (and dO's)
 * strides are in elements of Dv rows; the mask's 0 where it broadcasts. */
typedef struct avk_unfused_row_args {
    int seq_q, seq_kv, dv;
    long long o_batch, o_head, o_row;
    int causal, heads, batch, flags, window_left, window_right;
    float softcap;
    long long mask_b, mask_h;
} avk_unfused_row_args;
void avk_unfused_row_args_of(const attnvk_problem *p, int flags, avk_unfused_row_args *out);

/* The backward in stream order: S and dP of every call, the row step over
 * all of them, the three gradient GEMMs of every call, and (16-bit problems)
 * the f32 gradients converted. The API supplies the steps. */
typedef struct avk_unfused_backward_steps {
    void *ctx;
    attnvk_status (*gemm)(void *ctx, const avk_unfused_gemm *g);
    attnvk_status (*rows)(void *ctx);
    attnvk_status (*convert)(void *ctx);
} avk_unfused_backward_steps;
attnvk_status avk_unfused_backward_run(const attnvk_problem *p, const avk_unfused_plan *plan,
                                       const avk_unfused_backward_steps *steps);

#endif
