/* GQA-packed decode on tensor cores (mma.sync, sm_80+): the "mma-decode"
 * variant, included by attn_fwd.cu when AVK_KEY_WARPS > 0.
 *
 * Decode has at most 16 packed rows per CTA (one m-tile), so a CTA of one
 * warp keeps too few bytes in flight and, for a quantized cache, spends its
 * time dequantizing with nothing to hide the latency. Here KEY_WARPS warps
 * share the CTA's rows and split its keys: tile t of the CTA's range goes to
 * warp (t - t_begin) % KEY_WARPS, which streams it through a private ring of
 * AVK_KV_STAGES raw stages (cp.async, no CTA barrier in the loop) and builds
 * its K and V fragments straight from the raw rows: ldmatrix for the dtype
 * format, in-register dequantization for q8_0 / q4_0 / fp8 (no dequantized
 * tile in shared memory). At the end the warps' (max, sum, O) merge through
 * shared memory, exactly as split-KV partials do.
 *
 * With f16 compute and a quantized cache (AVK_DECODE_CODES) the fragments
 * hold the codes (attn_contract.h: exact in f16, two per integer trick), the
 * tensor cores multiply them unscaled, and the scales are applied in f32:
 * K's per block to each block's partial S, V's per block to P. Other dtypes
 * dequantize each value (avk_kv_pair / avk_kv_value).
 *
 * Shared memory: Q (16 rows), per warp STAGES mbarriers (8 bytes each, the
 * bulk copies'; the region rounded to 16 bytes), then per warp STAGES x (K, V)
 * raw tiles of BC rows; the merge reuses the rings (avk_cuda_config_smem
 * sizes all three). With ALIGNED_ROWS, Q has no region of its own: it lives
 * in the last warp's last stage until every warp holds its fragments. */
/* A paged cache's q8_0 / q4_0 rows at D=128 (136 / 72 bytes) start 8 bytes
 * off 16 every other row, so copied as stored they take 8-byte cp.async (17 /
 * 9 a row). ALIGNED_ROWS gives each row of a stage a 16-byte aligned slot of
 * SLOT bytes and puts it at the slot + (its address & 8): source and
 * destination agree mod 16, and a row is one 8-byte copy plus 16-byte ones
 * (q8_0 9 copies, q4_0 5). The stage's bits of which rows sit 8 bytes in
 * travel with it (a ballot per tile, avk_decode_key finds a key's row).
 * Built for paged caches only (AVK_KV_PAGED, the host's cfg->paged): the
 * contiguous tile path stays one run. AVK_DECODE_ALIGNED_ROWS=0 (a tuning
 * A/B through ATTNVK_CUDA_DEFINES) copies rows as stored. */
#ifndef AVK_DECODE_ALIGNED_ROWS
#define AVK_DECODE_ALIGNED_ROWS 1
#endif
#ifndef AVK_KV_PAGED
#define AVK_KV_PAGED 0
#endif
enum {
    D = AVK_D, BR = AVK_BR, BC = AVK_BC, NT = AVK_THREADS, KW = AVK_KEY_WARPS, STAGES = AVK_KV_STAGES,
    RS = D + 8, /* Q rows (elements), padded for ldmatrix */
    KD = D / 16, ND = D / 8, NS = BC / 8, KS = BC / 16,
    /* (bf16 over q8_0, dequantized per value, has no registers left for the
     * slots' offsets: 4-8 bytes spilled on sm_90a, so it copies rows as stored) */
    ALIGNED_ROWS = AVK_DECODE_ALIGNED_ROWS && AVK_KV_PAGED && AVK_KV_ROW_BYTES % 16 == 8 &&
                   (AVK_DTYPE == 1 || AVK_KV_FORMAT != AVK_KV_Q8_0),
    ROW_PIECES = AVK_KV_ROW_BYTES / 16, /* ALIGNED_ROWS: a row's 16-byte copies (and one of 8 bytes) */
    /* a stage's row stride: raw K/V rows as stored, padded by 16 bytes where
     * the row is a multiple of 32 bytes (the dtype format, fp8) so the 8 rows
     * a fragment read touches fall on distinct banks (q8_0's 136 and q4_0's
     * 72 already do); ALIGNED_ROWS: the row + 8 bytes rounded to 16 (q8_0 144,
     * q4_0 80: 8 rows still meet distinct 4-byte banks at either offset) */
    RAW_ROW = ALIGNED_ROWS ? (AVK_KV_ROW_BYTES + 8 + 15) / 16 * 16
                           : AVK_KV_ROW_BYTES % 32 == 0 ? AVK_KV_ROW_BYTES + 16 : AVK_KV_ROW_BYTES,
    RAW_TILE = BC * RAW_ROW,
    WARP_RING = STAGES * 2 * RAW_TILE,
    GRAIN = AVK_KV_ROW_BYTES % 16 == 0 ? 16 : AVK_KV_ROW_BYTES % 8 == 0 ? 8 : AVK_KV_ROW_BYTES % 4 == 0 ? 4 : 2,
    CHUNKS = AVK_KV_ROW_BYTES / GRAIN, /* copies per row */
    BARS = (KW * STAGES * 8 + 15) / 16 * 16, /* the stages' mbarriers (every target: one layout) */
    Q_BYTES = BR * RS * (int)sizeof(avk_elem),
    /* ALIGNED_ROWS: Q sits in the last warp's last stage where it fits, so the
     * slots' padding costs no shared memory (q8_0 w4s2 keeps 3 CTAs an SM) */
    Q_IN_RING = ALIGNED_ROWS && Q_BYTES <= 2 * RAW_TILE,
    Q_REGION = Q_IN_RING ? 0 : Q_BYTES,
    /* ALIGNED_ROWS: per warp and stage the K and V tiles' avk_decode_odd_rows
     * (words in shared memory, not registers held across the loop) */
    ODD_BYTES = ALIGNED_ROWS ? (KW * STAGES * 8 + 15) / 16 * 16 : 0,
};
static_assert(!ALIGNED_ROWS || BC * ROW_PIECES % 32 == 0, "mma-decode: a tile's 16-byte row copies are whole warp rounds");
#define AVK_DECODE_CODES (AVK_KV_QUANT && AVK_DTYPE == 1)
/* V's code fragments by quads: O's n-tiles 4t .. 4t+3 are value block t and
 * column g of n-tile 4t + e holds value 32t + avk_kv_quad_value(g, e), so a
 * lane reads a key's four values of a block in one or two loads; the merge
 * stores O back in value order. H100 64k (sweep-25 against sweep-24): fp8
 * 0.475 -> 0.455 ms, q4_0 0.436 -> 0.431; q8_0 0.542 -> 0.560 (two 16-bit
 * loads a quad, its blocks being 2-byte aligned), so q8_0 keeps a load per value. */
