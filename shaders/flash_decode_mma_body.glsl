// Decode on matrix units: few packed rows (GQA: the heads of one kv head x the
// queries, as in flash_decode.comp) against a long K/V, with the softmax in
// registers. Written against the layout macros of flash_coopmat_rs_body.glsl
// (cm_layout_nv.glsl, cm_layout_emu.glsl).
//
// A workgroup serves BR packed rows of one (batch, head group, split). Its
// subgroups form KEY_GROUPS x ROW_GROUPS: subgroup (kg, rg) owns rows
// rg * ROWS .. and, of every step of KEY_GROUPS * BC keys, the BC keys of tile
// kg. With few rows (one head group's GQA rows, Nq = 1) every subgroup takes
// other keys, so the tensor cores see long K/V streams however few rows
// there are; with more rows (Nq = 4 .. 16, wide groups) the row groups share
// each K/V tile. Per step:
//   - the workgroup brings the step's K and V into shared memory through
//     registers: the next step's are in flight while this one computes (all
//     of a step's bytes at once, so few workgroups keep enough in flight).
//     Quantized formats (q8_0, q4_0, fp8) are decoded to scaled f16 on the
//     way, a whole block per thread, in f16 arithmetic, so the matrix units
//     only ever see f16;
//   - S = Q.K^T, masks on edge steps only, a lazily moved row max, P = exp2(S
//     - m) in place and O += P.V with P converted to f16 in registers.
// At the end the key groups merge (max, sum, O) through shared memory and key
// group 0 writes O / l (or the split's partial O and (m, l)). Q and K rows are
// DKP wide, V and O rows DVP (flash_coopmat_common.glsl: Dk and Dv with zero
// columns up to the matrix grain; quantized caches have neither: Dk = Dv, a
// multiple of 32).
#define AVK_KV_F16_MATH // quantized K/V decode to f16 in f16 arithmetic (avk_kv_codes4_f16)
#include "flash_coopmat_common.glsl"

layout(constant_id = 5) const uint MS = 16;         // square matrix shape: MS x MS x MS
layout(constant_id = 6) const uint KEY_GROUPS = 4;  // subgroups that take different keys

const uint ROW_GROUPS = NSG / KEY_GROUPS;
const uint ROWS = BR / ROW_GROUPS;          // packed rows per subgroup
const uint RT = ROWS / MS;                  // row tiles per subgroup
const uint NT = BC / MS;                    // S (and P) tiles per row tile
const uint DT = DKP / MS;                   // Q k-steps
const uint OT = DVP / MS;                   // O column tiles
const uint D8 = D / 8, DV8 = DV / 8;        // 8-value chunks (one uvec4 of f16) of a Q/K, V row in memory
const uint KP8 = DKP / 8, VP8 = DVP / 8;    // ... and in shared memory (zero columns included)
const uint KS = KP8 + 1;                    // padded Q/K row in uvec4 (bank spread)
const uint VS = VP8 + 1;                    // padded V row
const uint STEP = KEY_GROUPS * BC;          // keys per workgroup step
const uint KTILE = STEP * KS;               // uvec4 of the step's K; its V follows
const uint VTILE = STEP * VS;
const uint LPT = (STEP * KP8 + WG - 1) / WG;  // chunks per thread per K
const uint LPTV = (STEP * VP8 + WG - 1) / WG; // ... per V
const uint NSTAT = RT * CM_SLOTS;           // row statistics a lane keeps
const float RESCALE_LOG2 = 8.0;
// shared memory: the step's K | V; Q staging before the loop; the key groups' O after it
const uint MERGE_WORDS = (KEY_GROUPS - 1u) * BR * DVP / 4u;
const uint SH_A = KTILE + VTILE > BR * KS ? KTILE + VTILE : BR * KS;
#ifdef AVK_DIRECT_KV
const uint MERGE_ALL = MERGE_WORDS > BR * DVP / 4u ? MERGE_WORDS : BR * DVP / 4u; // + the merged O
const uint SH_WORDS = BR * KS > MERGE_ALL ? BR * KS : MERGE_ALL;                 // no K/V tiles
#else
const uint SH_WORDS = SH_A > MERGE_WORDS ? SH_A : MERGE_WORDS;
#endif

