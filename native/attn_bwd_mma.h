/* The backward's tensor-core body (AVK_BWD_MMA=1; included by attn_bwd.cu):
 * mma.sync m16n8k16 on f16/bf16 with f32 accumulators, the fragment layouts
 * of attn_fwd.cu's mma body (A from shared rows by ldmatrix, B from rows by
 * ldmatrix (k along the row) or ldmatrix.trans (k along the rows), P and dS
 * repacked from accumulators as A fragments). Tiles are loaded whole into
 * shared memory (rows + 16 bytes: ldmatrix rows on distinct banks); the
 * dK/dV kernel's Q and dO tiles in two stages by cp.async.
 *
 * dK/dV: a warp owns 16 keys; it computes S^T = K Q^T and dP^T = V dO^T
 * (keys x queries), so P^T and dS^T are already A fragments of dV += P^T dO
 * and dK += dS^T Q. AVK_BWD_WN warps share a key group (both compute its
 * S^T and dP^T) and each keeps Dk/WN and Dv/WN columns of dK and dV, so
 * Dk 256 holds 128 accumulator registers, not 256.
 * dQ, by default (avk_bwd_dkdv_dq): dS^T goes through shared memory and the
 * CTA's warps add dS K to an f32 dQ by atomics, FlashAttention-2's way; in
 * the deterministic mode avk_bwd_dq owns it: a warp owns 16 query rows, S =
 * Q K^T and dP = dO V^T in the forward's layout, dQ += dS K.
 * HIP: the same body through amd_matrix.h (MFMA on gfx90a/gfx94x, WMMA on
 * gfx11; AVK_THREADS sizes its per-wave scratch): the fragments keep their
 * NVIDIA layout, ldmatrix is shuffles plus LDS loads, cp.async a synchronous
 * copy (its waits no-ops: the tiles' __syncthreads order them) and dQ's
 * atomics are atomicAdd; each kernel is whole wavefronts (the table's AMD
 * rows), so both 32-lane warps of a wave64 reach every MMA together. */
#if !defined(AVK_MMA_SM80)
#error "AVK_BWD_MMA=1 needs mma.sync m16n8k16 (sm_80 or newer) or an AMD matrix unit (amd_matrix.h)"
#endif
#if AVK_DTYPE == 1
#define avk_bmma avk_mma_f16
#define avk_bmma_zc avk_mma_f16_zc
#define avk_bpack avk_pack_f16x2
#elif AVK_DTYPE == 2
#define avk_bmma avk_mma_bf16
#define avk_bmma_zc avk_mma_bf16_zc
#define avk_bpack avk_pack_bf16x2
#else
#error "the tensor-core backward takes f16 or bf16"
#endif

enum {
    D = AVK_D, DV = AVK_DV, WN = AVK_BWD_WN,
    BC = AVK_BWD_BC, BQ = AVK_BWD_BQ, /* dK/dV: keys per CTA, query rows per tile */
    QB = AVK_BWD_QB, KB = AVK_BWD_KB, /* dQ: query rows per CTA, keys per tile */
    NT = BC / 16 * WN * 32, NTQ = QB / 16 * 32,
    RS = D + 8, RSV = DV + 8, /* shared row strides (elements) of Q/K and dO/V */
    KD = D / 16, KDV = DV / 16, /* k-steps over Dk, Dv */
    NDK = D / WN / 8, NDV = DV / WN / 8, /* a dK/dV warp's n-tiles of dK, dV */
    NSQ = BQ / 8, NSK = KB / 8, NDQ = D / 8,
};
static_assert(D % 16 == 0 && DV % 16 == 0, "head dims in whole k-steps");
static_assert(NDK % 2 == 0 && NDV % 2 == 0, "a warp's columns of dK and dV in n-tile pairs");
static_assert(BC % 16 == 0 && BQ % 16 == 0 && QB % 16 == 0 && KB % 16 == 0, "tiles of whole m-tiles and k-steps");

