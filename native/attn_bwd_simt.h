/* The backward's f32-arithmetic body (AVK_BWD_MMA=0; included by attn_bwd.cu):
 * any dtype, any head dims. Tiles sit in shared memory as f32 rows padded by
 * one (column walks on distinct banks); a thread computes whole scores (dot
 * products over Dk and Dv), then owns fixed elements of dK/dV (or dQ) and
 * sums over the tile's other dimension in a fixed order. */
#ifndef AVK_BWD_THREADS
#error "AVK_BWD_THREADS must be defined"
#endif
enum {
    D = AVK_D, DV = AVK_DV, NT = AVK_BWD_THREADS,
    BC = AVK_BWD_BC, BQ = AVK_BWD_BQ, /* dK/dV: keys per CTA, query rows per tile */
    QB = AVK_BWD_QB, KB = AVK_BWD_KB, /* dQ: query rows per CTA, keys per tile */
};
static_assert((BC * D) % NT == 0 && (BC * DV) % NT == 0 && (QB * D) % NT == 0,
              "every thread owns as many gradient elements");

/* ROWS rows of W values (row stride `stride` elements) as f32 rows of W + 1; rows past valid are 0 */
template <int ROWS, int W>
AVK_DEVICE void avk_bwd_rows_f32(float *dst, const avk_elem *src, long long stride, int valid)
{
    for (int e = threadIdx.x; e < ROWS * W; e += NT) {
        const int r = e / W, d = e % W;
        dst[r * (W + 1) + d] = r < valid ? avk_to_f32(src[r * stride + d]) : 0.f;
    }
}

/* P and dS of rows [i0, i0 + R) x keys [k0, k0 + C) into sP, sdS ([R][C + 1]),
 * from the f32 tiles; sL, sDel: the rows' LSE (log2, +inf past the end) and D_i. */
template <int R, int C>
AVK_DEVICE void avk_bwd_scores(const avk_attn_params &p, const avk_work &w, const float *sQ, const float *sdO,
                               const float *sK, const float *sV, const float *sL, const float *sDel, float *sP,
                               float *sdS, int i0, int k0)
{
    const float sc = avk_score_scale(p, p.scale_log2), cap_in = avk_bwd_cap_in(p);
    for (int e = threadIdx.x; e < R * C; e += NT) {
        const int q = e / C, j = e % C;
        float x = 0.f, dp = 0.f;
        for (int d = 0; d < D; ++d) x = fmaf(sQ[q * (D + 1) + d], sK[j * (D + 1) + d], x);
        for (int d = 0; d < DV; ++d) dp = fmaf(sdO[q * (DV + 1) + d], sV[j * (DV + 1) + d], dp);
        float y[1] = {x};
        avk_score_mod<1, 1, 1>(p, avk_row(p, w, i0 + q, p.scale_log2), y, k0 + j, p.scale_log2, true);
        float prob, ds;
        avk_bwd_grad(x, y[0], dp, sc, sL[q], sDel[q], cap_in, prob, ds);
        sP[q * (C + 1) + j] = prob;
        sdS[q * (C + 1) + j] = ds;
    }
}

/* rows [i0, i1) of (b, h): LSE (log2) and D_i, padding rows +inf and 0 */
template <int R>
AVK_DEVICE void avk_bwd_row_stats(const avk_bwd_params &a, int b, int h, int i0, int i1, float *sL, float *sDel)
{
    for (int r = threadIdx.x; r < R; r += NT) {
        const long long row = avk_bwd_row(a.f, b, h, i0 + r);
        sL[r] = i0 + r < i1 ? avk_bwd_lse2(a, row) : AVK_POS_INF;
        sDel[r] = i0 + r < i1 ? ((const float *)a.delta)[row] : 0.f;
    }
}

