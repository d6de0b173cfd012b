/* The backward's dK/dV and dQ on mma.sync m16n8k16 (AVK_BWD_MMA=1; after
 * mma_ops.cl and flash_bwd.cl in the program), f16 storage, f32
 * accumulators: the default where inline-PTX mma.sync exists (NVIDIA cc >=
 * 8.0; test_opencl_backward passes on the H100), ATTNVK_OPENCL_BWD_MMA=emu
 * runs mma_ops.cl's emulation on any device (what CI's PoCL runs). Native attn_bwd_mma.h's
 * scheme in 48 KiB: tiles are f16 rows of D + 8 halves in local
 * memory (16-byte copies), fragments read by ldmatrix (the emulation: plain
 * loads of the same elements).
 *
 * dK/dV: a warp owns 16 keys of the work-group's AVK_BWD_BC; it computes
 * S^T = K Q^T and dP^T = V dO^T (keys x queries), turns them into P^T and
 * dS^T (avk_bwd_point: the forward's hooks), whose accumulators are
 * already A fragments of dV += P^T dO and dK += dS^T Q.
 * dQ: a warp owns 16 query rows; S = Q K^T, dP = dO V^T, dQ += dS K.
 * Every item runs the same loops (the emulation's barriers need it).
 *
 * Tiles are copied by cp.async (AVK_ASYNC=1; the emulation's AVK_ASYNC=2:
 * plain copies): a synchronous copy loop waits out one global load per 16
 * bytes in turn. With AVK_BWD_STAGES=2 the streamed side (Q and dO in
 * dK/dV, K and V in dQ) has two buffers and tile t+1 lands while tile t is
 * computed. */
#if !AVK_F16 || AVK_D % 16 || AVK_DV % 16
#error "the tensor-core backward takes f16 and head dims in whole k-steps"
#endif
#if !AVK_ASYNC
#error "the tensor-core backward copies its tiles by avk_cp16 (AVK_ASYNC 1 or 2)"
#endif
#ifndef AVK_BWD_STAGES
#define AVK_BWD_STAGES 1
#endif
#if AVK_BWD_STAGES != 1 && AVK_BWD_STAGES != 2
#error "AVK_BWD_STAGES is 1 or 2"
#endif
#define BM_RS (AVK_D + 8)   /* local row stride (halves) of Q and K */
#define BM_RSV (AVK_DV + 8) /* ... of dO and V */
#define BM_ALIGN __attribute__((aligned(16)))

#if AVK_EMULATE
#define BM_EMU_DECL , const avk_emu *e
#define BM_EMU , e
#define BM_MMA(c, a, b) avk_mma((c), (a)[0], (a)[1], (a)[2], (a)[3], (b)[0], (b)[1], e)
/* the emulation's local memory, and a pointer e to it */
#define BM_EMU_SETUP(nw)                                                                              \
    __local float emu_a[(nw) * 256], emu_b[(nw) * 128], emu_x[(nw) * 32];                            \
    avk_emu emu_state = {emu_a, emu_b, emu_x, (int)get_local_id(0) / 32, (int)get_local_id(0) % 32}; \
    const avk_emu *e = &emu_state;
#else
#define BM_EMU_DECL
#define BM_EMU
#define BM_MMA(c, a, b) avk_mma((c), (a)[0], (a)[1], (a)[2], (a)[3], (b)[0], (b)[1])
#define BM_EMU_SETUP(nw)
#endif

/* two halves of row r from column c (even) of a tile with `rs` halves a row, as one word */
AVK_INLINE uint bm_pair(__local const ushort *T, int rs, int r, int c) { return *(__local const uint *)(T + r * rs + c); }

/* rows [0, rows) of `width` halves (base + r * stride in src) into rows of width + 8; rows past valid
 * are 0. 16-byte copies, issued, not waited for (the caller commits and waits): width, base and
 * stride are multiples of 8 halves (head dims in k-steps, rows of whole heads), and the local rows
 * of width + 8 halves stay 16-byte aligned. */