layout(binding = 0) readonly buffer QB { uvec4 q_data[]; };
#if AVK_KV_FORMAT == AVK_KV_DTYPE
layout(binding = 1) readonly buffer KB { uvec4 k_data[]; };
layout(binding = 2) readonly buffer VB { uvec4 v_data[]; };
#endif
layout(binding = 3) writeonly buffer OB { uint o_pairs[]; }; // f16 pairs
layout(binding = 4) writeonly buffer LB { float lse_data[]; };
layout(binding = 5) writeonly buffer WOB { vec2 ws_o[]; };
layout(binding = 6) writeonly buffer WMB { vec2 ws_ml[]; };

shared uvec4 tile_sh[SH_WORDS];
shared vec2 ml_sh[KEY_GROUPS * BR]; // each key group's (max, sum) per row

#if AVK_KV_FORMAT == AVK_KV_DTYPE
// The next step's K and V on their way from global memory: 16-byte loads of
// 8 f16 values.
uvec4 k_pre[LPT], v_pre[LPTV];
#else
// The next step's K and V on their way from global memory, a unit per thread
// at a time: a whole 32-value block of q8_0 (34 bytes: 9 words) or q4_0 (18
// bytes: 5 words), whose scale and codes start 0 or 2 bytes into the first
// word, or 8 fp8 codes (2 words), so that few wide-apart loads bring a step.
const uint UNIT = AVK_KV_FORMAT == AVK_KV_FP8 ? 8u : 32u;
const uint UNIT_WORDS = AVK_KV_FORMAT == AVK_KV_Q8_0 ? 9u : AVK_KV_FORMAT == AVK_KV_Q4_0 ? 5u : 2u;
const uint QPT = (STEP * (D / UNIT) + WG - 1) / WG; // units per thread per K (or V)
uint qpre[2][QPT][UNIT_WORDS];
bool qodd[2][QPT]; // the unit starts 2 bytes into its first word
const uint UNITS = STEP * (D / UNIT); // load units of a step's K (or V)
#endif

#ifdef AVK_DIRECT_KV
#include "flash_decode_direct.glsl"
#define OCOL(c) vperm(c)
#else
#define OCOL(c) (c)
#endif

#if AVK_KV_FORMAT == AVK_KV_DTYPE
// Chunk x of this thread of the step's K (values false) or V: zero past the keys and in the zero columns.
uvec4 kv_chunk(uint j0, Work w, uint x, bool values)
{
    uint p8 = values ? VP8 : KP8, n8 = values ? DV8 : D8;
    uint e = gl_LocalInvocationID.x + x * WG;
    uint j = j0 + e / p8, d8 = e % p8;
    bool ok = e < STEP * p8 && j < w.kv_hi && d8 < n8;
    uint idx = ok ? avk_kv_row(w.b, w.g, j) * n8 + d8 : 0u;
    return ok ? (values ? v_data[idx] : k_data[idx]) : uvec4(0u);
}
#endif

void prefetch(uint j0, Work w)
{
#if AVK_KV_FORMAT == AVK_KV_DTYPE
    if (KP8 == VP8 && D8 == DV8) { // K and V rows alike: one row lookup serves both
        [[unroll]] for (uint x = 0u; x < LPT; ++x) {
            uint e = gl_LocalInvocationID.x + x * WG;
            uint j = j0 + e / KP8, d8 = e % KP8;
            bool ok = e < STEP * KP8 && j < w.kv_hi && d8 < D8;
            uint idx = (ok ? avk_kv_row(w.b, w.g, j) : 0u) * D8 + d8;
            k_pre[x] = ok ? k_data[idx] : uvec4(0u);
            v_pre[x] = ok ? v_data[idx] : uvec4(0u);
        }
        return;
    }
    [[unroll]] for (uint x = 0u; x < LPT; ++x) k_pre[x] = kv_chunk(j0, w, x, false);
    [[unroll]] for (uint x = 0u; x < LPTV; ++x) v_pre[x] = kv_chunk(j0, w, x, true);
#else
    [[unroll]] for (uint x = 0u; x < QPT; ++x) {
        uint e = gl_LocalInvocationID.x + x * WG;
        uint j = j0 + e / (D / UNIT), d0 = (e % (D / UNIT)) * UNIT;
        bool ok = e < UNITS && j < w.kv_hi;
        uint row = ok ? avk_kv_row(w.b, w.g, j) : 0u;
#if AVK_KV_FORMAT == AVK_KV_FP8
        uint first = avk_kv_code_byte(row, d0, D);
#else
        uint first = avk_kv_block_byte(row, d0, D);
#endif
        [[unroll]] for (uint v = 0u; v < 2u; ++v) {
            [[unroll]] for (uint i = 0u; i < UNIT_WORDS; ++i) qpre[v][x][i] = ok ? avk_kv_word(v != 0u, (first >> 2u) + i) : 0u;
            qodd[v][x] = (first & 2u) != 0u;
        }
    }
#endif
}

