/* Flag bits of kernel_args.def's `flags`, and the kv format codes kernels
 * are compiled for (AVK_KV_FORMAT), in plain #defines every kernel language
 * (C, CUDA/HIP, OpenCL C, GLSL) reads alike. */
#ifndef AVK_KERNEL_FLAGS_H
#define AVK_KERNEL_FLAGS_H

#define AVK_FLAG_CAUSAL 1u          /* bottom-right: key j visible to row i iff j <= i + len - Nq */
#define AVK_FLAG_WRITE_LSE 2u       /* write f32 LSE [B][H][Nq] */
#define AVK_FLAG_SEQ_LENS 4u        /* per-sequence key counts from seq_lens, clamped to 0..seq_kv */
#define AVK_FLAG_SPLIT 8u           /* write f32 partials (O, LSE) per split for the merge */
#define AVK_FLAG_SKIP_LAST_TILE 16u /* ATTNVK_TEST_SKIP_LAST_KV_TILE: deliberately wrong */
/* score modifications and visibility (attnvk.h; kernel_args.def's window_*, softcap, mask_*) */
#define AVK_FLAG_TOP_LEFT 32u       /* i' = i, else i + len - Nq: for causal, windows and ALiBi */
#define AVK_FLAG_WINDOW 64u         /* keys i' - window_left .. i' + window_right (-1: unbounded that side) */
#define AVK_FLAG_ALIBI 128u         /* s += alibi_slopes[h] * (j - i') */
#define AVK_FLAG_SINKS 256u         /* sinks[h] joins each row's softmax (in the split merge when split) */
#define AVK_FLAG_MASK 512u          /* s += mask[b * mask_sb + h * mask_sh + i * seq_kv + j] */
#define AVK_FLAG_MASK_F16 1024u     /* the mask holds f16 (else f32) */
/* sparse patterns (#20), read through the mask's binding (a problem with one has no mask there) */
#define AVK_FLAG_BLOCKS 2048u       /* uint8 block layout: key j hidden where layout[b * mask_sb + h * mask_sh +
                                       (i / block_q) * ceil(Nk / block_k) + j / block_k] == 0 */
#define AVK_FLAG_DILATED 4096u      /* int32 [groups][2] (segment, rate): LongNet's dilated pattern */
/* The same table run as strided views (forward kernels that have them; the host sets this in
 * place of AVK_FLAG_DILATED, with AVK_FLAG_TOP_LEFT): grid x enumerates each head group's
 * (segment, residue class, row block) in turn, ceil(Nq / s) * r * ceil(ceil(min(s, Nq) / r) / br)
 * blocks (the largest group's; the rest of a smaller group's are empty). Class c of segment k
 * holds the rows k s + c + r t, t < m_c; rows and keys are view indices t, a view row's
 * address, LSE and partials are those of the row k s + c + r t; the class o = g mod r sees its
 * own m_o keys (plain causal on view indices), the others none, so they write zeros. A rate-r
 * group then does N s / r^2 of the work instead of N s. */
#define AVK_FLAG_DILATED_VIEW 8192u
/* The grid's heads vary fastest: a workgroup at (x, y) takes block (lin / gy, lin % gy), lin = x + y gx,
 * so a row block's heads run together. The host sets it (unless ATTNVK_MASK_HEADS_FIRST=0) for an additive
 * mask the heads share: its rows then come from L2 once read. Vulkan's and OpenCL's forward obey it;
 * CUDA's forward does so for every such mask by its own test (attn_fwd.cu's avk_locate_at). */
#define AVK_FLAG_HEADS_FIRST 16384u

/* AVK_SCORE_MOD bits: the score modifications a kernel build applies per
 * element (0: none). One build per combination, so a softcap-only kernel
 * carries no ALiBi or mask registers and no branch per tile. */
#define AVK_MOD_SOFTCAP 1u
#define AVK_MOD_ALIBI 2u
#define AVK_MOD_MASK 4u
#define AVK_MOD_BLOCKS 8u   /* a block layout (AVK_FLAG_BLOCKS) */
#define AVK_MOD_DILATED 16u /* a dilation (AVK_FLAG_DILATED) */
#define AVK_MOD_PATTERN (AVK_MOD_BLOCKS | AVK_MOD_DILATED)

/* AVK_KV_FORMAT values (= attnvk_kv_format) */
#define AVK_KV_DTYPE 0
#define AVK_KV_Q8_0 1
#define AVK_KV_Q4_0 2
#define AVK_KV_FP8 3

#endif