AVK_INLINE void bm_rows(__local ushort *dst, __global const avk_elem *src, long base, long stride, int rows, int width,
                        int valid, int nt)
{
    __global const ushort *s = (__global const ushort *)src;
    const int w8 = width / 8;
    for (int u = get_local_id(0); u < rows * w8; u += nt) {
        const int r = u / w8, c8 = u % w8;
        avk_cp16(dst + r * (width + 8) + c8 * 8, s + base + (r < valid ? r * stride + c8 * 8 : 0), r < valid);
    }
}

#if !AVK_EMULATE
/* ldmatrix over a tile of rs halves a row: lane l names row l % 8 of 8x8 matrix l / 8 */
AVK_INLINE void bm_ldsm4(uint r[4], __local const ushort *p)
{
    AVK_ASM("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
            : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
            : "r"((uint)(size_t)p));
}
AVK_INLINE void bm_ldsm4_trans(uint r[4], __local const ushort *p)
{
    AVK_ASM("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
            : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
            : "r"((uint)(size_t)p));
}
#endif

/* keys [k0, k0 + rows) of (b, g): K and V as f16 tiles */
AVK_INLINE void bm_key_tile(const avk_kernel_args *a, __global const avk_elem *K, __global const avk_elem *V, int b,
                            int g, int k0, int rows, __local ushort *sK, __local ushort *sV)
{
    const int valid = min(rows, (int)a->seq_kv - k0);
    const long kr0 = avk_kv_row(a, 0, b, g, k0);
    bm_rows(sK, K, kr0 * AVK_D, (long)a->kv_ss * AVK_D, rows, AVK_D, valid, AVK_BWD_WG);
    bm_rows(sV, V, kr0 * AVK_DV, (long)a->kv_ss * AVK_DV, rows, AVK_DV, valid, AVK_BWD_WG);
}

/* rows [i0, i1) of (b, h): Q and dO as f16 tiles of `rows` rows, their LSE (log2) and D_i */
AVK_INLINE void bm_query_tile(const avk_kernel_args *a, const avk_work *w, __global const avk_elem *Q,
                              __global const avk_elem *dO, __global const float *LSE, __global const float *delta,
                              int i0, int i1, int rows, __local ushort *sQ, __local ushort *sdO, __local float *sL,
                              __local float *sDel)
{
    bm_rows(sQ, Q, avk_q_row(a, w, i0), a->q_ss, rows, AVK_D, i1 - i0, AVK_BWD_WG);
    bm_rows(sdO, dO, avk_o_row(a, w, i0), (long)a->q_ss / AVK_D * AVK_DV, rows, AVK_DV, i1 - i0, AVK_BWD_WG);
    avk_bwd_row_stats(a, w, LSE, delta, i0, i1, rows, sL, sDel);
}

/* the dK/dV walk: the query tile (h, i0) after t, of key block k0's kv group, that sees one of the
 * block's keys; h at the group's end when none is left. The same for every item. */
typedef struct {
    int h, i0;
} bm_qtile;
AVK_INLINE bm_qtile bm_next_qtile(const avk_kernel_args *a, __global const int *seq_lens, int b, int g_kv, int k0,
                                  bm_qtile t)
{
    const int h_end = (g_kv + 1) * (int)a->group;
    for (;;) {
        t.i0 += AVK_BWD_BQ;
        if (t.i0 >= (int)a->seq_q) t.h++, t.i0 = 0;
        if (t.h >= h_end) return t;
        const avk_work w = avk_bwd_work(a, seq_lens, b, t.h);
        if (!avk_bwd_disjoint(a, &w, t.i0, min(t.i0 + AVK_BWD_BQ, (int)a->seq_q), k0, k0 + AVK_BWD_BC)) return t;
    }
}

