#extension GL_KHR_memory_scope_semantics : require // workgroup-scoped atomics on vis_bits
// FlashAttention-2 forward on matrix units with the softmax in registers
// ("register softmax"): S = Q.K^T stays in the f32 accumulators, each lane
// works on the elements it holds, and P is converted to f16 in place and used
// directly as the A operand of O += P.V. Nothing of S or P goes through shared
// memory, which is left to K, V and (optionally) Q.
//
// Written once against macros that describe how an implementation spreads a
// C (accumulator) matrix over the lanes of a subgroup; flash_coopmat_nv_rs.comp
// gives NVIDIA's layout (checked by the host's probe before the variant is
// used), flash_coopmat_rs_emu.comp an emulation where every lane holds all:
//   CM_A, CM_B, CM_C            operand and accumulator types (MS x MS)
//   CM_LOAD_ROW / CM_LOAD_COL   f16 loads from tile_sh (offset, stride in uvec4)
//   CM_MAD(a, b, c), CM_C_ZERO, CM_A_FROM_C(c) (f32 -> f16, elementwise)
//   CM_AT(m, e)                 element e of this lane's part of m
//   CM_LEN                      elements per lane of a C matrix
//   CM_SLOTS                    distinct rows a lane holds in one MS-row tile
//   CM_SLOT(e)                  which of those rows element e is in (slot-major:
//                               e / (CM_LEN / CM_SLOTS); cm_score_mods.glsl relies on it)
//   CM_SLOT_ROW(lane, s)        row (0..MS-1) of slot s; CM_COL(lane, e): column
//                               (CM_COL(lane, e + 1) == CM_COL(lane, e) + 1 for even e,
//                               and even there; CM_COL(lane, e) depends on e % (CM_LEN / CM_SLOTS))
//   CM_ROW_MAX(x), CM_ROW_SUM(x) reduce over the lanes that share a row
//   CM_ROW_LEADER(lane)         one lane per row writes the row's statistics
//   CM_WRITES(lane)             this lane writes its elements of O
//   CM_ELEM_LOOP                loop attribute over a lane's elements ([[unroll]]
//                               where elements live in registers)
//
// Workgroup: NSG subgroups, each owning RS = BR / NSG query rows (RT row tiles
// of MS). Per key tile of BC keys, with K_{j+1} and V_{j+1} streamed through
// registers while tile j is computed (KV_STAGES = 2: two K and two V buffers,
// one barrier per tile; KV_STAGES = 1: one of each, two barriers per tile):
//   1. S = Q.K^T (Q as A matrices from registers, or from shared memory when
//      Q_SHARED, which frees registers);
//   2. masks on edge tiles only, per element from its (row, column); with
//      AVK_SCORES the score features first (cm_score_mods.glsl: raw units,
//      one uniform branch per feature and a straight run over the elements);
//   3. row max per slot, reduced across the row's lanes; lazy rescale: the max
//      moves only when it grows by more than RESCALE_LOG2, and then O is
//      rescaled elementwise in registers;
//   4. P = exp2(S * s_scale - m) elementwise (s_scale: avk_score_scale()); per-lane partial row sums
//      (reduced across lanes once, at the end);
//   5. O += P.V with P converted to f16 in registers.
// The epilogue writes O / l straight from the accumulators (column pairs).
// Q and K rows are DKP wide, V and O rows DVP (flash_coopmat_common.glsl: Dk
// and Dv with zero columns up to the matrix grain).
#include "flash_coopmat_common.glsl"

layout(constant_id = 5) const uint MS = 16;      // square matrix shape: MS x MS x MS
layout(constant_id = 8) const uint KV_STAGES = 1; // 2: double-buffered K and V, one barrier per tile
layout(constant_id = 9) const uint Q_SHARED = 0;  // 1: Q stays in shared memory (fewer registers)

