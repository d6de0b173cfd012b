/* GQA-packed decode on NVIDIA tensor cores from OpenCL: the "mma-decode"
 * body (mma.sync m16n8k16, cp.async and ldmatrix through inline PTX from
 * mma_ops.cl), or its emulated twin (AVK_EMULATE=1: the same data flow on
 * plain OpenCL C, so PoCL tests it).
 *
 * Decode has at most 16 packed rows per work-group (one m-tile), so a
 * work-group of one warp keeps too few bytes in flight and, for a quantized
 * cache, spends its time dequantizing with nothing to hide the latency.
 * Here AVK_KEY_WARPS warps share the 16 rows and split the keys: tile t of
 * the work-group's range goes to warp (t - t_begin) % KEY_WARPS, which
 * streams it through a private ring of AVK_STAGES raw stages (cp.async, no
 * work-group barrier in the loop) and builds its K and V fragments straight
 * from the raw rows: ldmatrix for an f16 cache, and for q8_0 / q4_0 / fp8
 * the raw codes as f16 (exact: q8_0's int8, q4_0's nibble - 8, e4m3 bits
 * read as value / 256), which the tensor cores multiply unscaled; the
 * per-block scales are applied in f32, K's to each 32-value block's partial
 * S, V's to P. Lane r finds key r's row (one block-table read per key,
 * fetched one tile ahead) and the copies get it by shuffle. At the end the
 * warps' (max, sum, O) merge through local memory, as split-KV partials do.
 *
 * Local memory: per warp STAGES x (K, V) raw tiles of BC rows; the merge
 * reuses them (cl_tuning.c sizes both, within the 48 KiB NVIDIA allows).
 * K rows hold Dk values and V rows Dv (AVK_DV, f16 caches only).
 *
 * Score features (contract.cl's hooks, built in only where the problem has
 * them): AVK_SCORE_MOD applies softcap, ALiBi and the mask to each tile's S
 * fragments (mma_ops.cl); AVK_SCORE_BOUNDS masks keys below a row's window
 * on edge tiles and folds the sinks into the warps' merge. Tiles below every
 * row's window are never loaded (avk_locate); a window's right side, causal
 * limits and top-left alignment come with each row's end. */
#ifndef AVK_KEY_WARPS
#define AVK_KEY_WARPS 4
#endif
#ifndef AVK_STAGES
#define AVK_STAGES 2
#endif
#define DEC_KW AVK_KEY_WARPS
#define DEC_ST AVK_STAGES
#define DEC_WG (DEC_KW * 32)
/* bytes of a raw K/V row, for the preprocessor (contract.cl's
 * AVK_KV_ROW_BYTES takes a sizeof); this body runs f16 data */
#if AVK_KV_FORMAT == AVK_KV_Q8_0
#define DEC_ROW_BYTES (AVK_D / 32 * 34)
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
#define DEC_ROW_BYTES (AVK_D / 32 * 18)
#elif AVK_KV_FORMAT == AVK_KV_FP8
#define DEC_ROW_BYTES AVK_D
#else
#define DEC_ROW_BYTES (AVK_D * 2)
#endif
/* raw K/V rows as stored, padded by 16 bytes where the row is a multiple of
 * 32 bytes (f16, fp8) so the 8 rows a fragment read touches fall on
 * distinct banks (q8_0's 136 and q4_0's 72 already do) */
#if DEC_ROW_BYTES % 32 == 0
#define DEC_RAW_ROW (DEC_ROW_BYTES + 16)
#else
#define DEC_RAW_ROW DEC_ROW_BYTES
#endif
/* V's rows: Dv values (an f16 cache where Dv differs from Dk), padded alike */
#if AVK_DV == AVK_D
#define DEC_ROW_BYTES_V DEC_ROW_BYTES
#define DEC_RAW_ROW_V DEC_RAW_ROW
#else
#define DEC_ROW_BYTES_V (AVK_DV * 2)
#if DEC_ROW_BYTES_V % 32 == 0
#define DEC_RAW_ROW_V (DEC_ROW_BYTES_V + 16)
#else
#define DEC_RAW_ROW_V DEC_ROW_BYTES_V
#endif
#endif
#define DEC_RAW_TILE (AVK_BC * DEC_RAW_ROW)     /* K's raw tile */
#define DEC_RAW_TILE_V (AVK_BC * DEC_RAW_ROW_V) /* V's, after K's in a stage */
#define DEC_STAGE (DEC_RAW_TILE + DEC_RAW_TILE_V)
#define DEC_WARP_RING (DEC_ST * DEC_STAGE)
/* stage i's offset in a warp's ring (equal rows: as the body always wrote it) */
#if AVK_DV == AVK_D
#define DEC_STAGE_AT(i) ((i) * 2 * DEC_RAW_TILE)
#else
#define DEC_STAGE_AT(i) ((i) * DEC_STAGE)
#endif
#if DEC_ROW_BYTES % 16 == 0
#define DEC_GRAIN 16
#elif DEC_ROW_BYTES % 8 == 0
#define DEC_GRAIN 8
#elif DEC_ROW_BYTES % 4 == 0
#define DEC_GRAIN 4
#else
#define DEC_GRAIN 2
#endif
#define DEC_CHUNKS (DEC_ROW_BYTES / DEC_GRAIN) /* copies per row */
#define DEC_CHUNKS_V (DEC_ROW_BYTES_V / DEC_GRAIN)
#if DEC_ROW_BYTES_V % DEC_GRAIN
#error "mma-decode: V's rows must take K's copy grain"
#endif
#define DEC_RING_BYTES (DEC_KW * DEC_WARP_RING)
#define DEC_MERGE_BYTES (DEC_KW * 16 * (AVK_DV + 2) * 4)
#define DEC_LOCAL_BYTES (DEC_RING_BYTES > DEC_MERGE_BYTES ? DEC_RING_BYTES : DEC_MERGE_BYTES)
#define DEC_BLOCK_SCALED (AVK_KV_FORMAT == AVK_KV_Q8_0 || AVK_KV_FORMAT == AVK_KV_Q4_0)
/* quantized V fragments read a key's codes four at a time (avk_dec_v_frag_quad).
 * H100 64k (sweep-25 against sweep-24): fp8 0.468 -> 0.435 ms, q4_0 0.383 ->
 * 0.382; q8_0 0.511 -> 0.522 (two 16-bit loads a quad), so q8_0 keeps a load per value */
