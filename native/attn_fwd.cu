/* attnvk's native flash-attention forward (FlashAttention-2 schedule), one
 * source for NVRTC/nvcc and hipRTC/hipcc (see attn_portability.h).
 *
 * Compile-time parameters (-D), chosen per device by the host's tuning table:
 *   AVK_D        Q and K's head dim (Dk): 32, 40, 64, 72, 80, 96, 112, 128, 192,
 *                256, 512, 576 (the tensor-core bodies pad Q/K/V tiles to whole
 *                k-steps of 16 with zero columns)
 *   AVK_DV       V and O's head dim (Dv; default AVK_D): 128 with Dk 192, 512
 *                with Dk 576 (DeepSeek MLA); Q.K^T runs over Dk, P.V, O, the
 *                split partials and the merge over Dv
 *   AVK_DTYPE    0 f32, 1 f16, 2 bf16 (storage of Q, K, V, O)
 *   AVK_BR       query rows per CTA, AVK_BC keys per K/V tile
 *   AVK_THREADS  threads per CTA
 *   AVK_MMA      1: tensor-core kernel (mma.sync m16n8k16, sm_80+), needs
 *                AVK_WM (16-row m-tiles per warp) and AVK_QREG (Q fragments
 *                kept in registers; 0 re-reads them from shared memory),
 *                AVK_WN > 1: that many warps share each 16-row group, each
 *                holding Dv / AVK_WN of O (attn_mma.h; Dv > 256)
 *                0: the portable f32 kernel (any dtype, any target)
 *   AVK_WGMMA    1 (with AVK_MMA): the Hopper kernel (attn_sm90.h, sm_90a):
 *                wgmma with one warpgroup per 64 query rows, swizzled tiles
 *   AVK_KEY_WARPS  > 0 (with AVK_MMA): the decode kernel (attn_decode.h): one
 *                16-row m-tile, that many warps splitting the keys, each
 *                with AVK_KV_STAGES raw K/V stages in flight
 *   AVK_TILED    1 (with AVK_MMA=0): the register-tiled f32 kernel
 *                (attn_tiled.h), AVK_DS lanes splitting D per row group
 *   AVK_SPLIT    1: write f32 partial O and LSE per KV split (decode), merged
 *                by avk_attn_reduce
 *   AVK_MINB     CTAs per SM for __launch_bounds__ (register budget)
 *   AVK_RESCALE_SLACK  how far (log2) the running max may lag before O is rescaled
 *   AVK_SCORE_MOD  AVK_MOD_* bits (softcap, ALiBi, mask): every S tile goes
 *                through avk_score_mod's modifications (windows, sinks and top-left
 *                need no build of their own: they are ranges and the epilogue)
 * Kernels: avk_attn_fwd (one CTA per BR query rows of one (b, h, split)) and
 * avk_attn_reduce (the split-KV merge). */
#include "attn_portability.h"
#include "attn_params.h"

#if !defined(AVK_D) || !defined(AVK_DTYPE) || !defined(AVK_BR) || !defined(AVK_BC) || !defined(AVK_THREADS)
#error "AVK_D, AVK_DTYPE, AVK_BR, AVK_BC and AVK_THREADS must be defined"
#endif
#ifndef AVK_DV
#define AVK_DV AVK_D
#endif
#ifndef AVK_MMA
#define AVK_MMA 0
#endif
#ifndef AVK_SPLIT
#define AVK_SPLIT 0
#endif
#ifndef AVK_MINB
#define AVK_MINB 1 /* CTAs per SM the register allocation must allow */
#endif
#ifndef AVK_WGMMA
#define AVK_WGMMA 0
#endif
#ifndef AVK_TILED
#define AVK_TILED 0
#endif
#ifndef AVK_KEY_WARPS
#define AVK_KEY_WARPS 0 /* > 0 (with AVK_MMA): the decode body, warps splitting keys */
#endif
#ifndef AVK_KV_STAGES
#define AVK_KV_STAGES 2
#endif
#ifndef AVK_SCORE_MOD
#define AVK_SCORE_MOD 0
#endif
#ifndef AVK_RESCALE_SLACK
#define AVK_RESCALE_SLACK 8.0f /* log2 units the running max may lag: P <= 2^8 */
#endif

#define AVK_NEG_INF (-__int_as_float(0x7f800000))
#define AVK_LN2 0.69314718055994530942f

/* ---- the storage type (avk_elem) and the kernel contract's hooks (docs/kernel-contract.md) ---- */
#include "attn_contract.h"

/* ---- where one CTA works ----
 * Rows are packed (GQA): row R of a CTA at grid y is query R / pack of head
 * y * pack + R % pack, so with pack = 1 a row is a query index. */
struct avk_work {
    int b, h, g, split;  /* h: the first head of the CTA's group (y * pack); g: its kv head */
    int r0, r_end;       /* packed rows [r0, r_end) of this CTA */
    int seq_len;         /* keys of this sequence */
    int kv_limit;        /* keys [0, kv_limit) exist (fewer only for the test-only skip) */
    int t_begin, t_end;  /* K/V tiles [t_begin, t_end) */
    int kv_end;          /* keys [0, kv_end) may be visible to some row of the CTA */
    int kv_begin;        /* no row of the CTA sees keys below this (a window's left side) */
    long long q_off;     /* element offset of row 0 of (b, h) in Q (O: avk_o_elem) */
    long long kv_row0;   /* contiguous caches: the K/V row of key 0 of (b, g) */
    long long kv_off;    /* its element offset in K (rows of Dk), */
    long long v_off;     /* and in V (rows of Dv) */
    long long q_ss, kv_ss; /* rows between consecutive queries (keys): the problem's, or a dilated view's */
    int view_base, view_step; /* a dilated view's row of index 0 and its rate (else 0, 1) */
};