#ifndef AVK_DECODE_Q8_QUADS
#define AVK_DECODE_Q8_QUADS 0
#endif
#define AVK_DECODE_QUADS (AVK_DECODE_CODES && D % 32 == 0 && (AVK_KV_FORMAT != AVK_KV_Q8_0 || AVK_DECODE_Q8_QUADS))
/* K's code fragments by quads too: D is permuted within each 32-value block
 * (Q's fragments alike, so Q.K is unchanged) so that lane 4g+t's four values
 * of k-step kk are quad 4(kk % 2) + t of block kk / 2: one or two loads where
 * pairs took four. H100 64k (sweep-s14-quant2, linear copies): q4_0 0.355 ->
 * 0.341 ms, fp8 0.473 -> 0.460; q8_0 0.493 -> 0.500 (8 bytes spilled), so
 * q8_0 keeps pairs. AVK_DECODE_K_QUADS=0/1 overrides (a tuning A/B). */
#ifndef AVK_DECODE_K_QUADS
#define AVK_DECODE_K_QUADS (AVK_KV_FORMAT != AVK_KV_Q8_0)
#endif
#define AVK_DECODE_KQ (AVK_DECODE_CODES && D % 32 == 0 && AVK_DECODE_K_QUADS)
static_assert(BR == 16 && NT == 32 * KW, "mma-decode: one 16-row m-tile, KEY_WARPS warps");
static_assert(AVK_DV == AVK_D && D % 16 == 0, "mma-decode: one head dim, whole k-steps (others run on mma16)");
static_assert(BC % 16 == 0 && BC <= 32 && STAGES >= 2, "mma-decode: BC 16 or 32 keys per warp tile, 2+ stages");

/* The K/V row of key tile * BC + lane for lanes below the tile's valid keys
 * (and BC), else 0: read a tile ahead of its copies, so a paged cache's copies
 * never wait on the block table (OpenCL's decode body does the same). */
AVK_DEVICE long long avk_decode_row(const avk_attn_params &p, const avk_work &w, int tile, int lane)
{
    const int key = tile * BC + lane;
    return tile < w.t_end && lane < BC && key < w.kv_end ? avk_kv_row(p, w.b, w.g, key) : 0;
}

/* Keys [key0, key0 + BC) of K or V, raw, into a warp's stage: lane r holds
 * key r's row (my_row, avk_decode_row: one block-table read per key, not per
 * copy), and the copies ask it by shuffle. Rows at or past valid are zero-filled. */
/* A contiguous cache's tile is one run of BC rows (RAW_ROW is the row: no
 * padding), copied in 16-byte pieces without a row lookup or shuffle per
 * copy: q8_0 9 copies a lane where rows take 17 of 8 bytes. H100 64k
 * (sweep-s14-quant): q8_0 0.549 -> 0.493 ms, q4_0 0.440 -> 0.354. */
#ifndef AVK_DECODE_LINEAR
#define AVK_DECODE_LINEAR 1
#endif
enum { LINEAR_TILE = AVK_DECODE_LINEAR && RAW_ROW == AVK_KV_ROW_BYTES && RAW_TILE % 16 == 0 };