const uint RT = RS / MS;                   // row tiles per subgroup
const uint NT = BC / MS;                   // S (and P) tiles per row tile
const uint DT = DKP / MS;                  // Q k-steps
const uint OT = DVP / MS;                  // O column tiles
const uint D8 = D / 8, DV8 = DV / 8;       // uvec4 (8 halves) of a Q/K, V row in memory
const uint KP8 = DKP / 8, VP8 = DVP / 8;   // ... and in shared memory (zero columns included)
const uint KS = KP8 + 1;                   // padded Q/K row in uvec4 (bank spread)
const uint VS = VP8 + 1;                   // padded V row
const uint KTILE = BC * KS;                // uvec4 per K buffer
const uint VTILE = BC * VS;                // uvec4 per V buffer
const uint Q_WORDS = Q_SHARED != 0u ? BR * KS : 0u;
const uint K_OFF = Q_WORDS;                // K buffers, then V buffers
const uint V_OFF = K_OFF + KV_STAGES * KTILE;
const uint LOOP_WORDS = V_OFF + KV_STAGES * VTILE;
const uint QC = DKP % 32 == 0 ? 32 : 16;   // Q columns per staging pass (Q in registers)
const uint QSW = QC / 8 + 1;
const uint QSTAGE_WORDS = Q_SHARED != 0u ? 0u : BR * QSW;
// AVK_ALIBI_MMA: ALiBi's key term slope (j - p0) = slope (j - j0) + slope (j0 - p0). The first is
// one more k-step of S = Q.K^T: an A matrix whose columns 0 and 1 hold the slope in S's raw units
// as an f16 pair (hi + lo, about 22 bits) times B matrices whose rows 0 and 1 hold each key's
// index in the tile (NT of them, exact in f16); both are written to shared memory once. The
// second is one number a tile, which cm_softmax_pv.glsl's max and exponent take (PV_TILE_TERM).
// No per-element work is left (the row part is taken out at the end, as before).
const uint AS = MS / 8u;                                   // uvec4 a row of those matrices
const uint SH_BASE = LOOP_WORDS > QSTAGE_WORDS ? LOOP_WORDS : QSTAGE_WORDS;
const uint ALIBI_A_OFF = SH_BASE, ALIBI_B_OFF = SH_BASE + MS * AS;
const uint SH_WORDS = SH_BASE + (AVK_ALIBI_MMA ? (MS + BC) * AS : 0u);
const uint LPT = (BC * (KP8 > VP8 ? KP8 : VP8) + WG - 1) / WG; // uvec4 per thread per K or V tile
const uint NSTAT = RT * CM_SLOTS;          // row statistics a lane keeps
const float RESCALE_LOG2 = 8.0;

layout(binding = 0) readonly buffer QB { uvec4 q_data[]; };
layout(binding = 1) readonly buffer KB { uvec4 k_data[]; };
layout(binding = 2) readonly buffer VB { uvec4 v_data[]; };
layout(binding = 3) writeonly buffer OB { uint o_pairs[]; };   // f16 pairs
layout(binding = 4) writeonly buffer LB { float lse_data[]; };
layout(binding = 5) writeonly buffer WOB { vec2 ws_o[]; };
layout(binding = 6) writeonly buffer WMB { vec2 ws_ml[]; };

// [Q (Q_SHARED)] | K x KV_STAGES | V x KV_STAGES; Q staging passes alias the start
shared uvec4 tile_sh[SH_WORDS];

uvec4 kv_pre[LPT]; // the next K (or V) tile on its way from global memory

// MASK_SH (AVK_MASK_SHARED, set by vk_variants.c for an f16 mask whose rows are whole 16-byte
// chunks, one K buffer that holds the tile's mask): the tile's mask rows come by coalesced
// 16-byte loads while S is computed, go into the K buffer once S is done with it (chunks XOR-
// swizzled by the row: a lane quad's pairs over eight rows hit distinct banks), and
// cm_score_mods.glsl reads them there, rather than each lane its pairs over eight rows of global
// memory (eight lines a load).
const bool MASK_SH = AVK_MASK_SHARED && KV_STAGES == 1u;
const uint MQ = BC / 8u;                                   // 16-byte chunks of a mask tile's row
const uint MPT = MASK_SH ? (BR * MQ + WG - 1u) / WG : 1u;  // ... a thread loads per tile
layout(binding = 12) readonly buffer MaskQuadB { uvec4 mask_quads[]; };
uvec4 mask_pre[MPT];

