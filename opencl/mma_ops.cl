/* Warp-level fragment operations for flash_mma.cl: mma.sync m16n8k16,
 * f32 -> f16x2 packing, shuffles within the 4 lanes of a row, and ldmatrix
 * fragment loads (AVK_ASYNC), as inline PTX for NVIDIA, or emulated with
 * local memory (AVK_EMULATE=1) with the same per-lane results, so the data
 * flow can be tested on any OpenCL device.
 *
 * Fragment layout (PTX ISA, m16n8k16, lane = 4*g + t): A row-major 16x16 in
 * 4 regs {(g, 2t..2t+1), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..)}; B 16x8
 * in 2 regs {(k 2t..2t+1, n g), (k 2t+8.., n g)}; C 16x8 f32 in 4 regs
 * {(g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)}. */
#ifndef AVK_NW
#define AVK_NW 4             /* warps per work-group, 16 query rows each */
#endif
#ifndef AVK_BC
#define AVK_BC 64            /* keys per tile, multiple of 16 */
#endif
#ifndef AVK_EMULATE
#define AVK_EMULATE 0
#endif
/* AVK_SCORE_HOOKS: the score hook's softcap, ALiBi and mask compiled into the mma bodies
 * (AVK_SCORE_MOD). A program for a sparse pattern alone (the host's AVK_PATTERN_ONLY) leaves
 * them out, and with them the per-row inputs the tile loop would keep in registers. */
#ifndef AVK_SCORE_HOOKS
#if defined(AVK_PATTERN_ONLY) && AVK_PATTERN_ONLY
#define AVK_SCORE_HOOKS 0
#else
#define AVK_SCORE_HOOKS AVK_SCORE_MOD
#endif
#endif
/* AVK_HOOK_MODS (the host's -D with the hooks: kernel_flags.h's AVK_MOD_SOFTCAP, AVK_MOD_ALIBI and
 * AVK_MOD_MASK bits of the problem): the hook's modifications the program carries. The others are
 * left out, and with them the row inputs they would keep in registers through the tile loop, as
 * AVK_PATTERN_ONLY leaves out all three. Absent: all three, each behind its runtime flag. */
#ifndef AVK_HOOK_MODS
#define AVK_HOOK_MODS (AVK_MOD_SOFTCAP | AVK_MOD_ALIBI | AVK_MOD_MASK)
#endif
#define AVK_HOOK_SOFTCAP ((AVK_HOOK_MODS & AVK_MOD_SOFTCAP) != 0)
#define AVK_HOOK_ALIBI ((AVK_HOOK_MODS & AVK_MOD_ALIBI) != 0)
#define AVK_HOOK_MASK ((AVK_HOOK_MODS & AVK_MOD_MASK) != 0)
/* AVK_SOFTCAP_IN_Q (on; -DAVK_SOFTCAP_IN_Q=0 through ATTNVK_OPENCL_BUILD_OPTIONS for the A/B): the
 * mma-f16 prefill body takes the softcap's input scale into its Q fragments once (flash_mma.cl),
 * not into every score. H100 (s42a, D=128 8k causal softcap 30): 162.4 / 162.3 -> 164.0 / 164.0. */
#ifndef AVK_SOFTCAP_IN_Q
#define AVK_SOFTCAP_IN_Q 1
#endif
/* AVK_MASK_LOCAL (the host's -D: the mma-f16 prefill body's async pipeline, an f16 mask whose
 * rows are whole 16-byte chunks): each tile's mask rows ride the cp.async copies into local
 * memory (flash_mma.cl's Mbuf) and the score hook reads them by ldmatrix, rather than each lane
 * loading its pairs of eight rows from L1 (eight lines a warp load). */
#ifndef AVK_MASK_LOCAL
#define AVK_MASK_LOCAL 0
#endif
/* AVK_ALIBI_MMA (the host's -D: ALiBi without a softcap on the mma-f16 prefill body): ALiBi's key
 * term rides S's MMAs (flash_mma.cl) and the score hook leaves it out */