/* ALIGNED_ROWS: which rows of a tile (bit r: lane r's my_row) start 8 bytes
 * off 16 in the cache at base, so sit 8 bytes into their slots. Every lane
 * calls it (a ballot). */
AVK_DEVICE avk_u32 avk_decode_odd_rows(unsigned long long base, long long my_row)
{
    if (!ALIGNED_ROWS) return 0u;
    return __ballot_sync(0xffffffffu, ((base + (unsigned long long)my_row * AVK_KV_ROW_BYTES) & 8u) != 0);
}

/* ALIGNED_ROWS: a stage's avk_decode_odd_rows of K and V into its two words
 * (lane 0; read after the warp barrier that makes the stage's copies visible) */
AVK_DEVICE void avk_decode_note_odd(avk_u32 *words, const avk_attn_params &p, long long my_row, int lane)
{
    const avk_u32 k = avk_decode_odd_rows(p.k, my_row), v = avk_decode_odd_rows(p.v, my_row);
    if (ALIGNED_ROWS && lane == 0) words[0] = k, words[1] = v;
}

/* Key key's row in a stage's tile (odd: the stage's avk_decode_odd_rows). */
AVK_DEVICE const unsigned char *avk_decode_key(const unsigned char *tile, avk_u32 odd, int key)
{
    return tile + key * RAW_ROW + (ALIGNED_ROWS ? (int)((odd >> key) & 1u) * 8 : 0);
}

/* ALIGNED_ROWS: rows into their slots, byte j of a row at slot + off + j (off:
 * its address & 8), so its 16-byte aligned run [off, off + 16 ROW_PIECES)
 * goes in 16-byte copies (lane c0 + lane: piece c % ROW_PIECES of row c /
 * ROW_PIECES) and the 8 bytes left (its head where off is 8, else its tail)
 * in one copy by the row's own lane. Rows at or past valid are zero-filled. */
AVK_DEVICE void avk_decode_load_slots(unsigned char *dst, unsigned long long base, int valid, int lane,
                                      long long my_row)
{
#pragma unroll
    for (int c0 = 0; c0 < BC * ROW_PIECES; c0 += 32) {
        const int c = c0 + lane, r = c / ROW_PIECES, k = c % ROW_PIECES;
        const unsigned long long row = base + (unsigned long long)__shfl_sync(0xffffffffu, my_row, r) * AVK_KV_ROW_BYTES;
        const int off = (int)(row & 8u), at = off + 16 * k;
        avk_cp_async16(avk_smem_addr(dst + r * RAW_ROW + off + at), (const void *)(row + at), r < valid ? 16 : 0);
    }
    if (lane < BC) {
        const unsigned long long row = base + (unsigned long long)my_row * AVK_KV_ROW_BYTES;
        const int off = (int)(row & 8u), at = off ? 0 : 16 * ROW_PIECES;
        avk_cp_async8(avk_smem_addr(dst + lane * RAW_ROW + off + at), (const void *)(row + at), lane < valid ? 8 : 0);
    }
}

AVK_DEVICE void avk_decode_load(unsigned char *dst, const avk_attn_params &p, const avk_work &w,
                                unsigned long long base, int key0, int valid, int lane, long long my_row)
{
    if (ALIGNED_ROWS) {
        avk_decode_load_slots(dst, base, valid, lane, my_row);
        return;
    }
    if (LINEAR_TILE && p.page_size == 0 && p.kv_ss == 1 && valid >= BC) {
        const unsigned long long src0 = base + (unsigned long long)avk_kv_row(p, w.b, w.g, key0) * AVK_KV_ROW_BYTES;
        if ((src0 & 15) == 0) {
#pragma unroll
            for (int c = lane; c < RAW_TILE / 16; c += 32)
                avk_cp_async16(avk_smem_addr(dst + c * 16), (const unsigned char *)src0 + c * 16, 16);
            return;
        }
    }
    const unsigned char *g = (const unsigned char *)base;
    /* whole-warp trip count: every lane reaches every shuffle */
#pragma unroll 4
    for (int c0 = 0; c0 < BC * CHUNKS; c0 += 32) {
        const int c = c0 + lane;
        const int r = c < BC * CHUNKS ? c / CHUNKS : 0, k = c % CHUNKS;
        const long long row = __shfl_sync(0xffffffffu, my_row, r);
        if (c >= BC * CHUNKS) continue;
        const bool in = r < valid;
        const unsigned char *src = g + row * AVK_KV_ROW_BYTES + k * GRAIN;
        unsigned char *to = dst + r * RAW_ROW + k * GRAIN;
        if (GRAIN == 16) avk_cp_async16(avk_smem_addr(to), src, in ? 16 : 0);
        else if (GRAIN == 8) avk_cp_async8(avk_smem_addr(to), src, in ? 8 : 0);
        else if (GRAIN == 4) avk_cp_async4(avk_smem_addr(to), src, in ? 4 : 0);
        else *(avk_u16 *)to = in ? *(const avk_u16 *)src : (avk_u16)0;
    }
}