void mask_prefetch(uint j0, Work w)
{
    [[unroll]] for (uint x = 0u; x < MPT; ++x) {
        uint e = gl_LocalInvocationID.x + x * WG, r = e / MQ, col = j0 + (e % MQ) * 8u;
        bool ok = e < BR * MQ && col < pc.seq_kv; // zeros past the row: those keys are dropped
        mask_pre[x] = ok ? mask_quads[(avk_mask_row(w.b, w.h, min(w.i0 + r, w.q_end - 1u)) + col) / 8u] : uvec4(0u);
    }
}

void mask_commit(uint base)
{
    [[unroll]] for (uint x = 0u; x < MPT; ++x) {
        uint e = gl_LocalInvocationID.x + x * WG, r = e / MQ;
        if (e < BR * MQ) tile_sh[base + r * MQ + ((e % MQ) ^ (r % MQ))] = mask_pre[x];
    }
}

// the staged mask of tile row r, columns col and col + 1 (col even)
vec2 mask_tile_pair(uint base, uint r, uint col)
{
    return unpackHalf2x16(tile_sh[base + r * MQ + ((col / 8u) ^ (r % MQ))][(col / 2u) % 4u]);
}

// K (values false) or V rows of keys j0 ..: zero past the keys and in the zero columns.
void prefetch(uint j0, Work w, bool values)
{
    uint p8 = values ? VP8 : KP8, n8 = values ? DV8 : D8;
    [[unroll]] for (uint x = 0u; x < LPT; ++x) {
        uint e = gl_LocalInvocationID.x + x * WG;
        uint c = e / p8, d8 = e % p8;
        uint j = j0 + c;
        bool ok = e < BC * p8 && j < w.kv_hi && d8 < n8;
        uint idx = ok ? flash_kv_row(w, j) * n8 + d8 : 0u;
        kv_pre[x] = ok ? (values ? v_data[idx] : k_data[idx]) : uvec4(0u);
    }
}

void commit(uint base, bool values)
{
    uint p8 = values ? VP8 : KP8, stride = values ? VS : KS;
    [[unroll]] for (uint x = 0u; x < LPT; ++x) {
        uint e = gl_LocalInvocationID.x + x * WG;
        if (e < BC * p8) tile_sh[base + (e / p8) * stride + e % p8] = kv_pre[x];
    }
}

