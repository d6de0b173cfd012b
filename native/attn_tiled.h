/* Register-tiled f32 flash-attention forward (variant "tiled"), included by
 * attn_fwd.cu when AVK_TILED=1: f32 arithmetic without matrix units, for f32
 * problems (and any dtype where no tensor-core path exists). The scheme of
 * opencl/flash_tiled.cl:
 *   - the AVK_DS lanes of a row group split the head dimensions: each holds
 *     Dk/DS columns of its rows' Q (pre-scaled into the log2 domain) and Dv/DS
 *     of O as float4s, and owns TM = BR * DS / THREADS rows, so every float4
 *     read from shared memory feeds 4 * TM FMAs;
 *   - partial Q.K dot products are summed across the DS lanes by butterfly
 *     shuffles, after which every lane holds its rows' full scores and runs
 *     the online softmax itself; O stays in registers and is written once;
 *   - f32 storage on sm_80+: K/V tiles double-buffered with cp.async (one
 *     barrier per tile, the next tile in flight during this one's work);
 *     16-bit storage converts on the way through registers. */
#ifndef AVK_DS
#error "AVK_DS (lanes per row) must be defined for the tiled kernel"
#endif

enum {
    D = AVK_D, DV = AVK_DV, BC = AVK_BC, NT = AVK_THREADS, DS = AVK_DS,
    RG = NT / DS,       /* row groups */
    TM = AVK_BR / RG,   /* rows per lane */
    BR = TM * RG,
    NC4 = D / DS / 4,   /* float4 columns of Q per lane */
    NC4V = DV / DS / 4, /* of O */
    D4 = D / 4,
    DV4 = DV / 4,
    KV4 = BC * (D4 + DV4), /* float4s of one stage: K then V */
};
static_assert(NT % DS == 0 && AVK_BR % RG == 0 && TM >= 1, "tile_br must be a multiple of threads / lanes per row");
static_assert(D % (4 * DS) == 0 && DV % (4 * DS) == 0, "each lane takes whole float4 columns");
static_assert(DS <= AVK_WARP && (DS & (DS - 1)) == 0, "lanes per row: a power of two within a warp");

#ifndef AVK_TILED_ASYNC /* -DAVK_TILED_ASYNC=0 for comparisons */
#if AVK_DTYPE == 0 && defined(AVK_MMA_SM80)
#define AVK_TILED_ASYNC 1
#else
#define AVK_TILED_ASYNC 0
#endif
#endif

struct avk_f4 {
    float x, y, z, w;
};

/* Four consecutive elements as f32 (16-byte f32 or 8-byte 16-bit loads). */
AVK_DEVICE avk_f4 avk_load4(const avk_elem *g)
{
#if AVK_DTYPE == 0
    const float4 v = *(const float4 *)g;
    return avk_f4{v.x, v.y, v.z, v.w};
#else
    const avk_u32 *u = (const avk_u32 *)g;
    const avk_u32 a = u[0], b = u[1];
    return avk_f4{avk_to_f32((avk_elem)(a & 0xffffu)), avk_to_f32((avk_elem)(a >> 16)),
                  avk_to_f32((avk_elem)(b & 0xffffu)), avk_to_f32((avk_elem)(b >> 16))};
#endif
}

#if AVK_TILED_ASYNC
/* Starts copying keys key0.. of one of K (W4 = Dk/4, es: its key stride) or V
 * (Dv/4) into a stage buffer; rows past kv_end become zeros. */
template <int W4>
AVK_DEVICE void avk_issue_rows(avk_f4 *dst, const avk_elem *src, long long es, int key0, int kv_end)
{
    for (int u = threadIdx.x; u < BC * W4; u += NT) {
        const int kr = u / W4, c4 = u % W4, key = key0 + kr;
        const bool in = key < kv_end;
        const long long off = in ? (long long)key * es + c4 * 4 : 0;
        avk_cp_async16(avk_smem_addr(dst + u), src + off, in ? 16 : 0);
    }
}

AVK_DEVICE void avk_issue_tile(avk_f4 *stage, const avk_elem *K, const avk_elem *V, const avk_attn_params &p,
                               const avk_work &w, int key0, int kv_end)
{
#if AVK_DV == AVK_D
    /* one loop over both (as many registers as before Dv existed) */
    avk_f4 *sV = stage + BC * D4;
    for (int u = threadIdx.x; u < BC * D4; u += NT) {
        const int kr = u / D4, c4 = u % D4, key = key0 + kr;
        const bool in = key < kv_end;
        const long long off = in ? (long long)key * avk_kv_es(p, w) + c4 * 4 : 0;
        avk_cp_async16(avk_smem_addr(stage + u), K + off, in ? 16 : 0);
        avk_cp_async16(avk_smem_addr(sV + u), V + off, in ? 16 : 0);
    }
#else
    avk_issue_rows<D4>(stage, K, avk_kv_es(p, w), key0, kv_end);
    avk_issue_rows<DV4>(stage + BC * D4, V, avk_v_es(p, w), key0, kv_end);
#endif
    avk_cp_async_commit();
}
#endif

