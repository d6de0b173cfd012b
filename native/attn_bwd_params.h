/* The backward kernels' one argument (native/attn_bwd.cu), shared by the host
 * (C17) and NVRTC: the forward's arguments (pack 1, every query row), then
 * dO, the gradients and the f32 workspaces (D_i, the sink shares, dQ's sums). */
#ifndef ATTNVK_ATTN_BWD_PARAMS_H
#define ATTNVK_ATTN_BWD_PARAMS_H

#include "attn_params.h"

typedef struct avk_bwd_params {
    avk_attn_params f;
    unsigned long long d_o, dq, dk, dv; /* the problem's dtype, shaped as O, Q, K, V */
    unsigned long long d_sinks;         /* f32 [H], or 0 */
    unsigned long long delta;           /* f32 [B][H][Nq]: D_i */
    unsigned long long sink_share;      /* f32 [B][H][Nq]: -P_sink * D_i (sinks only) */
    unsigned long long dq_acc;          /* f32 [B][H][Nq][Dk]: dQ summed by atomics (the default mma
                                         * path; 0 in the deterministic mode) */
} avk_bwd_params;

#endif
