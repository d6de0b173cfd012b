/* The contract's score hook for the native bodies (included by attn_fwd.cu
 * after avk_work and the row bounds): each row's visible keys and score
 * inputs, the softcap/ALiBi/mask modifications over one row's scores of a
 * tile (AVK_SCORE_MOD), visibility on edge tiles, and the tile tests the
 * bodies' key loops use. */
/* No include guard: HIP builds several instances of attn_fwd.cu into one
 * object, each in its own namespace, and each needs these. */

/* What the per-element work of packed row R needs: its visible keys
 * [begin, end) and, for AVK_SCORE_MOD's modifications, i', its head's ALiBi
 * slope and its mask row. Rows past the CTA's end (padding) take the last
 * real row's. */
struct avk_row_info {
    int begin, end, pos;
    float slope_raw;    /* ALiBi slope * log2(e) / scale_log2: in the raw score's units */
    long long mask_row; /* element offset of the row in the mask */
#if AVK_SCORE_MOD & AVK_MOD_BLOCKS
    int pat; /* the layout's offset of the row's block row (layouts hold < 2^31 blocks) */
#elif AVK_SCORE_MOD & AVK_MOD_DILATED
    int pat, pat_r; /* the row sees keys pat + m * pat_r (pat_r 0: an inactive row, none) */
#endif
};

/* AVK_SOFTCAP_Q_PRESCALE (on; =0 through ATTNVK_CUDA_DEFINES for the A/B): in the wgmma-ws f16
 * forward with one block a CTA, the softcap's input scale (scale / c) goes into Q's tile once a
 * block (sm90_common.h's avk_scale_q_tile) rather than into every score: one multiply less a score
 * in a softmax bound by issue, for one more f16 rounding of Q (2^-12 relative). H100 (s42a, causal
 * softcap 30, TFLOP/s): D=128 8k 462.0 / 463.4 -> 467.1 / 464.1, D=64 4k 298.3 -> 306.0. */
#ifndef AVK_SOFTCAP_Q_PRESCALE
#define AVK_SOFTCAP_Q_PRESCALE 1
#endif
#if AVK_SOFTCAP_Q_PRESCALE && (AVK_SCORE_MOD & AVK_MOD_SOFTCAP) && defined(AVK_WGMMA) && AVK_WGMMA == 2 && \
    AVK_DTYPE == 1 && !(defined(AVK_PERSISTENT) && AVK_PERSISTENT) && !(defined(AVK_FP8) && AVK_FP8)
#define AVK_SOFTCAP_IN_Q 1
#else
#define AVK_SOFTCAP_IN_Q 0
#endif

/* AVK_MASK_TMA (the host's -D, wgmma-ws only): the producer brings each tile's f16 mask rows into
 * shared memory by TMA and attn_sm90.h adds them after the hook, which then leaves the mask out */
#ifndef AVK_MASK_TMA
#define AVK_MASK_TMA 0
#endif

/* What turns the score hook's output into the log2 domain, the one multiply
 * the bodies' softmax does per score: scale_log2, or with a softcap c
 * (the hook then leaves tanh(s / c)) c * log2(e). ALiBi and the mask are
 * added in the hook's output units. */
AVK_DEVICE float avk_score_scale(const avk_attn_params &p, float scale_log2)
{
#if AVK_SCORE_MOD & AVK_MOD_SOFTCAP
    (void)scale_log2;
    return p.softcap * 1.4426950408889634f;
#else
    (void)p;
    return scale_log2;
#endif
}

