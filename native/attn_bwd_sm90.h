/* The backward's Hopper body (AVK_BWD_MMA=2, sm_90a; included by attn_bwd.cu
 * after attn_bwd_mma.h, whose tile walk, gradient step, dQ atomics, stores and
 * deterministic dQ kernel it shares): the dK/dV kernels on warpgroup MMAs.
 *
 * A CTA owns BC keys of one (b, kv head), BC / 64 warpgroups of 64 keys each.
 * K and V stay in shared memory; each query tile's Q and dO (BQ rows) and its
 * rows' LSE and D_i arrive in two stages by cp.async from every thread, in the
 * 128-byte-swizzled layout wgmma's descriptors read: tile t+1's copies are
 * issued after the barrier that opens tile t, so one barrier a tile (two with
 * dQ) and no thread waits on a global load. Per tile, a warpgroup:
 *   - S^T = K Q^T and dP^T = V dO^T (m64nBQk16, both operands K-major in
 *     shared memory; keys are rows, so P^T and dS^T come out as A fragments);
 *   - P^T and dS^T through the contract's hook and avk_bwd_grad (as the
 *     mma.sync body: wgmma's accumulators are m16n8's per warp);
 *   - dV += P^T dO and dK += dS^T Q (A from registers, B = dO, Q read
 *     MN-major: queries are their k);
 *   - with dQ by atomics: dS^T to shared memory, then dQ's tile = dS K as
 *     64 x 64 jobs (both operands MN-major: dS^T's rows and K's rows are the
 *     keys), shared out over the warpgroups; each job's accumulators go to a
 *     shared staging block in their fragment order (conflict-free float4s)
 *     and one thread a warpgroup adds the block (AVK_BWD_DQ_WARP=1: one
 *     lane a warp its 4 KiB, no warpgroup barrier; not yet run on a GPU)
 *     to dQ's f32 sums by a bulk reduction (the TMA's): the warpgroup goes
 *     on while the copy engine and L2 do the adding (red.v4 from every
 *     thread cost s31c 1.5 of 5.0 ms, the bulk reductions s35a 0.7).
 *     Two staging buffers; the sums keep the fragment order
 *     (avk_bwd_dq_acc_at).
 * dK and dV live in registers (Dk/2 + Dv/2 per thread): Dk, Dv <= 128. */
#include "sm90_common.h"
#include "sm90_wgmma_ops.h"

#if AVK_DTYPE == 1
#define AVK_BW_TYPE f16
#else
#define AVK_BW_TYPE bf16
#endif
#define AVK_BW_PASTE_(a, b, c, d) a##b##c##d
#define AVK_BW_PASTE(a, b, c, d) AVK_BW_PASTE_(a, b, c, d)
#define avk_wg_scores AVK_BW_PASTE(avk_wgmma_ss_, AVK_BW_TYPE, _n, AVK_BWD_BQ) /* S^T, dP^T: keys x queries */
#define avk_wg_dk AVK_BW_PASTE(avk_wgmma_rs_, AVK_BW_TYPE, _n, AVK_D)         /* dK += dS^T Q */
#define avk_wg_dv AVK_BW_PASTE(avk_wgmma_rs_, AVK_BW_TYPE, _n, AVK_DV)        /* dV += P^T dO */
#define avk_wg_dq AVK_BW_PASTE(avk_wgmma_sstt_, AVK_BW_TYPE, _n, 64)          /* a 64 x 64 job of dQ = dS K */

enum {
    WG_KEYS = BC / 64, /* warpgroups */
    KQ = BQ / 16,      /* k-steps over a tile's queries (dK, dV) */
    DQ_JOBS = BQ / 64 * (D / 64),
    SK_BYTES = BC * D * 2, SV_BYTES = BC * DV * 2, SQ_BYTES = BQ * D * 2, SDO_BYTES = BQ * DV * 2,
    STAGE_BYTES = SQ_BYTES + SDO_BYTES,
    SDS_BYTES = BC * BQ * 2, /* dS^T: a row per key, BQ / 64 column blocks */
    DQ_JOB_BYTES = 64 * 64 * 4, SDQ_BYTES = 2 * DQ_JOBS * DQ_JOB_BYTES, /* dQ's staging, two buffers */
    DQ_PART = AVK_BWD_DQ_WARP ? DQ_JOB_BYTES / 4 : DQ_JOB_BYTES,          /* bytes of one bulk reduction */
};
static_assert(NT == WG_KEYS * 128 && WN == 1, "the wgmma body's CTA is BC / 64 warpgroups (wn 1)");
static_assert(D % 64 == 0 && DV % 64 == 0 && D <= 128 && DV <= 128, "the wgmma backward takes Dk, Dv of 64 or 128");
static_assert(BQ == 64 || BQ == 128, "the wgmma backward's query tiles are 64 or 128 rows");

