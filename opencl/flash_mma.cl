/* FlashAttention-2 forward on NVIDIA tensor cores from OpenCL: mma.sync
 * m16n8k16 (f16 inputs, f32 accumulate) through inline PTX (mma_ops.cl).
 * NVIDIA's driver has no cl_khr_fp16, so f16 data travels as ushort and
 * f32 -> f16x2 packing is cvt.rn.f16x2.f32. Each warp owns 16 query rows;
 * the work-group (AVK_NW warps) shares BC-key K/V tiles in local memory. Q
 * fragments stay in registers, S = Q K^T and O += P V come straight from
 * mma accumulators (the S accumulator layout is P's A-fragment layout), and
 * softmax row statistics are reduced over the 4 lanes that share a row.
 *
 * Two ways to feed the B fragments:
 *  - AVK_ASYNC=0: plain loads. The k order inside a step is free as long as
 *    A and B agree, so slot 2t+e holds column 4t+e and slot 2t+8+e column
 *    4t+2+e: each lane reads its four halves as one 8-byte word pair. V is
 *    stored transposed, keys permuted the same way.
 *  - AVK_ASYNC>0: K and V rows arrive by cp.async (K for the next tile
 *    while softmax and P V run, V while the next S runs) and fragments come
 *    from ldmatrix (.trans for V); natural k order. */
#if AVK_ASYNC
/* natural order: columns 2t, 2t+1 and 2t+8, 2t+9 of step ks */
#define AVK_QCOL(ks, t, half) ((ks) * 16 + 2 * (t) + 8 * (half))
#else
#define AVK_PAD_WORDS(w) ((w) + (24 - (w) % 16) % 16)
/* Row strides of the K tile and the transposed V tile in 32-bit words,
 * padded to 8 mod 16: the 8-byte fragment reads of a half-warp (4 rows x
 * 4 lanes) then cover all 32 banks once. */
#define AVK_KW AVK_PAD_WORDS(AVK_D / 2)
#define AVK_VW AVK_PAD_WORDS(AVK_BC / 2)
#endif

