/* FlashAttention-2 forward in portable OpenCL C (f32 arithmetic).
 *
 * A work-group owns BR query rows of one (batch, head) and streams BC-row
 * K/V tiles through local memory. Register tiling: the DS lanes of a row
 * group split the head dimensions (each holds D/DS columns of Q and Dv/DS
 * of O as float4s; D = Dk of Q and K, Dv of V and O) and own TM rows each, so every float4 read from local memory
 * feeds 4*TM FMAs. Partial Q.K dot products are summed across the DS lanes
 * (shuffles or local memory: AVK_REDUCE), after which every lane holds the
 * full scores of its rows and runs the online softmax itself. O stays on
 * chip and is written once; with split-KV each split writes a normalised
 * partial O and its log-sum-exp for avk_split_reduce. With AVK_ASYNC (f32
 * storage) two tile buffers alternate and the next tile is copied in while
 * the current one is computed. Rows are the contract's packed rows (GQA:
 * the heads of a kv group share each K/V tile), K/V rows come from
 * avk_kv_row (contiguous or paged) and decode through avk_kv_load4. */
#ifndef AVK_WG
#define AVK_WG 64
#endif
#ifndef AVK_DS
#define AVK_DS 4             /* lanes sharing a row (split of D) */
#endif
#ifndef AVK_TM
#define AVK_TM 1             /* rows per lane */
#endif
#ifndef AVK_BC
#define AVK_BC 16            /* keys per tile */
#endif
#ifndef AVK_REDUCE
#define AVK_REDUCE AVK_RED_LOCAL
#endif

#define AVK_TD (AVK_D / AVK_DS)   /* Q's head-dim columns per lane */
#define AVK_NC4 (AVK_TD / 4)      /* ... as float4 chunks */
#define AVK_NC4V (AVK_DV / AVK_DS / 4) /* O's (Dv) float4 chunks per lane */
#define AVK_D4 (AVK_D / 4)
#define AVK_DV4 (AVK_DV / 4)
#define AVK_NRG (AVK_WG / AVK_DS) /* row groups */
#define AVK_BR (AVK_TM * AVK_NRG) /* query rows per work-group */
#define AVK_TILE4 (AVK_BC * AVK_D4)   /* float4s per K tile */
#define AVK_TILE4V (AVK_BC * AVK_DV4) /* float4s per V tile */

#if AVK_ASYNC
#if AVK_F16 || AVK_KV_QUANT
#error "AVK_ASYNC copies f32 tiles as they are; f16 storage and quantized caches convert on load"
#endif
/* Starts the copy of keys kt .. kt+BC-1 of K and V; keys past kv_end become zeros. */
inline void avk_issue_tile(__local float4 *ks, __local float4 *vs, __global const uchar *K, __global const uchar *V,
                           const avk_kernel_args *a, __global const int *block_table, const avk_work *w, int kt,
                           int tid)
{
    for (int u = tid; u < AVK_TILE4; u += AVK_WG) {
        const int kr = u / AVK_D4, c4 = u - kr * AVK_D4, key = kt + kr;
        const int valid = key < w->kv_end;
        const long row = avk_work_kv_row(a, block_table, w, valid ? key : 0);
        avk_cp16(ks + u, K + row * AVK_KV_ROW_BYTES + c4 * 16, valid);
#if AVK_DV == AVK_D
        avk_cp16(vs + u, V + row * AVK_V_ROW_BYTES + c4 * 16, valid);
#endif
    }
#if AVK_DV != AVK_D
    for (int u = tid; u < AVK_TILE4V; u += AVK_WG) {
        const int kr = u / AVK_DV4, c4 = u - kr * AVK_DV4, key = kt + kr;
        const int valid = key < w->kv_end;
        const long row = avk_work_kv_row(a, block_table, w, valid ? key : 0);
        avk_cp16(vs + u, V + row * AVK_V_ROW_BYTES + c4 * 16, valid);
    }
#endif
    avk_cp_commit();
}
#define AVK_TILE_BUFFERS 2
#else
#define AVK_TILE_BUFFERS 1
#endif

