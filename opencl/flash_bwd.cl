/* FlashAttention-2 backward in portable OpenCL C (issue #18), the design of
 * native/attn_bwd.cu's f32 body: the gradients from the forward's O and
 * LSE, P recomputed per tile from the LSE through the contract's hooks
 * (visible keys, avk_score_mod), nothing of size Nq x Nk kept. Every
 * work-group owns what it writes: no atomics, bit-identical runs.
 *
 *   avk_bwd_pre    D_i = rowsum(dO_i * O_i) and, with sinks, the row's share
 *                  of d(sink): -exp(sink_h - LSE_i) * D_i (an item per row)
 *   avk_bwd_sinks  d(sink_h): head h's shares summed in a fixed order
 *   avk_bwd_dkdv   a work-group per AVK_BWD_BC keys of one (b, kv head):
 *                  over the group's query heads and their AVK_BWD_BQ-row
 *                  tiles that see those keys, dV += P^T dO, dK += dS^T Q
 *   avk_bwd_dq     a work-group per AVK_BWD_QB query rows of one (b, h):
 *                  over the AVK_BWD_KB-key tiles they see, dQ += dS K
 * with dS = P (dP - D) times the softcap's derivative and dP = dO V^T; dK
 * and dQ take the softmax scale at the end. Tiles sit in local memory as
 * f32 rows padded by one; an item computes whole scores, then owns fixed
 * gradient elements and sums the tile's other dimension in a fixed order.
 * Arguments: the contract's avk_kernel_args with pack 1, every query row,
 * one split (runtime/opencl/cl_backward.c). Storage f32 or f16 (AVK_F16:
 * vload_half/vstore_half, no cl_khr_fp16 needed), f32 arithmetic. With
 * AVK_BWD_MMA=1 the dK/dV and dQ kernels come from flash_bwd_mma.cl
 * (mma.sync) instead; both take each score's P and dS from avk_bwd_point. */
#if !defined(AVK_BWD_BC) || !defined(AVK_BWD_BQ) || !defined(AVK_BWD_QB) || !defined(AVK_BWD_KB) || \
    !defined(AVK_BWD_WG)
#error "the AVK_BWD_* tiles and work-group size must be defined"
#endif
#ifndef AVK_BWD_MMA
#define AVK_BWD_MMA 0 /* 1: dK/dV and dQ from flash_bwd_mma.cl (appended after this file), not the bodies below */
#endif
#define BWD_NT AVK_BWD_WG
/* gradient elements per item (the last round guarded) */
#define BWD_EK ((AVK_BWD_BC * AVK_D + BWD_NT - 1) / BWD_NT)
#define BWD_EV ((AVK_BWD_BC * AVK_DV + BWD_NT - 1) / BWD_NT)
#define BWD_EQ ((AVK_BWD_QB * AVK_D + BWD_NT - 1) / BWD_NT)

/* Before the inner loops (dot products, a tile's sums): a few steps a
 * round. Unrolled whole, with the item's accumulator loops around them
 * unrolled too, clang's PTX took 255 registers (D=128) against 66. */
#if AVK_UNROLL
#define BWD_UNROLL_INNER _Pragma("unroll 4")
#else
#define BWD_UNROLL_INNER /* CPU runtimes: PoCL warns where it cannot */
#endif

#if AVK_F16
#define AVK_LOAD1(p, i) vload_half((i), (p))
#else
#define AVK_LOAD1(p, i) ((p)[i])
#endif

/* The contract's view of one (b, h) with pack 1: rows are query indices. */
AVK_INLINE avk_work avk_bwd_work(const avk_kernel_args *a, __global const int *seq_lens, int b, int h)
{
    avk_work w;
    w.b = b, w.h = h, w.g = h / (int)a->group, w.split = 0;
    w.r0 = 0, w.r_end = (int)a->seq_q;
    w.seq_len = avk_seq_len(a, seq_lens, b);
    w.kv_limit = w.kv_end = w.kv_full = w.seq_len;
    w.kv_begin = w.kv_full_begin = 0;
    w.t_begin = w.t_end = 0;
    return w;
}