/* A measurement knob (ATTNVK_CUDA_DEFINES=-DAVK_BWD_X=...): takes a part out, 1 the dQ phase, 2
 * its reductions, 4 the P/dS arithmetic, 8 dQ's staging stores, 16 the fence and barrier before
 * the reductions (wrong gradients: for timing only; session 31's s31c, 35's s35b). */
#ifndef AVK_BWD_X
#define AVK_BWD_X 0
#endif

/* AVK_BWD_SPLIT=1: S^T and dP^T as two wgmma groups, P^T computed while dP^T's MMAs run and dV's
 * issued before dS^T is (0, the default until it has run on a GPU: both waited for, then
 * avk_bwd_tile_grads). The softcap's derivative needs the raw score beside P, so its builds keep
 * the one wait. */
#ifndef AVK_BWD_SPLIT
#define AVK_BWD_SPLIT 0
#endif
enum { SPLIT_WAIT = AVK_BWD_SPLIT && !(AVK_SCORE_MOD & AVK_MOD_SOFTCAP) };

/* P^T of a tile into s (avk_bwd_tile_grads's first half): the scores through the contract's hook,
 * exp2 against the rows' LSE */
template <int N>
AVK_DEVICE void avk_bw_tile_probs(const avk_attn_params &p, const avk_work &w, float (&s)[N][4], const float *sL, int i0,
                                  int key_a, float sc, int quad_col)
{
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            float y[2];
            const float lse2 = sL[avk_bwd_hooked<N>(p, w, s, n, c, i0, key_a, quad_col, y)];
            s[n][c] = avk_exp2(y[0] * sc - lse2);
            s[n][2 + c] = avk_exp2(y[1] * sc - lse2);
        }
}

/* dS^T = P^T (dP^T - D) into dp (avk_bwd_grad's without a softcap) */
template <int N>
AVK_DEVICE void avk_bw_tile_ds(const float (&s)[N][4], float (&dp)[N][4], const float *sDel, int quad_col)
{
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            const float del = sDel[n * 8 + quad_col * 2 + c];
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const float prob = s[n][2 * e + c];
                dp[n][2 * e + c] = prob == 0.f ? 0.f : prob * (dp[n][2 * e + c] - del);
            }
        }
}

/* Descriptors of a swizzled tile of `rows` rows at base: K-major (the rows are M or N, k-step kk
 * 32 bytes along them) and MN-major (the rows are k: k-step kk is 16 rows; 64-column blocks
 * rows * 128 bytes apart) */
AVK_DEVICE avk_u64 avk_bw_kmajor(avk_u32 base, int rows, int kk)
{
    return avk_desc_sw128(base + (avk_u32)((kk / 4) * rows * 128 + (kk % 4) * 32), 16, 1024);
}
AVK_DEVICE avk_u64 avk_bw_mnmajor(avk_u32 base, int rows, int kk)
{
    return avk_desc_sw128(base + (avk_u32)(kk * 16 * 128), (avk_u32)(rows * 128), 1024);
}

/* The host's avk_native_bwd_smem agrees: 1 KiB of alignment slack, K, V, two stages of Q and
 * dO, dS^T and dQ's two staging buffers (DQ), two stages of LSE and D_i. */
