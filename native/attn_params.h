/* Arguments of the native flash-attention kernels, shared by the host (C17)
 * and the kernel source (CUDA/HIP C++): the device addresses, then the kernel
 * contract's scalars expanded from runtime/contract/kernel_args.def, so both
 * sides (and every other API's kernels) agree on one list. Fixed-width
 * members only; passed by value as the kernel's one argument. */
#ifndef ATTNVK_ATTN_PARAMS_H
#define ATTNVK_ATTN_PARAMS_H

#include "contract/kernel_flags.h"

/* the split-KV merge (avk_attn_reduce; the host's merge_threads): a group of
 * Dv/4 lanes loads AVK_MERGE_BATCH splits at once; groups up to this many threads */
#define AVK_MERGE_MAX_THREADS 256
#ifndef AVK_MERGE_BATCH
#define AVK_MERGE_BATCH 8
#endif

/* The FP8 forward reads V transposed (avk_fp8_v_transpose): per (b, kv head) Dv
 * rows of this many key bytes, whole 256-key tiles, zeros past Nk */
#define AVK_FP8_VT_KEYS(nk) (((unsigned long long)(nk) + 255ull) / 256ull * 256ull)

#define AVK_ARG_U32 unsigned int
#define AVK_ARG_I32 int
#define AVK_ARG_F32 float

typedef struct avk_attn_params {
    unsigned long long q, k, v, o;   /* Q, O: dtype storage; K, V: rows in the kv format */
    unsigned long long lse;          /* f32 [B][H][Nq], or 0 */
    unsigned long long part_o;       /* split-KV: f32 [splits][B][H][Nq][D] */
    unsigned long long part_lse;     /* split-KV: f32 [splits][B][H][Nq] */
    unsigned long long block_table;  /* int32 [B][max_pages] (paged) */
    unsigned long long seq_lens;     /* int32 [B] (flags & AVK_FLAG_SEQ_LENS) */
    unsigned long long kv_scales;    /* f32 [2][H_kv] (fp8) */
    unsigned long long alibi_slopes; /* f32 [H] (flags & AVK_FLAG_ALIBI) */
    unsigned long long sinks;        /* f32 [H] natural-log sink logits (flags & AVK_FLAG_SINKS) */
    unsigned long long mask;         /* f32 or f16 additive mask (flags & AVK_FLAG_MASK) */
    unsigned long long q_scales;     /* f32 [H]: an fp8 Q's scales (the FP8 forward) */
    unsigned long long vt;           /* the FP8 forward: V transposed (AVK_FP8_VT_KEYS), in the workspace */
    /* a persistent kernel (AVK_PERSISTENT): the grid of one CTA per block (x, y; z follows from
     * items), whose blocks its CTAs take in turn; AVK_PERSISTENT=2: the counter they take them from
     * (a u32, zero between launches) */
    unsigned long long sched;
    unsigned int grid_x, grid_y, items, persistent_pad;
#define AVK_ARG(type, name) AVK_ARG_##type name;
#include "contract/kernel_args.def"
#undef AVK_ARG
} avk_attn_params;

#endif
