/* Hopper (sm_90a) flash-attention forward, included by attn_fwd.cu when
 * AVK_WGMMA=1 (after the shared tensor-core helpers). The FlashAttention-2
 * schedule on warpgroup MMAs:
 *   - a CTA is AVK_THREADS / 128 warpgroups, each owning 64 query rows;
 *   - Q (BR rows) and two stages of K and V tiles (BC keys) sit in shared
 *     memory in the 128-byte-swizzled layout that wgmma's matrix descriptors
 *     read directly, filled by cp.async from every thread (one barrier per
 *     tile; tile t+1 is in flight during tile t's work);
 *   - S = Q K^T: wgmma m64nBCk16 with both operands in shared memory;
 *   - the online softmax runs on S in registers (the helpers the mma.sync
 *     kernel uses: wgmma's accumulator layout is m16n8's, per warp);
 *   - O += P V: wgmma m64nDk16 with P from registers (its f16/bf16 packing is
 *     the A-fragment layout) and V from shared memory, read transposed.
 * Two warpgroups per CTA interleave naturally: one computes its softmax while
 * the other's MMAs run. Dk and Dv are whole 128-byte swizzle rows (64, 128,
 * 192, 256; MLA's 192/128): P V runs as one wgmma of N = Dv where the
 * wrappers have it (64, 128, 256), else as 64-column blocks.
 *
 * AVK_WGMMA=2 ("wgmma-ws", issue #16's first step): warp-specialized. One more
 * warpgroup, the producer, gives its registers to the others (setmaxnreg) and
 * one of its threads streams K and V through the tensor-memory accelerator
 * (cp.async.bulk.tensor, the host's tensor maps tm_k and tm_v, 128-byte
 * swizzled boxes of 64 columns) into a two-stage ring: a stage's K and V each
 * complete an mbarrier (full), and the consumers' warps release the stage on
 * a third (empty). The consumers run the same tile body; no CTA barrier in
 * the loop. A block layout's tiles are walked by the producer's first warp and
 * by every consumer warp alike (avk_next_tile), so only visible tiles load.
 *
 * AVK_FP8=1 ("wgmma-fp8", issue #16's FP8 forward): Q, K and V are e4m3 with
 * per-head scales (folded into the score scale and O's), O is f16/bf16. e4m3
 * wgmma is k = 32 and reads both shared operands K-major only, so V comes
 * transposed (avk_fp8_v_transpose, before the attention grid); the byte
 * geometry is the 16-bit kernel's (a k-step is 32 bytes along a swizzled row).
 * P is rounded to e4m3 in registers: the k-step's four n-tiles of S fill the
 * A fragment (rows g, g + 8; k 4c..4c+3, 16+4c..), so A's k index 4c + i holds
 * key 2c + (i & 1) + 8 (i >> 1) of each 16, the order the transpose writes
 * V's keys in. AVK_WGMMA=2 ("wgmma-ws-fp8"): the producer's TMA boxes are 128
 * bytes wide, K's columns and Vt's keys (tensor maps over uint8). */
#include "sm90_common.h"
#include "sm90_wgmma_ops.h"

#ifndef AVK_FP8
#define AVK_FP8 0
#endif
#if AVK_FP8
#define AVK_WG_TYPE e4m3
#elif AVK_DTYPE == 1
#define AVK_WG_TYPE f16
#else
#define AVK_WG_TYPE bf16
#endif
#define AVK_PASTE4_(a, b, c, d) a##b##c##d
#define AVK_PASTE4(a, b, c, d) AVK_PASTE4_(a, b, c, d)
#define avk_wgmma_qk AVK_PASTE4(avk_wgmma_ss_, AVK_WG_TYPE, _n, AVK_BC)
#if AVK_DV == 64 || AVK_DV == 128 || AVK_DV == 256
#define AVK_WG_PV_N AVK_DV
#else
#define AVK_WG_PV_N 64
#endif
#define avk_wgmma_pv AVK_PASTE4(avk_wgmma_rs_, AVK_WG_TYPE, _n, AVK_WG_PV_N)

#define AVK_WS (AVK_WGMMA == 2)
/* a swizzled row holds 128 bytes: rows of 64 (fp8 D = 64, BC = 64) fill half of one */
#define AVK_SW_ROW(bytes) ((bytes) > 128 ? (bytes) : 128)
/* The producer ring's schedule, FlashAttention-3's, each switch measured alone on the H100
 * (session 30, s30b: f16 D=128 N=8k TFLOP/s, cuDNN 583.1 in the same run; default before
 * 501.5). ATTNVK_CUDA_DEFINES=-DAVK_...=0 turns one off.
 *
 * AVK_SPLIT_RELEASE (on with the ring; 516.1): a stage's K slot goes back to the producer
 * once S has landed, its V slot once P V has (two empty barriers), so K of tile t+2 loads
 * during tile t's softmax. (Session 29's first form re-waited K's full barrier at the V
 * release, by when K's next load could have completed the following phase too: the parity
 * wait never returned. The V release waits for nothing more.) */
#ifndef AVK_SPLIT_RELEASE
#define AVK_SPLIT_RELEASE AVK_WS
#endif
/* AVK_WG_OVERLAP (on with two or three consumer warpgroups; 558.3 with the split release): the
 * intra-warpgroup overlap. Tile t's S is issued before the previous tile's P V, and tile t's
 * softmax runs while that P V is in flight; the producer brings V one tile behind K. Over a
 * run of tiles or a block layout's list (with a mask: AVK_MASK_OVERLAP); not with
 * dilation's per-element test. With three warpgroups (D=64's 192 rows) it needs the
 * ping-pong: alone 392.2 -> 361.5, with it 420.2 (cuDNN 436.8; s30d, N=4k). */
#ifndef AVK_WG_OVERLAP
#define AVK_WG_OVERLAP (AVK_WS && (AVK_THREADS == 384 || AVK_THREADS == 512))
#endif
/* AVK_MASK_OVERLAP (on; =0 through ATTNVK_CUDA_DEFINES for the A/B): a mask keeps the overlap,
 * its rows of tile t+1 prefetched into L1 once tile t's S is issued (the softmax of tile t runs
 * while the previous tile's P V is in flight, the mask's loads with it). H100 (s42a, D=128 8k
 * causal, random f16 mask): 316.6 -> 328.3 TFLOP/s (plain 525.5). */