/* ROWS rows of W elements (stride `stride`) into shared rows of W + 8; rows past valid are 0 */
template <int ROWS, int W, int NT_>
AVK_DEVICE void avk_bwd_rows(avk_elem *dst, const avk_elem *src, long long stride, int valid)
{
    enum { CH = W / 8 };
    for (int c = threadIdx.x; c < ROWS * CH; c += NT_) {
        const int r = c / CH, k = c % CH;
        uint4 v;
        v.x = v.y = v.z = v.w = 0u;
        if (r < valid) v = *(const uint4 *)(src + r * stride + k * 8);
        *(uint4 *)(dst + r * (W + 8) + k * 8) = v;
    }
}

/* accumulators of n-tiles 2kk, 2kk+1 as the A fragment of k-step kk */
template <int N>
AVK_DEVICE void avk_bwd_pack(const float (&s)[N][4], int kk, avk_u32 (&a)[4])
{
    a[0] = avk_bpack(s[2 * kk][0], s[2 * kk][1]);
    a[1] = avk_bpack(s[2 * kk][2], s[2 * kk][3]);
    a[2] = avk_bpack(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    a[3] = avk_bpack(s[2 * kk + 1][2], s[2 * kk + 1][3]);
}

/* c[N] = A(16 x K-steps, ldmatrix rows at a_lane) * B^T (B's rows at b_lane, k along the row) */
template <int N, int KS, int RSB>
AVK_DEVICE void avk_bwd_gemm_nt(float (&c)[N][4], avk_u32 a_lane, avk_u32 b_lane)
{
#pragma unroll
    for (int kk = 0; kk < KS; ++kk) {
        avk_u32 af[4];
        avk_ldmatrix_x4(af, a_lane + (avk_u32)(kk * 32));
#pragma unroll
        for (int n = 0; n < N; n += 2) {
            avk_u32 b[4];
            avk_ldmatrix_x4(b, b_lane + (avk_u32)((n * 8 * RSB + kk * 16) * 2));
            if (kk == 0) {
                avk_bmma_zc(c[n], af, b);
                avk_bmma_zc(c[n + 1], af, b + 2);
            } else {
                avk_bmma(c[n], af, b);
                avk_bmma(c[n + 1], af, b + 2);
            }
        }
    }
}

/* c[N] += A fragment af (one k-step) * B (the k-step's 16 rows at b_lane, k along the rows: .trans) */
template <int N>
AVK_DEVICE void avk_bwd_kstep_trans(float (&c)[N][4], const avk_u32 (&af)[4], avk_u32 b_lane)
{
#pragma unroll
    for (int n = 0; n < N; n += 2) {
        avk_u32 b[4];
        avk_ldmatrix_x4_trans(b, b_lane + (avk_u32)(n * 8 * 2));
        avk_bmma(c[n], af, b);
        avk_bmma(c[n + 1], af, b + 2);
    }
}

/* c[N] += (A fragments from accumulators s) * B (B's rows at b_lane, k along the rows: .trans) */
template <int N, int KS, int NS, int RSB>
AVK_DEVICE void avk_bwd_gemm_acc(float (&c)[N][4], const float (&s)[NS][4], avk_u32 b_lane)
{
#pragma unroll
    for (int kk = 0; kk < KS; ++kk) {
        avk_u32 af[4];
        avk_bwd_pack<NS>(s, kk, af);
        avk_bwd_kstep_trans<N>(c, af, b_lane + (avk_u32)(kk * 16 * RSB * 2));
    }
}

/* ldmatrix lane offsets (elements): A operand rows, B rows with k along the row, B rows with k along the rows */
#define AVK_A_ROW (lane % 16)
#define AVK_A_COL ((lane / 16) * 8)
#define AVK_BK_ROW ((lane / 16) * 8 + lane % 8)
#define AVK_BK_COL (((lane / 8) % 2) * 8)
#define AVK_BV_ROW (((lane / 8) % 2) * 8 + lane % 8)
#define AVK_BV_COL ((lane / 16) * 8)

/* ROWS rows of W elements by cp.async into shared memory at dst: rows of W + 8 or, SW128, the
 * 128-byte-swizzled layout wgmma's descriptors read (W/64 column blocks of ROWS x 128 bytes,
 * chunk k of row r at k ^ (r % 8)); rows past valid are zero-filled */
template <int ROWS, int W, int NT_, bool SW128 = false>
AVK_DEVICE void avk_bwd_rows_async(avk_u32 dst, const avk_elem *src, long long stride, int valid)
{
    enum { CH = W / 8 };
    for (int c = threadIdx.x; c < ROWS * CH; c += NT_) {
        const int r = c / CH, k = c % CH;
        const bool in = r < valid;
        const avk_u32 at = SW128 ? (avk_u32)((k / 8) * ROWS * 128 + r * 128 + (((k % 8) ^ (r % 8)) << 4))
                                 : (avk_u32)((r * (W + 8) + k * 8) * 2);
        avk_cp_async16(dst + at, src + (in ? r * stride + k * 8 : 0), in ? 16 : 0);
    }
}

/* c[N] += A (16 rows, k along the shared rows: ldmatrix.trans at a_lane, row stride RSA) * B (k along the rows:
 * .trans at b_lane, row stride RSB) over KS k-steps */
template <int N, int KS, int RSA, int RSB>
AVK_DEVICE void avk_bwd_gemm_tt(float (&c)[N][4], avk_u32 a_lane, avk_u32 b_lane)
{
#pragma unroll
    for (int kk = 0; kk < KS; ++kk) {
        avk_u32 af[4];
        avk_ldmatrix_x4_trans(af, a_lane + (avk_u32)(kk * 16 * RSA * 2));
        avk_bwd_kstep_trans<N>(c, af, b_lane + (avk_u32)(kk * 16 * RSB * 2));
    }
}

/* (h, i0) -> the group's next query tile that sees keys [k0, k0 + BC) (heads in order, tiles
 * in order; s31d: starting each key block at another tile was no faster); false past the last.
 * Start at h = the group's first head, i0 = -BQ. The same for every thread. */
AVK_DEVICE bool avk_bwd_next_tile(const avk_attn_params &p, int b, int g, int k0, int &h, int &i0)
{
    if ((int)p.seq_q <= 0) return false;
    for (;;) {
        i0 += BQ;
        if (i0 >= (int)p.seq_q) {
            i0 = 0;
            if (++h >= (g + 1) * (int)p.group) return false;
        }
        if (!avk_bwd_disjoint(p, avk_bwd_work(p, b, h), i0, min(i0 + BQ, (int)p.seq_q), k0, k0 + BC)) return true;
    }
}

/* A query tile's Q and dO by cp.async into q_at and do_at (not committed; rows past Nq zero) */
template <int NT_, bool SW128>
AVK_DEVICE void avk_bwd_issue_rows(const avk_bwd_params &a, int b, int h, int i0, avk_u32 q_at, avk_u32 do_at)
{
    const avk_attn_params &p = a.f;
    const int valid = min(BQ, (int)p.seq_q - i0);
    avk_bwd_rows_async<BQ, D, NT_, SW128>(q_at, (const avk_elem *)p.q + avk_bwd_q(p, b, h, i0), p.q_ss, valid);
    avk_bwd_rows_async<BQ, DV, NT_, SW128>(do_at, (const avk_elem *)a.d_o + avk_bwd_o(p, b, h, i0),
                                           (long long)p.q_ss / D * DV, valid);
}

/* Query column q = n * 8 + quad_col * 2 + c's two scores of s (the warp's keys key_a and key_a +
 * 8: s[n][c], s[n][2 + c]) through the contract's hook into y; returns q */
template <int N>
AVK_DEVICE int avk_bwd_hooked(const avk_attn_params &p, const avk_work &w, const float (&s)[N][4], int n, int c, int i0,
                              int key_a, int quad_col, float (&y)[2])
{
    const int q = n * 8 + quad_col * 2 + c;
    y[0] = s[n][c], y[1] = s[n][2 + c];
    avk_score_mod<2, 1, 8>(p, avk_row(p, w, i0 + q, p.scale_log2), y, key_a, p.scale_log2, true);
    return q;
}

/* S^T and dP^T of a warp's 16 keys (key_a, key_a + 8: rows quad_row + 8 (e / 2)) against N
 * n-tiles of query columns (n * 8 + quad_col * 2 + e % 2, from query i0): each column's two
 * keys through the hook (G 1, stride 8), then s becomes P^T and dp dS^T.
 * sL and sDel: the columns' LSE in the log2 domain (+inf past Nq: P = 0) and D_i. */
template <int N>
AVK_DEVICE void avk_bwd_tile_grads(const avk_attn_params &p, const avk_work &w, float (&s)[N][4], float (&dp)[N][4],
                                   const float *sL, const float *sDel, int i0, int key_a, float sc, float cap_in,
                                   int quad_col)
{
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            float y[2];
            const int q = avk_bwd_hooked<N>(p, w, s, n, c, i0, key_a, quad_col, y);
            const float lse2 = sL[q], del = sDel[q];
#pragma unroll
            for (int e = 0; e < 2; ++e)
                avk_bwd_grad(s[n][2 * e + c], y[e], dp[n][2 * e + c], sc, lse2, del, cap_in, s[n][2 * e + c],
                             dp[n][2 * e + c]);
        }
}