/* grid (key blocks, kv heads, batch) */
AVK_KERNEL void __launch_bounds__(NT) avk_bwd_dkdv(const avk_bwd_params a)
{
    AVK_DYNAMIC_SMEM(smem_raw);
    const avk_attn_params &p = a.f;
    float *sK = (float *)smem_raw, *sV = sK + BC * (D + 1), *sQ = sV + BC * (DV + 1), *sdO = sQ + BQ * (D + 1);
    float *sP = sdO + BQ * (DV + 1), *sdS = sP + BQ * (BC + 1), *sL = sdS + BQ * (BC + 1), *sDel = sL + BQ;
    const int k0 = blockIdx.x * BC, g = blockIdx.y, b = blockIdx.z, nk = min(BC, (int)p.seq_kv - k0);
    const long long kr0 = avk_bwd_kv_row(p, b, g, k0);
    avk_bwd_rows_f32<BC, D>(sK, (const avk_elem *)p.k + kr0 * D, (long long)p.kv_ss * D, nk);
    avk_bwd_rows_f32<BC, DV>(sV, (const avk_elem *)p.v + kr0 * DV, (long long)p.kv_ss * DV, nk);
    enum { EK = BC * D / NT, EV = BC * DV / NT };
    float dk[EK], dv[EV];
#pragma unroll
    for (int u = 0; u < EK; ++u) dk[u] = 0.f;
#pragma unroll
    for (int u = 0; u < EV; ++u) dv[u] = 0.f;
    for (int h = g * (int)p.group; h < (g + 1) * (int)p.group; ++h) {
        const avk_work w = avk_bwd_work(p, b, h);
        for (int i0 = 0; i0 < (int)p.seq_q; i0 += BQ) {
            const int i1 = min(i0 + BQ, (int)p.seq_q);
            if (avk_bwd_disjoint(p, w, i0, i1, k0, k0 + BC)) continue; /* the same for every thread */
            __syncthreads(); /* the previous tile is consumed */
            avk_bwd_rows_f32<BQ, D>(sQ, (const avk_elem *)p.q + avk_bwd_q(p, b, h, i0), p.q_ss, i1 - i0);
            avk_bwd_rows_f32<BQ, DV>(sdO, (const avk_elem *)a.d_o + avk_bwd_o(p, b, h, i0), (long long)p.q_ss / D * DV,
                                     i1 - i0);
            avk_bwd_row_stats<BQ>(a, b, h, i0, i1, sL, sDel);
            __syncthreads();
            avk_bwd_scores<BQ, BC>(p, w, sQ, sdO, sK, sV, sL, sDel, sP, sdS, i0, k0);
            __syncthreads();
#pragma unroll
            for (int u = 0; u < EK; ++u) {
                const int e = threadIdx.x + u * NT, j = e / D, d = e % D;
                float acc = dk[u];
                for (int q = 0; q < BQ; ++q) acc = fmaf(sdS[q * (BC + 1) + j], sQ[q * (D + 1) + d], acc);
                dk[u] = acc;
            }
#pragma unroll
            for (int u = 0; u < EV; ++u) {
                const int e = threadIdx.x + u * NT, j = e / DV, d = e % DV;
                float acc = dv[u];
                for (int q = 0; q < BQ; ++q) acc = fmaf(sP[q * (BC + 1) + j], sdO[q * (DV + 1) + d], acc);
                dv[u] = acc;
            }
        }
    }
    const float scale = p.scale_log2 / AVK_LOG2E;
#pragma unroll
    for (int u = 0; u < EK; ++u) {
        const int e = threadIdx.x + u * NT, j = e / D, d = e % D;
        if (j < nk) ((avk_elem *)a.dk)[(kr0 + (long long)j * p.kv_ss) * D + d] = avk_from_f32(dk[u] * scale);
    }
#pragma unroll
    for (int u = 0; u < EV; ++u) {
        const int e = threadIdx.x + u * NT, j = e / DV, d = e % DV;
        if (j < nk) ((avk_elem *)a.dv)[(kr0 + (long long)j * p.kv_ss) * DV + d] = avk_from_f32(dv[u]);
    }
}

/* grid (query blocks, heads, batch) */
AVK_KERNEL void __launch_bounds__(NT) avk_bwd_dq(const avk_bwd_params a)
{
    AVK_DYNAMIC_SMEM(smem_raw);
    const avk_attn_params &p = a.f;
    float *sQ = (float *)smem_raw, *sdO = sQ + QB * (D + 1), *sK = sdO + QB * (DV + 1), *sV = sK + KB * (D + 1);
    float *sP = sV + KB * (DV + 1), *sdS = sP + QB * (KB + 1), *sL = sdS + QB * (KB + 1), *sDel = sL + QB;
    const int i0 = blockIdx.x * QB, h = blockIdx.y, b = blockIdx.z, g = h / (int)p.group;
    const int i1 = min(i0 + QB, (int)p.seq_q);
    const avk_work w = avk_bwd_work(p, b, h);
    avk_bwd_rows_f32<QB, D>(sQ, (const avk_elem *)p.q + avk_bwd_q(p, b, h, i0), p.q_ss, i1 - i0);
    avk_bwd_rows_f32<QB, DV>(sdO, (const avk_elem *)a.d_o + avk_bwd_o(p, b, h, i0), (long long)p.q_ss / D * DV, i1 - i0);
    avk_bwd_row_stats<QB>(a, b, h, i0, i1, sL, sDel);
    enum { EQ = QB * D / NT };
    float dq[EQ];
#pragma unroll
    for (int u = 0; u < EQ; ++u) dq[u] = 0.f;
    /* the keys some row of the block sees */
    const int lo = avk_row_key_begin(p, w, i0), hi = avk_row_key_end(p, w, i1 - 1);
    for (int k0 = lo / KB * KB; k0 < hi; k0 += KB) {
        __syncthreads();
        const int nk = min(KB, (int)p.seq_kv - k0);
        const long long kr0 = avk_bwd_kv_row(p, b, g, k0);
        avk_bwd_rows_f32<KB, D>(sK, (const avk_elem *)p.k + kr0 * D, (long long)p.kv_ss * D, nk);
        avk_bwd_rows_f32<KB, DV>(sV, (const avk_elem *)p.v + kr0 * DV, (long long)p.kv_ss * DV, nk);
        __syncthreads();
        avk_bwd_scores<QB, KB>(p, w, sQ, sdO, sK, sV, sL, sDel, sP, sdS, i0, k0);
        __syncthreads();
#pragma unroll
        for (int u = 0; u < EQ; ++u) {
            const int e = threadIdx.x + u * NT, q = e / D, d = e % D;
            float acc = dq[u];
            for (int j = 0; j < KB; ++j) acc = fmaf(sdS[q * (KB + 1) + j], sK[j * (D + 1) + d], acc);
            dq[u] = acc;
        }
    }
    const float scale = p.scale_log2 / AVK_LOG2E;
#pragma unroll
    for (int u = 0; u < EQ; ++u) {
        const int e = threadIdx.x + u * NT, q = e / D, d = e % D;
        if (i0 + q < i1) ((avk_elem *)a.dq)[avk_bwd_q(p, b, h, i0 + q) + d] = avk_from_f32(dq[u] * scale);
    }
}