__kernel __attribute__((reqd_work_group_size(AVK_WG, 1, 1)))
void avk_flash_mma(AVK_FLASH_KERNEL_ARGS(ushort))
{
    const int tid = get_local_id(0);
    const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int bh = get_group_id(1);
    const int b = bh / H, h = bh - b * H, kvh = h / group;
    const int split = get_group_id(2);
    const int row0 = q_begin + (int)get_group_id(0) * AVK_BR;
    const int q_end = q_begin + q_count;
    const int causal_off = Nk - Nq;
    const int row_a = row0 + warp * 16 + g, row_b = row_a + 8;

    __global const ushort *Qb = Q + b * q_batch_stride + h * q_head_stride;
    __global const ushort *Kb = K + b * kv_batch_stride + kvh * kv_head_stride;
    __global const ushort *Vb = V + b * kv_batch_stride + kvh * kv_head_stride;

#if AVK_ASYNC
    __local uint4 Kbuf[AVK_BC * AVK_KROW / 8], Vbuf[AVK_BC * AVK_KROW / 8]; /* [key][D + 8 halves] */
    __local const ushort *Ks = (__local const ushort *)Kbuf;
    __local const ushort *Vs = (__local const ushort *)Vbuf;
#else
    /* declared as uint4 for the 16-byte alignment of the tile stores (a
     * plain uint array may start at any 4-byte offset: misaligned on NVIDIA) */
    __local uint4 Kbuf[AVK_BC * AVK_KW / 4], Vbuf[AVK_D * AVK_VW / 4];
    __local uint *Ks = (__local uint *)Kbuf; /* [key][D/2 words + pad] */
    __local uint *Vt = (__local uint *)Vbuf; /* [d][permuted key pairs + pad] */
#endif
#if AVK_EMULATE
    __local float emu_a[AVK_NW * 256], emu_b[AVK_NW * 128], emu_x[AVK_WG];
    const avk_emu emu = {emu_a, emu_b, emu_x, warp, lane};
#endif

    /* Q fragments of rows g (qa) and g+8 (qb): .x = slots 2t.., .y = slots 2t+8.. */
    uint2 qa[AVK_KS], qb[AVK_KS];
AVK_PRAGMA_UNROLL
    for (int ks = 0; ks < AVK_KS; ++ks) {
#if AVK_ASYNC
        __global const ushort *pa = Qb + row_a * q_row_stride, *pb = Qb + row_b * q_row_stride;
        qa[ks] = row_a < q_end ? (uint2)(*(__global const uint *)(pa + AVK_QCOL(ks, t, 0)),
                                         *(__global const uint *)(pa + AVK_QCOL(ks, t, 1)))
                               : (uint2)(0u);
        qb[ks] = row_b < q_end ? (uint2)(*(__global const uint *)(pb + AVK_QCOL(ks, t, 0)),
                                         *(__global const uint *)(pb + AVK_QCOL(ks, t, 1)))
                               : (uint2)(0u);
#else
        qa[ks] = row_a < q_end ? *(__global const uint2 *)(Qb + row_a * q_row_stride + ks * 16 + 4 * t) : (uint2)(0u);
        qb[ks] = row_b < q_end ? *(__global const uint2 *)(Qb + row_b * q_row_stride + ks * 16 + 4 * t) : (uint2)(0u);
#endif
    }

    float oacc[AVK_DT][4];
AVK_PRAGMA_UNROLL
    for (int dt = 0; dt < AVK_DT; ++dt) oacc[dt][0] = oacc[dt][1] = oacc[dt][2] = oacc[dt][3] = 0.0f;
    float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.0f, l_b = 0.0f;

    const int last_row = min(row0 + AVK_BR, q_end) - 1;
    const int k_end = causal ? min(nk_loop, last_row + causal_off + 1) : nk_loop;
    const int tiles = k_end > 0 ? (k_end + AVK_BC - 1) / AVK_BC : 0;
    const int per_split = (tiles + n_split - 1) / n_split;
    const int t_begin = split * per_split;
    const int t_end = min(tiles, t_begin + per_split);

#if AVK_ASYNC
    if (t_begin < t_end) {
        avk_issue_rows(Kbuf, Kb, t_begin * AVK_BC, Nk, kv_row_stride, tid);
        avk_issue_rows(Vbuf, Vb, t_begin * AVK_BC, Nk, kv_row_stride, tid);
    }
#endif
    for (int tile = t_begin; tile < t_end; ++tile) {
        const int kt = tile * AVK_BC;
#if AVK_ASYNC
        avk_cp_wait_all_but_one(); /* K(tile) has landed; V(tile) may be in flight */
        barrier(CLK_LOCAL_MEM_FENCE);
#else
        barrier(CLK_LOCAL_MEM_FENCE);
        /* K tile, 16-byte chunks, consecutive lanes along a row */
        for (int u = tid; u < AVK_BC * (AVK_D / 8); u += AVK_WG) {
            const int kr = u / (AVK_D / 8), c8 = u - kr * (AVK_D / 8);
            const int key = kt + kr;
            const uint4 w = key < Nk ? *(__global const uint4 *)(Kb + key * kv_row_stride + c8 * 8) : (uint4)(0u);
            *(__local uint4 *)(Ks + kr * AVK_KW + c8 * 4) = w;
        }
        /* V tile transposed: a lane takes a key pair and 8 columns, and writes
         * one word (both keys) per column at the pair's permuted position */
        for (int u = tid; u < (AVK_BC / 2) * (AVK_D / 8); u += AVK_WG) {
            const int kp = u % (AVK_BC / 2), c8 = u / (AVK_BC / 2);
            const int kl = 2 * kp, key = kt + kl;
            const uint4 v0 = key < Nk ? *(__global const uint4 *)(Vb + key * kv_row_stride + c8 * 8) : (uint4)(0u);
            const uint4 v1 = key + 1 < Nk ? *(__global const uint4 *)(Vb + (key + 1) * kv_row_stride + c8 * 8)
                                          : (uint4)(0u);
            const int word = (kl >> 4) * 8 + ((kl & 7) >> 1) * 2 + ((kl >> 3) & 1);
            __local uint *dst = Vt + (c8 * 8) * AVK_VW + word;
            dst[0 * AVK_VW] = (v0.x & 0xffffu) | (v1.x << 16);
            dst[1 * AVK_VW] = (v0.x >> 16) | (v1.x & 0xffff0000u);
            dst[2 * AVK_VW] = (v0.y & 0xffffu) | (v1.y << 16);
            dst[3 * AVK_VW] = (v0.y >> 16) | (v1.y & 0xffff0000u);
            dst[4 * AVK_VW] = (v0.z & 0xffffu) | (v1.z << 16);
            dst[5 * AVK_VW] = (v0.z >> 16) | (v1.z & 0xffff0000u);
            dst[6 * AVK_VW] = (v0.w & 0xffffu) | (v1.w << 16);
            dst[7 * AVK_VW] = (v0.w >> 16) | (v1.w & 0xffff0000u);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* constant offsets from per-lane bases keep addresses out of registers */
        __local const uint *k_lane = Ks + g * AVK_KW + 2 * t;
        __local const uint *v_lane = Vt + g * AVK_VW + 2 * t;
#endif

        /* S = Q K^T: n-tile nt covers keys kt + 8nt .. +7 */
        float s[AVK_NT][4];
AVK_PRAGMA_UNROLL
        for (int nt = 0; nt < AVK_NT; ++nt) {
            s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#if AVK_ASYNC
AVK_PRAGMA_UNROLL
            for (int ks = 0; ks + 1 < AVK_KS; ks += 2) {
                uint kb[4];
                avk_ldsm_k(kb, Ks, nt, ks, lane);
                avk_mma(s[nt], qa[ks].x, qb[ks].x, qa[ks].y, qb[ks].y, kb[0], kb[1] AVK_EMU_ARG);
                avk_mma(s[nt], qa[ks + 1].x, qb[ks + 1].x, qa[ks + 1].y, qb[ks + 1].y, kb[2], kb[3] AVK_EMU_ARG);
            }
            if (AVK_KS % 2) {
                uint kb[2];
                avk_ldsm_k1(kb, Ks, nt, AVK_KS - 1, lane);
                avk_mma(s[nt], qa[AVK_KS - 1].x, qb[AVK_KS - 1].x, qa[AVK_KS - 1].y, qb[AVK_KS - 1].y, kb[0], kb[1]
                        AVK_EMU_ARG);
            }
#else
AVK_PRAGMA_UNROLL
            for (int ks = 0; ks < AVK_KS; ++ks) {
                const uint2 kb = *(__local const uint2 *)(k_lane + nt * 8 * AVK_KW + ks * 8);
                avk_mma(s[nt], qa[ks].x, qb[ks].x, qa[ks].y, qb[ks].y, kb.x, kb.y AVK_EMU_ARG);
            }
#endif
        }
#if AVK_ASYNC
        barrier(CLK_LOCAL_MEM_FENCE); /* every warp is done with K(tile) */
        if (tile + 1 < t_end) avk_issue_rows(Kbuf, Kb, kt + AVK_BC, Nk, kv_row_stride, tid);
#endif

        /* scale into the log2 domain, mask edges and the causal diagonal */
        const int tile_full = kt + AVK_BC <= nk_loop && (!causal || kt + AVK_BC - 1 <= row0 + causal_off);
        const int lim_a = causal ? min(nk_loop, row_a + causal_off + 1) : nk_loop;
        const int lim_b = causal ? min(nk_loop, row_b + causal_off + 1) : nk_loop;
        float mx_a = m_a, mx_b = m_b;
AVK_PRAGMA_UNROLL
        for (int nt = 0; nt < AVK_NT; ++nt) {
AVK_PRAGMA_UNROLL
            for (int r = 0; r < 4; ++r) {
                s[nt][r] *= scale_log2;
                if (!tile_full) {
                    const int key = kt + nt * 8 + 2 * t + (r & 1);
                    if (key >= (r < 2 ? lim_a : lim_b)) s[nt][r] = -INFINITY;
                }
            }
            mx_a = fmax(mx_a, fmax(s[nt][0], s[nt][1]));
            mx_b = fmax(mx_b, fmax(s[nt][2], s[nt][3]));
        }
        mx_a = fmax(mx_a, avk_quad_xor(mx_a, 1 AVK_EMU_ARG));
        mx_a = fmax(mx_a, avk_quad_xor(mx_a, 2 AVK_EMU_ARG));
        mx_b = fmax(mx_b, avk_quad_xor(mx_b, 1 AVK_EMU_ARG));
        mx_b = fmax(mx_b, avk_quad_xor(mx_b, 2 AVK_EMU_ARG));
        const float base_a = mx_a == -INFINITY ? 0.0f : mx_a;
        const float base_b = mx_b == -INFINITY ? 0.0f : mx_b;
        const float alpha_a = AVK_EXP2(m_a - base_a), alpha_b = AVK_EXP2(m_b - base_b);
        m_a = mx_a;
        m_b = mx_b;
        float sum_a = 0.0f, sum_b = 0.0f;
AVK_PRAGMA_UNROLL
        for (int nt = 0; nt < AVK_NT; ++nt) {
            s[nt][0] = AVK_EXP2(s[nt][0] - base_a);
            s[nt][1] = AVK_EXP2(s[nt][1] - base_a);
            s[nt][2] = AVK_EXP2(s[nt][2] - base_b);
            s[nt][3] = AVK_EXP2(s[nt][3] - base_b);
            sum_a += s[nt][0] + s[nt][1];
            sum_b += s[nt][2] + s[nt][3];
        }
        /* per-lane partial sums; the 4 lanes of a row are added at the end */
        l_a = l_a * alpha_a + sum_a;
        l_b = l_b * alpha_b + sum_b;
AVK_PRAGMA_UNROLL
        for (int dt = 0; dt < AVK_DT; ++dt) {
            oacc[dt][0] *= alpha_a;
            oacc[dt][1] *= alpha_a;
            oacc[dt][2] *= alpha_b;
            oacc[dt][3] *= alpha_b;
        }

#if AVK_ASYNC
        if (tile + 1 < t_end) avk_cp_wait_all_but_one(); /* V(tile) has landed */
        else avk_cp_wait_all();
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
        /* O += P V: P's A fragment for keys 16kc.. is S n-tiles 2kc and 2kc+1 */
AVK_PRAGMA_UNROLL
        for (int kc = 0; kc < AVK_KC; ++kc) {
            const uint p0 = avk_pack_f16x2(s[2 * kc][0], s[2 * kc][1]);
            const uint p1 = avk_pack_f16x2(s[2 * kc][2], s[2 * kc][3]);
            const uint p2 = avk_pack_f16x2(s[2 * kc + 1][0], s[2 * kc + 1][1]);
            const uint p3 = avk_pack_f16x2(s[2 * kc + 1][2], s[2 * kc + 1][3]);
#if AVK_ASYNC
AVK_PRAGMA_UNROLL
            for (int dt = 0; dt < AVK_DT; dt += 2) {
                uint vb[4];
                avk_ldsm_v(vb, Vs, kc, dt, lane);
                avk_mma(oacc[dt], p0, p1, p2, p3, vb[0], vb[1] AVK_EMU_ARG);
                avk_mma(oacc[dt + 1], p0, p1, p2, p3, vb[2], vb[3] AVK_EMU_ARG);
            }
#else
AVK_PRAGMA_UNROLL
            for (int dt = 0; dt < AVK_DT; ++dt) {
                const uint2 vb = *(__local const uint2 *)(v_lane + dt * 8 * AVK_VW + kc * 8);
                avk_mma(oacc[dt], p0, p1, p2, p3, vb.x, vb.y AVK_EMU_ARG);
            }
#endif
        }
#if AVK_ASYNC
        barrier(CLK_LOCAL_MEM_FENCE); /* every warp is done with V(tile) */
        if (tile + 1 < t_end) avk_issue_rows(Vbuf, Vb, kt + AVK_BC, Nk, kv_row_stride, tid);
#endif
    }

    l_a += avk_quad_xor(l_a, 1 AVK_EMU_ARG);
    l_a += avk_quad_xor(l_a, 2 AVK_EMU_ARG);
    l_b += avk_quad_xor(l_b, 1 AVK_EMU_ARG);
    l_b += avk_quad_xor(l_b, 2 AVK_EMU_ARG);
    const float inv_a = l_a > 0.0f ? 1.0f / l_a : 0.0f, inv_b = l_b > 0.0f ? 1.0f / l_b : 0.0f;
    const float lse_a = l_a > 0.0f ? (m_a + log2(l_a)) * AVK_LN2 : -INFINITY;
    const float lse_b = l_b > 0.0f ? (m_b + log2(l_b)) * AVK_LN2 : -INFINITY;
    const int n_bh = get_num_groups(1);
    if (n_split > 1) {
        const long r = (long)split * n_bh + bh;
        __global float *oa = Opart + (r * Nq + row_a) * AVK_D + 2 * t;
        __global float *ob = Opart + (r * Nq + row_b) * AVK_D + 2 * t;
AVK_PRAGMA_UNROLL
        for (int dt = 0; dt < AVK_DT; ++dt) {
            if (row_a < q_end) vstore2((float2)(oacc[dt][0] * inv_a, oacc[dt][1] * inv_a), 0, oa + dt * 8);
            if (row_b < q_end) vstore2((float2)(oacc[dt][2] * inv_b, oacc[dt][3] * inv_b), 0, ob + dt * 8);
        }
        if (t == 0 && row_a < q_end) LSEpart[r * Nq + row_a] = lse_a;
        if (t == 0 && row_b < q_end) LSEpart[r * Nq + row_b] = lse_b;
    } else {
        __global ushort *Ob = O + b * q_batch_stride + h * q_head_stride;
AVK_PRAGMA_UNROLL
        for (int dt = 0; dt < AVK_DT; ++dt) {
            const uint wa = avk_pack_f16x2(oacc[dt][0] * inv_a, oacc[dt][1] * inv_a);
            const uint wb = avk_pack_f16x2(oacc[dt][2] * inv_b, oacc[dt][3] * inv_b);
            if (row_a < q_end) *(__global uint *)(Ob + row_a * q_row_stride + dt * 8 + 2 * t) = wa;
            if (row_b < q_end) *(__global uint *)(Ob + row_b * q_row_stride + dt * 8 + 2 * t) = wb;
        }
        if (write_lse && t == 0 && row_a < q_end) LSE[(long)bh * Nq + row_a] = lse_a;
        if (write_lse && t == 0 && row_b < q_end) LSE[(long)bh * Nq + row_b] = lse_b;
    }
}