/* The LSE in the log2 domain; a row without keys (-inf) becomes +inf, so
 * every P of it is exp2(-inf) = 0, as the reference's zero gradients. */
AVK_INLINE float avk_bwd_lse2(__global const float *LSE, long row)
{
    const float l = LSE[row];
    return l == -INFINITY ? INFINITY : l * AVK_LOG2E;
}

/* Rows [i0, i1) see none of keys [k0, k1): visible ranges only grow with i. */
AVK_INLINE int avk_bwd_disjoint(const avk_kernel_args *a, const avk_work *w, int i0, int i1, int k0, int k1)
{
    return avk_row_key_end(a, w, i1 - 1) <= k0 || avk_row_key_begin(a, w, i0) >= k1;
}

/* ROWS rows of W values (offset of row r: base + r * stride) as f32 rows of W + 1; rows past valid are 0 */
AVK_INLINE void avk_bwd_rows_f32(__local float *dst, __global const avk_elem *src, long base, long stride, int rows, int width,
                             int valid)
{
    for (int e = get_local_id(0); e < rows * width; e += BWD_NT) {
        const int r = e / width, d = e % width;
        dst[r * (width + 1) + d] = r < valid ? AVK_LOAD1(src, base + r * stride + d) : 0.0f;
    }
}

/* K (or V) rows [k0, k0 + rows) of (b, g), width values each, as f32 rows of width + 1 */
AVK_INLINE void avk_bwd_keys_f32(__local float *dst, __global const avk_elem *src, const avk_kernel_args *a, int b, int g,
                             int k0, int rows, int width)
{
    const int valid = min(rows, (int)a->seq_kv - k0);
    avk_bwd_rows_f32(dst, src, avk_kv_row(a, 0, b, g, k0) * width, (long)a->kv_ss * width, rows, width, valid);
}

/* rows [i0, i1) of (b, h): LSE (log2) and D_i, padding rows +inf and 0 */
AVK_INLINE void avk_bwd_row_stats(const avk_kernel_args *a, const avk_work *w, __global const float *LSE,
                              __global const float *delta, int i0, int i1, int rows, __local float *sL,
                              __local float *sDel)
{
    for (int r = get_local_id(0); r < rows; r += BWD_NT) {
        const long row = avk_lse_row(a, w, i0 + r);
        sL[r] = i0 + r < i1 ? avk_bwd_lse2(LSE, row) : INFINITY;
        sDel[r] = i0 + r < i1 ? delta[row] : 0.0f;
    }
}

/* rows [i0, i1) of (b, h): Q and dO as f32 tiles of `rows` rows, their LSE (log2) and D_i */
AVK_INLINE void avk_bwd_query_tile(const avk_kernel_args *a, const avk_work *w, __global const avk_elem *Q,
                                   __global const avk_elem *dO, __global const float *LSE, __global const float *delta,
                                   int i0, int i1, int rows, __local float *sQ, __local float *sdO, __local float *sL,
                                   __local float *sDel)
{
    avk_bwd_rows_f32(sQ, Q, avk_q_row(a, w, i0), a->q_ss, rows, AVK_D, i1 - i0);
    avk_bwd_rows_f32(sdO, dO, avk_o_row(a, w, i0), (long)a->q_ss / AVK_D * AVK_DV, rows, AVK_DV, i1 - i0);
    avk_bwd_row_stats(a, w, LSE, delta, i0, i1, rows, sL, sDel);
}

/* acc + sum over t < n of x[t * xs] * y[t * ys]: one gradient element's share of a tile, in a fixed order */
AVK_INLINE float avk_bwd_sum(__local const float *x, int xs, __local const float *y, int ys, int n, float acc)
{
    BWD_UNROLL_INNER
    for (int t = 0; t < n; ++t) acc = fma(x[t * xs], y[t * ys], acc);
    return acc;
}

/* P and dS of query i (a real row: padding rows pass their block's last)
 * and key j from the raw q.k (x) and dP; lse2: the row's log2 LSE (+inf for
 * padding rows: P = 0), delta its D_i. Keys the row does not see get
 * P = dS = 0; the visible ones go through the forward's score hook, and
 * the softcap's derivative takes its tanh once more, as the hook did. */