/* scale_log2: what turns the body's raw scores into the log2 domain */
AVK_DEVICE avk_row_info avk_row(const avk_attn_params &p, const avk_work &w, int R, float scale_log2)
{
    avk_row_info r;
    r.begin = avk_row_key_begin(p, w, R);
    r.end = avk_row_key_end(p, w, R);
#if AVK_SCORE_MOD & (AVK_MOD_ALIBI | AVK_MOD_MASK | AVK_MOD_PATTERN)
    const int Rv = min(R, w.r_end - 1), i = Rv / (int)p.pack, h = w.h + Rv % (int)p.pack;
#endif
#if AVK_SCORE_MOD & AVK_MOD_BLOCKS
    const int bq = (int)(p.pattern & 0xffffu), bk = (int)(p.pattern >> 16);
    r.pat = w.b * (int)p.mask_sb + h * (int)p.mask_sh + i / bq * (((int)p.seq_kv + bk - 1) / bk);
#elif AVK_SCORE_MOD & AVK_MOD_DILATED
    const avk_dilation d = avk_dilation_of(p, h);
    const int seg0 = i / d.s * d.s;
    r.pat = seg0 + d.o;
    r.pat_r = (i - seg0) % d.r == d.o ? d.r : 0;
#endif
#if AVK_SCORE_MOD & AVK_MOD_ALIBI
    r.pos = avk_row_pos(p, w.seq_len, i);
    r.slope_raw = ((const float *)p.alibi_slopes)[h] * (1.4426950408889634f / avk_score_scale(p, scale_log2));
#else
    r.pos = 0, r.slope_raw = 0.f;
#endif
#if AVK_SCORE_MOD & AVK_MOD_MASK
    r.mask_row = avk_mask_row(p, w.b, h, i);
#else
    r.mask_row = 0;
#endif
    (void)scale_log2;
    return r;
}

/* The contract's score hook in native form, on one row's raw scores x[i]
 * (scale_log2 * x is the log2-domain score the softmax uses) of keys col0 +
 * K(i), K(i) = (i / G) * STRIDE + i % G (the accumulator layouts: G = 2,
 * STRIDE = 8 for mma fragments; 1 and 1 for a plain row). With AVK_SCORE_MOD
 * the softcap, ALiBi and mask are applied in the units avk_score_scale turns
 * into log2 ones, so the softmax keeps its one fused multiply-add per score; with edge, keys the row does
 * not see become -inf. Each modification is one branch per call and a
 * straight run over the values: a branch per value would serialize them. */