#ifndef AVK_MASK_OVERLAP
#define AVK_MASK_OVERLAP 1
#endif
#if AVK_WG_OVERLAP && (!AVK_WS || (AVK_SCORE_MOD & AVK_MOD_DILATED) || ((AVK_SCORE_MOD & AVK_MOD_MASK) && !AVK_MASK_OVERLAP))
#undef AVK_WG_OVERLAP
#define AVK_WG_OVERLAP 0
#endif
/* AVK_PINGPONG (on with two or three consumer warpgroups; 590.1 over the overlap, 518.4 without it):
 * the ping-pong. The warpgroups take turns issuing their MMAs (named barriers 2 and 3, a
 * token passed after each issue: S and the previous P V together, or S alone without the
 * overlap), so one's softmax runs under the other's MMAs rather than both waiting on the
 * tensor cores at once. Both walk the CTA's visible tiles (the turns must pair up), the
 * tiles a warpgroup does not see masked (a block layout's too); not with dilation's
 * per-element test. Three warpgroups pass the token round. */
#ifndef AVK_PINGPONG
#define AVK_PINGPONG (AVK_WS && (AVK_THREADS == 384 || AVK_THREADS == 512))
#endif
#if AVK_PINGPONG && !(AVK_WS && (AVK_THREADS == 384 || AVK_THREADS == 512) && !(AVK_SCORE_MOD & AVK_MOD_DILATED))
#undef AVK_PINGPONG
#define AVK_PINGPONG 0
#endif
#ifndef AVK_WS_EPILOGUE_SYNC
#define AVK_WS_EPILOGUE_SYNC 1 /* (the epilogue's note) */
#endif
/* AVK_TILE_SLOTS (a block layout on wgmma-ws with the overlap, one block a CTA): only the
 * producer walks the layout. It writes each stage's tile (-1 after the last) into a slot beside
 * the stage before the stage's full barrier, whose wait makes it visible, so the consumers read
 * their next tile from shared memory instead of walking the layout as well (H100 s39c, 10% of
 * 128x128 blocks at N=32k: 497.2 TFLOP/s against 464.1 with their own walk). */
#ifndef AVK_TILE_SLOTS
#define AVK_TILE_SLOTS (AVK_WG_OVERLAP && (AVK_SCORE_MOD & AVK_MOD_BLOCKS) && !AVK_PERSISTENT)
#endif
/* element offsets and strides of Q, K, V in the 16-bit units avk_load_tile copies */
#define AVK_U16(x) ((x) * ES / 2)
enum {
    D = AVK_D, DV = AVK_DV, BR = AVK_BR, BC = AVK_BC, NT = AVK_THREADS,
    WGS = NT / 128 - AVK_WS, /* consumer warpgroups, 64 query rows each */
    NC = WGS * 128,          /* consumer threads (the producer's warpgroup comes after them) */
    ES = AVK_FP8 ? 1 : 2, /* bytes per Q, K, V element */
    KD = D * ES / 32,     /* k-steps (32 bytes) over Dk for S = Q K^T */
    ND = DV / 8,          /* 8-wide n-tiles over Dv for O */
    NS = BC / 8,          /* 8-wide n-tiles over keys for S */
    KS = BC * ES / 32,    /* k-steps over keys for O += P V */
    Q_BYTES = BR * D * 2, /* Q tile (O is staged over it: 16-bit), then 2 stages of K, then 2 of V */
    K_BYTES = BC * AVK_SW_ROW(D * ES),
    V_BYTES = AVK_FP8 ? DV * AVK_SW_ROW(BC) : BC * DV * 2, /* fp8: Dv rows of BC keys */
    M_BYTES = AVK_MASK_TMA ? BR * BC * 2 : 0, /* AVK_MASK_TMA: a stage's f16 mask, BC / 64 boxes of BR 128-byte rows */
};
static_assert(!(AVK_FP8 && (AVK_SCORE_MOD & AVK_MOD_BLOCKS)), "the FP8 forward takes no block layouts");
static_assert(!(AVK_FP8 && AVK_WS) || (D % 128 == 0 && BC % 128 == 0),
              "wgmma-ws-fp8's TMA boxes are 128 bytes wide: Dk and the key tile multiples of 128");
static_assert(BR == WGS * 64 && WGS >= 1 && WGS <= 3, "BR must be 64 rows per warpgroup, 1 to 3 warpgroups");
static_assert(D % 64 == 0 && DV % 64 == 0 && D <= 256 && DV <= D, "the wgmma kernel takes Dk, Dv in 64, 128, 192, 256");
static_assert(BC == 64 || BC == 128 || BC == 256 || (BC == 96 && !AVK_FP8), "the wgmma kernel takes BC = 64, 96 (16-bit), 128 or 256");
#if AVK_WS

#include "sm90_tma.h"

/* the consumers' own barrier (the producer's warpgroup never joins) */
AVK_DEVICE void avk_consumers_sync(void) { asm volatile("bar.sync 1, %0;" ::"r"((int)NC) : "memory"); }

#if AVK_PINGPONG
/* warpgroup wg's turn (barrier 2 + wg, two warpgroups counted: the token's giver and wg) */
AVK_DEVICE void avk_turn_wait(int wg) { asm volatile("bar.sync %0, 256;" ::"r"(2 + wg) : "memory"); }
/* the token to warpgroup wg */
AVK_DEVICE void avk_turn_give(int wg) { asm volatile("bar.arrive %0, 256;" ::"r"(2 + wg) : "memory"); }
#endif

/* registers: the producer keeps 40 (three consumer warpgroups: 32; two CTAs an SM: 24), the
 * consumers share the rest of the CTA's launch allocation (64K / AVK_MINB, whole 8s a thread) */
enum {
    PRODUCER_REGS = AVK_MINB > 1 ? 24 : WGS == 3 ? 32 : 40,
    LAUNCH_REGS = 65536 / AVK_MINB / NT / 8 * 8,
    CONSUMER_REGS = WGS >= 2 ? (LAUNCH_REGS * NT - PRODUCER_REGS * 128) / NC / 8 * 8 : 0,
};
#endif

#include "sm90_fp8.h"
#include "sm90_timeline.h"

#include "sm90_consumer.h"

#include "sm90_schedule.h"
static_assert(!AVK_MASK_TMA || ((AVK_SCORE_MOD & AVK_MOD_MASK) && AVK_WS && AVK_WG_OVERLAP && !AVK_FP8 && !AVK_PERSISTENT &&
                                BC % 64 == 0),
              "AVK_MASK_TMA: a mask on wgmma-ws with the overlap, 16-bit, one block a CTA, key tiles of 64-column boxes");