AVK_INLINE void avk_bwd_point(const avk_kernel_args *a, const avk_work *w, float slope, __global const uchar *mask,
                              float x, float dp, int i, int j, float lse2, float delta, float *prob, float *ds)
{
    *prob = 0.0f, *ds = 0.0f;
    if (j < avk_row_key_begin(a, w, i) || j >= avk_row_key_end(a, w, i)) return;
    const float s = x * avk_score_pre(a, a->scale_log2);
    const float y = avk_score_mod(a, s, j, avk_row_pos(a, w->seq_len, i), slope, mask, avk_mask_row(a, w->b, w->h, i));
    const float p = AVK_EXP2(y - lse2);
    float dsdx = 1.0f;
    if (a->softcap > 0.0f) {
        const float t = avk_softcap_tanh(s);
        dsdx = 1.0f - t * t;
    }
    *prob = p;
    *ds = p == 0.0f ? 0.0f : p * (dp - delta) * dsdx;
}

/* the ALiBi slope of head h (0 without ALiBi) */
AVK_INLINE float avk_bwd_slope(const avk_kernel_args *a, __global const float *alibi_slopes, int h)
{
    return (a->flags & AVK_FLAG_ALIBI) ? alibi_slopes[h] : 0.0f;
}

#if !AVK_BWD_MMA
/* P and dS of rows [i0, i0 + R) x keys [k0, k0 + C) into sP (when not 0)
 * and sdS ([R][C + 1]) from the f32 tiles. */
AVK_INLINE void avk_bwd_scores(const avk_kernel_args *a, const avk_work *w, __global const float *alibi_slopes,
                               __global const uchar *mask, __local const float *sQ, __local const float *sdO,
                               __local const float *sK, __local const float *sV, __local const float *sL,
                               __local const float *sDel, __local float *sP, __local float *sdS, int i0, int k0, int R,
                               int C)
{
    const float slope = avk_bwd_slope(a, alibi_slopes, w->h);
    for (int e = get_local_id(0); e < R * C; e += BWD_NT) {
        const int q = e / C, j = e % C, i = min(i0 + q, w->r_end - 1);
        const float x = avk_bwd_sum(sQ + q * (AVK_D + 1), 1, sK + j * (AVK_D + 1), 1, AVK_D, 0.0f);
        const float dp = avk_bwd_sum(sdO + q * (AVK_DV + 1), 1, sV + j * (AVK_DV + 1), 1, AVK_DV, 0.0f);
        float prob, ds;
        avk_bwd_point(a, w, slope, mask, x, dp, i, k0 + j, sL[q], sDel[q], &prob, &ds);
        if (sP) sP[q * (C + 1) + j] = prob;
        sdS[q * (C + 1) + j] = ds;
    }
}
#endif

/* ===================== D_i and d(sink) ===================== */

/* an item per row of [B][H][Nq] */
__kernel void avk_bwd_pre(__global const avk_elem *O, __global const avk_elem *dO, __global const float *LSE,
                          __global const float *sinks, __global float *delta, __global float *sink_share,
                          const avk_kernel_args args)
{
    const long rows = (long)args.batch * args.heads * args.seq_q, row = get_global_id(0);
    if (row >= rows) return;
    const int h = (int)(row / args.seq_q % args.heads);
    const int i = (int)(row % args.seq_q), b = (int)(row / args.seq_q / args.heads);
    avk_work w; /* what avk_o_row reads of it */
    w.b = b, w.h = h;
    const long base = avk_o_row(&args, &w, i);
    float sum = 0.0f;
    for (int d = 0; d < AVK_DV; ++d) sum = fma(AVK_LOAD1(O, base + d), AVK_LOAD1(dO, base + d), sum);
    delta[row] = sum;
    if (args.flags & AVK_FLAG_SINKS) {
        const float lse = LSE[row];
        sink_share[row] = lse == -INFINITY ? 0.0f : -exp2((sinks[h] - lse) * AVK_LOG2E) * sum;
    }
}