/* A warp's rows of dK and dV (keys j0 + quad_row + 8 half, in the accumulator layout; columns
 * from ck and cv) in the problem's dtype; dK takes the softmax scale */
template <int NK, int NV>
AVK_DEVICE void avk_bwd_store_dkdv(const avk_bwd_params &a, long long kr0, int j0, int nk, int ck, int cv,
                                   const float (&dk)[NK][4], const float (&dv)[NV][4], int quad_row, int quad_col)
{
    const avk_attn_params &p = a.f;
    const float scale = p.scale_log2 / AVK_LOG2E;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int j = j0 + quad_row + half * 8;
        if (j >= nk) continue;
        const long long kr = kr0 + (long long)j * p.kv_ss;
        avk_elem *dK = (avk_elem *)a.dk + kr * D + ck + quad_col * 2;
        avk_elem *dV = (avk_elem *)a.dv + kr * DV + cv + quad_col * 2;
#pragma unroll
        for (int n = 0; n < NK; ++n)
            *(avk_u32 *)(dK + n * 8) = avk_bpack(dk[n][2 * half] * scale, dk[n][2 * half + 1] * scale);
#pragma unroll
        for (int n = 0; n < NV; ++n) *(avk_u32 *)(dV + n * 8) = avk_bpack(dv[n][2 * half], dv[n][2 * half + 1]);
    }
}