/* Hopper: a whole tile's K and V come by bulk copies (cp.async.bulk) that
 * count their bytes off the stage's mbarrier, instead of 16-byte cp.async
 * from every lane: a contiguous tile that is one run in shared memory too
 * (LINEAR_TILE: q8_0, q4_0) is one copy each of K and V from lane 0; else,
 * where a row is a multiple of 16 bytes (f16/bf16, fp8: padded rows, paged
 * caches), lane r copies row r. The partial last tile (rows past valid are
 * zero-filled), rows of another size (q8_0 paged) or an unaligned base take
 * avk_decode_load. Off unless AVK_DECODE_BULK=1 (ATTNVK_CUDA_DEFINES): on the H100
 * (session 16, tools/h100/sweep-s16-bulk.txt, 64k) it lost everywhere: f16 one key warp
 * 0.746 -> 1.136 ms, two 0.782 -> 0.786, fp8 0.414 -> 0.576, q8_0 contiguous no faster
 * (0.428); the mbarrier helpers stay for the warp-specialized kernel of issue #16. */
#ifndef AVK_DECODE_BULK
#define AVK_DECODE_BULK 0
#endif
#if AVK_DECODE_BULK && defined(AVK_BULK_SM90)
#define AVK_DECODE_BULK_PATH 1
#else
#define AVK_DECODE_BULK_PATH 0
#endif
enum {
    BULK_TILE = AVK_DECODE_BULK_PATH && LINEAR_TILE,
    BULK_ROWS = AVK_DECODE_BULK_PATH && AVK_KV_ROW_BYTES % 16 == 0,
    BULK = BULK_TILE || BULK_ROWS,
    MODE_COPY = 0, MODE_TILE = 1, MODE_ROWS = 2,
};

/* How this warp's full tiles come (uniform over (b, g): a contiguous tile's
 * offset moves by RAW_TILE, a multiple of 16, from tile to tile). Only the
 * partial last tile, its stage's last use, leaves the mode, so a stage's
 * mbarrier completes once per earlier use: tile i's parity is (i / STAGES) & 1. */
AVK_DEVICE int avk_decode_mode(const avk_attn_params &p, const avk_work &w)
{
    if (BULK_TILE && p.page_size == 0 && p.kv_ss == 1) {
        const unsigned long long off = (unsigned long long)avk_kv_row(p, w.b, w.g, 0) * AVK_KV_ROW_BYTES;
        if (((p.k + off) | (p.v + off)) % 16 == 0) return MODE_TILE;
    }
    return BULK_ROWS && (p.k | p.v) % 16 == 0 ? MODE_ROWS : MODE_COPY;
}

/* Tile tile's K and V into stage s of a warp's ring (bulk copies on the
 * stage's mbarrier, bars + 8 s, or cp.async); one commit group either way. */
AVK_DEVICE void avk_decode_stage(unsigned char *ring, avk_u32 bars, int mode, int s, const avk_attn_params &p,
                                 const avk_work &w, int tile, int lane, long long my_row)
{
    unsigned char *stage = ring + s * 2 * RAW_TILE;
    const int key0 = tile * BC, valid = w.kv_end - key0;
#if AVK_DECODE_BULK_PATH
    const avk_u32 bar = bars + s * 8;
    if (BULK_TILE && mode == MODE_TILE && valid >= BC) {
        if (lane == 0) {
            const unsigned long long off = (unsigned long long)avk_kv_row(p, w.b, w.g, key0) * AVK_KV_ROW_BYTES;
            avk_mbar_arrive_expect_tx(bar, 2 * RAW_TILE);
            avk_bulk_copy(avk_smem_addr(stage), (const void *)(p.k + off), RAW_TILE, bar);
            avk_bulk_copy(avk_smem_addr(stage + RAW_TILE), (const void *)(p.v + off), RAW_TILE, bar);
        }
        return;
    }
    if (BULK_ROWS && mode == MODE_ROWS && valid >= BC) {
        if (lane == 0) avk_mbar_arrive_expect_tx(bar, 2 * BC * AVK_KV_ROW_BYTES);
        avk_syncwarp(); /* the bytes are expected before any lands */
        if (lane < BC) {
            const unsigned long long off = (unsigned long long)my_row * AVK_KV_ROW_BYTES;
            avk_bulk_copy(avk_smem_addr(stage + lane * RAW_ROW), (const void *)(p.k + off), AVK_KV_ROW_BYTES, bar);
            avk_bulk_copy(avk_smem_addr(stage + RAW_TILE + lane * RAW_ROW), (const void *)(p.v + off),
                          AVK_KV_ROW_BYTES, bar);
        }
        return;
    }
#else
    (void)bars, (void)mode;
#endif
    avk_decode_load(stage, p, w, p.k, key0, valid, lane, my_row);
    avk_decode_load(stage + RAW_TILE, p, w, p.v, key0, valid, lane, my_row);
}