/* Dilated problems as strided views (AVK_FLAG_DILATED_VIEW; kernel_flags.h), in
 * builds with AVK_DILATED_VIEW (the host's: CUDA, not HIP's precompiled code objects),
 * which take no per-element dilation test (no AVK_MOD_DILATED): grid x names
 * (segment, residue class, row block) of the head's group, and the class's rows
 * and keys are view indices 0..m-1 under plain top-left causal. Q, K, V, O, LSE and
 * the split partials reach the problem's row base + i * rate through the CTA's
 * q_ss / kv_ss and avk_lse_row, so the bodies' tile loops are unchanged. Vulkan's
 * flash_dilated_view and OpenCL's avk_dilated_view alike; one head per CTA (pack 1). */
#ifndef AVK_DILATED_VIEW
#define AVK_DILATED_VIEW 0
#endif
/* x: the CTA's block along grid x (avk_locate's, after its reordering) */
AVK_DEVICE void avk_dilated_view(const avk_attn_params &p, avk_work &w, int br, int x)
{
    const avk_dilation d = avk_dilation_of(p, w.h);
    const int grp = w.h / ((int)p.heads / (int)p.pattern), n = (int)p.seq_q;
    const int blocks = ((min(d.s, n) + d.r - 1) / d.r + br - 1) / br; /* row blocks of a class */
    const int seg = x / (d.r * blocks), cls = x / blocks % d.r;
    const int seg0 = seg < (int)(((long long)n + d.s - 1) / d.s) ? seg * d.s : n; /* a smaller group's spare blocks */
    const int seg_len = min(d.s, n - seg0), rows = seg_len > cls ? (seg_len - cls + d.r - 1) / d.r : 0;
    w.view_base = seg0 + cls;
    w.view_step = d.r;
    w.r0 = x % blocks * br;
    w.r_end = max(w.r0, min(w.r0 + br, rows));
    /* the other classes are inactive rows (no keys: zeros, LSE -inf); a block past the class's rows reads nothing */
    w.seq_len = cls == grp % d.r && w.r0 < rows ? rows : 0;
}

/* 0: causal row blocks longest first within each head (session 30's opt-out) */
#ifndef AVK_CAUSAL_HEADS_FIRST
#define AVK_CAUSAL_HEADS_FIRST 1
#endif
/* 0: causal row blocks counted from the first row (the part block last, before session 38) */
#ifndef AVK_CAUSAL_FROM_END
#define AVK_CAUSAL_FROM_END 1
#endif
/* The work of block (bx, by, bz) of a grid gx x gy x (B x splits) */
AVK_DEVICE avk_work avk_locate_at(const avk_attn_params &p, int br, int bc, int bx, int by, int bz, int gx, int gy)
{
    avk_work w;
    const int pack = (int)p.pack;
    w.b = bz / (int)p.splits;
    w.split = bz % (int)p.splits;
    if (((p.flags & AVK_FLAG_MASK) && p.mask_sh == 0) || (AVK_CAUSAL_HEADS_FIRST && avk_causal(p))) {
        /* a mask the heads share: a row block's heads run together (heads vary
         * fastest), so its mask rows come from L2 once read. Causal: every head's
         * longest row blocks go first (below), not one head's after another */
        const int lin = bx + by * gx;
        by = lin % gy;
        bx = lin / gy;
    }
    w.h = by * pack;
    w.g = w.h / (int)p.group;
    w.view_base = 0, w.view_step = 1;
    if (AVK_DILATED_VIEW && (p.flags & AVK_FLAG_DILATED_VIEW)) {
        avk_dilated_view(p, w, br, bx);
    } else {
        const int q0 = (int)p.q_begin * pack, q1 = (int)(p.q_begin + p.q_count) * pack;
        if (AVK_CAUSAL_FROM_END && avk_causal(p) && !(p.flags & (AVK_FLAG_BLOCKS | AVK_FLAG_DILATED))) {
            /* causal: the longest rows first, so the short ones fill the tail; the blocks
             * counted back from the last row, so that a part block (rows % br) holds the
             * first rows, with the fewest keys, rather than the last, with the most: its
             * rowless warpgroups walk the block's tiles too (the ping-pong's turns) */
            w.r_end = q1 - bx * br;
            w.r0 = max(q0, w.r_end - br);
        } else {
            const int blk = avk_causal(p) ? gx - 1 - bx : bx;
            w.r0 = q0 + blk * br;
            w.r_end = min(w.r0 + br, q1);
        }
        w.seq_len = avk_seq_len(p, w.b);
    }
    w.kv_limit = (p.flags & AVK_FLAG_SKIP_LAST_TILE) ? (w.seq_len > 0 ? (w.seq_len - 1) / bc * bc : 0) : w.seq_len;
    w.kv_end = min(w.kv_limit, avk_key_end(p, w.seq_len, (w.r_end - 1) / pack));
    w.kv_begin = avk_key_begin(p, w.seq_len, w.r0 / pack);
    int first_end = w.kv_end, last_begin = w.kv_begin; /* unused halves of the pattern's bounds */
    avk_pattern_bounds(p, w.h, w.r0 / pack, w.kv_begin, first_end);
    avk_pattern_bounds(p, w.h, (w.r_end - 1) / pack, last_begin, w.kv_end);
    const int tiles = (w.kv_end + bc - 1) / bc;
    /* tiles below every row's window are never loaded: the splits count from
     * the block's first visible tile (0 without a left window), as core plans
     * them over the keys a row block may see (avk_kernel_args_span), not the
     * whole cache; OpenCL's and Vulkan's avk_locate / flash_work alike */
    const int first = min(tiles, w.kv_begin / bc);
    if (p.splits > 1) {
        const int tiles_per_split = (int)p.split_keys / bc;
        w.t_begin = min(tiles, first + w.split * tiles_per_split);
        w.t_end = min(tiles, w.t_begin + tiles_per_split);
    } else {
        w.t_begin = first;
        w.t_end = tiles;
    }
    w.q_ss = (long long)p.q_ss * w.view_step;
    w.kv_ss = (long long)p.kv_ss * w.view_step;
    w.q_off = (long long)w.b * p.q_sb + (long long)w.h * p.q_sh;
    w.kv_row0 = (long long)w.b * p.kv_sb + (long long)w.g * p.kv_sh;
    if (AVK_DILATED_VIEW) {
        w.q_off += (long long)w.view_base * p.q_ss;
        w.kv_row0 += (long long)w.view_base * p.kv_ss;
    }
    w.kv_off = w.kv_row0 * AVK_D;
    w.v_off = w.kv_row0 * AVK_DV;
    return w;
}

