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
 *    from ldmatrix (.trans for V); natural k order. Quantized caches
 *    arrive raw and are decoded into the f16 tile in local memory.
 * Rows are the contract's packed rows (GQA), K/V rows come from avk_kv_row
 * (contiguous or paged), and quantized caches are decoded to f16 as the
 * tiles are filled. */
#if AVK_ASYNC && AVK_KV_QUANT
/* Quantized caches on the async path: raw rows are copied by cp.async into
 * local memory in the widest pieces the row size allows (q8_0 rows of D=128
 * are 136 bytes: 8-byte pieces), then decoded into one f16 tile (K, later
 * V) that ldmatrix reads as for f16 caches. */
#if AVK_KV_ROW_BYTES % 16 == 0
#define AVK_RAW_GRAN 16
#elif AVK_KV_ROW_BYTES % 8 == 0
#define AVK_RAW_GRAN 8
#elif AVK_KV_ROW_BYTES % 4 == 0
#define AVK_RAW_GRAN 4
#else
#define AVK_RAW_GRAN 2 /* q8_0 rows of an odd number of blocks (D=96: 102 bytes): plain copies */
#endif
#define AVK_RAW_CHUNKS (AVK_KV_ROW_BYTES / AVK_RAW_GRAN)
#define AVK_RAW_TILE16 ((AVK_BC * AVK_KV_ROW_BYTES + 15) / 16)

inline void avk_cp_raw(__local uchar *dst, __global const uchar *src, int valid)
{
#if AVK_RAW_GRAN == 2 /* cp.async takes 4, 8 or 16 bytes */
    *(__local ushort *)dst = valid ? *(__global const ushort *)src : (ushort)0;
#elif AVK_ASYNC == 1
#if AVK_RAW_GRAN == 16
    AVK_ASM("cp.async.cg.shared.global" AVK_CP_L2_HINT " [%0], [%1], 16, %2;" ::"r"((uint)(size_t)dst), "l"(src), "r"(valid ? 16 : 0)
            : "memory");
#else
    AVK_ASM("cp.async.ca.shared.global [%0], [%1], " AVK_STR(AVK_RAW_GRAN) ", %2;" ::"r"((uint)(size_t)dst), "l"(src),
            "r"(valid ? AVK_RAW_GRAN : 0)
            : "memory");
#endif
#else
    for (int i = 0; i < AVK_RAW_GRAN; i += 4)
        *(__local uint *)(dst + i) = valid ? *(__global const uint *)(src + i) : 0u;
#endif
}

/* Starts the copy of the raw rows of keys kt.. (rows[], mma_ops.cl; zeros
 * past the visible keys). */
inline void avk_issue_raw(__local uint4 *dst, __global const uchar *src, __local const uint *rows, const avk_work *w,
                          int kt, int tid)
{
    __local uchar *d = (__local uchar *)dst;
    for (int u = tid; u < AVK_BC * AVK_RAW_CHUNKS; u += AVK_WG) {
        const int kr = u / AVK_RAW_CHUNKS, c = u - kr * AVK_RAW_CHUNKS, valid = kt + kr < w->kv_end;
        avk_cp_raw(d + kr * AVK_KV_ROW_BYTES + c * AVK_RAW_GRAN,
                   src + (ulong)rows[kr] * AVK_KV_ROW_BYTES + c * AVK_RAW_GRAN, valid);
    }
    avk_cp_commit();
}

/* Decodes a landed raw tile into the f16 rows of AVK_KROW halves ldmatrix reads. */
inline void avk_decode_tile(__local uint4 *dst, __local const uint4 *raw, float scale, int tid)
{
    __local const uchar *r = (__local const uchar *)raw;
    for (int u = tid; u < AVK_BC * (AVK_D / 8); u += AVK_WG) {
        const int kr = u / (AVK_D / 8), c8 = u - kr * (AVK_D / 8);
        const float4 lo = avk_kv_load4_local(r + kr * AVK_KV_ROW_BYTES, c8 * 8, scale);
        const float4 hi = avk_kv_load4_local(r + kr * AVK_KV_ROW_BYTES, c8 * 8 + 4, scale);
        dst[kr * (AVK_KROW / 8) + c8] = (uint4)(avk_pack_f16x2(lo.x, lo.y), avk_pack_f16x2(lo.z, lo.w),
                                                avk_pack_f16x2(hi.x, hi.y), avk_pack_f16x2(hi.z, hi.w));
    }
}
#define AVK_ISSUE_K(kt, slot) avk_issue_raw(Kraw, K, AVK_TILE_ROWS(slot), &w, (kt), tid)
#define AVK_ISSUE_V(kt, slot) avk_issue_raw(Vraw, V, AVK_TILE_ROWS(slot), &w, (kt), tid)
/* after a tile's raw rows landed (and a barrier): decode, and let every lane see it */
#define AVK_DECODE_K()                                 \
    do {                                               \
        avk_decode_tile(Kbuf, Kraw, k_scale, tid);     \
        barrier(CLK_LOCAL_MEM_FENCE);                  \
    } while (0)