#ifndef AVK_DEC_Q8_QUADS
#define AVK_DEC_Q8_QUADS 0
#endif
#define DEC_QUADS (AVK_KV_QUANT && AVK_D % 32 == 0 && (AVK_KV_FORMAT != AVK_KV_Q8_0 || AVK_DEC_Q8_QUADS))
/* K's code fragments by quads too: D is permuted within each 32-value block
 * (Q's fragments alike, so Q.K is unchanged) so that lane 4g+t's four values
 * of k-step kk are quad 4(kk % 2) + t of block kk / 2: one or two loads where
 * pairs took four. H100 64k (sweep-s14-quant2): q4_0 0.382 -> 0.372 ms (row
 * copies); q8_0 0.494 -> 0.498, so q8_0 keeps pairs. AVK_DEC_K_QUADS=0/1
 * overrides (a tuning A/B). */
#ifndef AVK_DEC_K_QUADS
#define AVK_DEC_K_QUADS (AVK_KV_FORMAT != AVK_KV_Q8_0)
#endif
#define DEC_KQ (AVK_KV_QUANT && AVK_D % 32 == 0 && AVK_DEC_K_QUADS)
#if AVK_KV_FORMAT == AVK_KV_Q8_0
#define DEC_BLOCK_BYTES 34
#else
#define DEC_BLOCK_BYTES 18
#endif
#define DEC_CODE_UNIT (AVK_KV_FORMAT == AVK_KV_FP8 ? 256.0f : 1.0f) /* what a code of 1 is worth */

/* cp.async.wait_group takes an immediate: STAGES - 2 tiles may stay in flight */
#if DEC_ST == 2
#define DEC_WAIT_N "0"
#elif DEC_ST == 3
#define DEC_WAIT_N "1"
#elif DEC_ST == 4
#define DEC_WAIT_N "2"
#elif DEC_ST == 5
#define DEC_WAIT_N "3"
#elif DEC_ST == 6
#define DEC_WAIT_N "4"
#else
#error "mma-decode: AVK_STAGES must be 2..6"
#endif
#if AVK_BC != 16 && AVK_BC != 32
#error "mma-decode: AVK_BC must be 16 or 32"
#endif