template <bool DQ>
AVK_DEVICE void avk_bwd_dkdv_wg_body(const avk_bwd_params &a)
{
    AVK_DYNAMIC_SMEM(dkdv_wg_smem);
    const avk_attn_params &p = a.f;
    /* swizzle atoms (8 rows x 128 bytes) start on 1024-byte boundaries */
    const avk_u32 raw = avk_smem_addr(dkdv_wg_smem);
    const avk_u32 aK = (raw + 1023u) & ~1023u, aV = aK + SK_BYTES, aQ0 = aV + SV_BYTES, aS = aQ0 + 2 * STAGE_BYTES;
    const avk_u32 aDQ = aS + SDS_BYTES;
    unsigned char *sS = dkdv_wg_smem + (aS - raw), *sDQ = dkdv_wg_smem + (aDQ - raw);
    float *sL0 = (float *)(sS + (DQ ? SDS_BYTES + SDQ_BYTES : 0)), *sDel0 = sL0 + 2 * BQ;
    const int wg = threadIdx.x / 128, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const int quad_row = lane / 4, quad_col = lane % 4;
    /* who adds dQ's staged blocks: a lane a warp, or a thread a warpgroup */
    const bool dq_issuer = AVK_BWD_DQ_WARP ? lane == 0 : threadIdx.x % 128 == 0;
    const int part = AVK_BWD_DQ_WARP ? warp : 0; /* the issuer's part of a block */
    const int k0 = blockIdx.x * BC, g = blockIdx.y, b = blockIdx.z, nk = min(BC, (int)p.seq_kv - k0);
    const long long kr0 = avk_bwd_kv_row(p, b, g, k0);
    avk_bwd_rows_async<BC, D, NT, true>(aK, (const avk_elem *)p.k + kr0 * D, (long long)p.kv_ss * D, nk);
    avk_bwd_rows_async<BC, DV, NT, true>(aV, (const avk_elem *)p.v + kr0 * DV, (long long)p.kv_ss * DV, nk);
    avk_cp_async_commit();

    const int key_w = wg * 64 + warp * 16;  /* the warp's first key of the block */
    const int key_a = k0 + key_w + quad_row; /* this thread's keys: key_a, key_a + 8 */
    const avk_u32 kA = aK + (avk_u32)(wg * 64 * 128), vA = aV + (avk_u32)(wg * 64 * 128); /* the warpgroup's rows */
    const float sc = avk_score_scale(p, p.scale_log2), cap_in = avk_bwd_cap_in(p);

    float dk[D / 8][4], dv[DV / 8][4];
#pragma unroll
    for (int n = 0; n < D / 8; ++n) dk[n][0] = dk[n][1] = dk[n][2] = dk[n][3] = 0.f;
#pragma unroll
    for (int n = 0; n < DV / 8; ++n) dv[n][0] = dv[n][1] = dv[n][2] = dv[n][3] = 0.f;

    /* a tile's Q, dO and its rows' LSE (raw) and D_i into stage st, one cp.async group (rows past Nq zero) */
    auto issue = [&](int h_, int i0_, int st) {
        const avk_u32 q_at = aQ0 + st * STAGE_BYTES;
        avk_bwd_issue_rows<NT, true>(a, b, h_, i0_, q_at, q_at + SQ_BYTES);
        const int valid = min(BQ, (int)p.seq_q - i0_);
        for (int r = threadIdx.x; r < 2 * BQ; r += NT) {
            const int rr = r % BQ;
            const float *src = (const float *)(r < BQ ? p.lse : a.delta) + avk_bwd_row(p, b, h_, i0_ + min(rr, valid - 1));
            avk_cp_async4(avk_smem_addr(sL0 + (r < BQ ? 0 : 2 * BQ) + st * BQ + rr), src, rr < valid ? 4 : 0);
        }
        avk_cp_async_commit();
    };
    int h = g * (int)p.group, i0 = -BQ;
    bool have = avk_bwd_next_tile(p, b, g, k0, h, i0);
    if (have) issue(h, i0, 0);
    for (int st = 0; have; st ^= 1) {
        AVK_CP_ASYNC_WAIT(0);
        /* the LSE arrived as the forward wrote it: into the log2 domain, +inf past Nq (P = 0) */
        for (int r = threadIdx.x; r < BQ; r += NT)
            sL0[st * BQ + r] = i0 + r < (int)p.seq_q ? avk_bwd_lse2_of(sL0[st * BQ + r]) : AVK_POS_INF;
        avk_fence_proxy_async();
        /* every thread is past the last tile (its MMAs waited for): its stage and dS^T are free */
        __syncthreads();
        const int cur_h = h, cur_i0 = i0;
        have = avk_bwd_next_tile(p, b, g, k0, h, i0);
        if (have) issue(h, i0, st ^ 1); /* in flight during this tile */
        const avk_work w = avk_bwd_work(p, b, cur_h);
        const avk_u32 q_st = aQ0 + st * STAGE_BYTES, do_st = q_st + SQ_BYTES;
        const float *sL = sL0 + st * BQ, *sDel = sDel0 + st * BQ;

        /* S^T = K Q^T, dP^T = V dO^T: row quad_row + 8 (e / 2) of the warp's keys, query n * 8 + quad_col * 2 + e % 2 */
        float s[NSQ][4], dp[NSQ][4];
        avk_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KD; ++kk) avk_wg_scores(&s[0][0], avk_bw_kmajor(kA, BC, kk), avk_bw_kmajor(q_st, BQ, kk), kk > 0);
        if (SPLIT_WAIT) avk_wgmma_commit();
#pragma unroll
        for (int kk = 0; kk < KDV; ++kk)
            avk_wg_scores(&dp[0][0], avk_bw_kmajor(vA, BC, kk), avk_bw_kmajor(do_st, BQ, kk), kk > 0);
        avk_wgmma_commit();
        avk_u32 pa[KQ][4], da[KQ][4];
        if (SPLIT_WAIT) {
            avk_wgmma_wait<1>(); /* S^T's group: P^T and dV's MMAs while dP^T's run */
            avk_reg_fence<NSQ * 4>(&s[0][0]);
            if (!(AVK_BWD_X & 4)) avk_bw_tile_probs<NSQ>(p, w, s, sL, cur_i0, key_a, sc, quad_col);
#pragma unroll
            for (int kk = 0; kk < KQ; ++kk) avk_bwd_pack<NSQ>(s, kk, pa[kk]);
            avk_wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < KQ; ++kk) avk_wg_dv(&dv[0][0], pa[kk], avk_bw_mnmajor(do_st, BQ, kk), 1);
            avk_wgmma_commit();
            avk_wgmma_wait<1>(); /* dP^T's group (dV's may still run) */
            avk_reg_fence<NSQ * 4>(&dp[0][0]);
            if (!(AVK_BWD_X & 4)) avk_bw_tile_ds<NSQ>(s, dp, sDel, quad_col);
        } else {
            avk_wgmma_wait<0>();
            avk_reg_fence<NSQ * 4>(&s[0][0]);
            avk_reg_fence<NSQ * 4>(&dp[0][0]);
            if (!(AVK_BWD_X & 4)) avk_bwd_tile_grads<NSQ>(p, w, s, dp, sL, sDel, cur_i0, key_a, sc, cap_in, quad_col);
        }

        if (DQ) /* dS^T to shared, swizzled (query chunk n of key row r at n ^ (r % 8)): conflict-free */
