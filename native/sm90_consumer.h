/* The Hopper forward's (attn_sm90.h's) consumer warpgroup math: S = Q K^T and O += P V as
 * wgmma issues, P's A fragments, an f16 mask stage added to S (AVK_MASK_TMA) and the online
 * softmax whose O rescale the overlap defers (AVK_WG_OVERLAP). Included by attn_sm90.h after its
 * tile constants. */
#ifndef ATTNVK_SM90_CONSUMER_H
#define ATTNVK_SM90_CONSUMER_H
/* S = Q K^T for a warpgroup: both K-major, a k-step is 32 bytes along a swizzled row; issued and committed */
AVK_DEVICE void avk_issue_qk(float (&s)[1][NS][4], avk_u32 q_wg, avk_u32 k_tile)
{
    avk_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < KD; ++kk) {
        const avk_u32 col = (avk_u32)((kk % 4) * 32);
        avk_wgmma_qk(&s[0][0][0], avk_desc_sw128(q_wg + (avk_u32)((kk / 4) * BR * 128) + col, 16, 1024),
                     avk_desc_sw128(k_tile + (avk_u32)((kk / 4) * BC * 128) + col, 16, 1024), kk > 0);
    }
    avk_wgmma_commit();
}

/* P (f32, the accumulator layout) as k-steps of the A fragment */
AVK_DEVICE void avk_pack_p_tile(const float (&s)[1][NS][4], avk_u32 (&pa)[KS][1][4])
{
#pragma unroll
    for (int kk = 0; kk < KS; ++kk)
#if AVK_FP8
        avk_pack_p_e4m3<NS>(s, kk, pa[kk][0]);
#else
        avk_pack_p<1, NS>(s, kk, pa[kk]);
#endif
}

/* O += P V, issued and committed. 16-bit: V is MN-major (keys x Dv, Dv contiguous), column
 * blocks of 64 BC*128 bytes apart, 8-key groups 1024. fp8: Vt's tile is K-major like K's,
 * Dv rows of BC keys, 32 bytes a k-step. */
AVK_DEVICE void avk_issue_pv(float (&acc)[1][ND][4], const avk_u32 (&pa)[KS][1][4], avk_u32 v_tile)
{
    avk_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < KS; ++kk)
#pragma unroll
        for (int j = 0; j < DV / AVK_WG_PV_N; ++j) /* N = Dv, or 64-column blocks */
            avk_wgmma_pv(&acc[0][j * AVK_WG_PV_N / 8][0], pa[kk][0],
#if AVK_FP8
                         avk_desc_sw128(v_tile + (avk_u32)((kk / 4) * DV * 128 + (kk % 4) * 32 + j * AVK_WG_PV_N * 128), 16, 1024),
#else
                         avk_desc_sw128(v_tile + (avk_u32)(kk * 16 * 128 + j * (AVK_WG_PV_N / 64) * BC * 128), BC * 128, 1024),
#endif
                         1);
    avk_wgmma_commit();
}

#if AVK_MASK_TMA
/* A warp's 16 rows (row0 within the CTA's tile) of a mask stage added to its S in the score
 * hook's units: ldmatrix.x4 hands each thread the f16 pairs of its accumulator elements, four
 * 8x8 blocks at a time (n-tiles n, n + 1, rows 0-7 and 8-15); a box's 128-byte rows hold their
 * 16-byte chunks swizzled (chunk c of row r at c ^ r % 8), so the 8 rows a block reads meet
 * distinct banks. */
AVK_DEVICE void avk_add_mask_tile(float (&s)[1][NS][4], avk_u32 stage, int row0, int lane, float unit)
{
    const int q = lane / 8, r = row0 + (q % 2) * 8 + lane % 8; /* the row this lane addresses for block q */
#pragma unroll
    for (int n = 0; n < NS; n += 2) {
        const int c8 = n + q / 2; /* its 8-key chunk */
        const avk_u32 at = stage + (avk_u32)((c8 / 8) * BR * 128 + r * 128 + (((c8 % 8) ^ (r % 8)) * 16));
        avk_u32 m[4];
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(m[0]), "=r"(m[1]), "=r"(m[2]), "=r"(m[3])
                     : "r"(at)
                     : "memory");
#pragma unroll
        for (int b = 0; b < 4; ++b) { /* block b: n-tile n + b / 2, rows (b % 2) * 8 .. */
            float &lo = s[0][n + b / 2][(b % 2) * 2], &hi = s[0][n + b / 2][(b % 2) * 2 + 1];
            lo = fmaf(avk_f16_to_f32((avk_u16)(m[b] & 0xffffu)), unit, lo);
            hi = fmaf(avk_f16_to_f32((avk_u16)(m[b] >> 16)), unit, hi);
        }
    }
}
#endif

#if AVK_WG_OVERLAP
/* The online softmax with O's rescale left to the caller (O is in flight in P V's MMAs
 * meanwhile): S becomes P, the running max and sums move, and alpha holds the factor O
 * takes once it has landed; false when no row's max moved (alpha all 1). exp2 on the FMA pipe
 * for a share of the scores lost on the H100 (session 41: 532 -> 486 TFLOP/s at D=128 8k causal,
 * softcap 451 -> 436, fp8 785 -> 727): the warpgroups are bound by issue, not by MUFU. */
AVK_DEVICE bool avk_softmax_deferred(float (&s)[1][NS][4], float (&row_max)[1][2], float (&row_sum)[1][2],
                                     float scale_log2, float (&alpha)[2])
{
    float tile_max[2];
    bool grow = false;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        float mx = AVK_NEG_INF;
#pragma unroll
        for (int n = 0; n < NS; ++n) mx = avk_max(mx, avk_max(s[0][n][2 * half], s[0][n][2 * half + 1]));
        mx = avk_max(mx, avk_shfl_xor(mx, 1));
        mx = avk_max(mx, avk_shfl_xor(mx, 2));
        tile_max[half] = mx * scale_log2;
        grow |= tile_max[half] > row_max[0][half] + AVK_RESCALE_SLACK;
        alpha[half] = 1.f;
    }
    grow = avk_any(grow);
    if (grow)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const float m_new = avk_max(row_max[0][half], tile_max[half]);
            alpha[half] = m_new == AVK_NEG_INF ? 1.f : avk_exp2(row_max[0][half] - m_new);
            row_max[0][half] = m_new;
            row_sum[0][half] *= alpha[half];
        }
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const float m_use = row_max[0][half] == AVK_NEG_INF ? 0.f : row_max[0][half];
        float sum = 0.f;
#pragma unroll
        for (int n = 0; n < NS; ++n)
#pragma unroll
            for (int e = 2 * half; e < 2 * half + 2; ++e) {
                const float pe = avk_exp2(s[0][n][e] * scale_log2 - m_use);
                s[0][n][e] = pe;
                sum += pe;
            }
        row_sum[0][half] += sum;
    }
    return grow;
}
#endif

#endif
