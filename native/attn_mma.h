/* The mma.sync flash-attention body ("mma16", "mma32" and their "-qs"
 * forms), included by attn_fwd.cu when AVK_MMA=1 and neither the wgmma nor
 * the decode body is asked for (after the shared tensor-core helpers). On
 * AMD the same code runs on MFMA/WMMA through amd_matrix.h.
 *
 *   - a CTA is BR query rows in row groups of AVK_WM 16-row m-tiles; Q and
 *     two stages of K and V tiles sit in shared memory in rows padded by 16
 *     bytes (ldmatrix rows on distinct banks), filled by cp.async;
 *   - Q and K tiles hold Dk values a row, padded with zero columns to a whole
 *     number of 16-wide k-steps (Dk 40, 72); V and O hold Dv (AVK_DV);
 *   - AVK_WN > 1 (CUDA; Dv > 256): WN warps share a row group. Each computes
 *     S over its Dk / WN columns, the partial S tiles meet in shared memory
 *     (a named barrier per row group, summed in one order so every warp of
 *     the group holds the same S and runs the same softmax), and each keeps
 *     O for its Dv / WN columns: Dv 512 costs 128 accumulator registers a
 *     thread, not 256. */
#ifndef AVK_WN
#define AVK_WN 1
#endif
#if AVK_WN > 1 && !defined(AVK_TARGET_CUDA)
#error "AVK_WN > 1 needs named barriers (CUDA)"
#endif

enum {
    D = AVK_D, DV = AVK_DV, BR = AVK_BR, BC = AVK_BC, NT = AVK_THREADS, WM = AVK_WM, WN = AVK_WN,
    DKP = (D + 15) / 16 * 16,  /* Q and K rows in whole k-steps (zero columns past Dk) */
    DVP = (DV + 15) / 16 * 16, /* V and O rows in whole n-tile pairs */
    RS = DKP + 8,              /* smem row stride of Q and K (elements): +16 bytes, ldmatrix rows on distinct banks */
    RSV = DVP + 8,             /* of V */
    CH = DV / 8,               /* 16-byte chunks of an O row */
    RG = NT / 32 / WN,         /* row groups */
    KD = DKP / 16 / WN,        /* k-steps over Dk for S = Q K^T, per warp of a row group */
    ND = DVP / 8 / WN,         /* 8-wide n-tiles of O per warp */
    NS = BC / 8,               /* 8-wide n-tiles over keys for S */
    KS = BC / 16,              /* k-steps over keys for O += P V */
    SF = WM * NS * 4,          /* a thread's S values */
};
static_assert(BR == RG * WM * 16, "BR must be row groups * 16 * AVK_WM");
static_assert(BC % 16 == 0 && DKP % (16 * WN) == 0 && ND % 2 == 0,
              "tiles must split into whole k-steps and n-tile pairs");
static_assert(WN == 1 || RG <= 15, "a named barrier per row group: at most 15");
static_assert(!AVK_KV_QUANT || DV == D, "quantized K/V share one head dim");

#if AVK_WN > 1
/* The WN warps of row group rg: barrier 1 + rg (0 is __syncthreads). */
AVK_DEVICE void avk_group_sync(int rg) { asm volatile("bar.sync %0, %1;" ::"r"(rg + 1), "n"(WN * 32) : "memory"); }

/* The row group's S: this warp's partial (its Dk columns) joins the others'
 * through buffer `buf` of the group ([WN][SF][32] floats, lane-minor: no bank
 * conflicts), summed in warp order so every warp gets the same bits. */
AVK_DEVICE void avk_sum_partial_s(float (&s)[WM][NS][4], float *buf, int rg, int cw, int lane)
{
    float *x = &s[0][0][0];
#pragma unroll
    for (int j = 0; j < SF; ++j) buf[(cw * SF + j) * 32 + lane] = x[j];
    avk_group_sync(rg);
#pragma unroll
    for (int j = 0; j < SF; ++j) {
        float sum = cw == 0 ? x[j] : buf[j * 32 + lane];
#pragma unroll
        for (int c = 1; c < WN; ++c) sum += c == cw ? x[j] : buf[(c * SF + j) * 32 + lane];
        x[j] = sum;
    }
}
#endif