/* B fragments of n-tiles n, n+1 (keys) and k-step kk (D) for S = Q K^T,
 * in ldmatrix_x4's order: b[0..1] n-tile n, b[2..3] n-tile n + 1 (odd: the
 * tile's avk_decode_odd_rows). */
AVK_DEVICE void avk_decode_k_frag(avk_u32 (&b)[4], const unsigned char *k_tile, avk_u32 odd, int n, int kk, int lane)
{
#if AVK_DECODE_KQ
#pragma unroll
    for (int t = 0; t < 2; ++t) { /* b[2t]: the quad's bytes 0, 1; b[2t + 1]: bytes 2, 3 */
        const unsigned char *row = avk_decode_key(k_tile, odd, (n + t) * 8 + lane / 4);
        const avk_u32 q = avk_kv_code_quad(row, kk / 2, 4 * (kk % 2) + lane % 4);
        b[2 * t] = avk_kv_codes_f16x2(q & 0xffu, (q >> 8) & 0xffu);
        b[2 * t + 1] = avk_kv_codes_f16x2((q >> 16) & 0xffu, q >> 24);
    }
#elif AVK_KV_QUANT
#pragma unroll
    for (int t = 0; t < 2; ++t) {
        const unsigned char *row = avk_decode_key(k_tile, odd, (n + t) * 8 + lane / 4);
        const int d0 = kk * 16 + (lane % 4) * 2;
#pragma unroll
        for (int h = 0; h < 2; ++h) { /* values d0 + 8h and the next */
#if AVK_DECODE_CODES
            b[2 * t + h] = avk_kv_code_pair(row, d0 + 8 * h);
#else
            float x0, x1;
            avk_kv_pair(row, d0 + 8 * h, x0, x1);
            b[2 * t + h] = avk_pack2(x0, x1);
#endif
        }
    }
#else
    (void)odd;
    const int r = (lane / 16) * 8 + lane % 8, c = ((lane / 8) % 2) * 8;
    avk_ldmatrix_x4(b, avk_smem_addr(k_tile + (n * 8 + r) * RAW_ROW + (kk * 16 + c) * (int)sizeof(avk_elem)));
#endif
}

/* B fragments of k-step kk (keys) and n-tiles n, n+1 (D) for O += P V, in
 * ldmatrix_x4_trans's order: b[0..1] n-tile n (keys +0, +8), b[2..3] n + 1. */
AVK_DEVICE void avk_decode_v_frag(avk_u32 (&b)[4], const unsigned char *v_tile, avk_u32 odd, int kk, int n, int lane)
{
#if AVK_KV_QUANT
    const int k0 = kk * 16 + (lane % 4) * 2;
#pragma unroll
    for (int t = 0; t < 2; ++t) {
        const int d = (n + t) * 8 + lane / 4;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            /* keys k0 + 8h and the next */
            const unsigned char *row = avk_decode_key(v_tile, odd, k0 + 8 * h);
            const unsigned char *next = avk_decode_key(v_tile, odd, k0 + 8 * h + 1);
#if AVK_DECODE_CODES
            b[2 * t + h] = avk_kv_codes_f16x2(avk_kv_code(row, d), avk_kv_code(next, d));
#else
            b[2 * t + h] = avk_pack2(avk_kv_value(row, d), avk_kv_value(next, d));
#endif
        }
    }
#else
    (void)odd;
    const int r = ((lane / 8) % 2) * 8 + lane % 8, c = (lane / 16) * 8;
    avk_ldmatrix_x4_trans(b, avk_smem_addr(v_tile + (kk * 16 + r) * RAW_ROW + (n * 8 + c) * (int)sizeof(avk_elem)));
#endif
}

#if AVK_DECODE_QUADS
/* B fragments of k-step kk (keys) for O += P V over n-tiles 4t .. 4t+3 (block
 * t): b[e][h] n-tile 4t + e, keys kk*16 + 8h + 2(lane%4), +1 */
AVK_DEVICE void avk_decode_v_frag_quad(avk_u32 (&b)[4][2], const unsigned char *v_tile, avk_u32 odd, int kk, int t,
                                       int lane)
{
    const int k0 = kk * 16 + (lane % 4) * 2, g = lane / 4;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const avk_u32 lo = avk_kv_code_quad(avk_decode_key(v_tile, odd, k0 + 8 * h), t, g),
                      hi = avk_kv_code_quad(avk_decode_key(v_tile, odd, k0 + 8 * h + 1), t, g);
#pragma unroll
        for (int e = 0; e < 4; ++e) b[e][h] = avk_kv_codes_f16x2((lo >> 8 * e) & 0xffu, (hi >> 8 * e) & 0xffu);
    }
}
#endif