/* dQ's tile work inside the dK/dV kernel (DQ): BQ/16 m-tiles times DQ_SPLIT column
 * chunks of DQC, spread over the NT/32 warps */
/* the most chunks (up to a warp each, S at most) that split Dk into whole n-tile pairs */
template <int S>
struct avk_bwd_dq_split {
    enum { value = (D % S == 0 && (D / S) % 16 == 0) ? S : avk_bwd_dq_split<S - 1>::value };
};
template <>
struct avk_bwd_dq_split<1> {
    enum { value = 1 };
};
template <>
struct avk_bwd_dq_split<0> {
    enum { value = 1 };
};
enum {
    NW = NT / 32, DQ_MT = BQ / 16, DQ_SPLIT = avk_bwd_dq_split<NW / DQ_MT>::value, DQC = D / DQ_SPLIT,
    RSS = BQ + 8, /* dS^T's shared row stride: a row per key */
};
static_assert(D % DQ_SPLIT == 0 && DQC % 16 == 0, "dQ chunks of whole n-tile pairs");

/* Adds a warp's 16-row dQ chunk (accumulator layout, N n-tiles) to the f32 rows at row0 (of D
 * floats; rows past valid skipped). sm_90: quad lane pairs swap halves so each lane adds four
 * consecutive floats with one red.v4 (a quarter of the atomics). */