template <int N, int G, int STRIDE>
AVK_DEVICE void avk_score_mod(const avk_attn_params &p, const avk_row_info &r, float (&x)[N], int col0, float scale_log2,
                              bool edge)
{
#define AVK_K(i) (((i) / G) * STRIDE + (i) % G)
#if AVK_SCORE_MOD
    const float log2e = 1.4426950408889634f;
    if (AVK_SCORE_MOD & AVK_MOD_SOFTCAP) { /* tanh(scale * x / softcap): the softmax multiplies by softcap * log2(e) */
        const float in = scale_log2 * (0.69314718055994530942f / p.softcap);
        if (N % 2 == 0) {
#pragma unroll
            for (int i = 0; i < N; i += 2) {
                if (!AVK_SOFTCAP_IN_Q) x[i] *= in, x[i + 1] *= in;
                avk_tanh2(x[i], x[i + 1]);
            }
        } else {
#pragma unroll
            for (int i = 0; i < N; ++i) x[i] = avk_tanh(AVK_SOFTCAP_IN_Q ? x[i] : x[i] * in);
        }
    }
    if (AVK_SCORE_MOD & AVK_MOD_ALIBI) {
        const float rel0 = (float)(col0 - r.pos); /* j - i', exact as a float */
#pragma unroll
        for (int i = 0; i < N; ++i) x[i] = fmaf(r.slope_raw, rel0 + (float)AVK_K(i), x[i]);
    }
    if ((AVK_SCORE_MOD & AVK_MOD_MASK) && !AVK_MASK_TMA) {
        /* keys past the row's end are read at its last key (their score is dropped below) */
        const int last = max(r.end - 1, 0);
        const float unit = log2e / avk_score_scale(p, scale_log2);
        /* adjacent pairs (G = 2) in one load where aligned and all inside the row */
        const bool pairs = G == 2 && ((r.mask_row + col0) & 1) == 0 && col0 + AVK_K(N - 1) <= last;
        if (p.flags & AVK_FLAG_MASK_F16) {
            const avk_u16 *m = (const avk_u16 *)p.mask + r.mask_row;
            if (pairs) {
#pragma unroll
                for (int i = 0; i < N; i += 2) {
                    const avk_u32 two = *(const avk_u32 *)(m + col0 + AVK_K(i));
                    x[i] = fmaf(avk_f16_to_f32((avk_u16)(two & 0xffffu)), unit, x[i]);
                    x[i + 1] = fmaf(avk_f16_to_f32((avk_u16)(two >> 16)), unit, x[i + 1]);
                }
            } else {
#pragma unroll
                for (int i = 0; i < N; ++i) x[i] = fmaf(avk_f16_to_f32(m[min(col0 + AVK_K(i), last)]), unit, x[i]);
            }
        } else {
            const float *m = (const float *)p.mask + r.mask_row;
            if (pairs) {
#pragma unroll
                for (int i = 0; i < N; i += 2) {
                    const float2 two = *(const float2 *)(m + col0 + AVK_K(i));
                    x[i] = fmaf(two.x, unit, x[i]);
                    x[i + 1] = fmaf(two.y, unit, x[i + 1]);
                }
            } else {
#pragma unroll
                for (int i = 0; i < N; ++i) x[i] = fmaf(m[min(col0 + AVK_K(i), last)], unit, x[i]);
            }
        }
    }
#else
    (void)p, (void)scale_log2;
#endif
    if (edge) {
#pragma unroll
        for (int i = 0; i < N; ++i) {
            const int j = col0 + AVK_K(i);
            x[i] = j < r.begin || j >= r.end ? AVK_NEG_INF : x[i];
        }
        /* a pattern's tile that is not wholly visible is an edge tile (avk_pattern_tile) */
#if AVK_SCORE_MOD & AVK_MOD_BLOCKS
        const unsigned char *layout = (const unsigned char *)p.mask + r.pat;
        const int bk = (int)(p.pattern >> 16), last = max(r.end - 1, 0); /* keys past the end: dropped above */
#pragma unroll
        for (int i = 0; i < N; ++i) x[i] = layout[min(col0 + AVK_K(i), last) / bk] ? x[i] : AVK_NEG_INF;
#elif AVK_SCORE_MOD & AVK_MOD_DILATED
#pragma unroll
        for (int i = 0; i < N; ++i) {
            const int d = col0 + AVK_K(i) - r.pat; /* within the row's segment (r.begin, r.end) */
            x[i] = r.pat_r > 0 && d >= 0 && d % max(r.pat_r, 1) == 0 ? x[i] : AVK_NEG_INF;
        }
#endif
    }
#undef AVK_K
}

/* A thread's rows of an S tile (2 per 16-row m-tile: rows row0 + mi * 16 + half * 8).
 * With AVK_SCORE_MOD they are found once, before the key loop (slopes, mask
 * rows and bounds never change along it); otherwise only for edge tiles. */
template <int WM>
struct avk_tile_rows {
    avk_row_info r[AVK_SCORE_MOD ? WM : 1][2];
};

template <int WM>
AVK_DEVICE avk_tile_rows<WM> avk_rows_before_loop(const avk_attn_params &p, const avk_work &w, int row0, float scale_log2)
{
    avk_tile_rows<WM> t = {};
#if AVK_SCORE_MOD
#pragma unroll
    for (int mi = 0; mi < WM; ++mi)
#pragma unroll
        for (int half = 0; half < 2; ++half) t.r[mi][half] = avk_row(p, w, row0 + mi * 16 + half * 8, scale_log2);
#else
    (void)p, (void)w, (void)row0, (void)scale_log2;
#endif
    return t;
}

/* Mask rows of keys [key0, key0 + BC) fetched into L1 a tile ahead, so the
 * score hook's loads hit there instead of waiting on L2 after the S MMA: the
 * four threads of a quad share their two rows' lines, no registers held.
 * AVK_MASK_PREFETCH=0 turns it off (a tuning experiment). */