AVK_DEVICE avk_work avk_locate(const avk_attn_params &p, int br, int bc)
{
    return avk_locate_at(p, br, bc, (int)blockIdx.x, (int)blockIdx.y, (int)blockIdx.z, (int)gridDim.x, (int)gridDim.y);
}

/* A persistent kernel's item i (AVK_PERSISTENT): block i of the grid a launch of one CTA per
 * block would have (x fastest, the order such a launch starts them in) */
AVK_DEVICE avk_work avk_locate_item(const avk_attn_params &p, int br, int bc, int item)
{
    const int gx = (int)p.grid_x, gy = (int)p.grid_y;
    return avk_locate_at(p, br, bc, item % gx, item / gx % gy, item / (gx * gy), gx, gy);
}

/* Rows between a CTA's consecutive queries and keys: a dilated view's (builds with
 * AVK_DILATED_VIEW), else the problem's strides straight from the parameters, as
 * before views existed (no registers held for them in the other builds). */
AVK_DEVICE long long avk_q_stride(const avk_attn_params &p, const avk_work &w) { return AVK_DILATED_VIEW ? w.q_ss : (long long)p.q_ss; }
AVK_DEVICE long long avk_kv_stride(const avk_attn_params &p, const avk_work &w) { return AVK_DILATED_VIEW ? w.kv_ss : (long long)p.kv_ss; }

/* Element stride between keys of a contiguous K/V in the dtype format (the
 * bodies that run only such caches: tiled, sm90), through a dilated view. */
AVK_DEVICE long long avk_kv_es(const avk_attn_params &p, const avk_work &w) { return avk_kv_stride(p, w) * AVK_D; }
AVK_DEVICE long long avk_v_es(const avk_attn_params &p, const avk_work &w) { return avk_kv_stride(p, w) * AVK_DV; }

/* The K/V row of the CTA's key j: a dilated view's key j is the problem's key base + j * rate. */
AVK_DEVICE long long avk_work_kv_row(const avk_attn_params &p, const avk_work &w, int j)
{
    return avk_kv_row(p, w.b, w.g, AVK_DILATED_VIEW ? w.view_base + j * w.view_step : j);
}

/* Element offset of packed row R in Q. */
AVK_DEVICE long long avk_q_row(const avk_attn_params &p, const avk_work &w, int R)
{
    return w.q_off + (long long)(R % (int)p.pack) * p.q_sh + (long long)(R / (int)p.pack) * avk_q_stride(p, w);
}

/* O's element offset of the row whose Q row starts at element q: Q's strides
 * are whole Dk rows, O's rows hold Dv values. */
AVK_DEVICE long long avk_o_elem(long long q)
{
#if AVK_DV == AVK_D
    return q;
#else
    return q / AVK_D * AVK_DV;
#endif
}

AVK_DEVICE long long avk_o_row(const avk_attn_params &p, const avk_work &w, int R)
{
    return avk_o_elem(avk_q_row(p, w, R));
}

/* Keys [0, end) row R may see: the tile loop's mask and skip bounds. */
AVK_DEVICE int avk_row_key_end(const avk_attn_params &p, const avk_work &w, int R)
{
    const int i = R / (int)p.pack;
    int begin = 0, end = min(w.kv_limit, avk_key_end(p, w.seq_len, i));
    avk_pattern_bounds(p, w.h + R % (int)p.pack, i, begin, end);
    return end;
}

/* The first key row R sees. */
AVK_DEVICE int avk_row_key_begin(const avk_attn_params &p, const avk_work &w, int R)
{
    const int i = R / (int)p.pack;
    int begin = avk_key_begin(p, w.seq_len, i), end = w.seq_len;
    avk_pattern_bounds(p, w.h + R % (int)p.pack, i, begin, end);
    return begin;
}

/* the contract's score hook in native form, and the per-tile visibility tests */
#include "attn_scores.h"