AVK_KERNEL void __launch_bounds__(AVK_THREADS) avk_attn_fwd(const avk_attn_params p)
{
    AVK_DYNAMIC_SMEM(smem_raw);
    if (AVK_SPLIT) avk_launch_dependents(); /* the merge may launch: it waits for this grid to finish */
    /* per stage: K then V, BC x Dk/4 and BC x Dv/4 float4s (lanes of a row group read consecutive ones) */
    avk_f4 *const tiles = (avk_f4 *)smem_raw;

    const avk_work w = avk_locate(p, BR, BC);
    const avk_elem *Q = (const avk_elem *)p.q + w.q_off;
    const avk_elem *K = (const avk_elem *)p.k + w.kv_off;
    const avk_elem *V = (const avk_elem *)p.v + w.v_off;
    const int tid = threadIdx.x, lane_d = tid % DS, rg = tid / DS;
    /* every row sees keys [cta_max_begin, cta_min_end) */
    const int cta_min_end = avk_row_key_end(p, w, w.r0), cta_max_begin = avk_row_key_begin(p, w, w.r_end - 1);

    avk_f4 q[TM][NC4], o[TM][NC4V];
    float m_run[TM], l_run[TM];
#pragma unroll
    for (int m = 0; m < TM; ++m) {
        const int row = w.r0 + rg + m * RG;
#pragma unroll
        for (int j = 0; j < NC4; ++j) {
            avk_f4 v = {0.f, 0.f, 0.f, 0.f};
            if (row < w.r_end) v = avk_load4(Q + (long long)row * avk_q_stride(p, w) + (j * DS + lane_d) * 4);
            q[m][j] = avk_f4{v.x * p.scale_log2, v.y * p.scale_log2, v.z * p.scale_log2, v.w * p.scale_log2};
        }
#pragma unroll
        for (int j = 0; j < NC4V; ++j) o[m][j] = avk_f4{0.f, 0.f, 0.f, 0.f};
        m_run[m] = AVK_NEG_INF;
        l_run[m] = 0.f;
    }

#if AVK_TILED_ASYNC
    if (w.t_begin < w.t_end) avk_issue_tile(tiles, K, V, p, w, w.t_begin * BC, w.kv_end);
#endif
    for (int t = w.t_begin; t < w.t_end; ++t) {
        const int key0 = t * BC;
#if AVK_TILED_ASYNC
        /* one barrier: tile t has landed, and every thread is done with tile
         * t-1, whose stage now takes tile t+1 */
        const int stage = (t - w.t_begin) & 1;
        AVK_CP_ASYNC_WAIT(0);
        __syncthreads();
        if (t + 1 < w.t_end) avk_issue_tile(tiles + (stage ^ 1) * KV4, K, V, p, w, key0 + BC, w.kv_end);
        const avk_f4 *sK = tiles + stage * KV4, *sV = sK + BC * D4;
#else
        avk_f4 *sK = tiles, *sV = tiles + BC * D4;
        __syncthreads(); /* the previous tile is fully consumed */
        for (int u = tid; u < BC * D4; u += NT) {
            const int kr = u / D4, c4 = u % D4, key = key0 + kr;
            avk_f4 kv = {0.f, 0.f, 0.f, 0.f}, vv = kv;
            if (key < w.kv_end) {
                kv = avk_load4(K + (long long)key * avk_kv_es(p, w) + c4 * 4);
                if (DV == D) vv = avk_load4(V + (long long)key * avk_v_es(p, w) + c4 * 4);
            }
            sK[u] = kv;
            if (DV == D) sV[u] = vv;
        }
        for (int u = tid; DV != D && u < BC * DV4; u += NT) { /* V's rows of their own width */
            const int kr = u / DV4, c4 = u % DV4, key = key0 + kr;
            avk_f4 vv = {0.f, 0.f, 0.f, 0.f};
            if (key < w.kv_end) vv = avk_load4(V + (long long)key * avk_v_es(p, w) + c4 * 4);
            sV[u] = vv;
        }
        __syncthreads();
#endif

        /* S = Q K^T over this lane's columns, then summed over the row group */
        const avk_f4 *k_lane = sK + lane_d, *v_lane = sV + lane_d;
        float s[TM][BC];
#pragma unroll
        for (int k = 0; k < BC; ++k) {
#pragma unroll
            for (int m = 0; m < TM; ++m) s[m][k] = 0.f;
#pragma unroll
            for (int j = 0; j < NC4; ++j) {
                const avk_f4 kv = k_lane[k * D4 + j * DS];
#pragma unroll
                for (int m = 0; m < TM; ++m)
                    s[m][k] = fmaf(q[m][j].x, kv.x, fmaf(q[m][j].y, kv.y, fmaf(q[m][j].z, kv.z, fmaf(q[m][j].w, kv.w, s[m][k]))));
            }
#pragma unroll
            for (int m = 0; m < TM; ++m)
#pragma unroll
                for (int off = 1; off < DS; off <<= 1) s[m][k] += avk_shfl_xor(s[m][k], off);
        }

        /* masks on tiles that cross the sequence end, the diagonal or a window edge, and
         * score modifications (S is already in the log2 domain: Q was scaled) */
        const bool edge = avk_tile_is_edge(key0, BC, cta_max_begin, cta_min_end) ||
                          avk_pattern_tile(p, w, w.r0, w.r_end - 1, key0, BC) != AVK_TILE_FULL;
        if (AVK_SCORE_MOD || edge) {
#pragma unroll
            for (int m = 0; m < TM; ++m) avk_score_mod<BC, 1, 1>(p, avk_row(p, w, w.r0 + rg + m * RG, 1.f), s[m], key0, 1.f, edge);
        }
        if (AVK_SCORE_MOD & AVK_MOD_SOFTCAP) { /* the hook's units back to log2 (the other bodies fold it into the softmax) */
            const float unit = avk_score_scale(p, 1.f);
#pragma unroll
            for (int m = 0; m < TM; ++m)
#pragma unroll
                for (int k = 0; k < BC; ++k) s[m][k] *= unit;
        }

        /* online softmax (log2 domain); a row with nothing visible yet keeps m = -inf */
#pragma unroll
        for (int m = 0; m < TM; ++m) {
            float mx = m_run[m];
#pragma unroll
            for (int k = 0; k < BC; ++k) mx = avk_max(mx, s[m][k]);
            const float base = mx == AVK_NEG_INF ? 0.f : mx;
            const float alpha = avk_exp2(m_run[m] - base);
            m_run[m] = mx;
            float sum = 0.f;
#pragma unroll
            for (int k = 0; k < BC; ++k) {
                s[m][k] = avk_exp2(s[m][k] - base);
                sum += s[m][k];
            }
            l_run[m] = l_run[m] * alpha + sum;
#pragma unroll
            for (int j = 0; j < NC4V; ++j) {
                o[m][j].x *= alpha;
                o[m][j].y *= alpha;
                o[m][j].z *= alpha;
                o[m][j].w *= alpha;
            }
        }

        /* O += P V over this lane's columns */
#pragma unroll
        for (int k = 0; k < BC; ++k)
#pragma unroll
            for (int j = 0; j < NC4V; ++j) {
                const avk_f4 vv = v_lane[k * DV4 + j * DS];
#pragma unroll
                for (int m = 0; m < TM; ++m) {
                    o[m][j].x = fmaf(s[m][k], vv.x, o[m][j].x);
                    o[m][j].y = fmaf(s[m][k], vv.y, o[m][j].y);
                    o[m][j].z = fmaf(s[m][k], vv.z, o[m][j].z);
                    o[m][j].w = fmaf(s[m][k], vv.w, o[m][j].w);
                }
            }
    }

#pragma unroll
    for (int m = 0; m < TM; ++m) {
        const int row = w.r0 + rg + m * RG;
        if (row >= w.r_end) continue;
        const float keep = avk_fold_sink(p, w.h + row % (int)p.pack, m_run[m], l_run[m]);
        const float inv = l_run[m] > 0.f ? keep / l_run[m] : 0.f;
#pragma unroll
        for (int j = 0; j < NC4V; ++j) {
            const int col = (j * DS + lane_d) * 4;
            avk_store_pair(p, w, row, col, o[m][j].x * inv, o[m][j].y * inv);
            avk_store_pair(p, w, row, col + 2, o[m][j].z * inv, o[m][j].w * inv);
        }
        if (lane_d == 0) avk_store_lse(p, w, row, l_run[m] > 0.f ? m_run[m] + log2f(l_run[m]) : AVK_NEG_INF);
    }
}