#define AVK_DECODE_V()                                 \
    do {                                               \
        avk_decode_tile(Vbuf, Vraw, v_scale, tid);     \
        barrier(CLK_LOCAL_MEM_FENCE);                  \
    } while (0)
#elif AVK_ASYNC
#define AVK_ISSUE_K(kt, slot) avk_issue_rows(Kbuf, K, AVK_TILE_ROWS(slot), &w, (kt), tid)
#define AVK_ISSUE_V(kt, slot) avk_issue_rows_v(Vbuf, V, AVK_TILE_ROWS(slot), &w, (kt), tid)
#define AVK_DECODE_K() ((void)0)
#define AVK_DECODE_V() ((void)0)
#endif

#if AVK_MASK_LOCAL
#if !AVK_ASYNC || !AVK_SCORE_HOOKS
#error "AVK_MASK_LOCAL takes the async pipeline and the score hook (cl_tuning.c)"
#endif
/* Starts the copy of the f16 mask of keys kt.. for the block's rows (rows: each row's offset)
 * into a tile of AVK_MROW-half rows; chunks at or past Nk (a multiple of 8) are zeros, their
 * keys dropped by the bounds. One commit group of its own: the tile's K before it, V after. */
inline void avk_issue_mask(__local uint4 *dst, __global const uchar *mask, __local const long *rows, int kt, int nk,
                           int tid)
{
    for (int u = tid; u < AVK_BR * (AVK_BC / 8); u += AVK_WG) {
        const int r = u / (AVK_BC / 8), c8 = u - r * (AVK_BC / 8), col = kt + c8 * 8;
        avk_cp16(dst + r * (AVK_MROW / 8) + c8, mask + (rows[r] + min(col, nk - 8)) * 2, col < nk);
    }
    avk_cp_commit();
}
#define AVK_ISSUE_M(kt) avk_issue_mask(Mbuf, mask, mask_rows, (kt), (int)args.seq_kv, tid)
#else
#define AVK_ISSUE_M(kt) ((void)0)
#endif

/* Eight values d0 .. d0+7 of a K/V row as f16 pairs: a 16-byte load of an
 * f16 cache, or decoded and rounded from a quantized one. */
inline uint4 avk_kv_load8_f16(__global const uchar *buf, long row, int d0, float scale)
{
#if AVK_KV_QUANT
    float x[8];
    avk_kv_load8(buf, row, d0, scale, x);
    return (uint4)(avk_pack_f16x2(x[0], x[1]), avk_pack_f16x2(x[2], x[3]), avk_pack_f16x2(x[4], x[5]),
                   avk_pack_f16x2(x[6], x[7]));
#else
    (void)scale;
    return *(__global const uint4 *)(buf + row * AVK_KV_ROW_BYTES + d0 * 2);
#endif
}

/* the same for V, whose rows hold Dv values */
inline uint4 avk_v_load8_f16(__global const uchar *buf, long row, int d0, float scale)
{
#if AVK_DV == AVK_D
    return avk_kv_load8_f16(buf, row, d0, scale);
#else
    (void)scale;
    return *(__global const uint4 *)(buf + row * AVK_V_ROW_BYTES + d0 * 2);
#endif
}

#if AVK_ASYNC
/* the K/V rows of the tiles in flight: two buffers, by the parity of the tile's visit
 * (a sparse pattern's hidden tiles are skipped: visits, not tile indices, alternate) */
#define AVK_TILE_ROWS(slot) (kv_rows + ((slot) & 1) * AVK_BC)
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