AVK_KERNEL void __launch_bounds__(AVK_THREADS, AVK_MINB) avk_attn_fwd(const avk_attn_params p)
{
    AVK_DYNAMIC_SMEM(smem_raw);
    if (AVK_SPLIT) avk_launch_dependents(); /* the merge may launch: it waits for this grid to finish */
    unsigned char *rings = smem_raw + Q_REGION + BARS + ODD_BYTES;
    avk_u32 *odd_words = (avk_u32 *)(smem_raw + Q_REGION + BARS) + threadIdx.x / 32 * STAGES * 2;
    /* Q_IN_RING: the last warp's last stage, which its loop fills first */
    avk_elem *sQ = (avk_elem *)(Q_IN_RING ? rings + KW * WARP_RING - 2 * RAW_TILE : smem_raw);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int quad_row = lane / 4, quad_col = lane % 4;
    unsigned char *ring = rings + warp * WARP_RING;
    /* this warp's stage mbarriers (the bulk copies') */
    const avk_u32 bars = avk_smem_addr(smem_raw + Q_REGION) + (avk_u32)(warp * STAGES * 8);
#if AVK_DECODE_BULK_PATH
    if (BULK) {
        if (lane == 0) {
#pragma unroll
            for (int s = 0; s < STAGES; ++s) avk_mbar_init(bars + s * 8, 1);
            avk_mbar_init_fence();
        }
        avk_syncwarp();
    }
#endif

    const avk_work w = avk_locate(p, BR, BC);
    /* every row sees keys [max_begin, min_end); none sees keys outside [min_begin, max_end) */
    const int min_end = avk_row_key_end(p, w, w.r0), max_end = avk_row_key_end(p, w, w.r_end - 1);
    const int min_begin = avk_row_key_begin(p, w, w.r0), max_begin = avk_row_key_begin(p, w, w.r_end - 1);
#if AVK_DECODE_CODES
    const float code_unit = AVK_KV_CODE_UNIT; /* fp8 codes are value / 256 */
#else
    const float code_unit = 1.f;
#endif
    const float scale_log2 = p.scale_log2 * avk_kv_scale(p, 0, w.g) * code_unit; /* fp8: K's scale folds into S */
    const avk_tile_rows<1> rows = avk_rows_before_loop<1>(p, w, w.r0 + quad_row, scale_log2);
    const int mode = BULK ? avk_decode_mode(p, w) : MODE_COPY;

    /* Q, then each warp's first STAGES - 1 tiles, one commit group each */
    avk_load_q_tile<BR, D, NT, false>(avk_smem_addr(sQ), p, w);
    avk_cp_async_commit();
    const int t_first = w.t_begin + warp;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        const int t = t_first + s * KW;
        if (t < w.t_end) {
            const long long rows = avk_decode_row(p, w, t, lane);
            avk_decode_stage(ring, bars, mode, s, p, w, t, lane, rows);
            avk_decode_note_odd(odd_words + 2 * s, p, rows, lane);
        }
        avk_cp_async_commit();
    }
    long long next_rows = avk_decode_row(p, w, t_first + (STAGES - 1) * KW, lane); /* the loop's first issue */
    AVK_CP_ASYNC_WAIT(STAGES - 1); /* Q (the oldest group) has landed */
    __syncthreads();
    avk_u32 qf[KD][4];
#if AVK_DECODE_KQ
    /* Q's columns in K's quad order (avk_decode_k_frag): lane 4g+t's pairs of
     * k-step kk are values 0, 1 and 2, 3 of quad 4(kk % 2) + t of block kk / 2 */
#pragma unroll
    for (int kk = 0; kk < KD; ++kk) {
        const int quad = 4 * (kk % 2) + quad_col, c0 = (kk / 2) * 32 + avk_kv_quad_value(quad, 0),
                  c2 = (kk / 2) * 32 + avk_kv_quad_value(quad, 2);
        qf[kk][0] = *(const avk_u32 *)(sQ + quad_row * RS + c0);
        qf[kk][1] = *(const avk_u32 *)(sQ + (quad_row + 8) * RS + c0);
        qf[kk][2] = *(const avk_u32 *)(sQ + quad_row * RS + c2);
        qf[kk][3] = *(const avk_u32 *)(sQ + (quad_row + 8) * RS + c2);
    }
#else
    {
        const avk_u32 q_lane = avk_smem_addr(sQ) + (avk_u32)(((lane % 16) * RS + (lane / 16) * 8) * 2);
#pragma unroll
        for (int kk = 0; kk < KD; ++kk) avk_ldmatrix_x4(qf[kk], q_lane + (avk_u32)(kk * 16 * 2));
    }
#endif
    if (Q_IN_RING) __syncthreads(); /* every warp holds Q before the last warp's loop fills its stage */

    float acc[1][ND][4];
    float row_max[1][2] = {{AVK_NEG_INF, AVK_NEG_INF}}, row_sum[1][2] = {{0.f, 0.f}};