/* One block of the grid: w's rows over its tiles. next_item: the block the CTA takes after it
 * (persistent; its Q is fetched meanwhile), or -1. */
AVK_DEVICE void avk_fwd_block(const avk_attn_params &p, const avk_work &w,
#if AVK_WS
                              const avk_tmap *tm_k, const avk_tmap *tm_v, /* the kernel parameters themselves */
#if AVK_MASK_TMA
                              const avk_tmap *tm_m,
#endif
#endif
                              unsigned char *smem_raw, avk_u32 raw, avk_u32 aQ0, avk_ring_pos &ring, int next_item)
{
    const avk_u32 aQ = aQ0 + (avk_u32)(ring.blocks % Q_BUFFERS) * Q_BYTES;
    const avk_u32 aK = aQ0 + Q_BUFFERS * Q_BYTES, aV = aK + 2 * K_BYTES, aM = aV + 2 * V_BYTES;
    (void)aM;
    const int wg = threadIdx.x / 128, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const int quad_row = lane / 4, quad_col = lane % 4;
    (void)next_item;

    const avk_elem *Q = (const avk_elem *)p.q + AVK_U16(w.q_off);
    const avk_elem *K = (const avk_elem *)p.k + AVK_U16(w.kv_off);
#if AVK_FP8
    /* the scales: Q's and K's fold into the score scale, V's into O's */
    const float *kv_scales = (const float *)p.kv_scales;
    const float score_scale = p.scale_log2 * ((const float *)p.q_scales)[w.h] * kv_scales[w.g];
    const float v_scale = kv_scales[p.kv_heads + w.g];
    const unsigned long long vt_keys = AVK_FP8_VT_KEYS(p.seq_kv);
    const avk_elem *Vt = (const avk_elem *)p.vt + ((unsigned long long)w.b * p.kv_heads + w.g) * DV * vt_keys / 2;
#define AVK_LOAD_V(addr, key) avk_load_tile<DV, BC / 2, NT, true>(addr, Vt + (key) / 2, (long long)(vt_keys / 2), DV)
#else
    const float score_scale = p.scale_log2, v_scale = 1.f;
    const avk_elem *V = (const avk_elem *)p.v + w.v_off;
#define AVK_LOAD_V(addr, key) \
    avk_load_tile<BC, DV, NT, true>(addr, V + (long long)(key) * avk_v_es(p, w), avk_v_es(p, w), w.kv_end - (key))
#endif
#define AVK_LOAD_K(addr, key)                                                                              \
    avk_load_tile<BC, AVK_U16(D), NT, true>(addr, K + AVK_U16((long long)(key) * avk_kv_es(p, w)), AVK_U16(avk_kv_es(p, w)), \
                                            w.kv_end - (key))
    const int wg_r0 = w.r0 + wg * 64;    /* first query row of this warpgroup */
    const int warp_r0 = wg_r0 + warp * 16; /* wgmma gives warp i rows 16i..16i+15 */
    const int wg_last_row = min(wg_r0 + 64, w.r_end) - 1;
    const int warp_last_row = max(min(warp_r0 + 16, w.r_end) - 1, 0);
    /* keys the warpgroup's rows see at all, and keys every row of the warp sees */
    const int wg_min_begin = avk_row_key_begin(p, w, min(wg_r0, wg_last_row)), wg_max_end = avk_row_key_end(p, w, wg_last_row);
    const int warp_max_begin = avk_row_key_begin(p, w, warp_last_row), warp_min_end = avk_row_key_end(p, w, min(warp_r0, warp_last_row));
    const avk_tile_rows<1> rows = avk_rows_before_loop<1>(p, w, warp_r0 + quad_row, score_scale);
#if AVK_MASK_TMA
    const float mask_unit = 1.4426950408889634f / avk_score_scale(p, score_scale); /* the hook's units */
#endif

#if AVK_WS
    /* full K, full V, empty: one mbarrier each a stage, after the V stages (and the mask's) */
    const avk_u32 bars = aM + 2 * M_BYTES;
#define AVK_BAR_FULL_K(st) (bars + (avk_u32)(st) * 8u)
#define AVK_BAR_FULL_V(st) (bars + 16u + (avk_u32)(st) * 8u)
#define AVK_BAR_EMPTY(st) (bars + 32u + (avk_u32)(st) * 8u)   /* K's slot (AVK_SPLIT_RELEASE), else the stage */
#define AVK_BAR_EMPTY_V(st) (bars + 48u + (avk_u32)(st) * 8u) /* V's slot (AVK_SPLIT_RELEASE) */
#define AVK_TILE_SLOT(st) (((volatile int *)(smem_raw + (bars + 64u - raw)))[st]) /* AVK_TILE_SLOTS */
#define AVK_BAR_FULL_M(st) (bars + 80u + (avk_u32)(st) * 8u)  /* AVK_MASK_TMA (never persistent: no queue there) */
#define AVK_BAR_EMPTY_M(st) (bars + 96u + (avk_u32)(st) * 8u)
/* a warp's releases: K's slot once S has landed; the stage's rest once P V has; a skipped
 * tile's whole stage (both copies landed: the producer's next expect_tx starts a fresh phase).
 * Split, the rest is V's slot only: both full barriers were waited before the MMAs, and K's
 * may be a phase further on already. */
#define AVK_FREE_K(i)                                                                     \
    do {                                                                                  \
        if (AVK_SPLIT_RELEASE) {                                                          \
            avk_syncwarp();                                                               \
            if (lane == 0) avk_mbar_arrive(AVK_BAR_EMPTY((i) & 1));                       \
        }                                                                                 \
    } while (0)
#define AVK_FREE_REST(i)                                                                  \
    do {                                                                                  \
        if (!AVK_SPLIT_RELEASE) {                                                         \
            avk_mbar_wait(AVK_BAR_FULL_K((i) & 1), ((i) >> 1) & 1);                       \
            avk_mbar_wait(AVK_BAR_FULL_V((i) & 1), ((i) >> 1) & 1);                       \
        }                                                                                 \
        avk_syncwarp();                                                                   \
        if (lane == 0) avk_mbar_arrive(AVK_SPLIT_RELEASE ? AVK_BAR_EMPTY_V((i) & 1) : AVK_BAR_EMPTY((i) & 1)); \
    } while (0)
#define AVK_FREE_SKIPPED(i)                                                               \
    do {                                                                                  \
        avk_mbar_wait(AVK_BAR_FULL_K((i) & 1), ((i) >> 1) & 1);                           \
        avk_mbar_wait(AVK_BAR_FULL_V((i) & 1), ((i) >> 1) & 1);                           \
        if (AVK_MASK_TMA) avk_mbar_wait(AVK_BAR_FULL_M((i) & 1), ((i) >> 1) & 1);         \
        avk_syncwarp();                                                                   \
        if (lane == 0) {                                                                  \
            avk_mbar_arrive(AVK_BAR_EMPTY((i) & 1));                                      \
            if (AVK_SPLIT_RELEASE) avk_mbar_arrive(AVK_BAR_EMPTY_V((i) & 1));             \
            if (AVK_MASK_TMA) avk_mbar_arrive(AVK_BAR_EMPTY_M((i) & 1));                  \
        }                                                                                 \
    } while (0)
#if AVK_MASK_TMA
/* the mask of tile t, the it-th the ring carries, into its stage once the consumers took tile it - 2's:
 * the CTA's rows of the (batch, head)'s mask, BC / 64 boxes (attn_scores.h's avk_mask_row, pack 1) */
#define AVK_PRODUCE_M(t, it)                                                                                              \
    do {                                                                                                                  \
        const int st_m = (it) & 1;                                                                                        \
        if ((it) >= 2) AVK_TL_TIMED(3, avk_mbar_wait(AVK_BAR_EMPTY_M(st_m), (((it) >> 1) - 1) & 1));                     \
        const int mrow = (int)(((unsigned long long)w.b * p.mask_sb + (unsigned long long)w.h * p.mask_sh) / p.seq_kv) + w.r0; \
        avk_mbar_arrive_expect_tx(AVK_BAR_FULL_M(st_m), M_BYTES);                                                         \
        _Pragma("unroll") for (int cb = 0; cb < BC / 64; ++cb)                                                            \
            avk_tma_load_2d(aM + st_m * M_BYTES + cb * BR * 128, tm_m, (t) * BC + cb * 64, mrow, AVK_BAR_FULL_M(st_m));   \
    } while (0)
/* tile it's mask added to the warp's S (the hook's units), then its stage released */
#define AVK_ADD_MASK(it)                                                                                                  \
    do {                                                                                                                  \
        AVK_TL_TIMED(0, avk_mbar_wait(AVK_BAR_FULL_M((it) & 1), ((it) >> 1) & 1));                                        \
        avk_add_mask_tile(s, aM + (avk_u32)((it) & 1) * M_BYTES, wg * 64 + warp * 16, lane, mask_unit);                   \
        avk_syncwarp();                                                                                                   \
        if (lane == 0) avk_mbar_arrive(AVK_BAR_EMPTY_M((it) & 1));                                                        \
    } while (0)
#else
#define AVK_PRODUCE_M(t, it) ((void)0)
#define AVK_ADD_MASK(it) ((void)0)
#endif
/* V of tile t, the it-th the ring carries, into stage it & 1 (split: once V's own slot is free;
 * else the whole stage was waited for before its K) */
#if AVK_FP8
#define AVK_PRODUCE_V_BOXES(st, t) /* Vt's map: boxes of 128 keys x Dv rows */                                            \
    for (int cb = 0; cb < BC / 128; ++cb)                                                                                 \
        avk_tma_load(aV + (st) * V_BYTES + cb * DV * 128, tm_v, (t) * BC + cb * 128, 0, w.g, w.b, AVK_BAR_FULL_V(st))
#else
#define AVK_PRODUCE_V_BOXES(st, t)                                                                                        \
    for (int cb = 0; cb < DV / 64; ++cb)                                                                                  \
        avk_tma_load(aV + (st) * V_BYTES + cb * BC * 128, tm_v, cb * 64, (t) * BC, w.g, w.b, AVK_BAR_FULL_V(st))
#endif
#define AVK_PRODUCE_V(t, it)                                                                                              \
    do {                                                                                                                  \
        const int st_v = (it) & 1;                                                                                        \
        if (AVK_SPLIT_RELEASE && (it) >= 2) AVK_TL_TIMED(3, avk_mbar_wait(AVK_BAR_EMPTY_V(st_v), (((it) >> 1) - 1) & 1)); \
        avk_mbar_arrive_expect_tx(AVK_BAR_FULL_V(st_v), V_BYTES);                                                         \
        _Pragma("unroll") AVK_PRODUCE_V_BOXES(st_v, t);                                                                   \
    } while (0)
    AVK_TL_WAITS();
    if (wg == WGS) {
        /* ---- producer: tile t into stage it & 1 once the consumers released tile it - 2; with the
         * overlap, tile t-1's P V runs beside tile t's S, so V comes one tile behind K ---- */
#if AVK_SCORE_MOD & AVK_MOD_BLOCKS
        /* a block layout: the producer's first warp walks the tiles some row of the CTA sees
         * (avk_next_tile's vote, the consumers' walk too), its first lane loads them */
        if (threadIdx.x / 32 == NC / 32) {
            const bool loader = threadIdx.x == NC;
            avk_tile_window win = AVK_TILE_WINDOW_NONE;
            int it = ring.uses, t_prev = 0;
            for (int t = avk_next_tile(p, w, w.t_begin - 1, BC, win); t < w.t_end; t_prev = t, t = avk_next_tile(p, w, t, BC, win), ++it) {
                const int st = it & 1;
                if (!loader) continue;
                if (it >= 2) AVK_TL_TIMED(3, avk_mbar_wait(AVK_BAR_EMPTY(st), ((it >> 1) - 1) & 1));
                if (AVK_TILE_SLOTS) AVK_TILE_SLOT(st) = t;
                if (it == ring.uses) AVK_TL_MARK_BY(NC, 14);
                avk_mbar_arrive_expect_tx(AVK_BAR_FULL_K(st), K_BYTES);
#pragma unroll
                for (int cb = 0; cb < D * ES / 128; ++cb)
                    avk_tma_load(aK + st * K_BYTES + cb * BC * 128, tm_k, cb * 128 / ES, t * BC, w.g, w.b, AVK_BAR_FULL_K(st));
                if (!AVK_WG_OVERLAP) AVK_PRODUCE_V(t, it);
                else if (it > ring.uses) AVK_PRODUCE_V(t_prev, it - 1);
            }
            if (AVK_WG_OVERLAP && loader && it > ring.uses) AVK_PRODUCE_V(t_prev, it - 1);
            if (AVK_TILE_SLOTS && loader) { /* the end: the next stage's slot says -1, with no copy */
                if (it >= 2) avk_mbar_wait(AVK_BAR_EMPTY(it & 1), ((it >> 1) - 1) & 1);
                AVK_TILE_SLOT(it & 1) = -1;
                avk_mbar_arrive(AVK_BAR_FULL_K(it & 1));
            }
            ring.uses = it;
        }
#else
        if (threadIdx.x == NC) {
            const int n = w.t_end - w.t_begin;
            for (int i = 0; i < n + AVK_WG_OVERLAP; ++i) {
                if (i < n) {
                    const int it = ring.uses + i, st = it & 1, t = w.t_begin + i;
                    if (it >= 2) AVK_TL_TIMED(3, avk_mbar_wait(AVK_BAR_EMPTY(st), ((it >> 1) - 1) & 1));
                    if (i == 0) AVK_TL_MARK_BY(NC, 14);
                    avk_mbar_arrive_expect_tx(AVK_BAR_FULL_K(st), K_BYTES);
                    /* boxes of 128 bytes: 64 16-bit columns, or 128 e4m3 ones (fp8) */
#pragma unroll
                    for (int cb = 0; cb < D * ES / 128; ++cb)
                        avk_tma_load(aK + st * K_BYTES + cb * BC * 128, tm_k, cb * 128 / ES, t * BC, w.g, w.b, AVK_BAR_FULL_K(st));
                    AVK_PRODUCE_M(t, it);
                }
                const int iv = i - AVK_WG_OVERLAP; /* V's tile of the range */
                if (iv < 0) continue;
                AVK_PRODUCE_V(w.t_begin + iv, ring.uses + iv);
            }
            ring.uses += n;
        }
#endif
        AVK_TL_WAITS_STORE(NC, 3, 3);
        return;
    }
    /* ---- prologue: Q by the consumers' cp.async (persistent: fetched during the last block) ---- */
    AVK_TL_BEGIN();
    AVK_TL_MARK(13);
#if AVK_TIMELINE
    const int tl_uses = ring.uses;
#endif
    if (!AVK_PERSISTENT || ring.blocks == 0)
        avk_load_tile<BR, AVK_U16(D), NC, true>(aQ, Q + AVK_U16((long long)w.r0 * avk_q_stride(p, w)), AVK_U16(avk_q_stride(p, w)),
                                                w.r_end - w.r0);
    avk_cp_async_commit();
    AVK_CP_ASYNC_WAIT(0);
#if AVK_SOFTCAP_IN_Q
    avk_scale_q_tile<BR, D, NC>(smem_raw + (aQ - raw), p.scale_log2 * (0.69314718055994530942f / p.softcap));
#endif
    avk_fence_proxy_async();
    avk_consumers_sync(); /* (persistent: and every warp is done with the other buffer's O) */
    AVK_TL_MARK(3);
#if AVK_PERSISTENT
    if (next_item >= 0) { /* the next block's Q into the other buffer */
        const avk_work wn = avk_locate_item(p, BR, BC, next_item);
        avk_load_tile<BR, AVK_U16(D), NC, true>(aQ0 + (avk_u32)((ring.blocks + 1) % Q_BUFFERS) * Q_BYTES,
                                                (const avk_elem *)p.q + AVK_U16(wn.q_off) +
                                                    AVK_U16((long long)wn.r0 * avk_q_stride(p, wn)),
                                                AVK_U16(avk_q_stride(p, wn)), wn.r_end - wn.r0);
    }
    avk_cp_async_commit();
#endif
#if AVK_TILE_SLOTS /* the first stage's slot: the first tile, or -1 */
    AVK_TL_TIMED(0, avk_mbar_wait(AVK_BAR_FULL_K(ring.uses & 1), (ring.uses >> 1) & 1));
    const int t_first = AVK_TILE_SLOT(ring.uses & 1) < 0 ? w.t_end : AVK_TILE_SLOT(ring.uses & 1);
#elif AVK_SCORE_MOD & AVK_MOD_BLOCKS
    avk_tile_window win = AVK_TILE_WINDOW_NONE; /* avk_next_tile's vote: the producer's walk */
    const int t_first = avk_next_tile(p, w, w.t_begin - 1, BC, win);
#else
    const int t_first = w.t_begin;
#endif
    const bool aligned = avk_pattern_aligned(p, w, BC);
#if AVK_FP8
    (void)K, (void)Vt, (void)t_first; /* the producer's tensor maps address K and Vt */
#else
    (void)K, (void)V, (void)t_first; /* the producer's tensor maps address K and V */
#endif
#else
    /* ---- prologue: Q and the first K and V tiles ---- */
    avk_load_tile<BR, AVK_U16(D), NT, true>(aQ, Q + AVK_U16((long long)w.r0 * avk_q_stride(p, w)), AVK_U16(avk_q_stride(p, w)),
                                            w.r_end - w.r0);
    avk_tile_window win = AVK_TILE_WINDOW_NONE; /* avk_next_tile's vote */
    const int t_first = avk_next_tile(p, w, w.t_begin - 1, BC, win); /* w.t_begin, or a pattern's first visible tile */
    const bool aligned = avk_pattern_aligned(p, w, BC);
    if (t_first < w.t_end) {
        AVK_LOAD_K(aK, t_first * BC);
        AVK_LOAD_V(aV, t_first * BC);
    }
    avk_cp_async_commit();
#endif

    float acc[1][ND][4];
    float row_max[1][2], row_sum[1][2];
#pragma unroll
    for (int n = 0; n < ND; ++n) acc[0][n][0] = acc[0][n][1] = acc[0][n][2] = acc[0][n][3] = 0.f;
    row_max[0][0] = row_max[0][1] = AVK_NEG_INF;
    row_sum[0][0] = row_sum[0][1] = 0.f;
    const avk_u32 q_wg = aQ + (avk_u32)(wg * 64 * 128); /* this warpgroup's rows in every column block */

#if AVK_PINGPONG
    /* every warpgroup takes the CTA's run: their turns pair up; warpgroup 0 starts, the token goes round */
    const int run_begin = avk_row_key_begin(p, w, w.r0), run_end = avk_row_key_end(p, w, max(w.r_end - 1, w.r0));
#define AVK_TURN_WAIT() avk_turn_wait(wg)
#define AVK_TURN_PASS() avk_turn_give(WGS == 2 ? 1 - wg : wg + 1 == WGS ? 0 : wg + 1)
#else
    const int run_begin = wg_min_begin, run_end = wg_max_end;
#define AVK_TURN_WAIT() ((void)0)
#define AVK_TURN_PASS() ((void)0)
#endif
#if AVK_WG_OVERLAP
    /* The warpgroup's visible tiles are one run [v_begin, v_end), or a block layout's list
     * (the producer's walk, from t_first: visits count the stages); the stages of the tiles
     * around a run go back to the producer unread. Inside the loop no wgmma sits under a
     * branch, which would make ptxas serialize them. */
#if AVK_SCORE_MOD & AVK_MOD_BLOCKS
    const int v_begin = t_first, v_end = w.t_end;
#if AVK_TILE_SLOTS /* the next visit's slot, once its stage is full */
#define AVK_OV_NEXT(t) \
    avk_tile_slot_next(AVK_BAR_FULL_K((it + 1) & 1), ((it + 1) >> 1) & 1, &AVK_TILE_SLOT((it + 1) & 1), w.t_end, AVK_TL_WAITED(0))
#else
#define AVK_OV_NEXT(t) avk_next_tile(p, w, t, BC, win)
#endif
#define AVK_OV_VISIT(t, prev) ((prev) + 1)
#define AVK_OV_USES() (v_begin < v_end ? it + 1 : ring.uses) /* the stages the walk used */
    /* a tile the layout does not show whole to the warpgroup is tested per element (a hidden
     * one too: the ping-pong's turns need every warpgroup at every tile of the CTA's list) */
#define AVK_OV_EDGE(t)                                                                                                    \
    (avk_tile_is_edge((t) * BC, BC, warp_max_begin, warp_min_end) ||                                                      \
     (!aligned && avk_pattern_tile(p, w, wg_r0, wg_last_row, (t) * BC, BC) != AVK_TILE_FULL))
#else
    const int v_begin = max(w.t_begin, min(w.t_end, run_begin / BC));
    const int v_end = max(v_begin, min(w.t_end, (run_end + BC - 1) / BC));
#define AVK_OV_NEXT(t) ((t) + 1)
#define AVK_OV_VISIT(t, prev) (ring.uses + (t) - w.t_begin)
#define AVK_OV_USES() (ring.uses + w.t_end - w.t_begin)
#define AVK_OV_EDGE(t) avk_tile_is_edge((t) * BC, BC, warp_max_begin, warp_min_end)
    for (int t = w.t_begin; t < v_begin; ++t) AVK_FREE_SKIPPED(ring.uses + t - w.t_begin);
#endif
    int it = ring.uses - 1;
    if (v_begin < v_end) {
        avk_u32 pa[KS][1][4];
        float s[1][NS][4], alpha[2];
        it = AVK_OV_VISIT(v_begin, ring.uses - 1);
        avk_mask_prefetch<1, BC>(p, rows, v_begin * BC, quad_col);
        if (v_begin + 1 < v_end) avk_mask_prefetch<1, BC>(p, rows, (v_begin + 1) * BC, quad_col);
        AVK_TL_TIMED(0, avk_mbar_wait(AVK_BAR_FULL_K(it & 1), (it >> 1) & 1));
        AVK_TL_TIMED(2, AVK_TURN_WAIT());
        avk_issue_qk(s, q_wg, aK + (avk_u32)(it & 1) * K_BYTES);
        AVK_TURN_PASS();
        avk_wgmma_wait_all();
        avk_reg_fence<NS * 4>(&s[0][0][0]);
        AVK_TL_MARK(4);
        AVK_FREE_K(it);
        avk_score_tile<1, NS>(p, w, rows, s, warp_r0 + quad_row, v_begin * BC + quad_col * 2, score_scale, AVK_OV_EDGE(v_begin));
        AVK_ADD_MASK(it);
        avk_softmax_deferred(s, row_max, row_sum, avk_score_scale(p, score_scale), alpha); /* O is still 0 */
        avk_pack_p_tile(s, pa);
        for (int t = AVK_OV_NEXT(v_begin); t < v_end; t = AVK_OV_NEXT(t)) {
            const int prev = it;
            it = AVK_OV_VISIT(t, prev);
            AVK_TL_TIMED(0, avk_mbar_wait(AVK_BAR_FULL_K(it & 1), (it >> 1) & 1));
            AVK_TL_TIMED(2, AVK_TURN_WAIT());
            avk_issue_qk(s, q_wg, aK + (avk_u32)(it & 1) * K_BYTES);
            if (t + 1 < v_end) avk_mask_prefetch<1, BC>(p, rows, (t + 1) * BC, quad_col); /* a tile ahead (masks have no layout) */
            AVK_TL_TIMED(1, avk_mbar_wait(AVK_BAR_FULL_V(prev & 1), (prev >> 1) & 1));
            avk_issue_pv(acc, pa, aV + (avk_u32)(prev & 1) * V_BYTES);
            AVK_TURN_PASS();
            avk_wgmma_wait<1>(); /* S has landed; P V may still run */
            avk_reg_fence<NS * 4>(&s[0][0][0]);
            AVK_FREE_K(it);
            avk_score_tile<1, NS>(p, w, rows, s, warp_r0 + quad_row, t * BC + quad_col * 2, score_scale, AVK_OV_EDGE(t));
            AVK_ADD_MASK(it);
            const bool grow = avk_softmax_deferred(s, row_max, row_sum, avk_score_scale(p, score_scale), alpha);
            avk_wgmma_wait_all();
            avk_reg_fence<ND * 4>(&acc[0][0][0]);
            AVK_FREE_REST(prev);
            if (grow)
#pragma unroll
                for (int n = 0; n < ND; ++n) {
                    acc[0][n][0] *= alpha[0], acc[0][n][1] *= alpha[0];
                    acc[0][n][2] *= alpha[1], acc[0][n][3] *= alpha[1];
                }
            avk_pack_p_tile(s, pa);
        }
        AVK_TL_TIMED(1, avk_mbar_wait(AVK_BAR_FULL_V(it & 1), (it >> 1) & 1));
        AVK_TL_TIMED(2, AVK_TURN_WAIT());
        avk_issue_pv(acc, pa, aV + (avk_u32)(it & 1) * V_BYTES);
        AVK_TURN_PASS();
        avk_wgmma_wait_all();
        avk_reg_fence<ND * 4>(&acc[0][0][0]);
        AVK_FREE_REST(it);
    }
#if !(AVK_SCORE_MOD & AVK_MOD_BLOCKS)
    for (int t = v_end; t < w.t_end; ++t) AVK_FREE_SKIPPED(ring.uses + t - w.t_begin);
#endif
    ring.uses = AVK_OV_USES();
#undef AVK_OV_NEXT
#undef AVK_OV_VISIT
#undef AVK_OV_EDGE
#undef AVK_OV_USES
#else
#if AVK_SCORE_MOD & AVK_MOD_BLOCKS
    /* t_after: the tile after t_next, found during tile t (the layout loads overlap its S MMAs) */
    int t_next = avk_next_tile(p, w, t_first, BC, win), t_after = w.t_end, it = ring.uses;
    for (int t = t_first; t < w.t_end; t = t_next, t_next = t_after, ++it) {
#define AVK_FIND_AFTER() (t_after = avk_next_tile(p, w, t_next, BC, win))
#else
    /* the plain count: loop-carried tile variables cost 3 warpgroups registers they have not got */
    for (int t = w.t_begin; t < w.t_end; ++t) {
        const int t_next = t + 1, it = ring.uses + t - w.t_begin;
#define AVK_FIND_AFTER() ((void)0)
#endif
        const int stage = it & 1;
        const int key0 = t * BC;
#if AVK_WS
#define AVK_RELEASE() AVK_FREE_REST(it)
#define AVK_RELEASE_SKIPPED() AVK_FREE_SKIPPED(it)
#define AVK_RELEASE_K() AVK_FREE_K(it)
#else
#define AVK_RELEASE() ((void)0)
#define AVK_RELEASE_SKIPPED() ((void)0)
#define AVK_RELEASE_K() ((void)0)
        /* One barrier per tile: tile t has landed for every thread, and every
         * warpgroup is done with tile t-1 (its MMAs were waited for), whose
         * stage now takes tile t+1. */
        AVK_CP_ASYNC_WAIT(0);
        avk_fence_proxy_async();
        __syncthreads();
        if (t_next < w.t_end) {
            const int next = key0 + (t_next - t) * BC; /* key0 + BC without a pattern, as ever */
            AVK_LOAD_K(aK + (stage ^ 1) * K_BYTES, next);
            AVK_LOAD_V(aV + (stage ^ 1) * V_BYTES, next);
        }
        avk_cp_async_commit();
#endif
        if (t_next < w.t_end) avk_mask_prefetch<1, BC>(p, rows, key0 + (t_next - t) * BC, quad_col);
        /* a tile no row of the warpgroup sees (right of its diagonal, below its window, outside its
         * pattern) changes nothing */
        const int pattern = aligned ? AVK_TILE_FULL : avk_pattern_tile(p, w, wg_r0, wg_last_row, key0, BC);
        /* (the ping-pong's turns need every warpgroup at every tile of the CTA: a hidden one is masked) */
        if (avk_tile_invisible(key0, BC, run_begin, run_end) || (!AVK_PINGPONG && pattern == AVK_TILE_HIDDEN)) {
            AVK_FIND_AFTER();
            AVK_RELEASE_SKIPPED();
            continue;
        }
        const avk_u32 k_tile = aK + stage * K_BYTES, v_tile = aV + stage * V_BYTES;
#if AVK_WS
        AVK_TL_TIMED(0, avk_mbar_wait(AVK_BAR_FULL_K(stage), (it >> 1) & 1));
#endif

        float s[1][NS][4];
        AVK_TL_TIMED(2, AVK_TURN_WAIT());
        avk_issue_qk(s, q_wg, k_tile);
        AVK_TURN_PASS();
        AVK_FIND_AFTER();
        avk_wgmma_wait_all();
        avk_reg_fence<NS * 4>(&s[0][0][0]);
        AVK_RELEASE_K();

        /* ---- mask (edge tiles) and score modifications, online softmax ---- */
        avk_score_tile<1, NS>(p, w, rows, s, warp_r0 + quad_row, key0 + quad_col * 2, score_scale,
                              avk_tile_is_edge(key0, BC, warp_max_begin, warp_min_end) ||
                                  (AVK_PINGPONG ? pattern != AVK_TILE_FULL : pattern == AVK_TILE_PARTIAL));
        avk_online_softmax<1, NS, ND>(s, acc, row_max, row_sum, avk_score_scale(p, score_scale));

        /* ---- O += P V ---- */
        avk_u32 pa[KS][1][4];
        avk_pack_p_tile(s, pa);
#if AVK_WS
        AVK_TL_TIMED(1, avk_mbar_wait(AVK_BAR_FULL_V(stage), (it >> 1) & 1));
#endif
        avk_issue_pv(acc, pa, v_tile);
        avk_wgmma_wait_all();
        avk_reg_fence<ND * 4>(&acc[0][0][0]);
        AVK_RELEASE();
    }
#if AVK_SCORE_MOD & AVK_MOD_BLOCKS
    ring.uses = it;
#else
    ring.uses += w.t_end - w.t_begin;
#endif
#undef AVK_FIND_AFTER
#undef AVK_RELEASE
#undef AVK_RELEASE_SKIPPED
#undef AVK_RELEASE_K
#endif /* AVK_WG_OVERLAP */
#undef AVK_TURN_WAIT
#undef AVK_TURN_PASS
#undef AVK_LOAD_K
#undef AVK_LOAD_V
    AVK_TL_MARK(5);
    AVK_TL_TILES(ring.uses - tl_uses);
    AVK_CP_ASYNC_WAIT(0);
#if !AVK_SPLIT
    /* every copy has landed and no warpgroup reads Q any more: O is staged over
     * it. A CTA barrier, not the warpgroup's: a CTA without tiles (a row block
     * of empty rows) skips the loop's barriers, and its Q rows may be copied by
     * the other warpgroup's threads, whose copies could land over staged O. */
#if AVK_WS
    /* warp-specialized: the prologue waited for every Q copy behind a consumers' barrier, and
     * each warp stages and stores only its own rows, so this barrier orders nothing there;
     * AVK_WS_EPILOGUE_SYNC=0 (ATTNVK_CUDA_DEFINES, an A/B) lets a warpgroup that is done
     * store O while the other still runs its last tiles */
#if AVK_WS_EPILOGUE_SYNC
    avk_consumers_sync();
#endif
#else
    __syncthreads();
#endif
#endif
    AVK_TL_MARK(6);

    /* ---- epilogue: O = acc / l, written once; LSE ---- */
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        float l = row_sum[0][half];
        l += avk_shfl_xor(l, 1);
        l += avk_shfl_xor(l, 2);
        const int r = wg * 64 + warp * 16 + quad_row + half * 8; /* row within the CTA's tile */
        const int i = w.r0 + r;
        float m = row_max[0][half];
        const float keep = avk_fold_sink(p, w.h, m, l); /* one head per CTA */
        const float inv = l > 0.f ? keep / l * v_scale : 0.f;
#if AVK_SPLIT
        if (i >= w.r_end) continue;
#pragma unroll
        for (int n = 0; n < ND; ++n)
            avk_store_pair(p, w, i, n * 8 + quad_col * 2, acc[0][n][2 * half] * inv, acc[0][n][2 * half + 1] * inv);
#else
        unsigned char *sQ = smem_raw + (aQ - raw);
#pragma unroll
        for (int n = 0; n < ND; ++n)
            *(avk_u32 *)(sQ + avk_tile_offset<BR, DV, true>(r, n) + quad_col * 4) =
                avk_pack2(acc[0][n][2 * half] * inv, acc[0][n][2 * half + 1] * inv);
        if (i >= w.r_end) continue;
#endif
        if (quad_col == 0) avk_store_lse(p, w, i, l > 0.f ? m + log2f(l) : AVK_NEG_INF);
    }
#if !AVK_SPLIT
    /* 16-byte coalesced stores of the warp's 16 rows (O's are Dv wide, over
     * the same rows of Q's column blocks) */
    avk_syncwarp();
    AVK_TL_MARK(12);
    avk_elem *O = (avk_elem *)p.o;
    const unsigned char *sO = smem_raw + (aQ - raw);
    enum { CH = DV / 8 };
#pragma unroll
    for (int c = lane; c < 16 * CH; c += 32) {
        const int rl = c / CH, k = c % CH, r = wg * 64 + warp * 16 + rl, i = w.r0 + r;
        if (i < w.r_end)
            *(uint4 *)(O + avk_o_elem(w.q_off + (long long)i * avk_q_stride(p, w)) + k * 8) =
                *(const uint4 *)(sO + avk_tile_offset<BR, DV, true>(r, k));
    }
#endif
    AVK_TL_WAITS_STORE(0, 0, 2);
    AVK_TL_END();
    ++ring.blocks;
}