#if AVK_EMULATE
/* every lane of the work-group reaches these together (uniform loops) */
#define DEC_SYNCWARP() barrier(CLK_LOCAL_MEM_FENCE)
#define DEC_WAIT() ((void)0)
#define DEC_WAIT_ALL() ((void)0)
#define DEC_COMMIT() ((void)0)
#else
#define DEC_SYNCWARP() AVK_ASM("bar.warp.sync 0xffffffff;" ::: "memory")
#define DEC_WAIT() AVK_ASM("cp.async.wait_group " DEC_WAIT_N ";" ::: "memory")
#define DEC_WAIT_ALL() AVK_ASM("cp.async.wait_group 0;" ::: "memory")
#define DEC_COMMIT() AVK_ASM("cp.async.commit_group;" ::: "memory")
/* v of lane src (all 32 lanes take part) */
inline uint avk_dec_shfl(uint v, int src)
{
    uint r;
    AVK_ASM("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(src));
    return r;
}
#endif

/* One GRAIN-byte piece of a raw row (zeros when !in): cp.async where the
 * piece is 4, 8 or 16 bytes (.cg takes only 16), else a plain copy. */
inline void avk_dec_copy(__local uchar *dst, __global const uchar *src, int in)
{
#if AVK_EMULATE || DEC_GRAIN == 2
    for (int i = 0; i < DEC_GRAIN; i += 2) *(__local ushort *)(dst + i) = in ? *(__global const ushort *)(src + i) : 0;
#elif DEC_GRAIN == 16
    AVK_ASM("cp.async.cg.shared.global" AVK_CP_L2_HINT " [%0], [%1], 16, %2;" ::"r"((uint)(size_t)dst), "l"(src), "r"(in ? 16 : 0)
            : "memory");
#elif DEC_GRAIN == 8
    AVK_ASM("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"((uint)(size_t)dst), "l"(src), "r"(in ? 8 : 0)
            : "memory");
#else
    AVK_ASM("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"((uint)(size_t)dst), "l"(src), "r"(in ? 4 : 0)
            : "memory");
#endif
}

/* The K/V row of key key0 + lane for lanes below valid (and BC), else 0:
 * read one tile ahead of its copies, so they never wait on the table. */
inline uint avk_dec_row(const avk_kernel_args *a, __global const int *block_table, const avk_work *w, int key0,
                        int valid, int lane)
{
    return lane < AVK_BC && lane < valid ? (uint)avk_kv_row(a, block_table, w->b, w->g, key0 + lane) : 0u;
}

/* Keys [key0, key0 + BC) of K or V, raw, into a warp's stage; the copies
 * find their rows by shuffle (emulated: rows[], published by the caller).
 * Rows at or past valid are zero-filled. One body for K's rows and, where
 * Dv differs, V's (CHUNKS copies of a ROW_BYTES row, RAW_ROW apart). */
#if AVK_EMULATE
#define DEC_LOAD_PARAMS __local uchar *dst, __global const uchar *base, __local const uint *rows, int valid, int lane
#define DEC_LOAD_ROW(r) rows[r]
#else
#define DEC_LOAD_PARAMS __local uchar *dst, __global const uchar *base, uint my_row, int valid, int lane
#define DEC_LOAD_ROW(r) avk_dec_shfl(my_row, r)
#endif
#define DEC_LOAD_BODY(CHUNKS, RAW_ROW, ROW_BYTES)                                                              \
    {                                                                                                          \
        /* whole-warp trip count: every lane reaches every shuffle */                                          \
        for (int c0 = 0; c0 < AVK_BC * (CHUNKS); c0 += 32) {                                                   \
            const int c = c0 + lane;                                                                           \
            const int r = c < AVK_BC * (CHUNKS) ? c / (CHUNKS) : 0, k = c - r * (CHUNKS);                      \
            const uint row = DEC_LOAD_ROW(r);                                                                  \
            if (c >= AVK_BC * (CHUNKS)) continue;                                                              \
            avk_dec_copy(dst + r * (RAW_ROW) + k * DEC_GRAIN, base + (ulong)row * (ROW_BYTES) + k * DEC_GRAIN, \
                         r < valid);                                                                           \
        }                                                                                                      \
    }
inline void avk_dec_load(DEC_LOAD_PARAMS) DEC_LOAD_BODY(DEC_CHUNKS, DEC_RAW_ROW, DEC_ROW_BYTES)
#if AVK_DV == AVK_D
#define avk_dec_load_v avk_dec_load
#else
inline void avk_dec_load_v(DEC_LOAD_PARAMS) DEC_LOAD_BODY(DEC_CHUNKS_V, DEC_RAW_ROW_V, DEC_ROW_BYTES_V)
#endif

#if AVK_KV_QUANT
/* x - bias per f16 half (the results are exact small integers) */
inline uint avk_dec_sub_f16x2(uint x, uint bias)
{
#if AVK_EMULATE
    return avk_pack_f16x2(avk_half_lo(x) - avk_half_lo(bias), avk_half_hi(x) - avk_half_hi(bias));
#else
    uint r;
    AVK_ASM("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(bias));
    return r;
#endif
}

/* two codes (lo, hi: 8 bits each, q4_0 already a nibble) as an f16x2 of their values */
inline uint avk_dec_codes_f16x2(uint lo, uint hi)
{
#if AVK_KV_FORMAT == AVK_KV_FP8
    /* e4m3 bits placed in an f16 (sign to bit 15, exponent and mantissa
     * from bit 7) read as value / 256: exact, subnormals included */
    const uint x = lo | hi << 16;
    return ((x & 0x007f007fu) << 7) | ((x & 0x00800080u) << 8);
#elif AVK_KV_FORMAT == AVK_KV_Q8_0
    /* 1024 + u as an f16 is 0x6400 | u for u < 1024: int8 + 128, less 1152 */
    return avk_dec_sub_f16x2(((lo ^ 0x80u) | (hi ^ 0x80u) << 16) | 0x64006400u, 0x64806480u);
#else
    return avk_dec_sub_f16x2((lo | hi << 16) | 0x64006400u, 0x64086408u); /* nibble, less 1032 */
#endif
}

/* the code bits of value d of a raw row (a byte, or one nibble) */
inline uint avk_dec_code(__local const uchar *row, int d)
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    return row[(d / 32) * 34 + 2 + d % 32];
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
    const int k = d % 32;
    return (uint)(row[(d / 32) * 18 + 2 + k % 16] >> (k < 16 ? 0 : 4)) & 15u;
#else
    return row[d];
#endif
}

/* values d, d + 1 (d even) of a raw row as an f16x2 of their codes: one 16-bit read */
inline uint avk_dec_code_pair(__local const uchar *row, int d)
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    const uint q = *(__local const ushort *)(row + (d / 32) * 34 + 2 + d % 32);
    return avk_dec_codes_f16x2(q & 0xffu, q >> 8);
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
    const int k = d % 32;
    const uint q = (uint)*(__local const ushort *)(row + (d / 32) * 18 + 2 + k % 16) >> (k < 16 ? 0 : 4);
    return avk_dec_codes_f16x2(q & 15u, (q >> 8) & 15u);
#else
    const uint q = *(__local const ushort *)(row + d);
    return avk_dec_codes_f16x2(q & 0xffu, q >> 8);
#endif
}
#endif

#if DEC_QUADS || DEC_KQ
/* Quantized V in quads: O's n-tiles 4t .. 4t+3 are value block t (32 values)
 * and column g of n-tile 4t + e holds value 32t + avk_dec_quad_value(g, e),
 * so lane 4g+. reads a key's four values of a block with one or two loads
 * (byte codes: 4g .. 4g+3; q4_0: the two nibbles of bytes 2g, 2g+1), not a
 * load per value. The merge stores O back in value order. */
inline int avk_dec_quad_value(int g, int e)
{
#if AVK_KV_FORMAT == AVK_KV_Q4_0
    return 2 * g + (e & 1) + (e & 2) * 8;
#else
    return 4 * g + e;
#endif
}