#if AVK_SCORE_HOOKS && AVK_SOFTCAP_IN_Q
/* an f16 pair of Q times f, each rounded once (AVK_SOFTCAP_IN_Q) */
AVK_INLINE uint avk_q_pair_times(uint q, float f)
{
    ushort2 h = as_ushort2(q), r; /* half arithmetic needs no cl_khr_fp16 through these */
    vstore_half2_rte(vload_half2(0, (const half *)&h) * f, 0, (half *)&r);
    return as_uint(r);
}
#endif

#if AVK_ALIBI_MMA
/* x as an f16 pair: the rounded x (low half), then what it missed (high half) */
AVK_INLINE uint avk_f16_split(float x)
{
    const uint hi = avk_pack_f16x2(x, 0.0f);
    const ushort h = (ushort)(hi & 0xffffu);
    return avk_pack_f16x2(x, x - vload_half(0, (const half *)&h));
}
#endif

__kernel __attribute__((reqd_work_group_size(AVK_WG, 1, 1)))
void avk_flash_mma(AVK_CONTRACT_ARGS(ushort))
{
    const avk_kernel_args *a = &args;
    const int tid = get_local_id(0);
    const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const avk_work w = avk_locate(a, seq_lens, mask, AVK_BR, AVK_BC);
    const float k_scale = avk_kv_scale(a, kv_scales, 0, w.g), v_scale = avk_kv_scale(a, kv_scales, 1, w.g);
    /* packed rows g and g+8 of this warp's 16 */
    const int row_a = w.r0 + warp * 16 + g, row_b = row_a + 8;
    const int in_a = row_a < w.r_end, in_b = row_b < w.r_end;
    const long qoff_a = avk_q_row(a, &w, row_a), qoff_b = avk_q_row(a, &w, row_b);
    const long ooff_a = avk_o_row(a, &w, row_a), ooff_b = avk_o_row(a, &w, row_b); /* O's rows hold Dv */

#if AVK_ASYNC && AVK_KV_QUANT
    __local uint4 Kraw[AVK_RAW_TILE16], Vraw[AVK_RAW_TILE16];
    __local uint4 Tbuf[AVK_BC * AVK_KROW / 8]; /* decoded [key][D + 8 halves]: K, then V of a tile */
    __local uint4 *Kbuf = Tbuf, *Vbuf = Tbuf;
    __local const ushort *Ks = (__local const ushort *)Tbuf;
    __local const ushort *Vs = (__local const ushort *)Tbuf;
#elif AVK_ASYNC
    __local uint4 Kbuf[AVK_BC * AVK_KROW / 8], Vbuf[AVK_BC * AVK_VROW / 8]; /* [key][Dk or Dv + 8 halves] */
    __local const ushort *Ks = (__local const ushort *)Kbuf;
    __local const ushort *Vs = (__local const ushort *)Vbuf;
#else
    /* declared as uint4 for the 16-byte alignment of the tile stores (a
     * plain uint array may start at any 4-byte offset: misaligned on NVIDIA) */
    __local uint4 Kbuf[AVK_BC * AVK_KW / 4], Vbuf[AVK_DV * AVK_VW / 4];
    __local uint *Ks = (__local uint *)Kbuf; /* [key][Dk/2 words + pad] */
    __local uint *Vt = (__local uint *)Vbuf; /* [Dv column][permuted key pairs + pad] */
#endif
#if AVK_EMULATE
    __local float emu_a[AVK_NW * 256], emu_b[AVK_NW * 128], emu_x[AVK_WG];
    const avk_emu emu = {emu_a, emu_b, emu_x, warp, lane};
#endif
    /* the tile search's window (+ avk_fill_window's minimum) */
    __local uint visible_bits[2 * AVK_WINDOW_WORDS(AVK_WG) + 1];
    int visible_base = -1, tile_shown = 1, next_shown = 1, after_shown = 1; /* the layout shows the tile whole */
#if AVK_ASYNC
    __local uint kv_rows[2 * AVK_BC]; /* K/V rows of the tiles in flight (avk_read_rows) */
    uint pend[AVK_ROWS_PER_ITEM];
#endif
#if AVK_MASK_LOCAL
    __local uint4 Mbuf[AVK_BR * AVK_MROW / 8]; /* the tile's f16 mask, [row][BC + 8 halves] */
    __local long mask_rows[AVK_BR];            /* each row's mask offset (rows past the block: its last) */
    for (int r = tid; r < AVK_BR; r += AVK_WG) {
        const int pr = min(w.r0 + r, w.r_end - 1), pack = (int)a->pack;
        mask_rows[r] = avk_mask_row(a, w.b, w.h + pr % pack, pr / pack);
    }
#endif

    /* Q fragments of rows g (qa) and g+8 (qb): .x = slots 2t.., .y = slots 2t+8.. */
    uint2 qa[AVK_KS], qb[AVK_KS];
AVK_PRAGMA_UNROLL
    for (int ks = 0; ks < AVK_KS; ++ks) {
#if AVK_ASYNC
        __global const ushort *pa = Q + qoff_a, *pb = Q + qoff_b;
        qa[ks] = in_a ? (uint2)(*(__global const uint *)(pa + AVK_QCOL(ks, t, 0)),
                                *(__global const uint *)(pa + AVK_QCOL(ks, t, 1)))
                      : (uint2)(0u);
        qb[ks] = in_b ? (uint2)(*(__global const uint *)(pb + AVK_QCOL(ks, t, 0)),
                                *(__global const uint *)(pb + AVK_QCOL(ks, t, 1)))
                      : (uint2)(0u);
#else
        qa[ks] = in_a ? *(__global const uint2 *)(Q + qoff_a + ks * 16 + 4 * t) : (uint2)(0u);
        qb[ks] = in_b ? *(__global const uint2 *)(Q + qoff_b + ks * 16 + 4 * t) : (uint2)(0u);
#endif
    }
#if AVK_SCORE_HOOKS && AVK_SOFTCAP_IN_Q
    if (AVK_HOOK_SOFTCAP && a->softcap > 0.0f) { /* the softcap's input scale, once (avk_frag_score_mod then leaves S as is) */
        const float f = avk_softcap_in(a, args.scale_log2);
AVK_PRAGMA_UNROLL
        for (int ks = 0; ks < AVK_KS; ++ks) {
            qa[ks] = (uint2)(avk_q_pair_times(qa[ks].x, f), avk_q_pair_times(qa[ks].y, f));
            qb[ks] = (uint2)(avk_q_pair_times(qb[ks].x, f), avk_q_pair_times(qb[ks].y, f));
        }
    }
#endif

    float oacc[AVK_DT][4];
AVK_PRAGMA_UNROLL
    for (int dt = 0; dt < AVK_DT; ++dt) oacc[dt][0] = oacc[dt][1] = oacc[dt][2] = oacc[dt][3] = 0.0f;
    float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.0f, l_b = 0.0f;

    /* rows a and b see keys [lo, lim) */
    const int lim_a = avk_row_key_end(a, &w, row_a), lim_b = avk_row_key_end(a, &w, row_b);
    const int lo_a = avk_row_key_begin(a, &w, row_a), lo_b = avk_row_key_begin(a, &w, row_b);
#if AVK_SCORE_HOOKS
    /* the score hook's row inputs */
    const avk_frag_rows fr = avk_frag_rows_of(a, &w, alibi_slopes, row_a, row_b, args.scale_log2);
    const float s_unit = fr.unit; /* the hook's output -> log2 units */
#else
    const float s_unit = args.scale_log2;
#endif

#if AVK_ALIBI_MMA
#if !AVK_SCORE_HOOKS
#error "AVK_ALIBI_MMA takes the score hook's row inputs (cl_tuning.c)"
#endif
    /* ALiBi without a softcap (the host's -DAVK_ALIBI_MMA=1): its term slope (j - i') splits into
     * slope (j - kt), which S's MMAs add as one more k-step (Q's columns 0 and 1: the slope in S's
     * units as an f16 pair hi + lo, about 22 bits), and slope (kt - i'), a row's constant on the
     * tile that the max and the exponent's multiply-add take: no per-score work */
    uint alibi_qa = 0u, alibi_qb = 0u;
    if (t == 0) {
        alibi_qa = avk_f16_split(fr.slope_a);
        alibi_qb = avk_f16_split(fr.slope_b);
    }
#endif
    /* the tiles visited: those some row sees (a sparse pattern hides the rest, loads and all) */
    int tile, next;
    avk_first_visible_tiles(a, mask, &w, AVK_BC, visible_bits, &visible_base, tid, AVK_WG, &tile, &tile_shown, &next,
                            &next_shown);
#if AVK_ASYNC
    if (tile < w.t_end) { /* rows of the first two tiles, then the first tile's copies */
        avk_read_rows(pend, a, block_table, &w, tile * AVK_BC, tid);
        avk_store_rows(AVK_TILE_ROWS(0), pend, tid);
        avk_read_rows(pend, a, block_table, &w, next * AVK_BC, tid);
        avk_store_rows(AVK_TILE_ROWS(1), pend, tid);
        barrier(CLK_LOCAL_MEM_FENCE);
        AVK_ISSUE_K(tile * AVK_BC, 0);
        AVK_ISSUE_M(tile * AVK_BC);
        AVK_ISSUE_V(tile * AVK_BC, 0);
    }
#endif
    for (int visit = 0; tile < w.t_end; ++visit) {
        const int kt = tile * AVK_BC;
        const int after =
            next < w.t_end ? avk_next_visible_tile(a, mask, &w, next, AVK_BC, visible_bits, &visible_base, &after_shown, tid,
                                                   AVK_WG)
                           : w.t_end;
#if AVK_ASYNC
        avk_cp_wait_all_but_one(); /* K(tile) (and its mask) have landed; V(tile) may be in flight */
        barrier(CLK_LOCAL_MEM_FENCE);
        AVK_DECODE_K();
#else
        barrier(CLK_LOCAL_MEM_FENCE);
        /* K tile, 16-byte chunks, consecutive lanes along a row */
        for (int u = tid; u < AVK_BC * (AVK_D / 8); u += AVK_WG) {
            const int kr = u / (AVK_D / 8), c8 = u - kr * (AVK_D / 8);
            const int key = kt + kr;
            const uint4 kw = key < w.kv_end
                                 ? avk_kv_load8_f16(K, avk_work_kv_row(a, block_table, &w, key), c8 * 8, k_scale)
                                 : (uint4)(0u);
            *(__local uint4 *)(Ks + kr * AVK_KW + c8 * 4) = kw;
        }
        /* V tile transposed: a lane takes a key pair and 8 columns, and writes
         * one word (both keys) per column at the pair's permuted position */
        for (int u = tid; u < (AVK_BC / 2) * (AVK_DV / 8); u += AVK_WG) {
            const int kp = u % (AVK_BC / 2), c8 = u / (AVK_BC / 2);
            const int kl = 2 * kp, key = kt + kl;
            const uint4 v0 = key < w.kv_end
                                 ? avk_v_load8_f16(V, avk_work_kv_row(a, block_table, &w, key), c8 * 8, v_scale)
                                 : (uint4)(0u);
            const uint4 v1 = key + 1 < w.kv_end
                                 ? avk_v_load8_f16(V, avk_work_kv_row(a, block_table, &w, key + 1), c8 * 8, v_scale)
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

#if AVK_SCORE_HOOKS && !AVK_MASK_LOCAL
        if (next < w.t_end) avk_frag_mask_prefetch(a, &fr, mask, next * AVK_BC, t, lim_a, lim_b);
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
#if AVK_ALIBI_MMA
            /* ALiBi's key term: Q's columns (slope hi, lo) times the key's index in the tile,
             * twice (B's rows 0 and 1 in lane t = 0; the rest zeros) */
            const float key_in_tile = (float)(nt * 8 + g);
            avk_mma(s[nt], alibi_qa, alibi_qb, 0u, 0u, t == 0 ? avk_pack_f16x2(key_in_tile, key_in_tile) : 0u, 0u
                    AVK_EMU_ARG);
#endif
        }
#if AVK_ASYNC
        barrier(CLK_LOCAL_MEM_FENCE); /* every warp is done with K(tile) */
        if (next < w.t_end) AVK_ISSUE_K(next * AVK_BC, visit + 1);
        avk_read_rows(pend, a, block_table, &w, after * AVK_BC, tid); /* stored after V's copies */
#endif

        /* the score hook (mma_ops.cl) on the raw scores; -inf for keys
         * outside each row's [lo, lim) on tiles that cross a row's bounds.
         * The one multiply per score into the log2 domain (s_unit: scale
         * log2(e), or c log2(e) on the softcap's tanh) is folded into the
         * exponent's fused multiply-add, and the row max is taken before it
         * (s_unit > 0). */
#if AVK_SCORE_HOOKS
        avk_frag_score_mod(s, a, &fr, mask, kt, t, lim_a, lim_b, AVK_SOFTCAP_IN_Q);
#endif
#if AVK_MASK_LOCAL
        avk_frag_mask_local(s, (__local const ushort *)Mbuf, warp * 16, lane, fr.mask_unit);
#endif
#if AVK_SCORE_MOD
        /* the pattern's hidden keys of a visited tile the layout does not show whole */
        if ((args.flags & AVK_PATTERNS) && !tile_shown) {
            /* head and query of rows a and b (padding rows: the last real one's), found here rather
             * than kept in registers through the loop for the few tiles that need them */
            const int pack = (int)a->pack;
            const int pr_a = min(row_a, w.r_end - 1), pr_b = min(row_b, w.r_end - 1);
            const int head_a = w.h + pr_a % pack, query_a = pr_a / pack;
            const int head_b = w.h + pr_b % pack, query_b = pr_b / pack;
AVK_PRAGMA_UNROLL
            for (int nt = 0; nt < AVK_NT; ++nt)
AVK_PRAGMA_UNROLL
                for (int r = 0; r < 4; ++r) {
                    const int key = kt + nt * 8 + 2 * t + (r & 1);
                    if (!avk_pattern_visible(a, mask, w.b, r < 2 ? head_a : head_b, r < 2 ? query_a : query_b, key))
                        s[nt][r] = -INFINITY;
                }
        }
#endif
        if (kt + AVK_BC > w.kv_full || kt < w.kv_full_begin) {
AVK_PRAGMA_UNROLL
            for (int nt = 0; nt < AVK_NT; ++nt)
AVK_PRAGMA_UNROLL
                for (int r = 0; r < 4; ++r) {
                    const int key = kt + nt * 8 + 2 * t + (r & 1);
                    s[nt][r] = key >= (r < 2 ? lim_a : lim_b) || key < (r < 2 ? lo_a : lo_b) ? -INFINITY : s[nt][r];
                }
        }
        float mx_a = -INFINITY, mx_b = -INFINITY;
AVK_PRAGMA_UNROLL
        for (int nt = 0; nt < AVK_NT; ++nt) {
            mx_a = fmax(mx_a, fmax(s[nt][0], s[nt][1]));
            mx_b = fmax(mx_b, fmax(s[nt][2], s[nt][3]));
        }
        mx_a = fmax(mx_a, avk_quad_xor(mx_a, 1 AVK_EMU_ARG));
        mx_a = fmax(mx_a, avk_quad_xor(mx_a, 2 AVK_EMU_ARG));
        mx_b = fmax(mx_b, avk_quad_xor(mx_b, 1 AVK_EMU_ARG));
        mx_b = fmax(mx_b, avk_quad_xor(mx_b, 2 AVK_EMU_ARG));
#if AVK_ALIBI_MMA
        /* ALiBi's part the MMAs left out, a row's constant on this tile: slope (kt - i'), log2 units */
        const float tile_a = fr.slope_a * (float)(kt - fr.pos_a) * s_unit;
        const float tile_b = fr.slope_b * (float)(kt - fr.pos_b) * s_unit;
        mx_a = fmax(m_a, fma(mx_a, s_unit, tile_a)); /* log2 units */
        mx_b = fmax(m_b, fma(mx_b, s_unit, tile_b));
        const float top_a = mx_a == -INFINITY ? 0.0f : mx_a, top_b = mx_b == -INFINITY ? 0.0f : mx_b;
        const float alpha_a = AVK_EXP2(m_a - top_a), alpha_b = AVK_EXP2(m_b - top_b);
        const float base_a = top_a - tile_a, base_b = top_b - tile_b; /* exp2(s s_unit + tile - max) */
#else
        mx_a = fmax(m_a, mx_a * s_unit); /* log2 units */
        mx_b = fmax(m_b, mx_b * s_unit);
        const float base_a = mx_a == -INFINITY ? 0.0f : mx_a;
        const float base_b = mx_b == -INFINITY ? 0.0f : mx_b;
        const float alpha_a = AVK_EXP2(m_a - base_a), alpha_b = AVK_EXP2(m_b - base_b);
#endif
        m_a = mx_a;
        m_b = mx_b;
        float sum_a = 0.0f, sum_b = 0.0f;
AVK_PRAGMA_UNROLL
        for (int nt = 0; nt < AVK_NT; ++nt) {
            s[nt][0] = AVK_EXP2(fma(s[nt][0], s_unit, -base_a));
            s[nt][1] = AVK_EXP2(fma(s[nt][1], s_unit, -base_a));
            s[nt][2] = AVK_EXP2(fma(s[nt][2], s_unit, -base_b));
            s[nt][3] = AVK_EXP2(fma(s[nt][3], s_unit, -base_b));
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
        if (next < w.t_end) avk_cp_wait_all_but_one(); /* V(tile) has landed */
        else avk_cp_wait_all();
        barrier(CLK_LOCAL_MEM_FENCE);
        /* every warp has added tile's mask: next's comes in its own group, before V(next)'s */
        if (next < w.t_end) AVK_ISSUE_M(next * AVK_BC);
        AVK_DECODE_V(); /* into the tile K used: S is done with it */
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
        if (next < w.t_end) AVK_ISSUE_V(next * AVK_BC, visit + 1);
        /* tile's rows are no longer read (its copies were issued last round): the visit after next's take them */
        avk_store_rows(AVK_TILE_ROWS(visit), pend, tid);
#endif
        tile = next;
        next = after;
        tile_shown = next_shown;
        next_shown = after_shown;
    }

    l_a += avk_quad_xor(l_a, 1 AVK_EMU_ARG);
    l_a += avk_quad_xor(l_a, 2 AVK_EMU_ARG);
    l_b += avk_quad_xor(l_b, 1 AVK_EMU_ARG);
    l_b += avk_quad_xor(l_b, 2 AVK_EMU_ARG);
    float keep_a = 1.0f, keep_b = 1.0f;
    if ((args.flags & AVK_FLAG_SINKS) && !(args.flags & AVK_FLAG_SPLIT)) {
        /* the sink joins each row's denominator (split partials leave it to the merge) */
        const int pack_ = (int)a->pack;
        const float sink_a = sinks[w.h + min(row_a, w.r_end - 1) % pack_] * AVK_LOG2E;
        const float sink_b = sinks[w.h + min(row_b, w.r_end - 1) % pack_] * AVK_LOG2E;
        const float mxa = fmax(m_a, sink_a), mxb = fmax(m_b, sink_b);
        keep_a = l_a > 0.0f ? AVK_EXP2(m_a - mxa) : 0.0f;
        keep_b = l_b > 0.0f ? AVK_EXP2(m_b - mxb) : 0.0f;
        l_a = l_a * keep_a + AVK_EXP2(sink_a - mxa);
        l_b = l_b * keep_b + AVK_EXP2(sink_b - mxb);
        m_a = mxa;
        m_b = mxb;
    }
    const float inv_a = l_a > 0.0f ? keep_a / l_a : 0.0f, inv_b = l_b > 0.0f ? keep_b / l_b : 0.0f;
    const float lse_a = l_a > 0.0f ? (m_a + log2(l_a)) * AVK_LN2 : -INFINITY;
    const float lse_b = l_b > 0.0f ? (m_b + log2(l_b)) * AVK_LN2 : -INFINITY;
    if (args.flags & AVK_FLAG_SPLIT) {
        const long base = avk_split_base(a, &w);
        const long pa = base + avk_lse_row(a, &w, row_a), pb = base + avk_lse_row(a, &w, row_b);
        __global float *oa = part_O + pa * AVK_DV + 2 * t;
        __global float *ob = part_O + pb * AVK_DV + 2 * t;
AVK_PRAGMA_UNROLL
        for (int dt = 0; dt < AVK_DT; ++dt) {
            if (in_a) vstore2((float2)(oacc[dt][0] * inv_a, oacc[dt][1] * inv_a), 0, oa + dt * 8);
            if (in_b) vstore2((float2)(oacc[dt][2] * inv_b, oacc[dt][3] * inv_b), 0, ob + dt * 8);
        }
        if (t == 0 && in_a) part_LSE[pa] = lse_a;
        if (t == 0 && in_b) part_LSE[pb] = lse_b;
    } else {
AVK_PRAGMA_UNROLL
        for (int dt = 0; dt < AVK_DT; ++dt) {
            const uint wa = avk_pack_f16x2(oacc[dt][0] * inv_a, oacc[dt][1] * inv_a);
            const uint wb = avk_pack_f16x2(oacc[dt][2] * inv_b, oacc[dt][3] * inv_b);
            if (in_a) *(__global uint *)(O + ooff_a + dt * 8 + 2 * t) = wa;
            if (in_b) *(__global uint *)(O + ooff_b + dt * 8 + 2 * t) = wb;
        }
        const int write_lse = (args.flags & AVK_FLAG_WRITE_LSE) && t == 0;
        if (write_lse && in_a) LSE[avk_lse_row(a, &w, row_a)] = lse_a;
        if (write_lse && in_b) LSE[avk_lse_row(a, &w, row_b)] = lse_b;
    }
}