/* Index of packed row R in LSE and the split partials ([b][h][Nq] rows; a view's row is its problem row). */
AVK_DEVICE long long avk_lse_row(const avk_attn_params &p, const avk_work &w, int R)
{
    const long long i = AVK_DILATED_VIEW ? w.view_base + (R / (int)p.pack) * w.view_step : R / (int)p.pack;
    return ((long long)w.b * p.heads + w.h + R % (int)p.pack) * p.seq_q + i;
}

/* Writes the finished row R: o_norm values d0, d0+1 (already divided by l). */
AVK_DEVICE void avk_store_pair(const avk_attn_params &p, const avk_work &w, int R, int d0, float x0, float x1)
{
#if AVK_SPLIT
    float *po = (float *)p.part_o +
                ((long long)w.split * p.batch * p.heads * p.seq_q + avk_lse_row(p, w, R)) * AVK_DV + d0;
    po[0] = x0;
    po[1] = x1;
#else
    avk_elem *o = (avk_elem *)p.o + avk_o_row(p, w, R) + d0;
    o[0] = avk_from_f32(x0);
    o[1] = avk_from_f32(x1);
#endif
}

/* lse_log2 = m + log2(l) in the scaled log2 domain, or -inf for an empty row. */
AVK_DEVICE void avk_store_lse(const avk_attn_params &p, const avk_work &w, int R, float lse_log2)
{
    float lse = lse_log2 == AVK_NEG_INF ? AVK_NEG_INF : lse_log2 * AVK_LN2;
#if AVK_SPLIT
    ((float *)p.part_lse)[(long long)w.split * p.batch * p.heads * p.seq_q + avk_lse_row(p, w, R)] = lse;
#else
    if (p.flags & AVK_FLAG_WRITE_LSE) ((float *)p.lse)[avk_lse_row(p, w, R)] = lse;
#endif
}

#if AVK_MMA
#if !defined(AVK_MMA_SM80)
#error "AVK_MMA=1 needs mma.sync m16n8k16 (sm_80 or newer)"
#endif
#if AVK_DTYPE == 0
#error "the tensor-core kernel takes f16 or bf16"
#endif
/* ======================= tensor-core kernel (sm_80+) ======================= */
#if AVK_DTYPE == 1
#define avk_mma avk_mma_f16
#define avk_mma_zc avk_mma_f16_zc
#define avk_pack2 avk_pack_f16x2
#else
#define avk_mma avk_mma_bf16
#define avk_mma_zc avk_mma_bf16_zc
#define avk_pack2 avk_pack_bf16x2
#endif

/* ===== tensor-core helpers (mma.sync and wgmma kernels share them) =====
 * A thread's accumulators hold, per 16-row m-tile mi and 8-column n-tile n,
 * s[mi][n][e]: row quad_row + 8 * (e / 2), column quad_col * 2 + e % 2 (the
 * PTX ISA's m16n8 C layout, which wgmma's m64nN also uses per warp). */

/* Online softmax of one S tile: the running max (row_max, scaled log2 domain)
 * only moves when some row's tile max exceeds it by AVK_RESCALE_SLACK, so most
 * tiles skip rescaling O, and P stays <= 2^slack, well inside f16/bf16. The
 * vote keeps the branch uniform across the warp. S becomes P (f32); row_sum
 * holds per-thread partial sums. */
template <int WM, int NS, int ND>
AVK_DEVICE void avk_online_softmax(float (&s)[WM][NS][4], float (&acc)[WM][ND][4], float (&row_max)[WM][2],
                                   float (&row_sum)[WM][2], float scale_log2)
{
    float tile_max[WM][2];
    bool grow = false;
#pragma unroll
    for (int mi = 0; mi < WM; ++mi)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            float mx = AVK_NEG_INF;
#pragma unroll
            for (int n = 0; n < NS; ++n) mx = avk_max(mx, avk_max(s[mi][n][2 * half], s[mi][n][2 * half + 1]));
            mx = avk_max(mx, avk_shfl_xor(mx, 1));
            mx = avk_max(mx, avk_shfl_xor(mx, 2));
            tile_max[mi][half] = mx * scale_log2;
            grow |= tile_max[mi][half] > row_max[mi][half] + AVK_RESCALE_SLACK;
        }
    if (avk_any(grow)) {
#pragma unroll
        for (int mi = 0; mi < WM; ++mi)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const float m_new = avk_max(row_max[mi][half], tile_max[mi][half]);
                /* exp2(-inf) = 0 for a row's first visible keys; 1 when unchanged */
                const float alpha = m_new == AVK_NEG_INF ? 1.f : avk_exp2(row_max[mi][half] - m_new);
                row_max[mi][half] = m_new;
                row_sum[mi][half] *= alpha;
#pragma unroll
                for (int n = 0; n < ND; ++n) {
                    acc[mi][n][2 * half] *= alpha;
                    acc[mi][n][2 * half + 1] *= alpha;
                }
            }
    }
#pragma unroll
    for (int mi = 0; mi < WM; ++mi)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const float m_use = row_max[mi][half] == AVK_NEG_INF ? 0.f : row_max[mi][half];
            float sum = 0.f;
#pragma unroll
            for (int n = 0; n < NS; ++n)
#pragma unroll
                for (int e = 2 * half; e < 2 * half + 2; ++e) {
                    float pe = avk_exp2(s[mi][n][e] * scale_log2 - m_use);
                    s[mi][n][e] = pe;
                    sum += pe;
                }
            row_sum[mi][half] += sum;
        }
}

/* P (f32, accumulator layout) as the A fragments of k-step kk (16 keys): the
 * C layout of two n-tiles is the A layout of one k-step. */