/* the four codes of block t of a raw row that column g reads, byte e = quad value e */
inline uint avk_dec_code_quad(__local const uchar *row, int t, int g)
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    /* odd blocks' codes start 4-byte aligned (rows are 8-byte aligned), even blocks' 2-byte */
    if (((t * 34 + 2) & 3) == 0) return *(__local const uint *)(row + t * 34 + 2 + 4 * g);
    __local const ushort *q = (__local const ushort *)(row + t * 34 + 2 + 4 * g);
    return (uint)q[0] | (uint)q[1] << 16;
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
    const uint q = *(__local const ushort *)(row + t * 18 + 2 + 2 * g);
    return (q & 0x0f0fu) | (q & 0xf0f0u) << 12; /* low nibbles to bytes 0, 1; high to 2, 3 */
#else
    return *(__local const uint *)(row + t * 32 + 4 * g);
#endif
}

#endif
#if DEC_QUADS
/* B fragments of k-step kk (keys) for O += P V over n-tiles 4t .. 4t+3:
 * b[2e + h] n-tile 4t + e, keys kk*16 + 8h + 2(lane%4), +1 */
inline void avk_dec_v_frag_quad(uint b[8], __local const uchar *v_tile, int kk, int t, int lane)
{
    const int k0 = kk * 16 + (lane % 4) * 2, g = lane / 4;
    for (int h = 0; h < 2; ++h) {
        __local const uchar *row = v_tile + (k0 + 8 * h) * DEC_RAW_ROW_V;
        const uint lo = avk_dec_code_quad(row, t, g), hi = avk_dec_code_quad(row + DEC_RAW_ROW_V, t, g);
        for (int e = 0; e < 4; ++e) b[2 * e + h] = avk_dec_codes_f16x2((lo >> 8 * e) & 0xffu, (hi >> 8 * e) & 0xffu);
    }
}
#endif

#if DEC_BLOCK_SCALED
/* the f16 scale of the 32-value block holding value d of a raw row */
inline float avk_dec_block_scale(__local const uchar *row, int d)
{
    return vload_half(0, (__local const half *)(row + (d / 32) * DEC_BLOCK_BYTES));
}
#endif

/* B fragments of n-tiles n, n+1 (keys) and k-step kk (D) for S = Q K^T, in
 * ldmatrix_x4's order: b[0..1] n-tile n, b[2..3] n-tile n + 1. Lane 4g+t
 * holds, of matrix j, key (n + j/2)*8 + g at D columns kk*16 + (j%2)*8 + 2t, +1. */
inline void avk_dec_k_frag(uint b[4], __local const uchar *k_tile, int n, int kk, int lane)
{
#if DEC_KQ
    for (int t = 0; t < 2; ++t) { /* b[2t]: the quad's bytes 0, 1; b[2t + 1]: bytes 2, 3 */
        const uint q = avk_dec_code_quad(k_tile + ((n + t) * 8 + lane / 4) * DEC_RAW_ROW, kk / 2, 4 * (kk % 2) + lane % 4);
        b[2 * t] = avk_dec_codes_f16x2(q & 0xffu, (q >> 8) & 0xffu);
        b[2 * t + 1] = avk_dec_codes_f16x2((q >> 16) & 0xffu, q >> 24);
    }
#elif AVK_KV_QUANT
    for (int t = 0; t < 2; ++t) {
        __local const uchar *row = k_tile + ((n + t) * 8 + lane / 4) * DEC_RAW_ROW;
        const int d0 = kk * 16 + (lane % 4) * 2;
        b[2 * t] = avk_dec_code_pair(row, d0);
        b[2 * t + 1] = avk_dec_code_pair(row, d0 + 8);
    }
#elif AVK_EMULATE
    const int g = lane >> 2, t = lane & 3;
    for (int j = 0; j < 4; ++j)
        b[j] = *(__local const uint *)(k_tile + ((n + j / 2) * 8 + g) * DEC_RAW_ROW + (kk * 16 + (j % 2) * 8 + 2 * t) * 2);
#else
    const int r = (lane / 16) * 8 + lane % 8, c = ((lane / 8) % 2) * 8;
    __local const uchar *p = k_tile + (n * 8 + r) * DEC_RAW_ROW + (kk * 16 + c) * 2;
    AVK_ASM("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
            : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
            : "r"((uint)(size_t)p));
#endif
}

/* B fragments of k-step kk (keys) and n-tiles n, n+1 (D) for O += P V, in
 * ldmatrix_x4_trans's order: b[0..1] n-tile n (keys +0, +8), b[2..3] n + 1.
 * Lane 4g+t holds, of matrix j, keys kk*16 + (j%2)*8 + 2t, +1 at D column (n + j/2)*8 + g. */
inline void avk_dec_v_frag(uint b[4], __local const uchar *v_tile, int kk, int n, int lane)
{
#if AVK_KV_QUANT
    const int k0 = kk * 16 + (lane % 4) * 2;
    for (int t = 0; t < 2; ++t) {
        const int d = (n + t) * 8 + lane / 4;
        for (int h = 0; h < 2; ++h) {
            __local const uchar *row = v_tile + (k0 + 8 * h) * DEC_RAW_ROW_V; /* keys k0 + 8h and the next */
            b[2 * t + h] = avk_dec_codes_f16x2(avk_dec_code(row, d), avk_dec_code(row + DEC_RAW_ROW_V, d));
        }
    }
#elif AVK_EMULATE
    const int g = lane >> 2, t = lane & 3;
    for (int j = 0; j < 4; ++j) {
        __local const uchar *p = v_tile + (kk * 16 + (j % 2) * 8 + 2 * t) * DEC_RAW_ROW_V + ((n + j / 2) * 8 + g) * 2;
        b[j] = (uint)*(__local const ushort *)p | ((uint)*(__local const ushort *)(p + DEC_RAW_ROW_V) << 16);
    }
#else
    const int r = ((lane / 8) % 2) * 8 + lane % 8, c = (lane / 16) * 8;
    __local const uchar *p = v_tile + (kk * 16 + r) * DEC_RAW_ROW_V + (n * 8 + c) * 2;
    AVK_ASM("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
            : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
            : "r"((uint)(size_t)p));
#endif
}