// The first key tile at or after t (of the workgroup's w.ntiles) that some of its rows see through
// a sparse pattern (w.ntiles: none); t itself without a pattern. Uniform over the workgroup. Its
// lanes classify a window of WG tiles at once into vis_bits (one layout round trip per WG tiles)
// and searches inside the window read shared memory only: a lane walking the tiles alone waited
// on the layout once per hidden tile (H100, 32k, 10% of 128x128 blocks: 77 TFLOP/s against
// dense's 208), a search per visible tile still once per visible tile (140). shown: whether the
// layout shows the tile whole to every row (no per-element test), kept in the window as well.
const uint VIS_WORDS = (WG + 31u) / 32u;
shared uint vis_bits[2u * VIS_WORDS]; // visible tiles, then wholly shown ones
uint vis_base = 0xffffffffu; // the window's first tile, the same in every lane (none yet)
uint visible_tile_from(Work w, uint t, out bool shown)
{
    shown = true;
    if ((avk_flags() & AVK_PATTERNS) == 0u) return t;
    uint last_row = min(w.i0 + BR, w.q_end) - 1u;
    while (t < w.ntiles) {
        if (vis_base == 0xffffffffu || t < vis_base || t - vis_base >= WG) { // classify [t, t + WG)
            barrier(); // every lane is done reading the old window
            if (gl_LocalInvocationID.x < 2u * VIS_WORDS) vis_bits[gl_LocalInvocationID.x] = 0u;
            barrier();
            uint cand = t + gl_LocalInvocationID.x, word = gl_LocalInvocationID.x / 32u;
            uint cls = cand < w.ntiles ? avk_pattern_tile(w.b, w.h, w.i0, last_row, w.kv_lo + cand * BC, BC) : AVK_TILE_HIDDEN;
            // workgroup scope: a device-scope atomic needs vulkanMemoryModelDeviceScope (lavapipe's
            // validation layer refuses it without)
            uint bit = 1u << (gl_LocalInvocationID.x % 32u);
            if (cls != AVK_TILE_HIDDEN)
                atomicOr(vis_bits[word], bit, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed);
            if (cls == AVK_TILE_SHOWN)
                atomicOr(vis_bits[VIS_WORDS + word], bit, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed);
            barrier();
            vis_base = t;
        }
        uint off = t - vis_base;
        for (uint wd = off / 32u; wd < VIS_WORDS; ++wd) {
            uint bits = vis_bits[wd] & (wd == off / 32u ? 0xffffffffu << (off % 32u) : 0xffffffffu);
            if (bits != 0u) {
                uint bit = uint(findLSB(bits));
                shown = (vis_bits[VIS_WORDS + wd] & (1u << bit)) != 0u;
                return vis_base + wd * 32u + bit;
            }
        }
        t = vis_base + WG;
    }
    return w.ntiles;
}

// Eight f16 of Q times f, rounded once (AVK_SOFTCAP_IN_Q: the softcap's input scale)
uvec4 q_times(uvec4 v, float f)
{
    return uvec4(packHalf2x16(unpackHalf2x16(v.x) * f), packHalf2x16(unpackHalf2x16(v.y) * f),
                 packHalf2x16(unpackHalf2x16(v.z) * f), packHalf2x16(unpackHalf2x16(v.w) * f));
}