template <int WM, int NS>
AVK_DEVICE void avk_pack_p(const float (&s)[WM][NS][4], int kk, avk_u32 (&pa)[WM][4])
{
#pragma unroll
    for (int mi = 0; mi < WM; ++mi) {
        pa[mi][0] = avk_pack2(s[mi][2 * kk][0], s[mi][2 * kk][1]);
        pa[mi][1] = avk_pack2(s[mi][2 * kk][2], s[mi][2 * kk][3]);
        pa[mi][2] = avk_pack2(s[mi][2 * kk + 1][0], s[mi][2 * kk + 1][1]);
        pa[mi][3] = avk_pack2(s[mi][2 * kk + 1][2], s[mi][2 * kk + 1][3]);
    }
}

/* Byte offset of 16-byte chunk k (8 elements) of row r in a tile of ROWS rows
 * of D_ elements: padded rows (+16 bytes, so ldmatrix rows hit distinct banks)
 * or, SW128, D_/64 column blocks of ROWS x 128 bytes with chunk k of row r at
 * k ^ (r % 8): the 128-byte swizzle that wgmma's descriptors describe. */
template <int ROWS, int D_, bool SW128>
AVK_DEVICE avk_u32 avk_tile_offset(int r, int k)
{
    return SW128 ? (avk_u32)((k / 8) * ROWS * 128 + r * 128 + (((k % 8) ^ (r % 8)) << 4))
                 : (avk_u32)((r * (D_ + 8) + k * 8) * 2);
}

/* Asynchronously copies ROWS rows of D_ elements into smem (NT_ threads) as
 * rows of DP_ >= D_ (a whole number of 16-wide k-steps); rows at or past
 * `valid` and columns past D_ are zero-filled so they contribute exact zeros.
 * A fixed trip count lets the compiler turn addresses into increments. */
template <int ROWS, int D_, int NT_, bool SW128, int DP_ = D_>
AVK_DEVICE void avk_load_tile(avk_u32 smem, const avk_elem *g, long long row_stride, int valid)
{
    enum { CH_ = DP_ / 8 };
#pragma unroll 8
    for (int j = 0; j < (ROWS * CH_ + NT_ - 1) / NT_; ++j) {
        const int c = threadIdx.x + j * NT_;
        if ((ROWS * CH_) % NT_ != 0 && c >= ROWS * CH_) break;
        const int r = c / CH_, k = c % CH_;
        const bool in = r < valid && (DP_ == D_ || k < D_ / 8);
        const avk_elem *src = in ? g + (long long)r * row_stride + k * 8 : g;
        avk_cp_async16(smem + avk_tile_offset<ROWS, DP_, SW128>(r, k), src, in ? 16 : 0);
    }
}


/* Q rows [r0, r0 + ROWS) of the CTA (packed: each row its own head and query). */
template <int ROWS, int D_, int NT_, bool SW128, int DP_ = D_>
AVK_DEVICE void avk_load_q_tile(avk_u32 smem, const avk_attn_params &p, const avk_work &w)
{
    if (p.pack == 1) {
        avk_load_tile<ROWS, D_, NT_, SW128, DP_>(smem, (const avk_elem *)p.q + w.q_off + (long long)w.r0 * avk_q_stride(p, w),
                                                 avk_q_stride(p, w), w.r_end - w.r0);
        return;
    }
    enum { CH_ = DP_ / 8 };
    for (int c = threadIdx.x; c < ROWS * CH_; c += NT_) {
        const int r = c / CH_, k = c % CH_;
        const bool in = w.r0 + r < w.r_end && (DP_ == D_ || k < D_ / 8);
        const avk_elem *src = (const avk_elem *)p.q + (in ? avk_q_row(p, w, w.r0 + r) + k * 8 : 0);
        avk_cp_async16(smem + avk_tile_offset<ROWS, DP_, SW128>(r, k), src, in ? 16 : 0);
    }
}

/* K or V keys [key0, key0 + ROWS) in the problem's dtype (rows of D_: Dk for
 * K, Dv for V): one stride when contiguous, each row's address from the
 * block table when paged. */
template <int ROWS, int D_, int NT_, bool SW128, int DP_ = D_>
AVK_DEVICE void avk_load_kv_tile(avk_u32 smem, const avk_attn_params &p, const avk_work &w, unsigned long long base,
                                 int key0, int valid)
{
    const avk_elem *g = (const avk_elem *)base;
    if (p.page_size == 0) {
        const long long stride = avk_kv_stride(p, w) * D_;
        avk_load_tile<ROWS, D_, NT_, SW128, DP_>(smem, g + w.kv_row0 * D_ + (long long)key0 * stride, stride, valid);
        return;
    }
    enum { CH_ = DP_ / 8 };
    for (int c = threadIdx.x; c < ROWS * CH_; c += NT_) {
        const int r = c / CH_, k = c % CH_;
        const bool in = r < valid && (DP_ == D_ || k < D_ / 8);
        const avk_elem *src = in ? g + avk_work_kv_row(p, w, key0 + r) * D_ + k * 8 : g;
        avk_cp_async16(smem + avk_tile_offset<ROWS, DP_, SW128>(r, k), src, in ? 16 : 0);
    }
}

#if AVK_KV_QUANT
/* Quantized K/V: raw row bytes are copied into shared memory (the widest
 * copy the row size allows), then dequantized into the tile the MMAs read. */