/* A contiguous cache's whole tile is one run of BC rows, stored unpadded in
 * the ring: 16-byte copies without a shuffle per copy (q8_0: 9 a lane where
 * rows take 17 of 8 bytes). Both K's and V's runs must be 16-byte aligned.
 * H100 64k (sweep-s14-quant, -quant2): q8_0 0.514 -> 0.503 ms; q4_0 slower
 * (0.382 -> 0.442 with pairs, 0.372 -> 0.427 with K quads; CUDA's q4_0 gains,
 * 0.440 -> 0.354, unexplained), so q4_0 keeps row copies. AVK_DEC_LINEAR=0/1 overrides. */
#ifndef AVK_DEC_LINEAR
#define AVK_DEC_LINEAR (AVK_KV_FORMAT != AVK_KV_Q4_0)
#endif
#define DEC_LINEAR (AVK_DEC_LINEAR && !AVK_EMULATE && AVK_DV == AVK_D && DEC_RAW_ROW == DEC_ROW_BYTES && DEC_RAW_TILE % 16 == 0)
#if DEC_LINEAR
inline int avk_dec_linear(const avk_kernel_args *a, __global const uchar *k, __global const uchar *v, uint row0, int valid)
{
    const ulong off = (ulong)row0 * DEC_ROW_BYTES;
    return a->page_size == 0 && a->kv_ss == 1 && valid == AVK_BC && (((size_t)(k + off) | (size_t)(v + off)) & 15) == 0;
}

inline void avk_dec_load_linear(__local uchar *dst, __global const uchar *base, uint row0, int lane)
{
    __global const uchar *src = base + (ulong)row0 * DEC_ROW_BYTES;
    for (int c = lane; c < DEC_RAW_TILE / 16; c += 32)
        AVK_ASM("cp.async.cg.shared.global" AVK_CP_L2_HINT " [%0], [%1], 16;" ::"r"((uint)(size_t)(dst + c * 16)), "l"(src + c * 16)
                : "memory");
}

/* K's and V's tile into stage as runs where avk_dec_linear allows (the row
 * shuffle is the whole warp's: tile issues are warp-uniform); 0 otherwise */
inline int avk_dec_issue_linear(const avk_kernel_args *a, __local uchar *stage, __global const uchar *k,
                                __global const uchar *v, uint my_row, int valid, int lane)
{
    const uint row0 = avk_dec_shfl(my_row, 0);
    if (!avk_dec_linear(a, k, v, row0, valid)) return 0;
    avk_dec_load_linear(stage, k, row0, lane);
    avk_dec_load_linear(stage + DEC_RAW_TILE, v, row0, lane);
    return 1;
}
#endif

/* issue tile tn (rows in my_row) into stage, and read the rows of the tile after next */
#if AVK_EMULATE
#define DEC_ISSUE(stage, tn)                                                                   \
    do {                                                                                       \
        const int valid_ = (tn) < w.t_end ? min(AVK_BC, w.kv_end - (tn) * AVK_BC) : 0;         \
        emu_rows[warp * 32 + lane] = my_row;                                                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        avk_dec_load((stage), K, emu_rows + warp * 32, valid_, lane);                          \
        avk_dec_load_v((stage) + DEC_RAW_TILE, V, emu_rows + warp * 32, valid_, lane);         \
        barrier(CLK_LOCAL_MEM_FENCE); /* rows read before the next issue writes them */       \
    } while (0)
#else
#define DEC_ISSUE(stage, tn)                                                                   \
    do {                                                                                       \
        if ((tn) < w.t_end) {                                                                  \
            const int valid_ = min(AVK_BC, w.kv_end - (tn) * AVK_BC);                          \
            if (DEC_LINEAR_ISSUE((stage), valid_)) break;                                      \
            avk_dec_load((stage), K, my_row, valid_, lane);                                    \
            avk_dec_load_v((stage) + DEC_RAW_TILE, V, my_row, valid_, lane);                   \
        }                                                                                      \
    } while (0)
#endif
#if DEC_LINEAR
#define DEC_LINEAR_ISSUE(stage, valid) avk_dec_issue_linear(a, (stage), K, V, my_row, (valid), lane)
#else
#define DEC_LINEAR_ISSUE(stage, valid) 0
#endif
#define DEC_NEXT_ROW(tn)                                                                                       \
    (my_row = avk_dec_row(a, block_table, &w, (tn) * AVK_BC,                                                   \
                          (tn) < w.t_end ? w.kv_end - (tn) * AVK_BC : 0, lane))

