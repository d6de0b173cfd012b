/* Host side of avk_attn_params (C17 only; the kernel compilers never see it):
 * the shape, stride and scale fields that the CUDA and HIP backends fill the
 * same way. Device addresses, kv_limit and the split-KV fields stay with
 * each backend. */
#ifndef ATTNVK_ATTN_PARAMS_HOST_H
#define ATTNVK_ATTN_PARAMS_HOST_H

#include "attn_params.h"
#include "attnvk/attnvk.h"

static inline void avk_attn_params_set_shape(avk_attn_params *P, const attnvk_problem *p, int q_begin, int q_count)
{
    long long D = p->head_dim;
    if (p->layout == ATTNVK_LAYOUT_BHSD) {
        P->q_sb = (long long)p->heads * p->seq_q * D, P->q_sh = p->seq_q * D, P->q_ss = D;
        P->kv_sb = (long long)p->kv_heads * p->seq_kv * D, P->kv_sh = p->seq_kv * D, P->kv_ss = D;
    } else {
        P->q_sb = (long long)p->seq_q * p->heads * D, P->q_sh = D, P->q_ss = p->heads * D;
        P->kv_sb = (long long)p->seq_kv * p->kv_heads * D, P->kv_sh = D, P->kv_ss = p->kv_heads * D;
    }
    P->batch = p->batch;
    P->heads = p->heads;
    P->kv_heads = p->kv_heads;
    P->seq_q = p->seq_q;
    P->seq_kv = p->seq_kv;
    P->group = p->heads / p->kv_heads;
    P->q_begin = q_begin;
    P->q_count = q_count;
    P->causal = p->causal;
    P->scale_log2 = attnvk_problem_scale(p) * 1.4426950408889634f; /* exp(x) = exp2(x * log2 e) */
}

#endif