void main()
{
    Work w = flash_work(BR, BC);
    uint tid = gl_LocalInvocationID.x;
    uint sg = gl_SubgroupID;
    uint lane = gl_SubgroupInvocationID;
    uint row0 = w.i0 + sg * RS;                // first query row of this subgroup
    int block_limit = flash_row_limit(w, w.i0);  // the block's first row sees the fewest keys
    uint block_begin = flash_block_begin(w, BR); // ... and its last row's window starts last
    float s_scale = avk_score_scale();            // for cm_softmax_pv.glsl: S stays in raw units
    // ALiBi's slope in S's raw units (cm_score_mods.glsl), the one row input held along the key loop
    float alibi_raw = (avk_flags() & AVK_FLAG_ALIBI) != 0u ? alibi_slopes[w.h] * avk_raw_unit() : 0.0;

    // Q: shared memory only, or global -> shared (QC columns per pass) -> A matrices in registers;
    // with AVK_SOFTCAP_IN_Q and a softcap, times its input scale (cm_score_mods.glsl then leaves S as is)
    bool q_scaled = AVK_SOFTCAP_IN_Q && avk_softcap() > 0.0;
    float q_in = q_scaled ? avk_softcap_raw_in() : 1.0;
    CM_A qm[RT * DT]; // unused (and dropped by the compiler) when Q_SHARED
    if (Q_SHARED != 0u) {
        for (uint e = tid; e < BR * KP8; e += WG) {
            uint rr = e / KP8, d8 = e % KP8;
            uint i = w.i0 + rr;
            uvec4 v = i < w.q_end && d8 < D8 ? q_data[(w.q_base + flash_row(w, i) * pc.q_ss) / 8u + d8] : uvec4(0u);
            tile_sh[rr * KS + d8] = q_scaled ? q_times(v, q_in) : v;
        }
    } else {
        [[unroll]] for (uint c0 = 0u; c0 < DKP; c0 += QC) {
            for (uint e = tid; e < BR * (QC / 8u); e += WG) {
                uint rr = e / (QC / 8u), d8 = e % (QC / 8u);
                uint i = w.i0 + rr;
                bool ok = i < w.q_end && c0 + d8 * 8u < D; // zero columns past D
                uvec4 v = ok ? q_data[(w.q_base + flash_row(w, i) * pc.q_ss + c0) / 8u + d8] : uvec4(0u);
                tile_sh[rr * QSW + d8] = q_scaled ? q_times(v, q_in) : v;
            }
            barrier();
            [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
                [[unroll]] for (uint k = 0u; k < QC / MS; ++k)
                    CM_LOAD_ROW(qm[rt * DT + c0 / MS + k], tile_sh, (sg * RS + rt * MS) * QSW + k * MS / 8u, QSW);
            barrier();
        }
    }

#include "cm_softmax_state.glsl"

    if (AVK_ALIBI_MMA) { // ALiBi's A matrix (the slope's f16 pair in columns 0, 1) and the key indices
        float hi = unpackHalf2x16(packHalf2x16(vec2(alibi_raw, 0.0))).x;
        uint pair = packHalf2x16(vec2(hi, alibi_raw - hi));
        for (uint e = tid; e < (MS + BC) * AS; e += WG) {
            uint r = e / AS, first = e % AS == 0u ? 1u : 0u;
            uint key = packHalf2x16(vec2(float(r - MS)));
            tile_sh[SH_BASE + e] = first == 0u ? uvec4(0u) : uvec4(r < MS ? pair : key, 0u, 0u, 0u);
        }
    }

    // the first visited tile straight into buffer 0 (a sparse pattern's hidden tiles are never visited)
    bool tile_shown, next_shown; // the layout shows the tile whole (visible_tile_from)
    uint tile = visible_tile_from(w, 0u, tile_shown);
    if (tile < w.ntiles) {
        prefetch(w.kv_lo + tile * BC, w, false);
        commit(K_OFF, false);
        prefetch(w.kv_lo + tile * BC, w, true);
        commit(V_OFF, true);
    }
    barrier();

    for (uint visit = 0u; tile < w.ntiles; ++visit) {
        uint j0 = w.kv_lo + tile * BC;
        uint k_buf = K_OFF + (visit % KV_STAGES) * KTILE, v_buf = V_OFF + (visit % KV_STAGES) * VTILE;
        uint next = (visit + 1u) % KV_STAGES;
        uint next_tile = visible_tile_from(w, tile + 1u, next_shown), j_next = w.kv_lo + next_tile * BC;
        bool more = next_tile < w.ntiles;
        if (KV_STAGES > 1u) barrier(); // tile's K/V are in place; the other buffers' readers are done
        if (more) prefetch(j_next, w, false);
        if (MASK_SH) mask_prefetch(j0, w);

        // 1. S = Q.K^T: RT x NT accumulators
        CM_C sacc[RT * NT];
        [[unroll]] for (uint x = 0u; x < RT * NT; ++x) sacc[x] = CM_C_ZERO;
        [[unroll]] for (uint k = 0u; k < DT; ++k) {
            CM_A qa[RT];
            [[unroll]] for (uint rt = 0u; rt < RT; ++rt) {
                if (Q_SHARED != 0u) CM_LOAD_ROW(qa[rt], tile_sh, (sg * RS + rt * MS) * KS + k * MS / 8u, KS);
                else qa[rt] = qm[rt * DT + k];
            }
            [[unroll]] for (uint n = 0u; n < NT; ++n) {
                CM_B kb;
                CM_LOAD_COL(kb, tile_sh, k_buf + n * MS * KS + k * MS / 8u, KS);
                [[unroll]] for (uint rt = 0u; rt < RT; ++rt) sacc[rt * NT + n] = CM_MAD(qa[rt], kb, sacc[rt * NT + n]);
            }
        }
        if (AVK_ALIBI_MMA) { // ALiBi's key term (j - j0): one more k-step
            CM_A aq;
            CM_LOAD_ROW(aq, tile_sh, ALIBI_A_OFF, AS);
            [[unroll]] for (uint n = 0u; n < NT; ++n) {
                CM_B kb;
                CM_LOAD_COL(kb, tile_sh, ALIBI_B_OFF + n * MS * AS, AS);
                [[unroll]] for (uint rt = 0u; rt < RT; ++rt) sacc[rt * NT + n] = CM_MAD(aq, kb, sacc[rt * NT + n]);
            }
        }
        if (KV_STAGES == 1u) barrier(); // everyone is done reading this K
        if (more && !MASK_SH) {
            commit(K_OFF + next * KTILE, false);
            prefetch(j_next, w, true); // lands during the softmax and P.V
        }
        if (MASK_SH) { // the tile's mask into the K buffer, read by the score features
            mask_commit(K_OFF);
            barrier();
        }

        // 2. masks: keys past the end, causal limit, window (edge tiles only); score features
        bool edge = j0 + BC > w.kv_hi || int(j0 + BC - 1u) > block_limit || j0 < block_begin;
        if (AVK_SCORES == 0u) {
            if (edge) {
                [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
                    [[unroll]] for (uint n = 0u; n < NT; ++n)
                        CM_ELEM_LOOP for (uint e = 0u; e < CM_LEN; ++e) {
                            uint row = row0 + rt * MS + CM_SLOT_ROW(lane, CM_SLOT(e));
                            uint j = j0 + n * MS + CM_COL(lane, e);
                            uint end = row < w.q_end ? avk_key_end(w.len, row) : 0u;
                            CM_AT(sacc[rt * NT + n], e) = flash_score_elem(CM_AT(sacc[rt * NT + n], e), w, j, flash_row_begin(w, row), end);
                        }
            }
        } else {
            // row slot x's query (pack 1 here: one head per workgroup)
#define SCORE_ROW(x) (row0 + ((x) / CM_SLOTS) * MS + CM_SLOT_ROW(lane, (x) % CM_SLOTS))
#define SCORE_J0 j0
#define SCORE_KV_HI w.kv_hi
#define SCORE_EDGE edge
#define SCORE_P0 avk_row_pos(w.len, w.i0)
#define SCORE_SLOPE(x) alibi_raw
#define SCORE_MASK_ROW(x) avk_mask_row(w.b, w.h, min(SCORE_ROW(x), w.q_end - 1u))
#define SCORE_Q_SCALED AVK_SOFTCAP_IN_Q // (read inside the softcap's branch: q_scaled there)
#define SCORE_ALIBI_IN_S AVK_ALIBI_MMA
#define SCORE_MASK_TILED MASK_SH
#define SCORE_MASK_TILE(x, col) mask_tile_pair(K_OFF, SCORE_ROW(x) - w.i0, col)
#define SCORE_BOUNDS(x) uvec2(flash_row_begin(w, SCORE_ROW(x)), \
                              SCORE_ROW(x) < w.q_end ? min(avk_key_end(w.len, SCORE_ROW(x)), w.kv_hi) : 0u)
#include "cm_score_mods.glsl"
            // a sparse pattern's hidden keys of a visited tile the layout does not show whole
            if ((avk_flags() & AVK_PATTERNS) != 0u && !tile_shown) {
                [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
                    [[unroll]] for (uint n = 0u; n < NT; ++n)
                        CM_ELEM_LOOP for (uint e = 0u; e < CM_LEN; ++e) {
                            uint row = min(row0 + rt * MS + CM_SLOT_ROW(lane, CM_SLOT(e)), w.q_end - 1u);
                            uint j = min(j0 + n * MS + CM_COL(lane, e), pc.seq_kv - 1u); // past the end: -inf anyway
                            if (!avk_pattern_visible(w.b, w.h, row, j)) CM_AT(sacc[rt * NT + n], e) = NEG_INF;
                        }
            }
        }

        if (MASK_SH) { // everyone has read the mask: the next K takes the buffer
            barrier();
            if (more) {
                commit(K_OFF + next * KTILE, false);
                prefetch(j_next, w, true);
            }
        }

        uint v_tile = v_buf;
        // ALiBi's part S's products left out, one number a tile (log2 units; 0 without AVK_ALIBI_MMA)
#define PV_TILE_TERM (AVK_ALIBI_MMA ? alibi_raw * float(int(j0) - avk_row_pos(w.len, w.i0)) * s_scale : 0.0)
#include "cm_softmax_pv.glsl"
        if (KV_STAGES == 1u) barrier(); // everyone is done reading this V (and the next K is in place)
        if (more) commit(V_OFF + next * VTILE, true);
        tile = next_tile;
        tile_shown = next_shown;
    }

    // epilogue: whole row sums, then O / l from the accumulators, two columns per store
    float inv_l[NSTAT];
    bool split = (pc.flags & AVK_FLAG_SPLIT) != 0u;
    bool sinks = !split && (avk_flags() & AVK_FLAG_SINKS) != 0u; // split partials leave the sink to the merge
    float sink = avk_sink_log2(w.h);
    if ((avk_flags() & AVK_FLAG_ALIBI) != 0u) {
        // ALiBi's row part (cm_score_mods.glsl): S held slope * (i' - p0) more than it should
        float slope_log2 = alibi_slopes[w.h] * LOG2E;
        [[unroll]] for (uint x = 0u; x < NSTAT; ++x) m_i[x] -= slope_log2 * float(SCORE_ROW(x) - w.i0);
    }
#undef SCORE_ROW
    [[unroll]] for (uint x = 0u; x < NSTAT; ++x) {
        l_i[x] = CM_ROW_SUM(l_i[x]);
        float keep = 1.0;
        if (sinks) { // the sink joins the denominator
            float mx = max(m_i[x], sink);
            keep = m_i[x] == NEG_INF ? 0.0 : exp2(m_i[x] - mx);
            l_i[x] = l_i[x] * keep + exp2(sink - mx);
            m_i[x] = mx;
        }
        inv_l[x] = l_i[x] > 0.0 ? keep / l_i[x] : 0.0;
    }
    if (CM_WRITES(lane)) {
        [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
            [[unroll]] for (uint n = 0u; n < OT; ++n)
                CM_ELEM_LOOP for (uint e = 0u; e < CM_LEN; e += 2u) {
                    uint x = rt * CM_SLOTS + CM_SLOT(e);
                    uint row = row0 + rt * MS + CM_SLOT_ROW(lane, CM_SLOT(e));
                    uint col = n * MS + CM_COL(lane, e);
                    if (row >= w.q_end || col >= DV) continue; // zero columns are not O's
                    vec2 o = vec2(CM_AT(oacc[rt * OT + n], e), CM_AT(oacc[rt * OT + n], e + 1u)) * inv_l[x];
                    if (split) ws_o[(flash_ws_row(w.split, w.b, w.h, flash_row(w, row)) * DV + col) / 2u] = o;
                    else o_pairs[(avk_o_from_q(w.q_base + flash_row(w, row) * pc.q_ss, D, DV) + col) / 2u] = packHalf2x16(o);
                }
    }
    if (!CM_ROW_LEADER(lane)) return;
    [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
        [[unroll]] for (uint s = 0u; s < CM_SLOTS; ++s) {
            uint x = rt * CM_SLOTS + s;
            uint row = row0 + rt * MS + CM_SLOT_ROW(lane, s);
            if (row >= w.q_end) continue;
            if (split) ws_ml[flash_ws_row(w.split, w.b, w.h, flash_row(w, row))] = vec2(m_i[x], l_i[x]);
            else if ((pc.flags & AVK_FLAG_WRITE_LSE) != 0u)
                lse_data[flash_lse_index(w.b, w.h, flash_row(w, row))] = l_i[x] > 0.0 ? (m_i[x] + log2(l_i[x])) * LN2 : NEG_INF;
        }
}