#if AVK_REDUCE == AVK_RED_KHR
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_shuffle : enable
#define AVK_SHFL_XOR(v, m) sub_group_shuffle_xor((v), (uint)(m))
#elif AVK_REDUCE == AVK_RED_INTEL
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
#define AVK_SHFL_XOR(v, m) intel_sub_group_shuffle_xor((v), (uint)(m))
#elif AVK_REDUCE == AVK_RED_NV
#if AVK_WG >= 32
#define AVK_WARP_MASK 0xffffffffu
#else
#define AVK_WARP_MASK ((1u << AVK_WG) - 1u)
#endif
inline float avk_shfl_xor(float v, int m)
{
    float r;
    AVK_ASM("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, %3;" : "=f"(r) : "f"(v), "r"(m), "r"(AVK_WARP_MASK));
    return r;
}
#define AVK_SHFL_XOR(v, m) avk_shfl_xor((v), (m))
#endif

__kernel __attribute__((reqd_work_group_size(AVK_WG, 1, 1)))
void avk_flash_tiled(AVK_CONTRACT_ARGS(avk_elem))
{
    const avk_kernel_args *a = &args;
    const int tid = get_local_id(0);
    const int lane_d = tid % AVK_DS;
    const int rg = tid / AVK_DS;
    const avk_work w = avk_locate(a, seq_lens, mask, AVK_BR, AVK_BC);
    const float k_scale = avk_kv_scale(a, kv_scales, 0, w.g), v_scale = avk_kv_scale(a, kv_scales, 1, w.g);

    __local float4 Ks[AVK_TILE_BUFFERS * AVK_TILE4];
    __local float4 Vs[AVK_TILE_BUFFERS * AVK_TILE4V];
#if AVK_DS > 1 && AVK_REDUCE == AVK_RED_LOCAL
    __local float partial[AVK_WG * AVK_TM * AVK_BC];
#endif

    /* Q rows in registers, pre-scaled into the log2 domain (with a softcap
     * into its tanh's argument: the score hook turns that into log2 units) */
    const float q_mul = avk_score_pre(a, args.scale_log2);
    float4 q[AVK_TM][AVK_NC4];
    float4 o[AVK_TM][AVK_NC4V];
    float m_run[AVK_TM], l_run[AVK_TM];
    int key_end[AVK_TM], key_begin[AVK_TM];
    long pos[AVK_TM], mask_row[AVK_TM]; /* i', and the row's mask offset */
    float slope[AVK_TM];
    int row_head[AVK_TM], row_query[AVK_TM]; /* for a sparse pattern's hook */
AVK_PRAGMA_UNROLL
    for (int m = 0; m < AVK_TM; ++m) {
        const int R = w.r0 + rg + m * AVK_NRG;
        const long qo = avk_q_row(a, &w, R);
AVK_PRAGMA_UNROLL
        for (int j = 0; j < AVK_NC4; ++j)
            q[m][j] = R < w.r_end ? AVK_LOAD4(Q, qo + (j * AVK_DS + lane_d) * 4) * q_mul : (float4)(0.0f);
AVK_PRAGMA_UNROLL
        for (int j = 0; j < AVK_NC4V; ++j) o[m][j] = (float4)(0.0f);
        m_run[m] = -INFINITY;
        l_run[m] = 0.0f;
        key_end[m] = avk_row_key_end(a, &w, R);
        key_begin[m] = avk_row_key_begin(a, &w, R);
        const int Rv = min(R, w.r_end - 1), pack = (int)a->pack; /* rows past the end read a real row */
        pos[m] = avk_row_pos(a, w.seq_len, Rv / pack);
        slope[m] = (args.flags & AVK_FLAG_ALIBI) ? alibi_slopes[w.h + Rv % pack] : 0.0f;
        mask_row[m] = avk_mask_row(a, w.b, w.h + Rv % pack, Rv / pack);
        row_head[m] = w.h + Rv % pack;
        row_query[m] = Rv / pack;
    }
    /* tiles below every row's window are skipped */
    const int t_first = max(w.t_begin, w.kv_begin / AVK_BC);

#if AVK_ASYNC
    if (t_first < w.t_end) avk_issue_tile(Ks, Vs, K, V, a, block_table, &w, t_first * AVK_BC, tid);
#endif
    for (int t = t_first; t < w.t_end; ++t) {
        const int kt = t * AVK_BC;
#if AVK_ASYNC
        const int parity = (t - t_first) & 1, cur = parity * AVK_TILE4, cur_v = parity * AVK_TILE4V;
        if (t + 1 < w.t_end) {
            avk_issue_tile(Ks + AVK_TILE4 - cur, Vs + AVK_TILE4V - cur_v, K, V, a, block_table, &w, kt + AVK_BC, tid);
            avk_cp_wait_all_but_one();
        } else {
            avk_cp_wait_all();
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#else
        const int cur = 0, cur_v = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int u = tid; u < AVK_BC * AVK_D4; u += AVK_WG) {
            const int kr = u / AVK_D4, c4 = u - kr * AVK_D4;
            const int key = kt + kr;
            float4 kv = (float4)(0.0f), vv = (float4)(0.0f);
            if (key < w.kv_end) {
                const long row = avk_work_kv_row(a, block_table, &w, key);
                kv = avk_kv_load4(K, row, c4 * 4, k_scale);
#if AVK_DV == AVK_D
                vv = avk_kv_load4(V, row, c4 * 4, v_scale);
#endif
            }
            Ks[u] = kv;
#if AVK_DV == AVK_D
            Vs[u] = vv;
#endif
        }
#if AVK_DV != AVK_D
        for (int u = tid; u < AVK_BC * AVK_DV4; u += AVK_WG) {
            const int kr = u / AVK_DV4, c4 = u - kr * AVK_DV4, key = kt + kr;
            Vs[u] = key < w.kv_end ? avk_v_load4(V, avk_work_kv_row(a, block_table, &w, key), c4 * 4, v_scale)
                                   : (float4)(0.0f);
        }
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
#endif

        /* S = Q K^T over this lane's head-dim slice; constant offsets from one
         * per-lane base keep the addresses out of registers */
        __local const float4 *k_lane = Ks + cur + lane_d;
        __local const float4 *v_lane = Vs + cur_v + lane_d;
        float s[AVK_TM][AVK_BC];
AVK_PRAGMA_UNROLL
        for (int k = 0; k < AVK_BC; ++k) {
AVK_PRAGMA_UNROLL
            for (int m = 0; m < AVK_TM; ++m) s[m][k] = 0.0f;
AVK_PRAGMA_UNROLL
            for (int j = 0; j < AVK_NC4; ++j) {
                const float4 kv = k_lane[k * AVK_D4 + j * AVK_DS];
AVK_PRAGMA_UNROLL
                for (int m = 0; m < AVK_TM; ++m)
                    s[m][k] = fma(q[m][j].x, kv.x, fma(q[m][j].y, kv.y, fma(q[m][j].z, kv.z, fma(q[m][j].w, kv.w, s[m][k]))));
            }
        }

        /* sum the slices: every lane of a row group ends with identical scores */
#if AVK_DS > 1
#if AVK_REDUCE == AVK_RED_LOCAL
AVK_PRAGMA_UNROLL
        for (int m = 0; m < AVK_TM; ++m)
AVK_PRAGMA_UNROLL
            for (int k = 0; k < AVK_BC; ++k) partial[(tid * AVK_TM + m) * AVK_BC + k] = s[m][k];
        barrier(CLK_LOCAL_MEM_FENCE);
AVK_PRAGMA_UNROLL
        for (int m = 0; m < AVK_TM; ++m)
AVK_PRAGMA_UNROLL
            for (int k = 0; k < AVK_BC; ++k) {
                float acc = 0.0f;
AVK_PRAGMA_UNROLL
                for (int l = 0; l < AVK_DS; ++l) acc += partial[((rg * AVK_DS + l) * AVK_TM + m) * AVK_BC + k];
                s[m][k] = acc;
            }
        /* the barrier at the top of the next tile orders reuse of `partial` */
#else
AVK_PRAGMA_UNROLL
        for (int m = 0; m < AVK_TM; ++m)
AVK_PRAGMA_UNROLL
            for (int k = 0; k < AVK_BC; ++k)
AVK_PRAGMA_UNROLL
                for (int off = 1; off < AVK_DS; off <<= 1) s[m][k] += AVK_SHFL_XOR(s[m][k], off);
#endif
#endif

        /* softcap, ALiBi, mask (the contract's score hook), on visible keys only */
        if ((args.flags & AVK_SCORE_MODS) || args.softcap > 0.0f) {
AVK_PRAGMA_UNROLL
            for (int m = 0; m < AVK_TM; ++m)
AVK_PRAGMA_UNROLL
                for (int k = 0; k < AVK_BC; ++k)
                    if (kt + k < key_end[m] && kt + k >= key_begin[m])
                        s[m][k] = avk_score_mod(a, s[m][k], kt + k, pos[m], slope[m], mask, mask_row[m]);
        }

        /* a sparse pattern's hidden keys (block layout, dilation) */
        if (args.flags & AVK_PATTERNS) {
AVK_PRAGMA_UNROLL
            for (int m = 0; m < AVK_TM; ++m)
AVK_PRAGMA_UNROLL
                for (int k = 0; k < AVK_BC; ++k)
                    if (!avk_pattern_visible(a, mask, w.b, row_head[m], row_query[m], kt + k)) s[m][k] = -INFINITY;
        }

        /* masks: keys outside each row's visible range (edge tile, causal
         * diagonal, ragged lengths, windows) */
        if (kt + AVK_BC > w.kv_full || kt < w.kv_full_begin) {
AVK_PRAGMA_UNROLL
            for (int m = 0; m < AVK_TM; ++m)
AVK_PRAGMA_UNROLL
                for (int k = 0; k < AVK_BC; ++k)
                    if (kt + k >= key_end[m] || kt + k < key_begin[m]) s[m][k] = -INFINITY;
        }

        /* online softmax (log2 domain); a row with nothing visible yet keeps m = -inf */
AVK_PRAGMA_UNROLL
        for (int m = 0; m < AVK_TM; ++m) {
            float mx = m_run[m];
AVK_PRAGMA_UNROLL
            for (int k = 0; k < AVK_BC; ++k) mx = fmax(mx, s[m][k]);
            const float base = mx == -INFINITY ? 0.0f : mx;
            const float alpha = AVK_EXP2(m_run[m] - base);
            m_run[m] = mx;
            float sum = 0.0f;
AVK_PRAGMA_UNROLL
            for (int k = 0; k < AVK_BC; ++k) {
                s[m][k] = AVK_EXP2(s[m][k] - base);
                sum += s[m][k];
            }
            l_run[m] = l_run[m] * alpha + sum;
AVK_PRAGMA_UNROLL
            for (int j = 0; j < AVK_NC4V; ++j) o[m][j] *= alpha;
        }

        /* O += P V over this lane's columns */
AVK_PRAGMA_UNROLL
        for (int k = 0; k < AVK_BC; ++k) {
AVK_PRAGMA_UNROLL
            for (int j = 0; j < AVK_NC4V; ++j) {
                const float4 vv = v_lane[k * AVK_DV4 + j * AVK_DS];
AVK_PRAGMA_UNROLL
                for (int m = 0; m < AVK_TM; ++m) o[m][j] = fma((float4)(s[m][k]), vv, o[m][j]);
            }
        }
#if AVK_ASYNC
        barrier(CLK_LOCAL_MEM_FENCE); /* all reads of `cur` done before it is refilled */
#endif
    }

AVK_PRAGMA_UNROLL
    for (int m = 0; m < AVK_TM; ++m) {
        const int R = w.r0 + rg + m * AVK_NRG;
        if (R >= w.r_end) continue;
        if ((args.flags & AVK_FLAG_SINKS) && !(args.flags & AVK_FLAG_SPLIT)) {
            /* the sink joins the denominator (split partials leave it to the merge) */
            const float sink = sinks[w.h + R % (int)a->pack] * 1.4426950408889634f;
            const float mx = fmax(m_run[m], sink), keep = m_run[m] == -INFINITY ? 0.0f : AVK_EXP2(m_run[m] - mx);
AVK_PRAGMA_UNROLL
            for (int j = 0; j < AVK_NC4V; ++j) o[m][j] *= keep;
            l_run[m] = l_run[m] * keep + AVK_EXP2(sink - mx);
            m_run[m] = mx;
        }
        const float inv = l_run[m] > 0.0f ? 1.0f / l_run[m] : 0.0f;
        const float lse = l_run[m] > 0.0f ? (m_run[m] + log2(l_run[m])) * AVK_LN2 : -INFINITY;
        const long lrow = avk_lse_row(a, &w, R);
        if (args.flags & AVK_FLAG_SPLIT) {
            const long prow = avk_split_base(a, &w) + lrow;
            __global float *op = part_O + prow * AVK_DV;
AVK_PRAGMA_UNROLL
            for (int j = 0; j < AVK_NC4V; ++j) vstore4(o[m][j] * inv, 0, op + (j * AVK_DS + lane_d) * 4);
            if (lane_d == 0) part_LSE[prow] = lse;
        } else {
            __global avk_elem *ob = O + avk_o_row(a, &w, R);
AVK_PRAGMA_UNROLL
            for (int j = 0; j < AVK_NC4V; ++j) AVK_STORE4(o[m][j] * inv, ob, (j * AVK_DS + lane_d) * 4);
            if ((args.flags & AVK_FLAG_WRITE_LSE) && lane_d == 0) LSE[lrow] = lse;
        }
    }
}