#ifndef AVK_ALIBI_MMA
#define AVK_ALIBI_MMA 0
#endif
#define AVK_MROW (AVK_BC + 8) /* a mask tile's row in halves: 16-byte rows, ldmatrix's eight rows in distinct banks */
#define AVK_WG (AVK_NW * 32)
#define AVK_BR (AVK_NW * 16)
#define AVK_NT (AVK_BC / 8)  /* n-tiles of S */
#define AVK_KS (AVK_D / 16)  /* k-steps of Q K^T */
#define AVK_DT (AVK_DV / 8)  /* n-tiles of O (Dv columns) */
#define AVK_KC (AVK_BC / 16) /* k-steps of P V */

/* K and V tiles for ldmatrix: rows of D halves plus 16 bytes, so the eight
 * 16-byte rows one 8x8 matrix reads fall in distinct bank groups. */
#define AVK_KROW (AVK_D + 8)
#define AVK_VROW (AVK_DV + 8)

#if AVK_EMULATE
typedef struct avk_emu {
    __local float *a; /* per warp 16x16 */
    __local float *b; /* per warp 16x8 */
    __local float *x; /* one word per lane */
    int warp, lane;
} avk_emu;

inline float avk_half_lo(uint w)
{
    ushort h = (ushort)(w & 0xffffu);
    return vload_half(0, (const __private half *)&h);
}
inline float avk_half_hi(uint w)
{
    ushort h = (ushort)(w >> 16);
    return vload_half(0, (const __private half *)&h);
}
inline uint avk_pack_f16x2(float lo, float hi)
{
    ushort l, u;
    vstore_half_rte(lo, 0, (__private half *)&l);
    vstore_half_rte(hi, 0, (__private half *)&u);
    return (uint)l | ((uint)u << 16);
}
/* every lane of the work-group calls these together */
inline float avk_quad_xor(float v, int m, const avk_emu *e)
{
    const int me = e->warp * 32 + e->lane;
    e->x[me] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    const float r = e->x[me ^ m];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
inline void avk_mma(float c[4], uint a0, uint a1, uint a2, uint a3, uint b0, uint b1, const avk_emu *e)
{
    const int g = e->lane >> 2, t = e->lane & 3;
    __local float *A = e->a + e->warp * 256;
    __local float *B = e->b + e->warp * 128;
    A[g * 16 + 2 * t] = avk_half_lo(a0);
    A[g * 16 + 2 * t + 1] = avk_half_hi(a0);
    A[(g + 8) * 16 + 2 * t] = avk_half_lo(a1);
    A[(g + 8) * 16 + 2 * t + 1] = avk_half_hi(a1);
    A[g * 16 + 2 * t + 8] = avk_half_lo(a2);
    A[g * 16 + 2 * t + 9] = avk_half_hi(a2);
    A[(g + 8) * 16 + 2 * t + 8] = avk_half_lo(a3);
    A[(g + 8) * 16 + 2 * t + 9] = avk_half_hi(a3);
    B[(2 * t) * 8 + g] = avk_half_lo(b0);
    B[(2 * t + 1) * 8 + g] = avk_half_hi(b0);
    B[(2 * t + 8) * 8 + g] = avk_half_lo(b1);
    B[(2 * t + 9) * 8 + g] = avk_half_hi(b1);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = 0; r < 4; ++r) {
        const int row = g + (r >> 1) * 8, col = 2 * t + (r & 1);
        float acc = c[r];
        for (int k = 0; k < 16; ++k) acc = fma(A[row * 16 + k], B[k * 8 + col], acc);
        c[r] = acc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
#define AVK_EMU_ARG , &emu
#else
inline uint avk_pack_f16x2(float lo, float hi)
{
    uint r;
    AVK_ASM("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
inline float avk_quad_xor(float v, int m)
{
    float r;
    AVK_ASM("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(r) : "f"(v), "r"(m));
    return r;
}
inline void avk_mma(float c[4], uint a0, uint a1, uint a2, uint a3, uint b0, uint b1)
{
    AVK_ASM("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
#define AVK_EMU_ARG
#endif

#if AVK_ASYNC
/* B fragments of Q K^T from a row-major K tile (rows = keys, AVK_KROW
 * halves): n-tile nt, k-steps ks and ks+1 -> r = {b0b1(ks), b2b3(ks),
 * b0b1(ks+1), b2b3(ks+1)}. Lane 8j+i names row i of 8x8 matrix j. */
inline void avk_ldsm_k(uint r[4], __local const ushort *ks_tile, int nt, int ks, int lane)
{
#if AVK_EMULATE
    const int g = lane >> 2, t = lane & 3;
    for (int j = 0; j < 4; ++j) r[j] = *(__local const uint *)(ks_tile + (nt * 8 + g) * AVK_KROW + ks * 16 + j * 8 + 2 * t);
#else
    __local const ushort *p = ks_tile + (nt * 8 + (lane & 7)) * AVK_KROW + ks * 16 + (lane >> 3) * 8;
    AVK_ASM("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
            : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
            : "r"((uint)(size_t)p));
#endif
}
/* The same for one k-step (an odd D/16 leaves one over). */
inline void avk_ldsm_k1(uint r[2], __local const ushort *ks_tile, int nt, int ks, int lane)
{
#if AVK_EMULATE
    const int g = lane >> 2, t = lane & 3;
    for (int j = 0; j < 2; ++j) r[j] = *(__local const uint *)(ks_tile + (nt * 8 + g) * AVK_KROW + ks * 16 + j * 8 + 2 * t);
#else
    __local const ushort *p = ks_tile + (nt * 8 + (lane & 7)) * AVK_KROW + ks * 16 + ((lane >> 3) & 1) * 8;
    AVK_ASM("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"((uint)(size_t)p));
#endif
}
/* B fragments of P V from a row-major V tile (rows of AVK_VROW halves,
 * transposed on the way): keys 16kc.., n-tiles dt and dt+1 -> r =
 * {b0b1(dt), b2b3(dt), b0b1(dt+1), b2b3(dt+1)}. */
inline void avk_ldsm_v(uint r[4], __local const ushort *vs_tile, int kc, int dt, int lane)
{
#if AVK_EMULATE
    const int g = lane >> 2, t = lane & 3;
    for (int j = 0; j < 4; ++j) {
        __local const ushort *m = vs_tile + (kc * 16 + (j & 1) * 8) * AVK_VROW + (dt + (j >> 1)) * 8 + g;
        r[j] = (uint)m[(2 * t) * AVK_VROW] | ((uint)m[(2 * t + 1) * AVK_VROW] << 16);
    }
#else
    const int j = lane >> 3;
    __local const ushort *p = vs_tile + (kc * 16 + (j & 1) * 8 + (lane & 7)) * AVK_VROW + (dt + (j >> 1)) * 8;
    AVK_ASM("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
            : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
            : "r"((uint)(size_t)p));
#endif
}
/* The K/V rows of a tile's keys are found once per key, not per copy: a
 * work-group reads the rows of tile t + 2 (block-table reads in flight
 * while tile t computes) into registers, stores them to local memory after
 * its last copy of tile t + 1 (avk_store_rows), and the copies of tile t + 2
 * find them there, a barrier later. */
#define AVK_ROWS_PER_ITEM ((AVK_BC + AVK_WG - 1) / AVK_WG)
inline void avk_read_rows(uint pend[AVK_ROWS_PER_ITEM], const avk_kernel_args *a, __global const int *block_table,
                          const avk_work *w, int kt, int tid)
{
    for (int j = 0; j < AVK_ROWS_PER_ITEM; ++j) {
        const int r = tid + j * AVK_WG, key = kt + r;
        pend[j] = r < AVK_BC && key < w->kv_end ? (uint)avk_work_kv_row(a, block_table, w, key) : 0u;
    }
}
inline void avk_store_rows(__local uint *rows, const uint pend[AVK_ROWS_PER_ITEM], int tid)
{
    for (int j = 0; j < AVK_ROWS_PER_ITEM; ++j)
        if (tid + j * AVK_WG < AVK_BC) rows[tid + j * AVK_WG] = pend[j];
}
/* Copies keys kt.. of a K or V tile (f16 rows of d values, row_bytes apart,
 * at rows[], contiguous or paged) into rows of d + 8 halves (zeros past the
 * visible keys): K with d = Dk (AVK_KROW), V with Dv (AVK_VROW). */
inline void avk_issue_rows_of(__local uint4 *dst, __global const uchar *src, __local const uint *rows,
                              const avk_work *w, int kt, int tid, const int d, const int row_bytes)
{
    for (int u = tid; u < AVK_BC * (d / 8); u += AVK_WG) {
        const int kr = u / (d / 8), c8 = u - kr * (d / 8), valid = kt + kr < w->kv_end;
        avk_cp16(dst + kr * ((d + 8) / 8) + c8, src + (ulong)rows[kr] * row_bytes + c8 * 16, valid);
    }
    avk_cp_commit();
}
#define avk_issue_rows(dst, src, rows, w, kt, tid) \
    avk_issue_rows_of(dst, src, rows, w, kt, tid, AVK_D, AVK_KV_ROW_BYTES)
#define avk_issue_rows_v(dst, src, rows, w, kt, tid) \
    avk_issue_rows_of(dst, src, rows, w, kt, tid, AVK_DV, AVK_V_ROW_BYTES)
#endif

/* The contract's score hook over one lane's S fragments, for the mma
 * bodies: keys key0 + 8nt + 2t + (r & 1) of packed rows a (r < 2) and b.
 * It takes the raw scores (the body's scale_log2 times them is the log2
 * domain) and leaves them in the units whose one multiply per score by
 * f->unit (avk_score_unit: c log2(e) with a softcap, whose tanh(x / c) the
 * hook leaves, else scale_log2) is the log2 domain: ALiBi and the mask are
 * added in those. Row inputs are found once, before the key loop; each
 * modification is one uniform branch and a straight run over the values (a
 * branch per value would serialize them). Compiled in only with
 * AVK_SCORE_MOD. */
#if AVK_SCORE_MOD
typedef struct avk_frag_rows {
    int pos_a, pos_b;       /* i' */
    float slope_a, slope_b; /* ALiBi slope in the hook's output units */
    long mrow_a, mrow_b;    /* mask row offsets */
    float unit;             /* what turns the hook's output into log2 units */
    float mask_unit;        /* a natural-log logit (mask value) in the hook's output units: log2(e) / unit */
    float cap_in;           /* raw score -> avk_softcap_tanh's argument */
} avk_frag_rows;

/* rows past the block's end take its last real row's inputs; scale_log2: the
 * body's (raw score -> log2 domain without modifications) */
AVK_INLINE avk_frag_rows avk_frag_rows_of(const avk_kernel_args *a, const avk_work *w,
                                          __global const float *alibi_slopes, int row_a, int row_b, float scale_log2)
{
    avk_frag_rows f;
    const int pack = (int)a->pack, ra = min(row_a, w->r_end - 1), rb = min(row_b, w->r_end - 1);
    f.unit = avk_score_unit(a, scale_log2);
    f.mask_unit = AVK_LOG2E / f.unit;
    f.cap_in = AVK_HOOK_SOFTCAP && a->softcap > 0.0f ? avk_softcap_in(a, scale_log2) : 0.0f;
    f.pos_a = (int)avk_row_pos(a, w->seq_len, ra / pack);
    f.pos_b = (int)avk_row_pos(a, w->seq_len, rb / pack);
    f.slope_a = AVK_HOOK_ALIBI && (a->flags & AVK_FLAG_ALIBI) ? alibi_slopes[w->h + ra % pack] * f.mask_unit : 0.0f;
    f.slope_b = AVK_HOOK_ALIBI && (a->flags & AVK_FLAG_ALIBI) ? alibi_slopes[w->h + rb % pack] * f.mask_unit : 0.0f;
    f.mrow_a = AVK_HOOK_MASK ? avk_mask_row(a, w->b, w->h + ra % pack, ra / pack) : 0;
    f.mrow_b = AVK_HOOK_MASK ? avk_mask_row(a, w->b, w->h + rb % pack, rb / pack) : 0;
    return f;
}

/* softcap, ALiBi, mask; keys at or past a row's end (lim) read its last
 * key's mask value (they are dropped afterwards). q_scaled (a constant of the
 * caller's build): Q already carries the softcap's input scale (flash_mma.cl's avk_q_pair_times) */
AVK_INLINE void avk_frag_score_mod(float s[AVK_NT][4], const avk_kernel_args *a, const avk_frag_rows *f,
                                   __global const uchar *mask, int key0, int t, int lim_a, int lim_b, const int q_scaled)
{
    if (AVK_HOOK_SOFTCAP && a->softcap > 0.0f) {
        const float in = f->cap_in;
AVK_PRAGMA_UNROLL
        for (int nt = 0; nt < AVK_NT; ++nt)
AVK_PRAGMA_UNROLL
            for (int r = 0; r < 4; r += 2) {
                if (!q_scaled) s[nt][r] *= in, s[nt][r + 1] *= in;
                avk_softcap_tanh2(&s[nt][r], &s[nt][r + 1]);
            }
    }
    if (AVK_HOOK_ALIBI && (a->flags & AVK_FLAG_ALIBI) && !AVK_ALIBI_MMA) { /* AVK_ALIBI_MMA: in S's MMAs (flash_mma.cl) */
        const float rel_a = (float)(key0 + 2 * t - f->pos_a), rel_b = (float)(key0 + 2 * t - f->pos_b); /* exact */
AVK_PRAGMA_UNROLL
        for (int nt = 0; nt < AVK_NT; ++nt)
AVK_PRAGMA_UNROLL
            for (int r = 0; r < 4; ++r)
                s[nt][r] = fma(r < 2 ? f->slope_a : f->slope_b, (r < 2 ? rel_a : rel_b) + (float)(nt * 8 + (r & 1)),
                               s[nt][r]);
    }
    if (AVK_HOOK_MASK && (a->flags & AVK_FLAG_MASK) && !AVK_MASK_LOCAL) { /* AVK_MASK_LOCAL: avk_frag_mask_local */
        const int last_a = max(lim_a - 1, 0), last_b = max(lim_b - 1, 0);
        const float mu = f->mask_unit;
        if (a->flags & AVK_FLAG_MASK_F16) {
            __global const half *mh = (__global const half *)mask;
            /* a lane's two adjacent keys in one 32-bit load where both rows'
             * pairs are aligned and inside the rows (every full tile) */
            const int col = key0 + 2 * t;
            if (((f->mrow_a | f->mrow_b) & 1) == 0 && col + (AVK_NT - 1) * 8 + 1 <= min(last_a, last_b)) {
                __global const uint *wa = (__global const uint *)(mh + f->mrow_a + col);
                __global const uint *wb = (__global const uint *)(mh + f->mrow_b + col);
AVK_PRAGMA_UNROLL
                for (int nt = 0; nt < AVK_NT; ++nt) {
                    const float2 ma = vload_half2(0, (__global const half *)(wa + nt * 4));
                    const float2 mb = vload_half2(0, (__global const half *)(wb + nt * 4));
                    s[nt][0] = fma(ma.x, mu, s[nt][0]);
                    s[nt][1] = fma(ma.y, mu, s[nt][1]);
                    s[nt][2] = fma(mb.x, mu, s[nt][2]);
                    s[nt][3] = fma(mb.y, mu, s[nt][3]);
                }
                return;
            }
AVK_PRAGMA_UNROLL
            for (int nt = 0; nt < AVK_NT; ++nt)
AVK_PRAGMA_UNROLL
                for (int r = 0; r < 4; ++r) {
                    const int key = key0 + nt * 8 + 2 * t + (r & 1);
                    const long at = r < 2 ? f->mrow_a + min(key, last_a) : f->mrow_b + min(key, last_b);
                    s[nt][r] = fma(vload_half(at, mh), mu, s[nt][r]);
                }
        } else {
            __global const float *mf = (__global const float *)mask;
AVK_PRAGMA_UNROLL
            for (int nt = 0; nt < AVK_NT; ++nt)
AVK_PRAGMA_UNROLL
                for (int r = 0; r < 4; ++r) {
                    const int key = key0 + nt * 8 + 2 * t + (r & 1);
                    s[nt][r] = fma(mf[r < 2 ? f->mrow_a + min(key, last_a) : f->mrow_b + min(key, last_b)], mu,
                                   s[nt][r]);
                }
        }
    }
}

#if AVK_MASK_LOCAL
/* A warp's rows row0 + g and row0 + g + 8 of the tile's f16 mask in local memory (rows of
 * AVK_MROW halves) added to S in the hook's units (mu: avk_frag_rows' mask_unit). One ldmatrix
 * x4 takes n-tiles 2j and 2j + 1 of both rows, each lane's pairs in the accumulator layout. */
AVK_INLINE void avk_frag_mask_local(float s[AVK_NT][4], __local const ushort *m, int row0, int lane, float mu)
{
AVK_PRAGMA_UNROLL
    for (int j = 0; j < AVK_NT / 2; ++j) {
        uint r[4]; /* {row a n-tile 2j, row a 2j+1, row b 2j, row b 2j+1} */
#if AVK_EMULATE
        const int g = lane >> 2, t = lane & 3;
        for (int q = 0; q < 4; ++q)
            r[q] = *(__local const uint *)(m + (row0 + g + (q >> 1) * 8) * AVK_MROW + 16 * j + (q & 1) * 8 + 2 * t);
#else
        const int q = lane >> 3;
        __local const ushort *p = m + (row0 + (lane & 7) + (q >> 1) * 8) * AVK_MROW + 16 * j + (q & 1) * 8;
        AVK_ASM("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                : "r"((uint)(size_t)p));
#endif
AVK_PRAGMA_UNROLL
        for (int q = 0; q < 4; ++q) {
            const float2 v = vload_half2(0, (const half *)&r[q]);
            const int nt = 2 * j + (q & 1), e = (q >> 1) * 2;
            s[nt][e] = fma(v.x, mu, s[nt][e]);
            s[nt][e + 1] = fma(v.y, mu, s[nt][e + 1]);
        }
    }
}
#endif

/* The mask rows of keys [key0, key0 + AVK_BC) fetched into L1 a tile ahead
 * (NVIDIA), so the score hook's loads do not wait on L2 after the S MMAs: the
 * four lanes of a row pair share its lines. */
AVK_INLINE void avk_frag_mask_prefetch(const avk_kernel_args *a, const avk_frag_rows *f, __global const uchar *mask,
                                       int key0, int t, int lim_a, int lim_b)
{
#if !AVK_EMULATE && !AVK_MASK_LOCAL
    if (!AVK_HOOK_MASK || !(a->flags & AVK_FLAG_MASK)) return;
    const int es = (a->flags & AVK_FLAG_MASK_F16) ? 2 : 4, lines = (AVK_BC * es + 127) / 128;
    for (int l = t; l < 2 * lines; l += 4) {
        const int second = l >= lines, col = key0 + (l % lines) * (128 / es);
        if (col >= (second ? lim_b : lim_a)) continue;
        __global const uchar *at = mask + ((second ? f->mrow_b : f->mrow_a) + col) * es;
        AVK_ASM("prefetch.global.L1 [%0];" ::"l"(at));
    }
#else
    (void)a, (void)f, (void)mask, (void)key0, (void)t, (void)lim_a, (void)lim_b;
#endif
}
#endif