#pragma unroll
    for (int n = 0; n < ND; ++n) acc[0][n][0] = acc[0][n][1] = acc[0][n][2] = acc[0][n][3] = 0.f;

    for (int i = 0, t = t_first; t < w.t_end; ++i, t += KW) {
        /* this lane's copies of tile i have landed; the warp barrier makes
         * every lane's visible and says the stage read last iteration is free */
        AVK_CP_ASYNC_WAIT(STAGES - 2);
#if AVK_DECODE_BULK_PATH
        if (BULK && mode != MODE_COPY && (t + 1) * BC <= w.kv_end) /* or its bulk copies have */
            avk_mbar_wait(bars + (i % STAGES) * 8, (avk_u32)(i / STAGES) & 1u);
#endif
        avk_syncwarp();
        {
            const int tn = t + (STAGES - 1) * KW, sn = (i + STAGES - 1) % STAGES;
            if (tn < w.t_end) {
                avk_decode_stage(ring, bars, mode, sn, p, w, tn, lane, next_rows);
                avk_decode_note_odd(odd_words + 2 * sn, p, next_rows, lane);
            }
            avk_cp_async_commit();
            next_rows = avk_decode_row(p, w, tn + KW, lane); /* the next round's tile, a round ahead */
        }
        const int key0 = t * BC;
        const int pattern = avk_pattern_tile(p, w, w.r0, w.r_end - 1, key0, BC);
        if (avk_tile_invisible(key0, BC, min_begin, max_end) || pattern == AVK_TILE_HIDDEN) continue;
        const unsigned char *k_tile = ring + (i % STAGES) * 2 * RAW_TILE;
        const unsigned char *v_tile = k_tile + RAW_TILE;
        const avk_u32 k_odd = ALIGNED_ROWS ? odd_words[2 * (i % STAGES)] : 0u;

        float s[1][NS][4];
#if AVK_DECODE_CODES && AVK_KV_BLOCK_SCALED
        /* S = sum over 32-value blocks of d_K[key][block] * (Q_block . codes_block) */
#pragma unroll
        for (int n = 0; n < NS; n += 2) {
#pragma unroll
            for (int blk = 0; blk < D / 32; ++blk) {
                float sb[2][4];
#pragma unroll
                for (int kk = 2 * blk; kk < 2 * blk + 2; ++kk) {
                    avk_u32 b[4];
                    avk_decode_k_frag(b, k_tile, k_odd, n, kk, lane);
                    if (kk == 2 * blk) {
                        avk_mma_zc(sb[0], qf[kk], b);
                        avk_mma_zc(sb[1], qf[kk], b + 2);
                    } else {
                        avk_mma(sb[0], qf[kk], b);
                        avk_mma(sb[1], qf[kk], b + 2);
                    }
                }
#pragma unroll
                for (int t = 0; t < 2; ++t)
#pragma unroll
                    for (int c = 0; c < 2; ++c) { /* this thread's keys: columns quad_col * 2 + c */
                        const unsigned char *row = avk_decode_key(k_tile, k_odd, (n + t) * 8 + quad_col * 2 + c);
                        const float dk = avk_kv_block_scale(row, blk * 32);
                        if (blk == 0) {
                            s[0][n + t][c] = sb[t][c] * dk;
                            s[0][n + t][c + 2] = sb[t][c + 2] * dk;
                        } else {
                            s[0][n + t][c] += sb[t][c] * dk;
                            s[0][n + t][c + 2] += sb[t][c + 2] * dk;
                        }
                    }
            }
        }
#else
#pragma unroll
        for (int kk = 0; kk < KD; ++kk)
#pragma unroll
            for (int n = 0; n < NS; n += 2) {
                avk_u32 b[4];
                avk_decode_k_frag(b, k_tile, k_odd, n, kk, lane);
                if (kk == 0) {
                    avk_mma_zc(s[0][n], qf[kk], b);
                    avk_mma_zc(s[0][n + 1], qf[kk], b + 2);
                } else {
                    avk_mma(s[0][n], qf[kk], b);
                    avk_mma(s[0][n + 1], qf[kk], b + 2);
                }
            }
#endif
        avk_score_tile<1, NS>(p, w, rows, s, w.r0 + quad_row, key0 + quad_col * 2, scale_log2,
                              avk_tile_is_edge(key0, BC, max_begin, min_end) || pattern == AVK_TILE_PARTIAL);
        avk_online_softmax<1, NS, ND>(s, acc, row_max, row_sum, avk_score_scale(p, scale_log2));
        const avk_u32 v_odd = ALIGNED_ROWS ? odd_words[2 * (i % STAGES) + 1] : 0u;
#if AVK_DECODE_CODES && AVK_KV_BLOCK_SCALED
        /* O += (P * d_V[key][block]) . codes: P scaled per block of D */
#pragma unroll
        for (int kk = 0; kk < KS; ++kk) {
            avk_u32 pa[D / 32][4];
            const int k0 = kk * 16 + quad_col * 2;
#pragma unroll
            for (int blk = 0; blk < D / 32; ++blk) {
                float dv[4];
#pragma unroll
                for (int c = 0; c < 4; ++c)
                    dv[c] = avk_kv_block_scale(avk_decode_key(v_tile, v_odd, k0 + (c / 2) * 8 + c % 2), blk * 32);
                pa[blk][0] = avk_pack2(s[0][2 * kk][0] * dv[0], s[0][2 * kk][1] * dv[1]);
                pa[blk][1] = avk_pack2(s[0][2 * kk][2] * dv[0], s[0][2 * kk][3] * dv[1]);
                pa[blk][2] = avk_pack2(s[0][2 * kk + 1][0] * dv[2], s[0][2 * kk + 1][1] * dv[3]);
                pa[blk][3] = avk_pack2(s[0][2 * kk + 1][2] * dv[2], s[0][2 * kk + 1][3] * dv[3]);
            }
#if AVK_DECODE_QUADS
#pragma unroll
            for (int t = 0; t < D / 32; ++t) { /* n-tiles 4t .. 4t+3 are block t */
                avk_u32 b[4][2];
                avk_decode_v_frag_quad(b, v_tile, v_odd, kk, t, lane);
#pragma unroll
                for (int e = 0; e < 4; ++e) avk_mma(acc[0][4 * t + e], pa[t], b[e]);
            }
#else
#pragma unroll
            for (int n = 0; n < ND; n += 2) {
                avk_u32 b[4];
                avk_decode_v_frag(b, v_tile, v_odd, kk, n, lane);
                avk_mma(acc[0][n], pa[n / 4], b); /* n-tiles n, n + 1 share block n / 4 */
                avk_mma(acc[0][n + 1], pa[n / 4], b + 2);
            }
#endif
        }
#else
#pragma unroll
        for (int kk = 0; kk < KS; ++kk) {
            avk_u32 pa[1][4];
            avk_pack_p<1, NS>(s, kk, pa);
#if AVK_DECODE_QUADS
#pragma unroll
            for (int t = 0; t < D / 32; ++t) {
                avk_u32 b[4][2];
                avk_decode_v_frag_quad(b, v_tile, v_odd, kk, t, lane);
#pragma unroll
                for (int e = 0; e < 4; ++e) avk_mma(acc[0][4 * t + e], pa[0], b[e]);
            }
#else
#pragma unroll
            for (int n = 0; n < ND; n += 2) {
                avk_u32 b[4];
                avk_decode_v_frag(b, v_tile, v_odd, kk, n, lane);
                avk_mma(acc[0][n], pa[0], b);
                avk_mma(acc[0][n + 1], pa[0], b + 2);
            }
#endif
        }
#endif
    }
    AVK_CP_ASYNC_WAIT(0);
    __syncthreads(); /* every ring is free: the merge reuses them */

    /* ---- merge the warps: per warp m[16], l[16] and O[16][D] (f32, unnormalized) ---- */
    float *m_all = (float *)rings, *l_all = m_all + KW * 16, *o_all = l_all + KW * 16;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        float l = row_sum[0][half];
        l += avk_shfl_xor(l, 1);
        l += avk_shfl_xor(l, 2);
        const int r = quad_row + half * 8;
        if (quad_col == 0) {
            m_all[warp * 16 + r] = row_max[0][half];
            l_all[warp * 16 + r] = l;
        }
        float *o = o_all + (warp * 16 + r) * D;