/* a work-group of AVK_BWD_WG per head: strided partial sums, then a fixed tree */
__kernel __attribute__((reqd_work_group_size(AVK_BWD_WG, 1, 1))) void
avk_bwd_sinks(__global const float *sink_share, __global float *d_sinks, const avk_kernel_args args)
{
    __local float part[BWD_NT];
    const int h = get_group_id(0), n = (int)(args.batch * args.seq_q), t = get_local_id(0);
    float sum = 0.0f;
    for (int r = t; r < n; r += BWD_NT)
        sum += sink_share[((long)(r / (int)args.seq_q) * args.heads + h) * args.seq_q + r % (int)args.seq_q];
    part[t] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = BWD_NT / 2; s > 0; s /= 2) {
        if (t < s) part[t] += part[t + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) d_sinks[h] = part[0];
}

#if !AVK_BWD_MMA /* the tensor-core kernels: flash_bwd_mma.cl */
/* ===================== dK, dV ===================== */

/* grid (key blocks * WG, kv heads, batch) */
__kernel __attribute__((reqd_work_group_size(AVK_BWD_WG, 1, 1))) void
avk_bwd_dkdv(__global const avk_elem *Q, __global const avk_elem *K, __global const avk_elem *V,
             __global const avk_elem *dO, __global const float *LSE, __global const float *delta,
             __global const int *seq_lens, __global const float *alibi_slopes, __global const uchar *mask,
             __global avk_elem *dK, __global avk_elem *dV, const avk_kernel_args args)
{
    enum { BC = AVK_BWD_BC, BQ = AVK_BWD_BQ, D = AVK_D, DV = AVK_DV };
    __local float sK[BC * (D + 1)], sV[BC * (DV + 1)], sQ[BQ * (D + 1)], sdO[BQ * (DV + 1)];
    __local float sP[BQ * (BC + 1)], sdS[BQ * (BC + 1)], sL[BQ], sDel[BQ];
    const avk_kernel_args *a = &args;
    const int k0 = get_group_id(0) * BC, g = get_group_id(1), b = get_group_id(2), tid = get_local_id(0);
    avk_bwd_keys_f32(sK, K, a, b, g, k0, BC, D);
    avk_bwd_keys_f32(sV, V, a, b, g, k0, BC, DV);
    float dk[BWD_EK], dv[BWD_EV];
AVK_PRAGMA_UNROLL
    for (int u = 0; u < BWD_EK; ++u) dk[u] = 0.0f;
AVK_PRAGMA_UNROLL
    for (int u = 0; u < BWD_EV; ++u) dv[u] = 0.0f;
    for (int h = g * (int)a->group; h < (g + 1) * (int)a->group; ++h) {
        const avk_work w = avk_bwd_work(a, seq_lens, b, h);
        for (int i0 = 0; i0 < (int)a->seq_q; i0 += BQ) {
            const int i1 = min(i0 + BQ, (int)a->seq_q);
            if (avk_bwd_disjoint(a, &w, i0, i1, k0, k0 + BC)) continue; /* the same for every item */
            barrier(CLK_LOCAL_MEM_FENCE);                              /* the previous tile is consumed */
            avk_bwd_query_tile(a, &w, Q, dO, LSE, delta, i0, i1, BQ, sQ, sdO, sL, sDel);
            barrier(CLK_LOCAL_MEM_FENCE);
            avk_bwd_scores(a, &w, alibi_slopes, mask, sQ, sdO, sK, sV, sL, sDel, sP, sdS, i0, k0, BQ, BC);
            barrier(CLK_LOCAL_MEM_FENCE);
AVK_PRAGMA_UNROLL
            for (int u = 0; u < BWD_EK; ++u) {
                const int e = min(tid + u * BWD_NT, BC * D - 1), j = e / D, d = e % D;
                dk[u] = avk_bwd_sum(sdS + j, BC + 1, sQ + d, D + 1, BQ, dk[u]);
            }
AVK_PRAGMA_UNROLL
            for (int u = 0; u < BWD_EV; ++u) {
                const int e = min(tid + u * BWD_NT, BC * DV - 1), j = e / DV, d = e % DV;
                dv[u] = avk_bwd_sum(sP + j, BC + 1, sdO + d, DV + 1, BQ, dv[u]);
            }
        }
    }
    const int nk = min(BC, (int)a->seq_kv - k0);
    const float scale = a->scale_log2 / AVK_LOG2E;
    const long kr0 = avk_kv_row(a, 0, b, g, k0);
AVK_PRAGMA_UNROLL
    for (int u = 0; u < BWD_EK; ++u) {
        const int e = tid + u * BWD_NT, j = e / D, d = e % D;
        if (e < BC * D && j < nk) AVK_STORE1(dk[u] * scale, dK, (kr0 + (long)j * a->kv_ss) * D + d);
    }
AVK_PRAGMA_UNROLL
    for (int u = 0; u < BWD_EV; ++u) {
        const int e = tid + u * BWD_NT, j = e / DV, d = e % DV;
        if (e < BC * DV && j < nk) AVK_STORE1(dv[u], dV, (kr0 + (long)j * a->kv_ss) * DV + d);
    }
}