template <int N>
AVK_DEVICE void avk_bwd_red_rows(float *row0, const float (&c)[N][4], int lane, int valid)
{
    const int quad_row = lane / 4, quad_col = lane % 4;
#if defined(AVK_TARGET_CUDA) && __CUDA_ARCH__ >= 900
    const int odd = quad_col & 1, r = quad_row + 8 * odd;
    float *dst = row0 + (long long)r * D + (quad_col - odd) * 2;
#pragma unroll
    for (int n = 0; n < N; ++n) {
        /* even lanes keep rows quad_row (theirs, then the partner's columns), odd lanes rows + 8 */
        const float s0 = odd ? c[n][0] : c[n][2], s1 = odd ? c[n][1] : c[n][3];
        const float y0 = avk_shfl_xor(s0, 1), y1 = avk_shfl_xor(s1, 1);
        const float v0 = odd ? y0 : c[n][0], v1 = odd ? y1 : c[n][1];
        const float v2 = odd ? c[n][2] : y0, v3 = odd ? c[n][3] : y1;
        if (r < valid)
            asm volatile("red.relaxed.gpu.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(dst + n * 8), "f"(v0), "f"(v1),
                         "f"(v2), "f"(v3)
                         : "memory");
    }
#else
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        if (quad_row + 8 * half >= valid) continue;
        float *dst = row0 + (long long)(quad_row + 8 * half) * D + quad_col * 2;
#pragma unroll
        for (int n = 0; n < N; ++n) {
            atomicAdd(dst + n * 8, c[n][2 * half]);
            atomicAdd(dst + n * 8 + 1, c[n][2 * half + 1]);
        }
    }
#endif
}

/* Shared memory of the dK/dV kernel (elements of avk_elem, then floats): K, V; two stages of
 * Q, dO and their rows' LSE and D_i; with DQ, dS^T. The host's avk_cuda_bwd_smem agrees. */
/* grid (key blocks, kv heads, batch); DQ: dQ's share of these keys summed into a.dq_acc by
 * atomics (FlashAttention-2's schedule: 5 GEMMs, not 7), else avk_bwd_dq computes it */