enum { AVK_RAW_GRAIN = AVK_KV_ROW_BYTES % 16 == 0 ? 16 : AVK_KV_ROW_BYTES % 8 == 0 ? 8 : AVK_KV_ROW_BYTES % 4 == 0 ? 4 : 2 };

template <int ROWS, int NT_>
AVK_DEVICE void avk_load_raw_tile(unsigned char *sraw, const avk_attn_params &p, const avk_work &w,
                                  unsigned long long base, int key0, int valid)
{
    enum { G = AVK_RAW_GRAIN, PER_ROW = AVK_KV_ROW_BYTES / G };
    const unsigned char *g = (const unsigned char *)base;
    for (int c = threadIdx.x; c < ROWS * PER_ROW; c += NT_) {
        const int r = c / PER_ROW, k = c % PER_ROW;
        const bool in = r < valid;
        const unsigned char *src = in ? g + avk_work_kv_row(p, w, key0 + r) * AVK_KV_ROW_BYTES + k * G : g;
        unsigned char *dst = sraw + r * AVK_KV_ROW_BYTES + k * G;
        if (G == 16) avk_cp_async16(avk_smem_addr(dst), src, in ? 16 : 0);
        else if (G == 8) avk_cp_async8(avk_smem_addr(dst), src, in ? 8 : 0);
        else if (G == 4) avk_cp_async4(avk_smem_addr(dst), src, in ? 4 : 0);
        else *(avk_u16 *)dst = in ? *(const avk_u16 *)src : (avk_u16)0;
    }
}

/* raw rows -> ROWS x D_ tile of the compute type in rows of DP_ + 8 (the
 * columns past D_ zero) */
template <int ROWS, int D_, int NT_, int DP_ = D_>
AVK_DEVICE void avk_dequant_tile(avk_elem *tile, const unsigned char *sraw)
{
    enum { CH_ = DP_ / 8 };
    for (int c = threadIdx.x; c < ROWS * CH_; c += NT_) {
        const int r = c / CH_, k = c % CH_;
        uint4 v;
        v.x = v.y = v.z = v.w = 0u;
        if (DP_ == D_ || k < D_ / 8) {
            float x[8];
            avk_kv_value8(sraw + r * AVK_KV_ROW_BYTES, k * 8, x);
            v.x = avk_pack2(x[0], x[1]);
            v.y = avk_pack2(x[2], x[3]);
            v.z = avk_pack2(x[4], x[5]);
            v.w = avk_pack2(x[6], x[7]);
        }
        *(uint4 *)(tile + r * (DP_ + 8) + k * 8) = v;
    }
}
#endif

#if AVK_WGMMA
#include "attn_sm90.h"
#elif AVK_KEY_WARPS
#include "attn_decode.h"
#else
#include "attn_mma.h"
#endif /* AVK_WGMMA */

#elif AVK_TILED
#include "attn_tiled.h"
#else
/* ============ portable kernel: f32 arithmetic, any dtype, any target ============ */
enum {
    D = AVK_D, DV = AVK_DV, BR = AVK_BR, BC = AVK_BC, NT = AVK_THREADS,
    WARPS = NT / AVK_WARP,
    DS = D + 1,            /* padded rows: column walks hit distinct banks */
    DVS = DV + 1,          /* V's rows (Dv) */
    SS = BC + 1,
    ROWS_PER_THREAD = BR * BC / NT, /* S: each thread one key column, several rows */
    O_PER_THREAD = BR * DV / NT,
};
static_assert(NT % BC == 0 && BR % (NT / BC) == 0, "S tile must divide evenly among threads");
static_assert((BR * DV) % NT == 0, "O tile must divide evenly among threads");

/* the CTA's Q rows as f32 (packed: each row its own head and query) */
AVK_DEVICE void avk_load_q_rows(float *dst, const avk_attn_params &p, const avk_work &w)
{
    for (int e = threadIdx.x; e < BR * D; e += NT) {
        int r = e / D, d = e % D;
        dst[r * DS + d] = w.r0 + r < w.r_end ? avk_to_f32(((const avk_elem *)p.q)[avk_q_row(p, w, w.r0 + r) + d]) : 0.f;
    }
}

/* keys [key0, key0 + BC) of K (W = Dk) or V (W = Dv) as f32 in rows of W + 1,
 * decoded from the kv format (fp8 scaled); rows at or past valid are zero */
template <int W, int ROW_BYTES>
AVK_DEVICE void avk_load_kv_rows(float *dst, const avk_attn_params &p, const avk_work &w, unsigned long long base,
                                 int which, int key0, int valid)
{
    const float scale = avk_kv_scale(p, which, w.g);
    for (int e = threadIdx.x; e < BC * W; e += NT) {
        int r = e / W, d = e % W;
        float x = 0.f;
        if (r < valid) {
            const unsigned char *row = (const unsigned char *)base + avk_work_kv_row(p, w, key0 + r) * ROW_BYTES;
            x = avk_kv_value(row, d) * scale;
        }
        dst[r * (W + 1) + d] = x;
    }
}