// The step's K and V as f16 into shared memory (quantized: scaled, decoded).
void commit(uint g)
{
#if AVK_KV_FORMAT == AVK_KV_DTYPE
    [[unroll]] for (uint x = 0u; x < LPT; ++x) {
        uint e = gl_LocalInvocationID.x + x * WG;
        if (e < STEP * KP8) tile_sh[(e / KP8) * KS + e % KP8] = k_pre[x];
    }
    [[unroll]] for (uint x = 0u; x < LPTV; ++x) {
        uint e = gl_LocalInvocationID.x + x * WG;
        if (e < STEP * VP8) tile_sh[KTILE + (e / VP8) * VS + e % VP8] = v_pre[x];
    }
#else
    [[unroll]] for (uint x = 0u; x < QPT; ++x) {
        uint e = gl_LocalInvocationID.x + x * WG;
        if (e >= UNITS) continue;
        uint key = e / (D / UNIT), d0 = (e % (D / UNIT)) * UNIT;
        [[unroll]] for (uint v = 0u; v < 2u; ++v) {
            bool odd = qodd[v][x];
#if AVK_KV_FORMAT == AVK_KV_FP8
            f16vec2 s = f16vec2(float16_t(avk_kv_run_scale(v != 0u, 0u, 0u, g)));
#else
            uint sw = qpre[v][x][0];
            f16vec2 s = unpackFloat2x16(odd ? (sw >> 16u) * 0x10001u : (sw & 0xffffu) * 0x10001u);
#endif
            [[unroll]] for (uint h = 0u; h < UNIT / 8u; ++h) {
                uvec2 f[2];
                [[unroll]] for (uint q = 0u; q < 2u; ++q) {
                    uint k = 2u * h + q; // values d0 + 4k ..
#if AVK_KV_FORMAT == AVK_KV_FP8
                    uint c = qpre[v][x][k];
#else
                    // codes start 2 bytes after the scale: word-aligned when the block is not
                    uint kk = AVK_KV_FORMAT == AVK_KV_Q4_0 ? k % 4u : k; // q4_0: nibbles of bytes 4 (k % 4) ..
                    uint c = odd ? qpre[v][x][kk + 1u] : (qpre[v][x][kk] >> 16u) | (qpre[v][x][kk + 1u] << 16u);
#endif
                    f[q] = avk_kv_codes4_f16(c, d0 + 4u * k, s);
                }
                tile_sh[v * KTILE + key * (v != 0u ? VS : KS) + d0 / 8u + h] = uvec4(f[0], f[1]);
            }
        }
    }
#endif
}

// Keys [begin, end) block row r (0..BR-1) sees, end cut at w.kv_hi; 0 for padding rows.
uvec2 score_bounds(Work w, uint r)
{
    uint pr = w.r0 + r;
    uint i = avk_q_row(w, min(pr, w.rows - 1u)).y;
    return uvec2(flash_row_begin(w, i), pr < w.rows ? min(avk_key_end(w.len, i), w.kv_hi) : 0u);
}