template <bool DQ>
AVK_DEVICE void avk_bwd_dkdv_body(const avk_bwd_params &a)
{
    AVK_DYNAMIC_SMEM(dkdv_smem); /* not smem_raw: a template's extern would clash with avk_bwd_dq's */
    const avk_attn_params &p = a.f;
    enum { STAGE = BQ * (RS + RSV) }; /* elements of one stage's Q and dO */
    avk_elem *sK = (avk_elem *)dkdv_smem, *sV = sK + BC * RS, *sQ0 = sV + BC * RSV, *sdS = sQ0 + 2 * STAGE;
    float *sL0 = (float *)(sdS + (DQ ? BC * RSS : 0)), *sDel0 = sL0 + 2 * BQ;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, kg = warp / WN, cw = warp % WN;
    const int quad_row = lane / 4, quad_col = lane % 4;
    const int k0 = blockIdx.x * BC, g = blockIdx.y, b = blockIdx.z, nk = min(BC, (int)p.seq_kv - k0);
    const long long kr0 = avk_bwd_kv_row(p, b, g, k0);
    avk_bwd_rows<BC, D, NT>(sK, (const avk_elem *)p.k + kr0 * D, (long long)p.kv_ss * D, nk);
    avk_bwd_rows<BC, DV, NT>(sV, (const avk_elem *)p.v + kr0 * DV, (long long)p.kv_ss * DV, nk);

    const avk_u32 aK = avk_smem_addr(sK) + (avk_u32)(((kg * 16 + AVK_A_ROW) * RS + AVK_A_COL) * 2);
    const avk_u32 aV = avk_smem_addr(sV) + (avk_u32)(((kg * 16 + AVK_A_ROW) * RSV + AVK_A_COL) * 2);
    const avk_u32 q0 = avk_smem_addr(sQ0), stage_bytes = (avk_u32)(STAGE * 2), dO_off = (avk_u32)(BQ * RS * 2);
    const avk_u32 bQ = q0 + (avk_u32)((AVK_BK_ROW * RS + AVK_BK_COL) * 2);
    const avk_u32 bdO = q0 + dO_off + (avk_u32)((AVK_BK_ROW * RSV + AVK_BK_COL) * 2);
    const avk_u32 tQ = q0 + (avk_u32)((AVK_BV_ROW * RS + cw * (D / WN) + AVK_BV_COL) * 2);
    const avk_u32 tdO = q0 + dO_off + (avk_u32)((AVK_BV_ROW * RSV + cw * (DV / WN) + AVK_BV_COL) * 2);
    const int key_a = k0 + kg * 16 + quad_row; /* this thread's keys: key_a, key_a + 8 */
    const float sc = avk_score_scale(p, p.scale_log2), cap_in = avk_bwd_cap_in(p);

    float dk[NDK][4], dv[NDV][4];
#pragma unroll
    for (int n = 0; n < NDK; ++n) dk[n][0] = dk[n][1] = dk[n][2] = dk[n][3] = 0.f;
#pragma unroll
    for (int n = 0; n < NDV; ++n) dv[n][0] = dv[n][1] = dv[n][2] = dv[n][3] = 0.f;

    /* a tile's Q, dO (cp.async) and its rows' LSE and D_i into stage st */
    auto issue = [&](int h, int i0, int st) {
        avk_bwd_issue_rows<NT, false>(a, b, h, i0, q0 + st * stage_bytes, q0 + st * stage_bytes + dO_off);
        avk_cp_async_commit();
        const int valid = min(BQ, (int)p.seq_q - i0);
        for (int r = threadIdx.x; r < BQ; r += NT) {
            const long long row = avk_bwd_row(p, b, h, i0 + r);
            sL0[st * BQ + r] = r < valid ? avk_bwd_lse2(a, row) : AVK_POS_INF;
            sDel0[st * BQ + r] = r < valid ? ((const float *)a.delta)[row] : 0.f;
        }
    };
    int h = g * (int)p.group, i0 = -BQ;
    bool have = avk_bwd_next_tile(p, b, g, k0, h, i0);
    if (have) issue(h, i0, 0);
    for (int st = 0; have; st ^= 1) {
        const int cur_h = h, cur_i0 = i0;
        have = avk_bwd_next_tile(p, b, g, k0, h, i0);
        if (have) issue(h, i0, st ^ 1); /* its stage was consumed before the last barrier */
        if (have)
            AVK_CP_ASYNC_WAIT(1);
        else
            AVK_CP_ASYNC_WAIT(0);
        __syncthreads();
        const avk_work w = avk_bwd_work(p, b, cur_h);
        const avk_u32 so = st * stage_bytes;
        const float *sL = sL0 + st * BQ, *sDel = sDel0 + st * BQ;

        /* S^T = K Q^T and dP^T = V dO^T: row quad_row + 8 * (e / 2) of the warp's keys,
         * column (query) n * 8 + quad_col * 2 + e % 2 */
        float s[NSQ][4], dp[NSQ][4];
        avk_bwd_gemm_nt<NSQ, KD, RS>(s, aK, bQ + so);
        avk_bwd_gemm_nt<NSQ, KDV, RSV>(dp, aV, bdO + so);
        avk_bwd_tile_grads<NSQ>(p, w, s, dp, sL, sDel, cur_i0, key_a, sc, cap_in, quad_col);
        /* dV += P^T dO, dK += dS^T Q over this warp's columns */
        avk_bwd_gemm_acc<NDV, BQ / 16, NSQ, RSV>(dv, s, tdO + so);
        avk_bwd_gemm_acc<NDK, BQ / 16, NSQ, RS>(dk, dp, tQ + so);
        if (DQ) {
            /* dS^T to shared (a row per key), then dQ[tile] += dS K by m-tile and column chunk */
            if (cw == 0) {
#pragma unroll
                for (int n = 0; n < NSQ; ++n)
#pragma unroll
                    for (int e2 = 0; e2 < 2; ++e2)
                        *(avk_u32 *)(sdS + (kg * 16 + quad_row + 8 * e2) * RSS + n * 8 + quad_col * 2) =
                            avk_bpack(dp[n][2 * e2], dp[n][2 * e2 + 1]);
            }
            __syncthreads();
            const avk_u32 aS = avk_smem_addr(sdS) + (avk_u32)((AVK_BK_ROW * RSS + AVK_BK_COL) * 2);
            const avk_u32 tK = avk_smem_addr(sK) + (avk_u32)((AVK_BV_ROW * RS + AVK_BV_COL) * 2);
            float *acc = (float *)a.dq_acc;
            for (int job = warp; job < DQ_MT * DQ_SPLIT; job += NW) {
                const int mt = job % DQ_MT, cs = job / DQ_MT;
                float dq[DQC / 8][4];
#pragma unroll
                for (int n = 0; n < DQC / 8; ++n) dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.f;
                avk_bwd_gemm_tt<DQC / 8, BC / 16, RSS, RS>(dq, aS + (avk_u32)(mt * 16 * 2), tK + (avk_u32)(cs * DQC * 2));
                const int i = cur_i0 + mt * 16; /* the chunk's first row */
                avk_bwd_red_rows<DQC / 8>(acc + avk_bwd_row(p, b, cur_h, i) * D + cs * DQC, dq, lane, (int)p.seq_q - i);
            }
        }
        __syncthreads(); /* this stage (and dS^T) consumed: the next issue may refill it */
    }

    avk_bwd_store_dkdv<NDK, NDV>(a, kr0, kg * 16, nk, cw * (D / WN), cw * (DV / WN), dk, dv, quad_row, quad_col);
}