AVK_KERNEL void __launch_bounds__(AVK_THREADS, AVK_MINB) avk_attn_fwd(const avk_attn_params p)
{
    AVK_DYNAMIC_SMEM(smem_raw);
    if (AVK_SPLIT) avk_launch_dependents(); /* the merge may launch: it waits for this grid to finish */
    avk_elem *sQ = (avk_elem *)smem_raw;
    avk_elem *sK = sQ + BR * RS; /* 2 stages */
    avk_elem *sV = sK + 2 * BC * RS;
    const avk_u32 aQ = avk_smem_addr(sQ), aK = avk_smem_addr(sK), aV = avk_smem_addr(sV);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int rg = warp / WN, cw = warp % WN; /* row group; which Dk / Dv slice */
    const int quad_row = lane / 4, quad_col = lane % 4;

    const avk_work w = avk_locate(p, BR, BC);
    const int warp_r0 = w.r0 + rg * WM * 16; /* first packed row of this warp */
    const int warp_last_row = min(warp_r0 + WM * 16, w.r_end) - 1;
    /* keys every row of the warp sees (no mask within [max_begin, min_end)) and any row sees */
    const int warp_first_row = min(warp_r0, warp_last_row);
    const int warp_min_end = avk_row_key_end(p, w, warp_first_row), warp_max_end = avk_row_key_end(p, w, warp_last_row);
    const int warp_min_begin = avk_row_key_begin(p, w, warp_first_row);
    const int warp_max_begin = avk_row_key_begin(p, w, warp_last_row);
    const float scale_log2 = p.scale_log2 * avk_kv_scale(p, 0, w.g); /* fp8: K's scale folds into S */
    const avk_tile_rows<WM> rows = avk_rows_before_loop<WM>(p, w, warp_r0 + quad_row, scale_log2);
#if AVK_KV_QUANT || AVK_WN > 1
    unsigned char *after_tiles = (unsigned char *)(sV + 2 * BC * RSV);
#endif
#if AVK_KV_QUANT
    /* raw K/V rows, two stages; the dequantized tile is single-staged (stage 0 of sK/sV) */
    unsigned char *sRaw = after_tiles;
    enum { RAW_TILE = BC * AVK_KV_ROW_BYTES };
    after_tiles += 4 * RAW_TILE;
#endif
#if AVK_WN > 1
    /* partial S exchange: two buffers per row group, taken in turn */
    float *xbuf = (float *)after_tiles + rg * 2 * WN * SF * 32;
    int xchg = 0;
#endif

    /* ---- prologue: Q and the first K and V tiles ---- */
    avk_load_q_tile<BR, D, NT, false, DKP>(aQ, p, w);
    avk_tile_window win = AVK_TILE_WINDOW_NONE; /* avk_next_tile's vote */
    const int t_first = avk_next_tile(p, w, w.t_begin - 1, BC, win); /* w.t_begin, or a pattern's first visible tile */
    const bool aligned = avk_pattern_aligned(p, w, BC);
    if (t_first < w.t_end) {
#if AVK_KV_QUANT
        avk_load_raw_tile<BC, NT>(sRaw, p, w, p.k, t_first * BC, w.kv_end - t_first * BC);
        avk_load_raw_tile<BC, NT>(sRaw + RAW_TILE, p, w, p.v, t_first * BC, w.kv_end - t_first * BC);
#else
        avk_load_kv_tile<BC, D, NT, false, DKP>(aK, p, w, p.k, t_first * BC, w.kv_end - t_first * BC);
        avk_load_kv_tile<BC, DV, NT, false, DVP>(aV, p, w, p.v, t_first * BC, w.kv_end - t_first * BC);
#endif
    }
    avk_cp_async_commit();

    /* ldmatrix row addresses (bytes): A operand (Q) and B operands (K, V^T), at this warp's slices */
    const int a_row = lane % 16, a_col = (lane / 16) * 8;
    const int bk_row = (lane / 16) * 8 + lane % 8, bk_col = ((lane / 8) % 2) * 8;
    const int bv_row = ((lane / 8) % 2) * 8 + lane % 8, bv_col = (lane / 16) * 8;
    const avk_u32 q_lane = aQ + (avk_u32)(((rg * WM * 16 + a_row) * RS + cw * KD * 16 + a_col) * 2);

#if AVK_QREG
    avk_u32 qf[WM][KD][4];
    AVK_CP_ASYNC_WAIT(0);
    __syncthreads();
#pragma unroll
    for (int mi = 0; mi < WM; ++mi)
#pragma unroll
        for (int kk = 0; kk < KD; ++kk) avk_ldmatrix_x4(qf[mi][kk], q_lane + (avk_u32)((mi * 16 * RS + kk * 16) * 2));
#endif

    float acc[WM][ND][4];
    float row_max[WM][2], row_sum[WM][2]; /* scaled log2 domain; sums are per-thread partials */
#pragma unroll
    for (int mi = 0; mi < WM; ++mi) {
#pragma unroll
        for (int n = 0; n < ND; ++n) acc[mi][n][0] = acc[mi][n][1] = acc[mi][n][2] = acc[mi][n][3] = 0.f;
        row_max[mi][0] = row_max[mi][1] = AVK_NEG_INF;
        row_sum[mi][0] = row_sum[mi][1] = 0.f;
    }

#if AVK_SCORE_MOD & AVK_MOD_BLOCKS
    for (int t = t_first, it = 0, t_next = 0; t < w.t_end; t = t_next, ++it) {
        t_next = avk_next_tile(p, w, t, BC, win);
#else
    for (int t = w.t_begin; t < w.t_end; ++t) { /* the plain count: no loop-carried tile registers */
        const int t_next = t + 1, it = t - w.t_begin;
#endif
        const int key0 = t * BC, next = key0 + (t_next - t) * BC; /* key0 + BC without a pattern */
        const bool more = t_next < w.t_end;
#if AVK_KV_QUANT
        /* raw tile t has landed and every warp is done with the previous
         * dequantized tile: dequantize t, start raw t+1, then one more barrier */
        const int stage = 0;
        const int raw_stage = it & 1;
        AVK_CP_ASYNC_WAIT(0);
        __syncthreads();
        avk_dequant_tile<BC, D, NT, DKP>(sK, sRaw + raw_stage * 2 * RAW_TILE);
        avk_dequant_tile<BC, D, NT, DKP>(sV, sRaw + raw_stage * 2 * RAW_TILE + RAW_TILE);
        if (more) {
            unsigned char *raw_next = sRaw + (raw_stage ^ 1) * 2 * RAW_TILE;
            avk_load_raw_tile<BC, NT>(raw_next, p, w, p.k, next, w.kv_end - next);
            avk_load_raw_tile<BC, NT>(raw_next + RAW_TILE, p, w, p.v, next, w.kv_end - next);
        }
        avk_cp_async_commit();
        __syncthreads();
#else
        const int stage = it & 1;
        /* One barrier per tile: K[t] and V[t] have landed for every warp, and
         * every warp is done with tile t-1, whose stage now takes tile t+1
         * (in flight during all of this tile's work). No barrier between the
         * softmax and P V lets the compiler overlap them. */
        AVK_CP_ASYNC_WAIT(0);
        __syncthreads();
        if (more) {
            avk_load_kv_tile<BC, D, NT, false, DKP>(aK + (avk_u32)((stage ^ 1) * BC * RS * 2), p, w, p.k, next,
                                                    w.kv_end - next);
            avk_load_kv_tile<BC, DV, NT, false, DVP>(aV + (avk_u32)((stage ^ 1) * BC * RSV * 2), p, w, p.v, next,
                                                     w.kv_end - next);
        }
        avk_cp_async_commit();
#endif
        if (more) avk_mask_prefetch<WM, BC>(p, rows, next, quad_col);
        /* a tile no row of the warp sees (past the diagonal, below the window, outside its pattern)
         * changes nothing (the warps of a row group decide alike: they share rows) */
        const int pattern = aligned ? AVK_TILE_FULL : avk_pattern_tile(p, w, warp_first_row, warp_last_row, key0, BC);
        if (avk_tile_invisible(key0, BC, warp_min_begin, warp_max_end) || pattern == AVK_TILE_HIDDEN) continue;

        /* ---- S = Q K^T (16 x BC per m-tile, f32) over this warp's Dk columns ---- */
        float s[WM][NS][4];
        const avk_u32 k_lane = aK + (avk_u32)((stage * BC * RS + bk_row * RS + cw * KD * 16 + bk_col) * 2);
#pragma unroll
        for (int kk = 0; kk < KD; ++kk) {
#if !AVK_QREG
            avk_u32 qf[WM][1][4];
#pragma unroll
            for (int mi = 0; mi < WM; ++mi)
                avk_ldmatrix_x4(qf[mi][0], q_lane + (avk_u32)((mi * 16 * RS + kk * 16) * 2));
#define AVK_QF(mi) qf[mi][0]
#else
#define AVK_QF(mi) qf[mi][kk]
#endif
#pragma unroll
            for (int n = 0; n < NS; n += 2) {
                avk_u32 b[4];
                avk_ldmatrix_x4(b, k_lane + (avk_u32)((n * 8 * RS + kk * 16) * 2));
#pragma unroll
                for (int mi = 0; mi < WM; ++mi) {
                    if (kk == 0) {
                        avk_mma_zc(s[mi][n], AVK_QF(mi), b);
                        avk_mma_zc(s[mi][n + 1], AVK_QF(mi), b + 2);
                    } else {
                        avk_mma(s[mi][n], AVK_QF(mi), b);
                        avk_mma(s[mi][n + 1], AVK_QF(mi), b + 2);
                    }
                }
            }
#undef AVK_QF
        }
#if AVK_WN > 1
        avk_sum_partial_s(s, xbuf + (xchg++ & 1) * WN * SF * 32, rg, cw, lane);
#endif

        /* ---- mask (tiles that cross the sequence end, the diagonal or a window edge) and
         * score modifications, online softmax ---- */
        avk_score_tile<WM, NS>(p, w, rows, s, warp_r0 + quad_row, key0 + quad_col * 2, scale_log2,
                               avk_tile_is_edge(key0, BC, warp_max_begin, warp_min_end) || pattern == AVK_TILE_PARTIAL);
        avk_online_softmax<WM, NS, ND>(s, acc, row_max, row_sum, avk_score_scale(p, scale_log2));

        /* ---- O += P V over this warp's Dv columns: P's accumulator layout is already the A-fragment layout ---- */
        const avk_u32 v_lane = aV + (avk_u32)((stage * BC * RSV + bv_row * RSV + cw * ND * 8 + bv_col) * 2);
#pragma unroll
        for (int kk = 0; kk < KS; ++kk) {
            avk_u32 pa[WM][4];
            avk_pack_p<WM, NS>(s, kk, pa);
#pragma unroll
            for (int n = 0; n < ND; n += 2) {
                avk_u32 b[4];
                avk_ldmatrix_x4_trans(b, v_lane + (avk_u32)((kk * 16 * RSV + n * 8) * 2));
#pragma unroll
                for (int mi = 0; mi < WM; ++mi) {
                    avk_mma(acc[mi][n], pa[mi], b);
                    avk_mma(acc[mi][n + 1], pa[mi], b + 2);
                }
            }
        }
    }
    AVK_CP_ASYNC_WAIT(0);
#if !AVK_SPLIT
    /* every copy has landed and no warp reads Q any more: O is staged over it */
    __syncthreads();
#endif

    /* ---- epilogue: O = acc / l, written once; LSE ---- */
    const float v_scale = avk_kv_scale(p, 1, w.g); /* fp8: V's scale, applied once per row */
#pragma unroll
    for (int mi = 0; mi < WM; ++mi)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            float l = row_sum[mi][half];
            l += avk_shfl_xor(l, 1);
            l += avk_shfl_xor(l, 2);
            const int i = warp_r0 + mi * 16 + quad_row + half * 8;
            float m = row_max[mi][half];
            const float keep = avk_fold_sink(p, w.h + i % (int)p.pack, m, l);
            const float inv = l > 0.f ? v_scale * keep / l : 0.f;
#if AVK_SPLIT
            if (i >= w.r_end) continue;
#pragma unroll
            for (int n = 0; n < ND; ++n)
                if ((cw * ND + n) * 8 < DV) /* not a padding n-tile */
                    avk_store_pair(p, w, i, (cw * ND + n) * 8 + quad_col * 2, acc[mi][n][2 * half] * inv,
                                   acc[mi][n][2 * half + 1] * inv);
#else
            /* staged in the row group's own Q rows, this warp's columns */
            avk_u32 *row = (avk_u32 *)(sQ + (rg * WM * 16 + mi * 16 + quad_row + half * 8) * RS);
#pragma unroll
            for (int n = 0; n < ND; ++n)
                row[(cw * ND + n) * 4 + quad_col] =
                    avk_pack2(acc[mi][n][2 * half] * inv, acc[mi][n][2 * half + 1] * inv);
            if (i >= w.r_end) continue;
#endif
            if (quad_col == 0 && cw == 0) avk_store_lse(p, w, i, l > 0.f ? m + log2f(l) : AVK_NEG_INF);
        }
#if !AVK_SPLIT
    /* 16-byte coalesced stores of the warp's rows and columns (an n-tile is one 16-byte chunk) */
    avk_syncwarp();
    avk_elem *O = (avk_elem *)p.o;
#pragma unroll
    for (int c = lane; c < WM * 16 * ND; c += 32) {
        const int r = c / ND, k = cw * ND + c % ND, i = warp_r0 + r;
        if (i < w.r_end && k < CH)
            *(uint4 *)(O + avk_o_row(p, w, i) + k * 8) = *(const uint4 *)(sQ + (rg * WM * 16 + r) * RS + k * 8);
    }
#endif
}