#pragma unroll
            for (int n = 0; n < NSQ; ++n)
#pragma unroll
                for (int e2 = 0; e2 < 2; ++e2) {
                    const int r = key_w + quad_row + 8 * e2;
                    *(avk_u32 *)(sS + (n / 8) * BC * 128 + r * 128 + (((n % 8) ^ (r % 8)) << 4) + quad_col * 4) =
                        avk_bpack(dp[n][2 * e2], dp[n][2 * e2 + 1]);
                }
        /* dV += P^T dO (unless issued above), dK += dS^T Q */
#pragma unroll
        for (int kk = 0; kk < KQ; ++kk) {
            if (!SPLIT_WAIT) avk_bwd_pack<NSQ>(s, kk, pa[kk]);
            avk_bwd_pack<NSQ>(dp, kk, da[kk]);
        }
        avk_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KQ; ++kk) {
            if (!SPLIT_WAIT) avk_wg_dv(&dv[0][0], pa[kk], avk_bw_mnmajor(do_st, BQ, kk), 1);
            avk_wg_dk(&dk[0][0], da[kk], avk_bw_mnmajor(q_st, BQ, kk), 1);
        }
        avk_wgmma_commit();
        if (DQ && !(AVK_BWD_X & 1)) {
            /* staging buffer st: the issuer's reductions that read it two tiles ago are done */
            if (dq_issuer) avk_bulk_wait_read<1>();
            avk_fence_proxy_async(); /* dS^T's stores, then the async proxy's reads */
            __syncthreads();
            const long long q_tiles = ((int)p.seq_q + 63) / 64;
#pragma unroll
            for (int j = 0; j < (DQ_JOBS + WG_KEYS - 1) / WG_KEYS; ++j) {
                const int job = wg + j * WG_KEYS;
                if (DQ_JOBS % WG_KEYS && job >= DQ_JOBS) break; /* warpgroup-uniform */
                const int mq = job % (BQ / 64), nd = job / (BQ / 64);
                float dq[8][4];
                avk_wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BC / 16; ++kk)
                    avk_wg_dq(&dq[0][0], avk_bw_mnmajor(aS + (avk_u32)(mq * BC * 128), BC, kk),
                              avk_bw_mnmajor(aK + (avk_u32)(nd * BC * 128), BC, kk), kk > 0);
                avk_wgmma_commit();
                avk_wgmma_wait<0>();
                avk_reg_fence<32>(&dq[0][0]);
                /* float4 n of a thread at n * 128 + its thread (a warpgroup's block) or n * 32 + its
                 * lane in its warp's 4 KiB (a warp's): a warp's stores 512 consecutive bytes */
                float4 *stage = (float4 *)(sDQ + (st * DQ_JOBS + job) * DQ_JOB_BYTES) +
                                (AVK_BWD_DQ_WARP ? warp * 256 + lane : threadIdx.x % 128);
                if (!(AVK_BWD_X & 8))
#pragma unroll
                    for (int n = 0; n < 8; ++n)
                        stage[n * (AVK_BWD_DQ_WARP ? 32 : 128)] = make_float4(dq[n][0], dq[n][1], dq[n][2], dq[n][3]);
            }
            if (!(AVK_BWD_X & 16)) {
                avk_fence_proxy_async(); /* the staged blocks, then the bulk reductions' reads */
                if (AVK_BWD_DQ_WARP)
                    __syncwarp();
                else
                    asm volatile("bar.sync %0, 128;" ::"r"(1 + wg) : "memory");
            }
            if (dq_issuer) {
#pragma unroll
                for (int j = 0; j < (DQ_JOBS + WG_KEYS - 1) / WG_KEYS; ++j) {
                    const int job = wg + j * WG_KEYS;
                    if (DQ_JOBS % WG_KEYS && job >= DQ_JOBS) break;
                    const int mq = job % (BQ / 64), nd = job / (BQ / 64);
                    const long long block = ((long long)(b * (int)p.heads + cur_h) * q_tiles + cur_i0 / 64 + mq) * (D / 64) + nd;
                    if (!(AVK_BWD_X & 2))
                        avk_bulk_reduce_add_f32((float *)a.dq_acc + block * 4096 + part * DQ_PART / 4,
                                                aDQ + (avk_u32)((st * DQ_JOBS + job) * DQ_JOB_BYTES + part * DQ_PART), DQ_PART);
                }
                avk_bulk_commit();
            }
        }
        avk_wgmma_wait<0>();
        avk_reg_fence<D / 2>(&dk[0][0]);
        avk_reg_fence<DV / 2>(&dv[0][0]);
    }
    AVK_CP_ASYNC_WAIT(0); /* K and V, when no query tile saw these keys */
    if (DQ && dq_issuer) avk_bulk_wait<0>(); /* the reductions done before the CTA's shared memory goes */
    avk_bwd_store_dkdv<D / 8, DV / 8>(a, kr0, key_w, nk, 0, 0, dk, dv, quad_row, quad_col);
}

AVK_KERNEL void __launch_bounds__(NT, 1) avk_bwd_dkdv(const avk_bwd_params a) { avk_bwd_dkdv_wg_body<false>(a); }
AVK_KERNEL void __launch_bounds__(NT, 1) avk_bwd_dkdv_dq(const avk_bwd_params a) { avk_bwd_dkdv_wg_body<true>(a); }