#ifndef AVK_MASK_PREFETCH
#define AVK_MASK_PREFETCH 1
#endif
template <int WM, int BC>
AVK_DEVICE void avk_mask_prefetch(const avk_attn_params &p, const avk_tile_rows<WM> &rows, int key0, int quad_col)
{
#if (AVK_SCORE_MOD & AVK_MOD_MASK) && AVK_MASK_PREFETCH && !AVK_MASK_TMA && !defined(AVK_TARGET_HIP) /* PTX; hipRTC defines no __HIP_PLATFORM_AMD__ */
    const int es = (p.flags & AVK_FLAG_MASK_F16) ? 2 : 4, lines = (BC * es + 127) / 128;
#pragma unroll
    for (int mi = 0; mi < WM; ++mi)
        for (int l = quad_col; l < 2 * lines; l += 4) {
            const bool second = l >= lines; /* a select, not an indexed (local-memory) read */
            const int end = second ? rows.r[mi][1].end : rows.r[mi][0].end;
            const long long row = second ? rows.r[mi][1].mask_row : rows.r[mi][0].mask_row;
            const int col = key0 + (l % lines) * (128 / es);
            if (col >= end) continue;
            const char *a = (const char *)p.mask + (row + col) * es;
            asm volatile("prefetch.global.L1 [%0];" ::"l"(a));
        }
#else
    (void)p, (void)rows, (void)key0, (void)quad_col;
#endif
}

/* Whether keys [key0, key0 + bc) cross some row's visible range (all rows see [max_begin, min_end)). */
AVK_DEVICE bool avk_tile_is_edge(int key0, int bc, int max_begin, int min_end)
{
    return key0 + bc > min_end || key0 < max_begin;
}

/* No row sees any of keys [key0, key0 + bc): rows see nothing below min_begin or from max_end. */
AVK_DEVICE bool avk_tile_invisible(int key0, int bc, int min_begin, int max_end)
{
    return key0 >= max_end || key0 + bc <= min_begin;
}

/* How a sparse pattern meets keys [key0, key0 + bc) of packed rows [R0, R1]:
 * no pair visible (the tile is skipped, not even loaded), some, or every pair
 * the rows' bounds allow (no per-element test). Dilated tiles are bounded by
 * their segments (avk_pattern_bounds) and partial unless the rate is 1. */
enum { AVK_TILE_HIDDEN = 0, AVK_TILE_PARTIAL = 1, AVK_TILE_FULL = 2 };
/* layout blocks a tile test reads at most; past it a tile counts as partial */
#define AVK_PATTERN_SCAN_MAX 64
AVK_DEVICE int avk_pattern_tile(const avk_attn_params &p, const avk_work &w, int R0, int R1, int key0, int bc)
{
#if AVK_SCORE_MOD & AVK_MOD_DILATED
    (void)R0, (void)R1, (void)key0, (void)bc;
    return avk_dilation_of(p, w.h).r == 1 ? AVK_TILE_FULL : AVK_TILE_PARTIAL;
#elif AVK_SCORE_MOD & AVK_MOD_BLOCKS
    const int bq = (int)(p.pattern & 0xffffu), bk = (int)(p.pattern >> 16), pack = (int)p.pack;
    const int cols = ((int)p.seq_kv + bk - 1) / bk;
    const int qb0 = R0 / pack / bq, qb1 = R1 / pack / bq;
    const int kb0 = key0 / bk, kb1 = (min(key0 + bc, (int)p.seq_kv) - 1) / bk;
    if (kb1 < kb0) return AVK_TILE_HIDDEN;
    if ((qb1 - qb0 + 1) * (kb1 - kb0 + 1) > AVK_PATTERN_SCAN_MAX) return AVK_TILE_PARTIAL;
    const unsigned char *layout = (const unsigned char *)p.mask + (long long)w.b * p.mask_sb + (long long)w.h * p.mask_sh;
    int set = 0;
    for (int qb = qb0; qb <= qb1; ++qb)
        for (int kb = kb0; kb <= kb1; ++kb) set += layout[(long long)qb * cols + kb] != 0;
    return set == 0 ? AVK_TILE_HIDDEN : set == (qb1 - qb0 + 1) * (kb1 - kb0 + 1) ? AVK_TILE_FULL : AVK_TILE_PARTIAL;
#else
    (void)p, (void)w, (void)R0, (void)R1, (void)key0, (void)bc;
    return AVK_TILE_FULL;
#endif
}