/* ===================== dQ ===================== */

/* grid (query blocks * WG, heads, batch) */
__kernel __attribute__((reqd_work_group_size(AVK_BWD_WG, 1, 1))) void
avk_bwd_dq(__global const avk_elem *Q, __global const avk_elem *K, __global const avk_elem *V,
           __global const avk_elem *dO, __global const float *LSE, __global const float *delta,
           __global const int *seq_lens, __global const float *alibi_slopes, __global const uchar *mask,
           __global avk_elem *dQ, const avk_kernel_args args)
{
    enum { QB = AVK_BWD_QB, KB = AVK_BWD_KB, D = AVK_D, DV = AVK_DV };
    __local float sQ[QB * (D + 1)], sdO[QB * (DV + 1)], sK[KB * (D + 1)], sV[KB * (DV + 1)];
    __local float sdS[QB * (KB + 1)], sL[QB], sDel[QB];
    const avk_kernel_args *a = &args;
    const int i0 = get_group_id(0) * QB, h = get_group_id(1), b = get_group_id(2), tid = get_local_id(0);
    const int i1 = min(i0 + QB, (int)a->seq_q);
    const avk_work w = avk_bwd_work(a, seq_lens, b, h);
    avk_bwd_query_tile(a, &w, Q, dO, LSE, delta, i0, i1, QB, sQ, sdO, sL, sDel);
    float dq[BWD_EQ];
AVK_PRAGMA_UNROLL
    for (int u = 0; u < BWD_EQ; ++u) dq[u] = 0.0f;
    /* the keys some row of the block sees */
    const int lo = avk_row_key_begin(a, &w, i0), hi = avk_row_key_end(a, &w, i1 - 1);
    for (int k0 = lo / KB * KB; k0 < hi; k0 += KB) {
        barrier(CLK_LOCAL_MEM_FENCE);
        avk_bwd_keys_f32(sK, K, a, b, w.g, k0, KB, D);
        avk_bwd_keys_f32(sV, V, a, b, w.g, k0, KB, DV);
        barrier(CLK_LOCAL_MEM_FENCE);
        avk_bwd_scores(a, &w, alibi_slopes, mask, sQ, sdO, sK, sV, sL, sDel, 0, sdS, i0, k0, QB, KB);
        barrier(CLK_LOCAL_MEM_FENCE);
AVK_PRAGMA_UNROLL
        for (int u = 0; u < BWD_EQ; ++u) {
            const int e = min(tid + u * BWD_NT, QB * D - 1), q = e / D, d = e % D;
            dq[u] = avk_bwd_sum(sdS + q * (KB + 1), 1, sK + d, D + 1, KB, dq[u]);
        }
    }
    const float scale = a->scale_log2 / AVK_LOG2E;
AVK_PRAGMA_UNROLL
    for (int u = 0; u < BWD_EQ; ++u) {
        const int e = tid + u * BWD_NT, q = e / D, d = e % D;
        if (e < QB * D && i0 + q < i1) AVK_STORE1(dq[u] * scale, dQ, avk_q_row(a, &w, i0 + q) + d);
    }
}
#endif