AVK_KERNEL void __launch_bounds__(AVK_THREADS, AVK_MINB) avk_attn_fwd(const avk_attn_params p
#if AVK_WS
                                                                       ,
                                                                       const __grid_constant__ avk_tmap tm_k,
                                                                       const __grid_constant__ avk_tmap tm_v
#if AVK_MASK_TMA
                                                                       ,
                                                                       const __grid_constant__ avk_tmap tm_m
#endif
#endif
)
{
    AVK_DYNAMIC_SMEM(smem_raw);
    if (AVK_SPLIT) avk_launch_dependents(); /* the merge may launch: it waits for this grid to finish */
    /* swizzle atoms (8 rows x 128 bytes) must start on 1024-byte boundaries;
     * the host allocates the slack */
    const avk_u32 raw = avk_smem_addr(smem_raw);
    const avk_u32 aQ0 = (raw + 1023u) & ~1023u;
    avk_ring_pos ring = {0, 0};
    AVK_TL_ENTRY();
#if AVK_WS
    const int wg = threadIdx.x / 128;
    const avk_u32 bars = aQ0 + Q_BUFFERS * Q_BYTES + 2 * K_BYTES + 2 * V_BYTES + 2 * M_BYTES;
    /* AVK_PERSISTENT=2: the queue of blocks taken, after the ring's barriers: full and empty
     * barriers a slot, then the slots */
    const avk_u32 queue_full = bars + 80u, /* after the tile slots (AVK_TILE_SLOTS) */ queue_empty = queue_full + 8u * QUEUE, queue_slots = queue_empty + 8u * QUEUE;
    (void)queue_full, (void)queue_empty, (void)queue_slots;
    if (threadIdx.x == 0) { /* the ring's mbarriers, after the V stages (avk_fwd_block's AVK_BAR_*) */
        if (AVK_PERSISTENT == 2)
            for (int q = 0; q < QUEUE; ++q) {
                avk_mbar_init(queue_full + 8u * q, 1);
                avk_mbar_init(queue_empty + 8u * q, NC / 32); /* each consumer warp, done with the block */
            }
        for (int st = 0; st < 2; ++st) {
            avk_mbar_init(bars + (avk_u32)st * 8u, 1);       /* full K */
            avk_mbar_init(bars + 16u + (avk_u32)st * 8u, 1); /* full V */
            avk_mbar_init(bars + 32u + (avk_u32)st * 8u, NC / 32); /* empty: each consumer warp releases */
            if (AVK_SPLIT_RELEASE) avk_mbar_init(bars + 48u + (avk_u32)st * 8u, NC / 32); /* V's slot */
            if (AVK_MASK_TMA) {
                avk_mbar_init(bars + 80u + (avk_u32)st * 8u, 1);       /* full mask */
                avk_mbar_init(bars + 96u + (avk_u32)st * 8u, NC / 32); /* the mask's slot */
            }
        }
        avk_mbar_init_fence();
    }
    __syncthreads(); /* the barriers exist before anyone waits on them */
#endif
#if AVK_PERSISTENT == 2
    unsigned char *const slot_ptr = smem_raw + (queue_slots - raw); /* AVK_SLOT's */
#endif
#if AVK_WS
    /* the producer's and the consumers' register budgets, each path on its own from here (ptxas
     * allocates for the budget a path runs under: a shared tail after the setmaxnreg spilled) */
    if (wg == WGS) {
        avk_setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x / 32 != NC / 32) return; /* one warp walks and loads */
        AVK_FWD_BLOCKS();
        return;
    }
    if (CONSUMER_REGS) avk_setmaxnreg_inc<CONSUMER_REGS>();
#if AVK_PINGPONG
    if (wg == 0) avk_turn_give(0); /* the ping-pong's token starts with warpgroup 0, once */
#endif
#endif
    AVK_FWD_BLOCKS();
#undef AVK_FWD_BLOCKS
#undef AVK_SLOT
#undef AVK_PUBLISH
}