__kernel __attribute__((reqd_work_group_size(DEC_WG, 1, 1)))
void avk_flash_decode(AVK_CONTRACT_ARGS(ushort))
{
    const avk_kernel_args *a = &args;
    const int tid = get_local_id(0);
    const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const avk_work w = avk_locate(a, seq_lens, mask, 16, AVK_BC);
    __local uint4 smem[DEC_LOCAL_BYTES / 16];
    __local uchar *ring = (__local uchar *)smem + warp * DEC_WARP_RING;
#if AVK_EMULATE
    __local float emu_a[DEC_KW * 256], emu_b[DEC_KW * 128], emu_x[DEC_WG];
    __local uint emu_rows[DEC_WG];
    const avk_emu emu = {emu_a, emu_b, emu_x, warp, lane};
#endif
    /* packed rows g and g+8 of the work-group's 16 */
    const int row_a = w.r0 + g, row_b = row_a + 8;
    const int in_a = row_a < w.r_end, in_b = row_b < w.r_end;
    const int lim_a = avk_row_key_end(a, &w, row_a), lim_b = avk_row_key_end(a, &w, row_b);
    const int max_end = avk_row_key_end(a, &w, w.r_end - 1); /* no row sees keys past this */
#if AVK_SCORE_BOUNDS
    const int lo_a = avk_row_key_begin(a, &w, row_a), lo_b = avk_row_key_begin(a, &w, row_b);
#endif
#if AVK_KV_QUANT
    const float code_unit = DEC_CODE_UNIT;
#else
    const float code_unit = 1.0f;
#endif
    /* fp8: K's per-head scale folds into S, V's into the final O */
    const float scale_log2 = args.scale_log2 * avk_kv_scale(a, kv_scales, 0, w.g) * code_unit;
#if AVK_SCORE_MOD
    /* the score hook's row inputs; s_unit turns its output into log2 units
     * (scale_log2, or c log2(e) on the softcap's tanh) */
    const avk_frag_rows fr = avk_frag_rows_of(a, &w, alibi_slopes, row_a, row_b, scale_log2);
    const float s_unit = fr.unit;
#else
    const float s_unit = scale_log2;
#endif

    /* each warp's first STAGES - 1 tiles, one commit group each */
    const int t_first = w.t_begin + warp;
    uint my_row;
    for (int s = 0; s < DEC_ST - 1; ++s) {
        const int tn = t_first + s * DEC_KW;
        DEC_NEXT_ROW(tn);
        DEC_ISSUE(ring + DEC_STAGE_AT(s), tn);
        DEC_COMMIT();
    }
    DEC_NEXT_ROW(t_first + (DEC_ST - 1) * DEC_KW);

    /* Q fragments of rows g (qa) and g+8 (qb): .x = columns 2t.., .y = 2t+8.. */
    uint2 qa[AVK_KS], qb[AVK_KS];
    {
        __global const ushort *pa = Q + avk_q_row(a, &w, row_a), *pb = Q + avk_q_row(a, &w, row_b);
AVK_PRAGMA_UNROLL
        for (int ks = 0; ks < AVK_KS; ++ks) {
#if DEC_KQ /* K's quad order (avk_dec_k_frag): values 0, 1 and 2, 3 of quad 4(ks % 2) + t of block ks / 2 */
            const int c0 = (ks / 2) * 32 + avk_dec_quad_value(4 * (ks % 2) + t, 0),
                      c8 = (ks / 2) * 32 + avk_dec_quad_value(4 * (ks % 2) + t, 2);
#else
            const int c0 = ks * 16 + 2 * t, c8 = c0 + 8;
#endif
            qa[ks] = in_a ? (uint2)(*(__global const uint *)(pa + c0), *(__global const uint *)(pa + c8)) : (uint2)(0u);
            qb[ks] = in_b ? (uint2)(*(__global const uint *)(pb + c0), *(__global const uint *)(pb + c8)) : (uint2)(0u);
        }
    }

    float oacc[AVK_DT][4];
AVK_PRAGMA_UNROLL
    for (int dt = 0; dt < AVK_DT; ++dt) oacc[dt][0] = oacc[dt][1] = oacc[dt][2] = oacc[dt][3] = 0.0f;
    float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.0f, l_b = 0.0f;

    /* the same trip count for every warp (the emulation's barriers need it) */
    const int rounds = (w.t_end - w.t_begin + DEC_KW - 1) / DEC_KW;
    for (int i = 0; i < rounds; ++i) {
        const int tile = t_first + i * DEC_KW;
        /* this lane's copies of tile i have landed; the warp barrier makes
         * every lane's visible and says the stage read last round is free */
        DEC_WAIT();
        DEC_SYNCWARP();
        {
            const int tn = tile + (DEC_ST - 1) * DEC_KW;
            DEC_ISSUE(ring + DEC_STAGE_AT((i + DEC_ST - 1) % DEC_ST), tn);
            DEC_COMMIT();
            DEC_NEXT_ROW(tn + DEC_KW);
        }
        const int key0 = tile * AVK_BC;
        const int live = tile < w.t_end && key0 < max_end;
#if !AVK_EMULATE
        if (!live) continue; /* warp-uniform */
#endif
        __local const uchar *k_tile = ring + DEC_STAGE_AT(i % DEC_ST);
        __local const uchar *v_tile = k_tile + DEC_RAW_TILE;

        float s[AVK_NT][4];
#if DEC_BLOCK_SCALED
        /* S = sum over 32-value blocks of d_K[key][block] * (Q_block . codes_block) */
AVK_PRAGMA_UNROLL
        for (int n = 0; n < AVK_NT; n += 2) {
AVK_PRAGMA_UNROLL
            for (int blk = 0; blk < AVK_D / 32; ++blk) {
                float sb[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
AVK_PRAGMA_UNROLL
                for (int kk = 2 * blk; kk < 2 * blk + 2; ++kk) {
                    uint b[4];
                    avk_dec_k_frag(b, k_tile, n, kk, lane);
                    avk_mma(sb[0], qa[kk].x, qb[kk].x, qa[kk].y, qb[kk].y, b[0], b[1] AVK_EMU_ARG);
                    avk_mma(sb[1], qa[kk].x, qb[kk].x, qa[kk].y, qb[kk].y, b[2], b[3] AVK_EMU_ARG);
                }
AVK_PRAGMA_UNROLL
                for (int h = 0; h < 2; ++h)
AVK_PRAGMA_UNROLL
                    for (int c = 0; c < 2; ++c) { /* this lane's keys: columns 2t + c */
                        const float dk = avk_dec_block_scale(k_tile + ((n + h) * 8 + 2 * t + c) * DEC_RAW_ROW, blk * 32);
                        if (blk == 0) {
                            s[n + h][c] = sb[h][c] * dk;
                            s[n + h][c + 2] = sb[h][c + 2] * dk;
                        } else {
                            s[n + h][c] += sb[h][c] * dk;
                            s[n + h][c + 2] += sb[h][c + 2] * dk;
                        }
                    }
            }
        }
#else
AVK_PRAGMA_UNROLL
        for (int n = 0; n < AVK_NT; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
AVK_PRAGMA_UNROLL
        for (int kk = 0; kk < AVK_KS; ++kk)
AVK_PRAGMA_UNROLL
            for (int n = 0; n < AVK_NT; n += 2) {
                uint b[4];
                avk_dec_k_frag(b, k_tile, n, kk, lane);
                avk_mma(s[n], qa[kk].x, qb[kk].x, qa[kk].y, qb[kk].y, b[0], b[1] AVK_EMU_ARG);
                avk_mma(s[n + 1], qa[kk].x, qb[kk].x, qa[kk].y, qb[kk].y, b[2], b[3] AVK_EMU_ARG);
            }
#endif

        /* the score hook (mma_ops.cl) on the raw scores, then into the log2
         * domain; mask keys outside each row's visible range on edge tiles
         * (everything, on a round the emulation runs with no tile) */
#if AVK_SCORE_MOD
        avk_frag_score_mod(s, a, &fr, mask, key0, t, lim_a, lim_b, 0);
#endif
#if AVK_SCORE_BOUNDS
        const int tile_full = live && key0 + AVK_BC <= w.kv_full && key0 >= w.kv_full_begin;
#else
        const int tile_full = live && key0 + AVK_BC <= w.kv_full;
#endif
        const int end_a = live ? lim_a : 0, end_b = live ? lim_b : 0;
        float mx_a = m_a, mx_b = m_b;
AVK_PRAGMA_UNROLL
        for (int n = 0; n < AVK_NT; ++n) {
AVK_PRAGMA_UNROLL
            for (int r = 0; r < 4; ++r) {
                s[n][r] *= s_unit;
                if (!tile_full) {
                    const int key = key0 + n * 8 + 2 * t + (r & 1);
#if AVK_SCORE_BOUNDS
                    if (key >= (r < 2 ? end_a : end_b) || key < (r < 2 ? lo_a : lo_b)) s[n][r] = -INFINITY;
#else
                    if (key >= (r < 2 ? end_a : end_b)) s[n][r] = -INFINITY;
#endif
                }
            }
            mx_a = fmax(mx_a, fmax(s[n][0], s[n][1]));
            mx_b = fmax(mx_b, fmax(s[n][2], s[n][3]));
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
        for (int n = 0; n < AVK_NT; ++n) {
            s[n][0] = AVK_EXP2(s[n][0] - base_a);
            s[n][1] = AVK_EXP2(s[n][1] - base_a);
            s[n][2] = AVK_EXP2(s[n][2] - base_b);
            s[n][3] = AVK_EXP2(s[n][3] - base_b);
            sum_a += s[n][0] + s[n][1];
            sum_b += s[n][2] + s[n][3];
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

        /* O += P V: P's A fragment for keys 16kc.. is S n-tiles 2kc and 2kc+1 */
AVK_PRAGMA_UNROLL
        for (int kc = 0; kc < AVK_KC; ++kc) {
#if DEC_BLOCK_SCALED
            /* O += (P * d_V[key][block]) . codes: P scaled per 32-value block
             * of D, which is n-tiles 4 blk .. 4 blk + 3 of O */
            const int k0 = kc * 16 + 2 * t;
AVK_PRAGMA_UNROLL
            for (int blk = 0; blk < AVK_DV / 32; ++blk) {
                float dv[4];
AVK_PRAGMA_UNROLL
                for (int c = 0; c < 4; ++c)
                    dv[c] = avk_dec_block_scale(v_tile + (k0 + (c / 2) * 8 + c % 2) * DEC_RAW_ROW_V, blk * 32);
                const uint p0 = avk_pack_f16x2(s[2 * kc][0] * dv[0], s[2 * kc][1] * dv[1]);
                const uint p1 = avk_pack_f16x2(s[2 * kc][2] * dv[0], s[2 * kc][3] * dv[1]);
                const uint p2 = avk_pack_f16x2(s[2 * kc + 1][0] * dv[2], s[2 * kc + 1][1] * dv[3]);
                const uint p3 = avk_pack_f16x2(s[2 * kc + 1][2] * dv[2], s[2 * kc + 1][3] * dv[3]);
#if DEC_QUADS
                uint b[8];
                avk_dec_v_frag_quad(b, v_tile, kc, blk, lane);
AVK_PRAGMA_UNROLL
                for (int e = 0; e < 4; ++e) avk_mma(oacc[4 * blk + e], p0, p1, p2, p3, b[2 * e], b[2 * e + 1] AVK_EMU_ARG);
#else
AVK_PRAGMA_UNROLL
                for (int n = 4 * blk; n < 4 * blk + 4; n += 2) {
                    uint b[4];
                    avk_dec_v_frag(b, v_tile, kc, n, lane);
                    avk_mma(oacc[n], p0, p1, p2, p3, b[0], b[1] AVK_EMU_ARG);
                    avk_mma(oacc[n + 1], p0, p1, p2, p3, b[2], b[3] AVK_EMU_ARG);
                }
#endif
            }
#else
            const uint p0 = avk_pack_f16x2(s[2 * kc][0], s[2 * kc][1]);
            const uint p1 = avk_pack_f16x2(s[2 * kc][2], s[2 * kc][3]);
            const uint p2 = avk_pack_f16x2(s[2 * kc + 1][0], s[2 * kc + 1][1]);
            const uint p3 = avk_pack_f16x2(s[2 * kc + 1][2], s[2 * kc + 1][3]);
#if DEC_QUADS
AVK_PRAGMA_UNROLL
            for (int blk = 0; blk < AVK_DV / 32; ++blk) {
                uint b[8];
                avk_dec_v_frag_quad(b, v_tile, kc, blk, lane);
AVK_PRAGMA_UNROLL
                for (int e = 0; e < 4; ++e) avk_mma(oacc[4 * blk + e], p0, p1, p2, p3, b[2 * e], b[2 * e + 1] AVK_EMU_ARG);
            }
#else
AVK_PRAGMA_UNROLL
            for (int n = 0; n < AVK_DT; n += 2) {
                uint b[4];
                avk_dec_v_frag(b, v_tile, kc, n, lane);
                avk_mma(oacc[n], p0, p1, p2, p3, b[0], b[1] AVK_EMU_ARG);
                avk_mma(oacc[n + 1], p0, p1, p2, p3, b[2], b[3] AVK_EMU_ARG);
            }
#endif
#endif
        }
    }
    DEC_WAIT_ALL();
    barrier(CLK_LOCAL_MEM_FENCE); /* every ring is free: the merge reuses them */

    /* ---- merge the warps: per warp m[16], l[16] and O[16][D] (f32, unnormalized) ---- */
    __local float *m_all = (__local float *)smem, *l_all = m_all + DEC_KW * 16, *o_all = l_all + DEC_KW * 16;
    l_a += avk_quad_xor(l_a, 1 AVK_EMU_ARG);
    l_a += avk_quad_xor(l_a, 2 AVK_EMU_ARG);
    l_b += avk_quad_xor(l_b, 1 AVK_EMU_ARG);
    l_b += avk_quad_xor(l_b, 2 AVK_EMU_ARG);
    if (t == 0) {
        m_all[warp * 16 + g] = m_a;
        m_all[warp * 16 + g + 8] = m_b;
        l_all[warp * 16 + g] = l_a;
        l_all[warp * 16 + g + 8] = l_b;
    }
    {
        __local float *oa = o_all + (warp * 16 + g) * AVK_DV, *ob = oa + 8 * AVK_DV;
AVK_PRAGMA_UNROLL
        for (int dt = 0; dt < AVK_DT; ++dt)
            for (int j = 0; j < 2; ++j) {
#if DEC_QUADS
                const int d = (dt / 4) * 32 + avk_dec_quad_value(2 * t + j, dt % 4); /* n-tile dt's column 2t + j */
#else
                const int d = dt * 8 + 2 * t + j;
#endif
                oa[d] = oacc[dt][j];
                ob[d] = oacc[dt][2 + j];
            }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const float v_scale = avk_kv_scale(a, kv_scales, 1, w.g) * code_unit; /* fp8: V's scale, once per row */
    const int split = (args.flags & AVK_FLAG_SPLIT) != 0;
    const int write_lse = (args.flags & AVK_FLAG_WRITE_LSE) != 0;
    for (int e = tid; e < 16 * AVK_DV; e += DEC_WG) {
        const int r = e / AVK_DV, d = e - r * AVK_DV, R = w.r0 + r;
        if (R >= w.r_end) continue;
        float mx = -INFINITY;
        for (int k = 0; k < DEC_KW; ++k) mx = fmax(mx, m_all[k * 16 + r]);
        float l = 0.0f, o = 0.0f;
        if (mx != -INFINITY)
            for (int k = 0; k < DEC_KW; ++k) {
                const float m = m_all[k * 16 + r];
                const float f = m == -INFINITY ? 0.0f : AVK_EXP2(m - mx);
                l += f * l_all[k * 16 + r];
                o += f * o_all[(k * 16 + r) * AVK_DV + d];
            }
#if AVK_SCORE_BOUNDS
        if ((args.flags & AVK_FLAG_SINKS) && !split) {
            /* the sink joins the denominator (split partials leave it to the merge kernel) */
            const float sink = sinks[w.h + R % (int)a->pack] * AVK_LOG2E, top = fmax(mx, sink);
            const float keep = mx == -INFINITY ? 0.0f : AVK_EXP2(mx - top);
            l = l * keep + AVK_EXP2(sink - top);
            o *= keep;
            mx = top;
        }
#endif
        const float x = l > 0.0f ? o * (v_scale / l) : 0.0f;
        const float lse = l > 0.0f ? (mx + log2(l)) * AVK_LN2 : -INFINITY;
        if (split) {
            const long row = avk_split_base(a, &w) + avk_lse_row(a, &w, R);
            part_O[row * AVK_DV + d] = x;
            if (d == 0) part_LSE[row] = lse;
        } else {
            vstore_half_rte(x, 0, (__global half *)(O + avk_o_row(a, &w, R) + d));
            if (d == 0 && write_lse) LSE[avk_lse_row(a, &w, R)] = lse;
        }
    }
}