AVK_KERNEL void __launch_bounds__(AVK_THREADS) avk_attn_fwd(const avk_attn_params p)
{
    AVK_DYNAMIC_SMEM(smem_raw);
    if (AVK_SPLIT) avk_launch_dependents(); /* the merge may launch: it waits for this grid to finish */
    float *sQ = (float *)smem_raw;
    float *sK = sQ + BR * DS;
    float *sV = sK + BC * DS;
    float *sS = sV + BC * DVS;
    float *sMax = sS + BR * SS, *sSum = sMax + BR, *sAlpha = sSum + BR;

    const avk_work w = avk_locate(p, BR, BC);
    const int tid = threadIdx.x, warp = tid / AVK_WARP, lane = tid % AVK_WARP;

    avk_load_q_rows(sQ, p, w);
    for (int r = tid; r < BR; r += NT) {
        sMax[r] = AVK_NEG_INF;
        sSum[r] = 0.f;
    }
    float acc[O_PER_THREAD];
#pragma unroll
    for (int e = 0; e < O_PER_THREAD; ++e) acc[e] = 0.f;

    for (int t = w.t_begin; t < w.t_end; ++t) {
        const int key0 = t * BC;
        __syncthreads(); /* previous tile fully consumed */
        avk_load_kv_rows<D, AVK_KV_ROW_BYTES>(sK, p, w, p.k, 0, key0, w.kv_end - key0);
        avk_load_kv_rows<DV, AVK_V_ROW_BYTES>(sV, p, w, p.v, 1, key0, w.kv_end - key0);
        __syncthreads();

        /* S = Q K^T: thread owns key column tid % BC and rows tid / BC + k * (NT / BC) */
        {
            const int c = tid % BC, rg = tid / BC;
            float s[ROWS_PER_THREAD];
#pragma unroll
            for (int k = 0; k < ROWS_PER_THREAD; ++k) s[k] = 0.f;
#pragma unroll 4
            for (int d = 0; d < D; ++d) {
                const float kv = sK[c * DS + d];
#pragma unroll
                for (int k = 0; k < ROWS_PER_THREAD; ++k) s[k] += sQ[(rg + k * (NT / BC)) * DS + d] * kv;
            }
#pragma unroll
            for (int k = 0; k < ROWS_PER_THREAD; ++k) sS[(rg + k * (NT / BC)) * SS + c] = s[k];
        }
        __syncthreads();

        /* online softmax: a warp per row, lanes across keys */
        for (int r = warp; r < BR; r += WARPS) {
            const avk_row_info ri = avk_row(p, w, w.r0 + r, p.scale_log2);
            float mx = AVK_NEG_INF;
            for (int c = lane; c < BC; c += AVK_WARP) {
                float x[1] = {sS[r * SS + c]};
                avk_score_mod<1, 1, 1>(p, ri, x, key0 + c, p.scale_log2, true);
                const float v = x[0] * avk_score_scale(p, p.scale_log2);
                sS[r * SS + c] = v;
                mx = avk_max(mx, v);
            }
            for (int m = AVK_WARP / 2; m > 0; m /= 2) mx = avk_max(mx, avk_shfl_xor(mx, m));
            const float m_old = sMax[r];
            const float m_new = avk_max(m_old, mx);
            const float m_use = m_new == AVK_NEG_INF ? 0.f : m_new;
            float sum = 0.f;
            for (int c = lane; c < BC; c += AVK_WARP) {
                float pe = avk_exp2(sS[r * SS + c] - m_use);
                sS[r * SS + c] = pe;
                sum += pe;
            }
            for (int m = AVK_WARP / 2; m > 0; m /= 2) sum += avk_shfl_xor(sum, m);
            if (lane == 0) {
                const float alpha = avk_exp2(m_old - m_use);
                sAlpha[r] = alpha;
                sSum[r] = sSum[r] * alpha + sum;
                sMax[r] = m_new;
            }
        }
        __syncthreads();

        /* O = O * alpha + P V: thread owns elements tid + e * NT of the BR x Dv tile */
#pragma unroll
        for (int e = 0; e < O_PER_THREAD; ++e) {
            const int idx = tid + e * NT, r = idx / DV, d = idx % DV;
            float o = acc[e] * sAlpha[r];
#pragma unroll 8
            for (int c = 0; c < BC; ++c) o += sS[r * SS + c] * sV[c * DVS + d];
            acc[e] = o;
        }
    }
    __syncthreads();
    for (int r = tid; r < BR; r += NT) { /* the sink joins each finished row; sAlpha: O's factor */
        float m = sMax[r], l = sSum[r];
        sAlpha[r] = avk_fold_sink(p, w.h + (w.r0 + r) % (int)p.pack, m, l);
        sMax[r] = m;
        sSum[r] = l;
    }
    __syncthreads();

    for (int e = 0; e < O_PER_THREAD; ++e) {
        const int idx = tid + e * NT, r = idx / DV, d = idx % DV;
        const int i = w.r0 + r;
        if (i >= w.r_end) continue;
        const float l = sSum[r];
        const float inv = l > 0.f ? sAlpha[r] / l : 0.f;
#if AVK_SPLIT
        ((float *)p.part_o)[((long long)w.split * p.batch * p.heads * p.seq_q + avk_lse_row(p, w, i)) * AVK_DV + d] =
            acc[e] * inv;
#else
        ((avk_elem *)p.o)[avk_o_row(p, w, i) + d] = avk_from_f32(acc[e] * inv);
#endif
    }
    for (int r = tid; r < BR; r += NT) {
        const int i = w.r0 + r;
        if (i >= w.r_end) continue;
        const float l = sSum[r];
        avk_store_lse(p, w, i, l > 0.f ? sMax[r] + log2f(l) : AVK_NEG_INF);
    }
}
#endif /* AVK_MMA */