#if AVK_BWD_MMA == 1 /* 2: attn_bwd_sm90.h's wgmma kernels take these names */
AVK_KERNEL void __launch_bounds__(NT) avk_bwd_dkdv(const avk_bwd_params a) { avk_bwd_dkdv_body<false>(a); }
AVK_KERNEL void __launch_bounds__(NT) avk_bwd_dkdv_dq(const avk_bwd_params a) { avk_bwd_dkdv_body<true>(a); }
#endif

/* grid (query blocks, heads, batch) */
AVK_KERNEL void __launch_bounds__(NTQ) avk_bwd_dq(const avk_bwd_params a)
{
    AVK_DYNAMIC_SMEM(smem_raw);
    const avk_attn_params &p = a.f;
    avk_elem *sQ = (avk_elem *)smem_raw, *sdO = sQ + QB * RS, *sK = sdO + QB * RSV, *sV = sK + KB * RS;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, quad_row = lane / 4, quad_col = lane % 4;
    const int i0 = blockIdx.x * QB, h = blockIdx.y, b = blockIdx.z, g = h / (int)p.group;
    const int i1 = min(i0 + QB, (int)p.seq_q);
    const avk_work w = avk_bwd_work(p, b, h);
    avk_bwd_rows<QB, D, NTQ>(sQ, (const avk_elem *)p.q + avk_bwd_q(p, b, h, i0), p.q_ss, i1 - i0);
    avk_bwd_rows<QB, DV, NTQ>(sdO, (const avk_elem *)a.d_o + avk_bwd_o(p, b, h, i0), (long long)p.q_ss / D * DV,
                              i1 - i0);

    const avk_u32 aQ = avk_smem_addr(sQ) + (avk_u32)(((warp * 16 + AVK_A_ROW) * RS + AVK_A_COL) * 2);
    const avk_u32 adO = avk_smem_addr(sdO) + (avk_u32)(((warp * 16 + AVK_A_ROW) * RSV + AVK_A_COL) * 2);
    const avk_u32 bK = avk_smem_addr(sK) + (avk_u32)((AVK_BK_ROW * RS + AVK_BK_COL) * 2);
    const avk_u32 bV = avk_smem_addr(sV) + (avk_u32)((AVK_BK_ROW * RSV + AVK_BK_COL) * 2);
    const avk_u32 tK = avk_smem_addr(sK) + (avk_u32)((AVK_BV_ROW * RS + AVK_BV_COL) * 2);
    const float sc = avk_score_scale(p, p.scale_log2), cap_in = avk_bwd_cap_in(p);

    /* this thread's two rows (quad_row, + 8 of the warp's 16): score inputs, LSE, D_i */
    avk_row_info ri[2];
    float lse2[2], del[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int i = i0 + warp * 16 + quad_row + half * 8;
        ri[half] = avk_row(p, w, i, p.scale_log2);
        const long long row = avk_bwd_row(p, b, h, i);
        lse2[half] = i < i1 ? avk_bwd_lse2(a, row) : AVK_POS_INF;
        del[half] = i < i1 ? ((const float *)a.delta)[row] : 0.f;
    }

    float dq[NDQ][4];
#pragma unroll
    for (int n = 0; n < NDQ; ++n) dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.f;
    const int lo = avk_row_key_begin(p, w, i0), hi = avk_row_key_end(p, w, i1 - 1);
    for (int k0 = lo / KB * KB; k0 < hi; k0 += KB) {
        __syncthreads(); /* the previous tile is consumed */
        const long long kr0 = avk_bwd_kv_row(p, b, g, k0);
        const int nk = min(KB, (int)p.seq_kv - k0);
        avk_bwd_rows<KB, D, NTQ>(sK, (const avk_elem *)p.k + kr0 * D, (long long)p.kv_ss * D, nk);
        avk_bwd_rows<KB, DV, NTQ>(sV, (const avk_elem *)p.v + kr0 * DV, (long long)p.kv_ss * DV, nk);
        __syncthreads();
        float s[NSK][4], dp[NSK][4];
        avk_bwd_gemm_nt<NSK, KD, RS>(s, aQ, bK);
        avk_bwd_gemm_nt<NSK, KDV, RSV>(dp, adO, bV);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            float y[2 * NSK]; /* the row's values: key n * 8 + c is y[2n + c] (the forward's layout) */
#pragma unroll
            for (int e = 0; e < 2 * NSK; ++e) y[e] = s[e / 2][2 * half + e % 2];
            avk_score_mod<2 * NSK, 2, 8>(p, ri[half], y, k0 + quad_col * 2, p.scale_log2, true);
#pragma unroll
            for (int e = 0; e < 2 * NSK; ++e) {
                float prob, ds;
                avk_bwd_grad(s[e / 2][2 * half + e % 2], y[e], dp[e / 2][2 * half + e % 2], sc, lse2[half], del[half],
                             cap_in, prob, ds);
                dp[e / 2][2 * half + e % 2] = ds;
            }
        }
        avk_bwd_gemm_acc<NDQ, KB / 16, NSK, RS>(dq, dp, tK);
    }

    const float scale = p.scale_log2 / AVK_LOG2E;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int i = i0 + warp * 16 + quad_row + half * 8;
        if (i >= i1) continue;
        avk_elem *dQ = (avk_elem *)a.dq + avk_bwd_q(p, b, h, i) + quad_col * 2;
#pragma unroll
        for (int n = 0; n < NDQ; ++n) *(avk_u32 *)(dQ + n * 8) = avk_bpack(dq[n][2 * half] * scale, dq[n][2 * half + 1] * scale);
    }
}