/* Whether the tiles a CTA loads (avk_next_tile's: visible to some row of it) are wholly visible
 * to every row, known without reading the layout: the rows in one block row, key blocks whole
 * tiles. The key loops then skip the per-tile layout test, a load they would wait on. */
AVK_DEVICE bool avk_pattern_aligned(const avk_attn_params &p, const avk_work &w, int bc)
{
#if AVK_SCORE_MOD & AVK_MOD_BLOCKS
    const int bq = (int)(p.pattern & 0xffffu), bk = (int)(p.pattern >> 16), pack = (int)p.pack;
    return w.r0 / pack / bq == (w.r_end - 1) / pack / bq && bk % bc == 0;
#else
    /* a dilated row sees every r-th key of its segment: its tiles are always tested (a build
     * without a pattern has nothing to test, and avk_pattern_tile says FULL there anyway) */
    (void)p, (void)w, (void)bc;
    return !(AVK_SCORE_MOD & AVK_MOD_DILATED);
#endif
}

/* A warp's vote over the 32 key tiles from base (bit i: tile base + i is visible to some
 * row of the CTA): avk_next_tile's searches inside it load nothing. */
struct avk_tile_window {
    int base;
    unsigned bits;
};
#define AVK_TILE_WINDOW_NONE {-64, 0u}

/* The tile after t that some row of the CTA sees through its pattern (w.t_end: none):
 * the key loops load and visit only those. t + 1 without a pattern. Every lane tests
 * its own of the next 32 tiles and the vote is kept in win: one round of layout loads
 * per 32 tiles, not one per hidden tile (at 10% density a tile-by-tile walk took as
 * long as the visible tiles' MMAs) nor one per visible tile. Called by whole warps. */
AVK_DEVICE int avk_next_tile(const avk_attn_params &p, const avk_work &w, int t, int bc, avk_tile_window &win)
{
#if AVK_SCORE_MOD & AVK_MOD_BLOCKS
    const int lane = (int)(threadIdx.x % 32);
    for (int from = t + 1; from < w.t_end; from = win.base + 32) {
        if (from < win.base || from >= win.base + 32) {
            const int c = from + lane;
            win.bits = avk_vote_bits(c < w.t_end && avk_pattern_tile(p, w, w.r0, w.r_end - 1, c * bc, bc) != AVK_TILE_HIDDEN);
            win.base = from;
        }
        const unsigned seen = win.bits & (0xffffffffu << (from - win.base));
        if (seen) return win.base + __ffs((int)seen) - 1;
    }
    return w.t_end;
#else
    (void)p, (void)w, (void)bc, (void)win;
    return t + 1;
#endif
}

/* The per-element work of this thread's part of an S tile (accumulator
 * layout; row0/col0: its first row and column): avk_score_mod on every tile
 * with AVK_SCORE_MOD, else only on edge tiles. */
template <int WM, int NS>
AVK_DEVICE void avk_score_tile(const avk_attn_params &p, const avk_work &w, const avk_tile_rows<WM> &rows,
                               float (&s)[WM][NS][4], int row0, int col0, float scale_log2, bool edge)
{
    if (!AVK_SCORE_MOD && !edge) return;
#pragma unroll
    for (int mi = 0; mi < WM; ++mi)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            float x[2 * NS]; /* the row's values: column n * 8 + c is x[2n + c] */
#pragma unroll
            for (int i = 0; i < 2 * NS; ++i) x[i] = s[mi][i / 2][2 * half + i % 2];
#if AVK_SCORE_MOD
            const avk_row_info &r = rows.r[mi][half];
#else
            const avk_row_info r = avk_row(p, w, row0 + mi * 16 + half * 8, scale_log2);
#endif
            avk_score_mod<2 * NS, 2, 8>(p, r, x, col0, scale_log2, edge);
#pragma unroll
            for (int i = 0; i < 2 * NS; ++i) s[mi][i / 2][2 * half + i % 2] = x[i];
        }
}