/* tile t's Q and dO copies issued, its LSE and D_i stored */
AVK_INLINE void bm_walk_tile(const avk_kernel_args *a, __global const int *seq_lens, __global const avk_elem *Q,
                             __global const avk_elem *dO, __global const float *LSE, __global const float *delta, int b,
                             bm_qtile t, __local ushort *sQ, __local ushort *sdO, __local float *sL, __local float *sDel)
{
    const avk_work w = avk_bwd_work(a, seq_lens, b, t.h);
    bm_query_tile(a, &w, Q, dO, LSE, delta, t.i0, min(t.i0 + AVK_BWD_BQ, (int)a->seq_q), AVK_BWD_BQ, sQ, sdO, sL, sDel);
}

/* c[n] = A B^T over ks k-steps: A's 16 rows from r0 of tile A, B's rows (k
 * along them) 8n.. from b0 of tile B; c is zeroed first */
AVK_INLINE void bm_gemm_nt(float c[][4], int n_tiles, __local const ushort *A, int r0, __local const ushort *B, int b0,
                           int rs, int ks, int g, int t BM_EMU_DECL)
{
AVK_PRAGMA_UNROLL
    for (int n = 0; n < n_tiles; ++n) c[n][0] = c[n][1] = c[n][2] = c[n][3] = 0.0f;
AVK_PRAGMA_UNROLL
    for (int kk = 0; kk < ks; ++kk) {
#if AVK_EMULATE
        const int k = kk * 16 + 2 * t;
        const uint a[4] = {bm_pair(A, rs, r0 + g, k), bm_pair(A, rs, r0 + g + 8, k), bm_pair(A, rs, r0 + g, k + 8),
                           bm_pair(A, rs, r0 + g + 8, k + 8)};
AVK_PRAGMA_UNROLL
        for (int n = 0; n < n_tiles; ++n) {
            const uint b[2] = {bm_pair(B, rs, b0 + n * 8 + g, k), bm_pair(B, rs, b0 + n * 8 + g, k + 8)};
            BM_MMA(c[n], a, b);
        }
#else
        /* A: matrices (rows 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15) = a0..a3; B: n-tiles
         * n and n+1 at k 0-7 and 8-15 = {b0 b1} of each */
        const int lane = 4 * g + t, m = lane >> 3, i = lane & 7;
        uint a[4];
        bm_ldsm4(a, A + (r0 + (m & 1) * 8 + i) * rs + kk * 16 + (m >> 1) * 8);
AVK_PRAGMA_UNROLL
        for (int n = 0; n < n_tiles; n += 2) {
            uint b[4];
            bm_ldsm4(b, B + (b0 + (n + (m >> 1)) * 8 + i) * rs + kk * 16 + (m & 1) * 8);
            BM_MMA(c[n], a, b);
            if (n + 1 < n_tiles) BM_MMA(c[n + 1], a, b + 2);
        }
#endif
    }
}

/* c[n] += S B: S's accumulators (16 x 8 per n-tile, ks k-steps of 16) as A
 * fragments, B's rows (k along the rows) from 0, columns 8n.. */
