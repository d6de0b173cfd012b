/* Arguments of the native flash-attention kernels, shared by the host (C17)
 * and the kernel source (CUDA/HIP C++): fixed-width members only, so both
 * sides agree on the layout. Passed by value as the kernel's one argument. */
#ifndef ATTNVK_ATTN_PARAMS_H
#define ATTNVK_ATTN_PARAMS_H

typedef struct avk_attn_params {
    unsigned long long q, k, v, o;   /* device addresses, dtype storage */
    unsigned long long lse;          /* f32 [B][H][Nq], or 0 */
    unsigned long long part_o;       /* split-KV: f32 [splits][B][H][Nq][D] */
    unsigned long long part_lse;     /* split-KV: f32 [splits][B][H][Nq] */
    long long q_sb, q_sh, q_ss;      /* element strides of Q and O: batch, head, row */
    long long kv_sb, kv_sh, kv_ss;   /* of K and V */
    int batch, heads, kv_heads, seq_q, seq_kv;
    int group;                       /* heads / kv_heads */
    int kv_limit;                    /* keys [0, kv_limit) exist (fewer only for the test-only skip) */
    int q_begin, q_count;            /* the query rows of this dispatch */
    int causal;                      /* bottom-right: key j visible to row i iff j <= i + Nk - Nq */
    int splits, tiles_per_split;     /* split-KV: blockIdx.z = b * splits + split */
    float scale_log2;                /* scale * log2(e) */
    int pad_;
} avk_attn_params;

#endif