#pragma unroll
        for (int n = 0; n < ND; ++n)
#pragma unroll
            for (int j = 0; j < 2; ++j) { /* n-tile n's column 2 quad_col + j */
#if AVK_DECODE_QUADS
                o[(n / 4) * 32 + avk_kv_quad_value(2 * quad_col + j, n % 4)] = acc[0][n][2 * half + j];
#else
                o[n * 8 + 2 * quad_col + j] = acc[0][n][2 * half + j];
#endif
            }
    }
    __syncthreads();
    const float v_scale = avk_kv_scale(p, 1, w.g) * code_unit; /* fp8: V's scale, applied once per row */
    for (int e = threadIdx.x; e < BR * D; e += NT) {
        const int r = e / D, d = e % D, R = w.r0 + r;
        if (R >= w.r_end) continue;
        float mx = AVK_NEG_INF;
#pragma unroll
        for (int k = 0; k < KW; ++k) mx = avk_max(mx, m_all[k * 16 + r]);
        float l = 0.f, o = 0.f;
        if (mx != AVK_NEG_INF)
#pragma unroll
            for (int k = 0; k < KW; ++k) {
                const float m = m_all[k * 16 + r];
                const float f = m == AVK_NEG_INF ? 0.f : avk_exp2(m - mx);
                l += f * l_all[k * 16 + r];
                o += f * o_all[(k * 16 + r) * D + d];
            }
        const float keep = avk_fold_sink(p, w.h + R % (int)p.pack, mx, l);
        const float x = l > 0.f ? o * (v_scale * keep / l) : 0.f;
#if AVK_SPLIT
        ((float *)p.part_o)[((long long)w.split * p.batch * p.heads * p.seq_q + avk_lse_row(p, w, R)) * D + d] = x;
#else
        ((avk_elem *)p.o)[avk_q_row(p, w, R) + d] = avk_from_f32(x);
#endif
        if (d == 0) avk_store_lse(p, w, R, l > 0.f ? mx + log2f(l) : AVK_NEG_INF);
    }
}