void main()
{
    Work w = flash_work(BR, STEP);
    uint tid = gl_LocalInvocationID.x;
    uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
    uint kg = sg % KEY_GROUPS, rg = sg / KEY_GROUPS;
    uint row0 = rg * ROWS; // first row (of the block) of this subgroup
    // block row of this lane's row slot x (rt * CM_SLOTS + s)
#define SCORE_ROW(x) (row0 + ((x) / CM_SLOTS) * MS + CM_SLOT_ROW(lane, (x) % CM_SLOTS))
    // the block's first row has the lowest query: it sees the fewest keys
    int block_limit = flash_row_limit(w, avk_q_row(w, w.r0).y);
    uint block_begin = flash_block_begin(w, BR); // ... and its last row's window starts last
    float s_scale = avk_score_scale();            // for cm_softmax_pv.glsl: S stays in raw units

    // Q of the block's packed rows: global -> shared -> A matrices in registers
#ifdef AVK_DIRECT_KV
    for (uint e = tid; e < BR * D / 2u; e += WG) { // in K's order (kperm), a pair of halves at a time
        uint r = e / (D / 2u), p = 2u * (e % (D / 2u)), pr = w.r0 + r, word = 0u;
        if (pr < w.rows) {
            uint off = avk_q_offset(w.b, avk_q_row(w, pr));
            word = q_half(off + kperm(p)) | (q_half(off + kperm(p + 1u)) << 16u);
        }
        tile_sh[r * KS + p / 8u][(p % 8u) / 2u] = word;
    }
#else
    for (uint e = tid; e < BR * KP8; e += WG) {
        uint r = e / KP8, d8 = e % KP8, pr = w.r0 + r;
        tile_sh[r * KS + d8] = pr < w.rows && d8 < D8 ? q_data[avk_q_offset(w.b, avk_q_row(w, pr)) / 8u + d8] : uvec4(0u);
    }
#endif
    barrier();
    CM_A qm[RT * DT];
    [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
        [[unroll]] for (uint k = 0u; k < DT; ++k)
            CM_LOAD_ROW(qm[rt * DT + k], tile_sh, (row0 + rt * MS) * KS + k * MS / 8u, KS);
    barrier();

#include "cm_softmax_state.glsl"

    // the score features' row inputs (cm_score_mods.glsl), found once: packed rows
    // map to (head, query) through divisions by pack
    float alibi_raw[NSTAT]; // ALiBi slope in S's raw units
    uint mask_row[NSTAT];   // the row's mask offset (padding rows: the last real row's)
    [[unroll]] for (uint x = 0u; x < NSTAT; ++x) {
        alibi_raw[x] = 0.0;
        mask_row[x] = 0u;
        if (AVK_SCORES != 0u) {
            uvec2 hi = avk_q_row(w, min(w.r0 + SCORE_ROW(x), w.rows - 1u));
            if ((avk_flags() & AVK_FLAG_ALIBI) != 0u) alibi_raw[x] = alibi_slopes[hi.x] * avk_raw_unit();
            if ((avk_flags() & AVK_FLAG_MASK) != 0u) mask_row[x] = avk_mask_row(w.b, hi.x, hi.y);
        }
    }

    if (w.ntiles > 0u) {
#ifdef AVK_DIRECT_KV
        direct_load(w, w.kv_lo + kg * BC, lane);
        direct_advance();
#else
        prefetch(w.kv_lo, w);
        commit(w.g);
#endif
    }
    barrier();

    uint k_off = kg * BC * KS, v_tile = KTILE + kg * BC * VS; // this key group's tile
    for (uint step = 0u; step < w.ntiles; ++step) {
        uint j0 = w.kv_lo + step * STEP, jt = j0 + kg * BC;
        bool more = step + 1u < w.ntiles;
        // S = Q.K^T
        CM_C sacc[RT * NT];
        [[unroll]] for (uint x = 0u; x < RT * NT; ++x) sacc[x] = CM_C_ZERO;
#ifdef AVK_DIRECT_KV
        if (more) direct_load(w, jt + STEP, lane); // lands while this tile computes
        [[unroll]] for (uint k = 0u; k < DT; ++k) sacc[0] = CM_MAD(qm[k], direct_operand(false, k, lane, w.g), sacc[0]);
#define PV_B_OPERAND(kc, n) direct_operand(true, n, lane, w.g)
#else
        if (more) prefetch(j0 + STEP, w); // lands while this step computes
        [[unroll]] for (uint k = 0u; k < DT; ++k)
            [[unroll]] for (uint n = 0u; n < NT; ++n) {
                CM_B kb;
                CM_LOAD_COL(kb, tile_sh, k_off + n * MS * KS + k * MS / 8u, KS);
                [[unroll]] for (uint rt = 0u; rt < RT; ++rt) sacc[rt * NT + n] = CM_MAD(qm[rt * DT + k], kb, sacc[rt * NT + n]);
            }
#endif

        // masks: keys past the end, causal limits, windows (edge steps only); score features
        bool edge = j0 + STEP > w.kv_hi || int(j0 + STEP - 1u) > block_limit || j0 < block_begin;
        if (AVK_SCORES == 0u) {
            if (edge) {
                [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
                    [[unroll]] for (uint n = 0u; n < NT; ++n)
                        CM_ELEM_LOOP for (uint e = 0u; e < CM_LEN; ++e) {
                            uint pr = w.r0 + row0 + rt * MS + CM_SLOT_ROW(lane, CM_SLOT(e));
                            uvec2 hi = avk_q_row(w, min(pr, w.rows - 1u));
                            uint j = jt + n * MS + CM_COL(lane, e), end = pr < w.rows ? avk_key_end(w.len, hi.y) : 0u;
                            CM_AT(sacc[rt * NT + n], e) =
                                flash_score_elem(CM_AT(sacc[rt * NT + n], e), w, j, flash_row_begin(w, hi.y), end);
                        }
            }
        } else {
#define SCORE_J0 jt
#define SCORE_KV_HI w.kv_hi
#define SCORE_EDGE edge
#define SCORE_P0 avk_row_pos(w.len, avk_q_row(w, w.r0).y)
#define SCORE_SLOPE(x) alibi_raw[x]
#define SCORE_MASK_ROW(x) mask_row[x]
#define SCORE_BOUNDS(x) score_bounds(w, SCORE_ROW(x))
#include "cm_score_mods.glsl"
        }

#include "cm_softmax_pv.glsl"
#ifdef AVK_DIRECT_KV
        direct_advance();
#else
        barrier(); // everyone is done reading this K and V
        if (more) commit(w.g);
        barrier(); // the next K and V are in place
#endif
    }

    // merge the key groups: whole row sums, each group's (m, l) through shared memory
    [[unroll]] for (uint x = 0u; x < NSTAT; ++x) l_i[x] = CM_ROW_SUM(l_i[x]);
    if (CM_ROW_LEADER(lane)) {
        [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
            [[unroll]] for (uint s = 0u; s < CM_SLOTS; ++s) {
                uint x = rt * CM_SLOTS + s;
                ml_sh[kg * BR + row0 + rt * MS + CM_SLOT_ROW(lane, s)] = vec2(m_i[x], l_i[x]);
            }
    }
    barrier();
    float m_all[NSTAT], l_all[NSTAT], own[NSTAT]; // the rows' merged max and sum; this group's weight
    float keep[NSTAT];                            // what the sink leaves of O (1 without)
    bool sinks = (avk_flags() & (AVK_FLAG_SINKS | AVK_FLAG_SPLIT)) == AVK_FLAG_SINKS; // split: in the merge
    [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
        [[unroll]] for (uint s = 0u; s < CM_SLOTS; ++s) {
            uint x = rt * CM_SLOTS + s, row = row0 + rt * MS + CM_SLOT_ROW(lane, s);
            float mx = NEG_INF, sum = 0.0;
            for (uint k = 0u; k < KEY_GROUPS; ++k) mx = max(mx, ml_sh[k * BR + row].x);
            for (uint k = 0u; k < KEY_GROUPS; ++k) {
                vec2 ml = ml_sh[k * BR + row];
                if (ml.x != NEG_INF) sum += ml.y * exp2(ml.x - mx);
            }
            own[x] = m_i[x] == NEG_INF ? 0.0 : exp2(m_i[x] - mx);
            keep[x] = 1.0;
            if ((avk_flags() & AVK_FLAG_ALIBI) != 0u) {
                // ALiBi's row part (cm_score_mods.glsl): S held slope * (i' - p0) more than it should
                uvec2 hi = avk_q_row(w, min(w.r0 + row, w.rows - 1u));
                mx -= alibi_slopes[hi.x] * LOG2E * float(int(hi.y) - int(avk_q_row(w, w.r0).y));
            }
            if (sinks) { // the sink joins the denominator
                float sink = avk_sink_log2(avk_q_row(w, min(w.r0 + row, w.rows - 1u)).x), ms = max(mx, sink);
                keep[x] = mx == NEG_INF ? 0.0 : exp2(mx - ms);
                sum = sum * keep[x] + exp2(sink - ms);
                mx = ms;
            }
            m_all[x] = mx;
            l_all[x] = sum;
        }
    // key groups 1.. leave their weighted O in shared memory (over the K/V tiles), group 0 adds them;
    // at O's own columns (OCOL: the direct operands' vperm)
    if (kg > 0u && CM_WRITES(lane)) {
        [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
            [[unroll]] for (uint n = 0u; n < OT; ++n)
                CM_ELEM_LOOP for (uint e = 0u; e < CM_LEN; ++e) {
                    uint row = row0 + rt * MS + CM_SLOT_ROW(lane, CM_SLOT(e)), col = n * MS + CM_COL(lane, e);
                    uint f = ((kg - 1u) * BR + row) * DVP + OCOL(col);
                    tile_sh[f / 4u][f % 4u] = floatBitsToUint(CM_AT(oacc[rt * OT + n], e) * own[rt * CM_SLOTS + CM_SLOT(e)]);
                }
    }
    barrier();
#ifndef AVK_DIRECT_KV
    if (kg > 0u) return;
#endif

    bool split = (pc.flags & AVK_FLAG_SPLIT) != 0u;
    if (kg == 0u && CM_WRITES(lane)) {
        [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
            [[unroll]] for (uint n = 0u; n < OT; ++n)
                CM_ELEM_LOOP for (uint e = 0u; e < CM_LEN; e += 2u) {
                    uint x = rt * CM_SLOTS + CM_SLOT(e);
                    uint row = row0 + rt * MS + CM_SLOT_ROW(lane, CM_SLOT(e)), col = n * MS + CM_COL(lane, e);
                    uint pr = w.r0 + row;
                    if (pr >= w.rows || col >= DV) continue; // zero columns are not O's
                    vec2 o = vec2(CM_AT(oacc[rt * OT + n], e), CM_AT(oacc[rt * OT + n], e + 1u)) * own[x];
                    uint f0 = row * DVP + OCOL(col), f1 = row * DVP + OCOL(col + 1u);
                    for (uint k = 1u; k < KEY_GROUPS; ++k) {
                        uint at = (k - 1u) * BR * DVP;
                        o += uintBitsToFloat(uvec2(tile_sh[(at + f0) / 4u][(at + f0) % 4u], tile_sh[(at + f1) / 4u][(at + f1) % 4u]));
                    }
                    o *= l_all[x] > 0.0 ? keep[x] / l_all[x] : 0.0;
#ifdef AVK_DIRECT_KV
                    // into slot 0 at O's own columns (only this lane reads or writes f0, f1): written out below
                    tile_sh[f0 / 4u][f0 % 4u] = floatBitsToUint(o.x);
                    tile_sh[f1 / 4u][f1 % 4u] = floatBitsToUint(o.y);
#else
                    uvec2 hi = avk_q_row(w, pr);
                    if (split) ws_o[(flash_ws_row(w.split, w.b, hi.x, hi.y) * DV + col) / 2u] = o;
                    else o_pairs[(avk_o_from_q(avk_q_offset(w.b, hi), D, DV) + col) / 2u] = packHalf2x16(o);
#endif
                }
    }
    if (kg == 0u && CM_ROW_LEADER(lane)) {
        [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
            [[unroll]] for (uint s = 0u; s < CM_SLOTS; ++s) {
                uint x = rt * CM_SLOTS + s, pr = w.r0 + row0 + rt * MS + CM_SLOT_ROW(lane, s);
                if (pr >= w.rows) continue;
                uvec2 hi = avk_q_row(w, pr);
                if (split) ws_ml[flash_ws_row(w.split, w.b, hi.x, hi.y)] = vec2(m_all[x], l_all[x]);
                else if ((pc.flags & AVK_FLAG_WRITE_LSE) != 0u) lse_data[flash_lse_index(w.b, hi.x, hi.y)] = flash_lse(m_all[x], l_all[x]);
            }
    }
#ifdef AVK_DIRECT_KV
    barrier();
    for (uint e = tid; e < BR * DV / 2u; e += WG) { // the whole workgroup writes O's rows, a pair at a time
        uint row = e / (DV / 2u), c = 2u * (e % (DV / 2u)), pr = w.r0 + row, f = row * DVP + c;
        if (pr >= w.rows) continue;
        vec2 o = uintBitsToFloat(uvec2(tile_sh[f / 4u][f % 4u], tile_sh[(f + 1u) / 4u][(f + 1u) % 4u]));
        uvec2 hi = avk_q_row(w, pr);
        if (split) ws_o[(flash_ws_row(w.split, w.b, hi.x, hi.y) * DV + c) / 2u] = o;
        else o_pairs[(avk_o_from_q(avk_q_offset(w.b, hi), D, DV) + c) / 2u] = packHalf2x16(o);
    }
#endif
}