/* ==================== split-KV merge (one CTA per row) ==================== */
/* grid (q_count, H, B), block G x Dv/4 threads (native_flash.c's merge_threads):
 * O = sum_s w_s O_s / sum_s w_s with w_s = exp(lse_s - max lse); LSE = max +
 * log(sum w_s). Group g of Dv/4 lanes (four values of O each, one 16-byte
 * load a split) merges splits g, g + G, ..., AVK_MERGE_BATCH at a time, every
 * load of a batch issued before any is used and the running max moved once per
 * batch; then the groups' partial merges combine through shared memory. A loop
 * that waited on each split's LSE before loading its O took two L2 round trips
 * a split, which at B=1 with 44 or more splits (few rows, long splits) was most
 * of the merge; one group of Dv threads still took a round trip per 8 splits. */
static_assert(AVK_DV % 4 == 0, "the merge moves O four values a lane");
AVK_KERNEL void avk_attn_reduce(const avk_attn_params p)
{
    avk_wait_primary(); /* launched early (programmatic dependent launch): the partials are complete past here */
    __shared__ float4 group_o[AVK_MERGE_MAX_THREADS];
    __shared__ float group_max[AVK_MERGE_MAX_THREADS], group_sum[AVK_MERGE_MAX_THREADS];
    const int lanes = AVK_DV / 4, groups = (int)blockDim.x / lanes;
    const int g = (int)threadIdx.x / lanes, d4 = (int)threadIdx.x % lanes;
    const int i = p.q_begin + blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const long long row = ((long long)b * p.heads + h) * p.seq_q + i;
    const long long split_stride = (long long)p.batch * p.heads * p.seq_q;
    const float *plse = (const float *)p.part_lse;
    const float4 *po = (const float4 *)p.part_o;
    const float log2e = 1.4426950408889634f;
    /* a sink joins once, in group 0: a logit with no value (weight 1 at its own max) */
    const float sink = g == 0 && (p.flags & AVK_FLAG_SINKS) ? ((const float *)p.sinks)[h] : AVK_NEG_INF;
    float mx = sink, wsum = sink != AVK_NEG_INF ? 1.f : 0.f;
    float4 o = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int s0 = g; s0 < p.splits; s0 += groups * AVK_MERGE_BATCH) {
        float ls[AVK_MERGE_BATCH];
        float4 ov[AVK_MERGE_BATCH];
#pragma unroll
        for (int k = 0; k < AVK_MERGE_BATCH; ++k) {
            /* past the last split: the group's first split again, masked below (no branch around the loads) */
            const int sk = s0 + k * groups;
            const long long s = sk < p.splits ? sk : s0;
            ls[k] = sk < p.splits ? plse[s * split_stride + row] : AVK_NEG_INF;
            ov[k] = po[(s * split_stride + row) * lanes + d4];
        }
        float batch_max = mx;
#pragma unroll
        for (int k = 0; k < AVK_MERGE_BATCH; ++k) batch_max = avk_max(batch_max, ls[k]);
        if (batch_max == AVK_NEG_INF) continue; /* only empty splits so far */
        const float keep = avk_exp2((mx - batch_max) * log2e); /* 0 while mx is -inf */
        wsum *= keep;
        o.x *= keep, o.y *= keep, o.z *= keep, o.w *= keep;
#pragma unroll
        for (int k = 0; k < AVK_MERGE_BATCH; ++k) {
            /* an empty split's O may hold anything: selected away, never multiplied */
            const float wgt = ls[k] == AVK_NEG_INF ? 0.f : avk_exp2((ls[k] - batch_max) * log2e);
            wsum += wgt;
            if (wgt > 0.f) o.x += wgt * ov[k].x, o.y += wgt * ov[k].y, o.z += wgt * ov[k].z, o.w += wgt * ov[k].w;
        }
        mx = batch_max;
    }
    if (groups > 1) { /* the groups' partial merges, each at its own max, into group 0 */
        group_o[threadIdx.x] = o;
        if (d4 == 0) group_max[g] = mx, group_sum[g] = wsum;
        __syncthreads();
        if (g != 0) return;
        float all_max = mx;
        for (int k = 1; k < groups; ++k) all_max = avk_max(all_max, group_max[k]);
        if (all_max != AVK_NEG_INF) {
            float wt = mx == AVK_NEG_INF ? 0.f : avk_exp2((mx - all_max) * log2e);
            wsum *= wt;
            o.x *= wt, o.y *= wt, o.z *= wt, o.w *= wt;
            for (int k = 1; k < groups; ++k) {
                wt = group_max[k] == AVK_NEG_INF ? 0.f : avk_exp2((group_max[k] - all_max) * log2e);
                const float4 ok = group_o[k * lanes + d4];
                wsum += wt * group_sum[k];
                if (wt > 0.f) o.x += wt * ok.x, o.y += wt * ok.y, o.z += wt * ok.z, o.w += wt * ok.w;
            }
            mx = all_max;
        }
    }
    const float inv = wsum > 0.f ? 1.f / wsum : 0.f;
    const long long q_off = (long long)b * p.q_sb + (long long)h * p.q_sh + (long long)i * p.q_ss;
    avk_elem *out = (avk_elem *)p.o + avk_o_elem(q_off) + 4 * d4;
    out[0] = avk_from_f32(o.x * inv), out[1] = avk_from_f32(o.y * inv);
    out[2] = avk_from_f32(o.z * inv), out[3] = avk_from_f32(o.w * inv);
    if (threadIdx.x == 0 && (p.flags & AVK_FLAG_WRITE_LSE)) ((float *)p.lse)[row] = wsum > 0.f ? mx + logf(wsum) : AVK_NEG_INF;
}