AVK_INLINE void bm_gemm_acc(float c[][4], int n_tiles, float s[][4], int ks, __local const ushort *B, int rs, int g,
                            int t BM_EMU_DECL)
{
AVK_PRAGMA_UNROLL
    for (int kk = 0; kk < ks; ++kk) {
        const uint a[4] = {avk_pack_f16x2(s[2 * kk][0], s[2 * kk][1]), avk_pack_f16x2(s[2 * kk][2], s[2 * kk][3]),
                           avk_pack_f16x2(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                           avk_pack_f16x2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#if AVK_EMULATE
        const int k = kk * 16 + 2 * t;
AVK_PRAGMA_UNROLL
        for (int n = 0; n < n_tiles; ++n) {
            const int col = n * 8 + g;
            const uint b[2] = {(uint)B[k * rs + col] | ((uint)B[(k + 1) * rs + col] << 16),
                               (uint)B[(k + 8) * rs + col] | ((uint)B[(k + 9) * rs + col] << 16)};
            BM_MMA(c[n], a, b);
        }
#else
        /* B transposed on the way: matrices (k 0-7, n-tile n), (k 8-15, n), (0-7, n+1), (8-15, n+1) */
        const int lane = 4 * g + t, m = lane >> 3, i = lane & 7;
AVK_PRAGMA_UNROLL
        for (int n = 0; n < n_tiles; n += 2) {
            uint b[4];
            bm_ldsm4_trans(b, B + (kk * 16 + (m & 1) * 8 + i) * rs + (n + (m >> 1)) * 8);
            BM_MMA(c[n], a, b);
            if (n + 1 < n_tiles) BM_MMA(c[n + 1], a, b + 2);
        }
#endif
    }
}

/* grid (key blocks * WG, kv heads, batch); AVK_BWD_WG = AVK_BWD_BC / 16 warps */
__kernel __attribute__((reqd_work_group_size(AVK_BWD_WG, 1, 1))) void
avk_bwd_dkdv(__global const avk_elem *Q, __global const avk_elem *K, __global const avk_elem *V,
             __global const avk_elem *dO, __global const float *LSE, __global const float *delta,
             __global const int *seq_lens, __global const float *alibi_slopes, __global const uchar *mask,
             __global avk_elem *dK, __global avk_elem *dV, const avk_kernel_args args)
{
    enum { BC = AVK_BWD_BC, BQ = AVK_BWD_BQ, NW = AVK_BWD_BC / 16, NS = AVK_BWD_BQ / 8, ST = AVK_BWD_STAGES };
    /* 16-byte aligned: fragments are read as words (bm_pair); a ushort array may sit at any even address */
    __local ushort sK[BC * BM_RS] BM_ALIGN, sV[BC * BM_RSV] BM_ALIGN;
    __local ushort sQ[ST][BQ * BM_RS] BM_ALIGN, sdO[ST][BQ * BM_RSV] BM_ALIGN;
    __local float sL[ST][BQ], sDel[ST][BQ];
    BM_EMU_SETUP(NW)
    const avk_kernel_args *a = &args;
    const int k0 = get_group_id(0) * BC, g_kv = get_group_id(1), b = get_group_id(2), tid = get_local_id(0);
    const int warp = tid / 32, lane = tid % 32, g = lane >> 2, t = lane & 3;
    const int h_end = (g_kv + 1) * (int)a->group;
    bm_key_tile(a, K, V, b, g_kv, k0, BC, sK, sV);
    bm_qtile cur = bm_next_qtile(a, seq_lens, b, g_kv, k0, (bm_qtile){g_kv * (int)a->group, -BQ});
#if AVK_BWD_STAGES == 2
    if (cur.h < h_end) bm_walk_tile(a, seq_lens, Q, dO, LSE, delta, b, cur, sQ[0], sdO[0], sL[0], sDel[0]);
#endif
    avk_cp_commit();
    float dk[AVK_D / 8][4], dv[AVK_DV / 8][4], st[NS][4], dpt[NS][4];
AVK_PRAGMA_UNROLL
    for (int n = 0; n < AVK_D / 8; ++n) dk[n][0] = dk[n][1] = dk[n][2] = dk[n][3] = 0.0f;
AVK_PRAGMA_UNROLL
    for (int n = 0; n < AVK_DV / 8; ++n) dv[n][0] = dv[n][1] = dv[n][2] = dv[n][3] = 0.0f;
    for (int step = 0; cur.h < h_end; ++step) {
        const bm_qtile next = bm_next_qtile(a, seq_lens, b, g_kv, k0, cur);
        const int buf = step % ST;
        barrier(CLK_LOCAL_MEM_FENCE); /* the buffer filled next is consumed (the previous tile's) */
#if AVK_BWD_STAGES == 2
        if (next.h < h_end) {
            bm_walk_tile(a, seq_lens, Q, dO, LSE, delta, b, next, sQ[buf ^ 1], sdO[buf ^ 1], sL[buf ^ 1], sDel[buf ^ 1]);
            avk_cp_commit();
            avk_cp_wait_all_but_one();
        } else {
            avk_cp_wait_all();
        }
#else
        bm_walk_tile(a, seq_lens, Q, dO, LSE, delta, b, cur, sQ[0], sdO[0], sL[0], sDel[0]);
        avk_cp_commit();
        avk_cp_wait_all();
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        const avk_work w = avk_bwd_work(a, seq_lens, b, cur.h);
        const float slope = avk_bwd_slope(a, alibi_slopes, cur.h);
        const int i0 = cur.i0, i1 = min(i0 + BQ, (int)a->seq_q);
        __local const ushort *tQ = sQ[buf], *tdO = sdO[buf];
        __local const float *tL = sL[buf], *tDel = sDel[buf];
        bm_gemm_nt(st, NS, sK, warp * 16, tQ, 0, BM_RS, AVK_D / 16, g, t BM_EMU);
        bm_gemm_nt(dpt, NS, sV, warp * 16, tdO, 0, BM_RSV, AVK_DV / 16, g, t BM_EMU);
AVK_PRAGMA_UNROLL
        for (int n = 0; n < NS; ++n)
AVK_PRAGMA_UNROLL
            for (int r = 0; r < 4; ++r) {
                const int key = k0 + warp * 16 + g + (r >> 1) * 8, q = n * 8 + 2 * t + (r & 1);
                float prob, ds;
                avk_bwd_point(a, &w, slope, mask, st[n][r], dpt[n][r], min(i0 + q, i1 - 1), key, tL[q], tDel[q], &prob,
                              &ds);
                st[n][r] = prob, dpt[n][r] = ds;
            }
        bm_gemm_acc(dv, AVK_DV / 8, st, BQ / 16, tdO, BM_RSV, g, t BM_EMU);
        bm_gemm_acc(dk, AVK_D / 8, dpt, BQ / 16, tQ, BM_RS, g, t BM_EMU);
        cur = next;
    }
    avk_cp_wait_all(); /* a block no tile sees: its K/V copies */
    const int nk = min(BC, (int)a->seq_kv - k0);
    const long kr0 = avk_kv_row(a, 0, b, g_kv, k0);
    const float scale = a->scale_log2 / AVK_LOG2E;
AVK_PRAGMA_UNROLL
    for (int r = 0; r < 4; ++r) {
        const int j = warp * 16 + g + (r >> 1) * 8;
        if (j >= nk) continue;
        const long row = kr0 + (long)j * a->kv_ss;
AVK_PRAGMA_UNROLL
        for (int n = 0; n < AVK_D / 8; ++n) AVK_STORE1(dk[n][r] * scale, dK, row * AVK_D + n * 8 + 2 * t + (r & 1));
AVK_PRAGMA_UNROLL
        for (int n = 0; n < AVK_DV / 8; ++n) AVK_STORE1(dv[n][r], dV, row * AVK_DV + n * 8 + 2 * t + (r & 1));
    }
}

/* grid (query blocks * WG, heads, batch); AVK_BWD_WG = AVK_BWD_QB / 16 warps */
__kernel __attribute__((reqd_work_group_size(AVK_BWD_WG, 1, 1))) void
avk_bwd_dq(__global const avk_elem *Q, __global const avk_elem *K, __global const avk_elem *V,
           __global const avk_elem *dO, __global const float *LSE, __global const float *delta,
           __global const int *seq_lens, __global const float *alibi_slopes, __global const uchar *mask,
           __global avk_elem *dQ, const avk_kernel_args args)
{
    enum { QB = AVK_BWD_QB, KB = AVK_BWD_KB, NW = AVK_BWD_QB / 16, NS = AVK_BWD_KB / 8, ST = AVK_BWD_STAGES };
    __local ushort sQ[QB * BM_RS] BM_ALIGN, sdO[QB * BM_RSV] BM_ALIGN;
    __local ushort sK[ST][KB * BM_RS] BM_ALIGN, sV[ST][KB * BM_RSV] BM_ALIGN;
    __local float sL[QB], sDel[QB];
    BM_EMU_SETUP(NW)
    const avk_kernel_args *a = &args;
    const int i0 = get_group_id(0) * QB, h = get_group_id(1), b = get_group_id(2), tid = get_local_id(0);
    const int warp = tid / 32, lane = tid % 32, g = lane >> 2, t = lane & 3;
    const int i1 = min(i0 + QB, (int)a->seq_q);
    const avk_work w = avk_bwd_work(a, seq_lens, b, h);
    const float slope = avk_bwd_slope(a, alibi_slopes, h);
    bm_query_tile(a, &w, Q, dO, LSE, delta, i0, i1, QB, sQ, sdO, sL, sDel);
    /* the keys some row of the block sees, in tiles of KB */
    const int lo = avk_row_key_begin(a, &w, i0) / KB * KB, hi = avk_row_key_end(a, &w, i1 - 1);
#if AVK_BWD_STAGES == 2
    if (lo < hi) bm_key_tile(a, K, V, b, w.g, lo, KB, sK[0], sV[0]);
#endif
    avk_cp_commit();
    float dq[AVK_D / 8][4], s[NS][4], dp[NS][4];
AVK_PRAGMA_UNROLL
    for (int n = 0; n < AVK_D / 8; ++n) dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.0f;
    for (int k0 = lo, step = 0; k0 < hi; k0 += KB, ++step) {
        const int buf = step % ST;
        barrier(CLK_LOCAL_MEM_FENCE); /* the buffer filled next is consumed (the previous tile's) */
#if AVK_BWD_STAGES == 2
        if (k0 + KB < hi) {
            bm_key_tile(a, K, V, b, w.g, k0 + KB, KB, sK[buf ^ 1], sV[buf ^ 1]);
            avk_cp_commit();
            avk_cp_wait_all_but_one();
        } else {
            avk_cp_wait_all();
        }
#else
        bm_key_tile(a, K, V, b, w.g, k0, KB, sK[0], sV[0]);
        avk_cp_commit();
        avk_cp_wait_all();
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        __local const ushort *tK = sK[buf], *tV = sV[buf];
        bm_gemm_nt(s, NS, sQ, warp * 16, tK, 0, BM_RS, AVK_D / 16, g, t BM_EMU);
        bm_gemm_nt(dp, NS, sdO, warp * 16, tV, 0, BM_RSV, AVK_DV / 16, g, t BM_EMU);
AVK_PRAGMA_UNROLL
        for (int n = 0; n < NS; ++n)
AVK_PRAGMA_UNROLL
            for (int r = 0; r < 4; ++r) {
                const int q = warp * 16 + g + (r >> 1) * 8, key = k0 + n * 8 + 2 * t + (r & 1);
                float prob, ds;
                avk_bwd_point(a, &w, slope, mask, s[n][r], dp[n][r], min(i0 + q, i1 - 1), key, sL[q], sDel[q], &prob,
                              &ds);
                s[n][r] = ds;
            }
        bm_gemm_acc(dq, AVK_D / 8, s, KB / 16, tK, BM_RS, g, t BM_EMU);
    }
    avk_cp_wait_all(); /* a block that sees no key: its Q/dO copies */
    const float scale = a->scale_log2 / AVK_LOG2E;
AVK_PRAGMA_UNROLL
    for (int r = 0; r < 4; ++r) {
        const int q = warp * 16 + g + (r >> 1) * 8;
        if (i0 + q >= i1) continue;
        const long row = avk_q_row(a, &w, i0 + q);
AVK_PRAGMA_UNROLL
        for (int n = 0; n < AVK_D / 8; ++n) AVK_STORE1(dq[n][r] * scale, dQ, row + n * 8 + 2 * t + (r & 1));
    }
}
