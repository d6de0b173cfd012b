#version 450
// Decode body (few packed rows, long K/V): a workgroup serves BR packed rows
// (GQA: the heads of one kv head x the queries) of one (batch, head group,
// split), so every K/V byte leaves memory once per kv head.
//
// A key is read by KEY_LANES lanes of a subgroup, each holding a slice of
// D / KEY_LANES values, so a subgroup reads sgs / KEY_LANES keys side by side
// in one coalesced pass (16-byte loads where the slice allows). Each lane
// group streams KEYS_PER_STEP keys per step: their loads are in flight
// together, the scores are reduced across the group's lanes with log2
// (KEY_LANES) shuffles, and the softmax is online per group in registers.
// At the end the groups of a subgroup merge (max, sum, O) by shuffles and the
// subgroups through shared memory. Sizes are the host's (vk_variants.c).
// A lane's K slice is D / KEY_LANES values (Dk) and its V and O slice
// DV / KEY_LANES (Dv, flash_common.glsl's AVK_DV).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require
#ifdef AVK_DECODE_HALF_QK
// Q.K in f16 pairs (a quantized cache under f16 compute, where the device has
// f16 arithmetic; vk_decode_config.c): K's codes go straight into f16 (exact),
// each row's Q is scaled by a power of two to |q| <= 1 so no partial sum can
// overflow, and f16 sums of 8 products at a time are added in f32. Half the
// multiplies and code conversions of the f32 form, and half Q's registers.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define AVK_KV_F16_MATH
#define QK_VEC f16vec4
#else
#define QK_VEC vec4
#endif

#include "flash_common.glsl"
#include "flash_storage.glsl"

layout(constant_id = 0) const uint BR = 4;            // packed rows per workgroup
layout(constant_id = 1) const uint BC = 64;           // key granule (split_keys is a multiple)
layout(constant_id = 2) const uint D = 128;           // Q and K head dim (multiple of 4 * KEY_LANES)
layout(local_size_x_id = 3) in;
layout(constant_id = 4) const uint MAX_SUBGROUPS = 4; // workgroup / smallest subgroup
layout(constant_id = 5) const uint KEY_LANES = 16;    // lanes per key (a power of two <= subgroup)
layout(constant_id = 6) const uint KEYS_PER_STEP = 4; // keys per lane group per step (1..4)
layout(constant_id = 7) const uint RUNS = 1;          // quantized slices of <= 16 values load as runs
layout(constant_id = 8) const uint PAGE_SLOTS = 0;    // paged K/V: block-table entries staged per workgroup
layout(constant_id = 9) const uint SPREAD = 0;        // 1: a lane group's softmax spread over its lanes (below)
// A timing aid (ATTNVK_VK_DECODE=probe=N; the outputs are wrong and the bench says so): 1 runs the
// loads alone (each step's words folded into one word that reaches O), 2 the arithmetic alone
// (every key reads its kv head's first row, so the loads hit L1). Which of the two is the
// body's time tells what bounds it.
layout(constant_id = 10) const uint PROBE = 0;

const uint WG = gl_WorkGroupSize.x;
const uint DV = AVK_DV;            // V and O head dim (multiple of 4 * KEY_LANES)
const uint DV4 = DV / 4;
const uint SLICE = D / KEY_LANES;  // values of a Q or K row per lane
const uint NV = SLICE / 4;         // vec4s per lane
const uint SLICE_V = DV / KEY_LANES; // values of a V or O row per lane
const uint NVV = SLICE_V / 4;
const uint NVM = NV > NVV ? NV : NVV; // K and V slices share the staging arrays' size
const uint U = KEYS_PER_STEP;

// SPREAD: a step's BR x U scores (index r * U + u) are summed over the lane
// group by a reduce-scatter (each lane keeps NSO of them, fully summed: half
// the values cross each shuffle, not all of them), each lane takes exp2 of its
// own NSO, and an all-gather hands every lane the step's probabilities. A row
// rescales (alpha, O *= alpha) only in a step where one of its scores passes its
// running max; such a step (any lane of the subgroup: a uniform branch) gathers
// the scores instead and runs the row update as without SPREAD. It takes the
// exp2s, most shuffles and O's rescale off each key (H100 64k, session 27:
// quantized caches 2-6% faster, f16 unchanged). NS a power of two <= SP_MAX
// (the host's check, vk_decode_config.c).
const uint SP_MAX = 32u;
const uint NS = BR * U;
const uint DUP = KEY_LANES > NS ? KEY_LANES / NS : 1u; // lanes holding the same value after the scatter
const uint NSO = NS > KEY_LANES ? NS / KEY_LANES : 1u; // values a lane keeps

layout(binding = 0) readonly buffer QB { ELEM4 q_data[]; };
#if AVK_KV_FORMAT == AVK_KV_DTYPE
layout(binding = 1) readonly buffer KB { ELEM4 k_data[]; };
layout(binding = 2) readonly buffer VB { ELEM4 v_data[]; };
// 16 bytes per load where the slice allows: 8 values of 16-bit storage, 4 of f32
layout(binding = 1) readonly buffer KB16 { uvec4 k_data16[]; };
layout(binding = 2) readonly buffer VB16 { uvec4 v_data16[]; };
#endif
layout(binding = 3) writeonly buffer OB { ELEM4 o_data[]; };
layout(binding = 4) writeonly buffer LB { float lse_data[]; };
layout(binding = 5) writeonly buffer WOB { vec4 ws_o[]; };
layout(binding = 6) writeonly buffer WMB { vec2 ws_ml[]; };

shared float m_sh[MAX_SUBGROUPS * BR];
shared float l_sh[MAX_SUBGROUPS * BR];
shared vec4 o_sh[BR * DV4];
// A paged cache's pages for the workgroup's keys, read from the block table once
// (clamped as avk_kv_row clamps): a key's row is then a shared load, where a
// global one would delay the K/V loads that need it. Off unless the host asks
// (vk_variants.c: on the H100 it did not cure quantized paged decode's slowness).
shared uint page_sh[PAGE_SLOTS > 0u ? PAGE_SLOTS : 1u];

// Key j's K/V row: from the staged pages when `staged` (j in the workgroup's keys).
uint decode_kv_row(Work w, uint j, bool staged, uint page0)
{
    if (PROBE == 2u) return avk_kv_row(w.b, w.g, 0u);
    if (AVK_PAGED != 0u && PAGE_SLOTS > 0u && staged) {
        uint ps = avk_page_size();
        uint page = page_sh[j / ps - page0];
        return (page * ps + j % ps) * pc.kv_heads + w.g;
    }
    return avk_kv_row(w.b, w.g, j);
}

// A lane's slice of a K (V) row is NR (NRV) raw words (uvec4), loaded a step
// ahead of their use and decoded then: RAW_VALUES (RAW_VALUES_V) values each.
#if AVK_KV_FORMAT == AVK_KV_DTYPE && defined(ELEM_F32)
const bool WIDE = false, WIDE_V = false;
const uint RAW_VALUES = 4u, RAW_VALUES_V = 4u;
#elif AVK_KV_FORMAT == AVK_KV_DTYPE
const bool WIDE = SLICE % 8u == 0u, WIDE_V = SLICE_V % 8u == 0u;
const uint RAW_VALUES = WIDE ? 8u : 4u, RAW_VALUES_V = WIDE_V ? 8u : 4u;
#else
const bool WIDE = false, WIDE_V = false;
const uint RAW_VALUES = 4u, RAW_VALUES_V = 4u;
#endif
const uint NR = SLICE / RAW_VALUES, NRV = SLICE_V / RAW_VALUES_V;
const uint NRM = NR > NRV ? NR : NRV;

// Quantized slices of 4, 8 or 16 values load as runs (the contract's
// avk_kv_code_byte): SLICE bytes in SLICE / 4 + 1 words and one scale word per
// key, the scale applied once to the lane's partial score (K) and to its
// probability (V) rather than to every value; longer slices take raw_load's
// 4-value words.
//
// RUNS == 2 (the host's default where it applies): a lane's 16 values are a
// part of the row (flash_kv_words.glsl): 2 (q4_0) or 4 (q8_0) word loads and
// one more word for the scale, or one 16-byte load (fp8), with no realigning
// shifts. Q and O use the same permutation of D (words_dim), found once
// before and after the key loop.
#include "flash_kv_words.glsl"
#if AVK_KV_FORMAT != AVK_KV_DTYPE
// (built up in steps of plain operators: glslang 11 emits `D / 64u * 64u == D`
// or `(D & 63u) == 0u` inside a && chain as code, which does not validate)
#if AVK_KV_FORMAT == AVK_KV_FP8
const bool WORDS_SHAPE = SLICE == 16u && DV == D;
#else
const uint WORDS_D_REM = D % 64u; // blocks in pairs
const bool WORDS_D = DV == D && WORDS_D_REM == 0u;
const bool WORDS_SHAPE = SLICE == 16u && WORDS_D;
#endif
const bool WORDS = RUNS == 2u && WORDS_SHAPE;
// (the bodies test WORDS first; quantized caches have Dv = Dk)
// (a run stays in one 32-value block: slices of 4, 8 or 16 values; a product, as WORDS_SHAPE is built in steps)
const uint RUN_OK = (RUNS != 0u ? 1u : 0u) * (SLICE <= 16u ? 1u : 0u) * (32u % SLICE == 0u ? 1u : 0u) * (DV == D ? 1u : 0u);
const bool RUN = RUN_OK != 0u;
#else
const bool WORDS = false;
const bool RUN = false;
#endif
const uint RUN_WORDS = SLICE / 4u + 1u;

// Raw word r of the lane's slice (values e0 ..) of a K (values false: D wide)
// or V row (DV wide).
uvec4 raw_load(bool values, uint row, uint e0, uint r)
{
    uint dim = values ? DV : D;
    uint e = e0 + r * (values ? RAW_VALUES_V : RAW_VALUES);
#if AVK_KV_FORMAT != AVK_KV_DTYPE
    return avk_kv_raw4(values, row, e, dim);
#elif defined(ELEM_F32)
    uint idx = (row * dim + e) / 4u;
    return values ? v_data16[idx] : k_data16[idx];
#else
    if (values ? WIDE_V : WIDE) {
        uint idx = (row * dim + e) / 8u;
        return values ? v_data16[idx] : k_data16[idx];
    }
    uint idx = (row * dim + e) / 4u;
    return uvec4(values ? v_data[idx] : k_data[idx], 0u, 0u);
#endif
}

// The lane's slice as f32 (NV or NVV vec4s), from its raw words (NR or NRV).
void raw_decode(bool values, uvec4 raw[NRM], uint g, out vec4 x[NVM])
{
    [[unroll]] for (uint r = 0u; r < (values ? NRV : NR); ++r) {
#if AVK_KV_FORMAT != AVK_KV_DTYPE
        x[r] = avk_kv_decode4(values, raw[r], g);
#elif defined(ELEM_F32)
        x[r] = uintBitsToFloat(raw[r]);
#else
        bool wide = values ? WIDE_V : WIDE;
        x[wide ? r * 2u : r] = elem_to_vec4(raw[r].xy);
        if (wide) x[r * 2u + 1u] = elem_to_vec4(raw[r].zw);
#endif
    }
}

#if AVK_KV_FORMAT != AVK_KV_DTYPE
// The run of the lane's slice (values e0 ..) of a K or V row: its words, its
// scale word and the byte it starts at.
void run_load(bool values, uint row, uint e0, out uint words[RUN_WORDS], out uint scale_word, out uint code_byte)
{
    code_byte = avk_kv_code_byte(row, e0, D);
    uint wi = code_byte >> 2u;
    [[unroll]] for (uint i = 0u; i < RUN_WORDS; ++i) // the last word only when the bytes straddle one
        words[i] = i + 1u < RUN_WORDS || (code_byte & 3u) != 0u ? avk_kv_word(values, wi + i) : 0u;
    scale_word = avk_kv_scale_word(values, row, e0, D);
}

// The lane's 16 codes as f32, unscaled (slot 4k + c in x[k][c]); returns the
// scale (fp8: kv head g's, found once before the loop and passed in).
float words_decode(uvec4 wd, uint extra, uint part, float fp8_scale, out vec4 x[NVM])
{
#if AVK_KV_FORMAT == AVK_KV_FP8
    [[unroll]] for (uint k = 0u; k < 4u; ++k) x[k] = avk_kv_codes4(wd[k], 0u);
    return fp8_scale;
#else
    uint q = part % 4u, sw = q == 0u ? wd.x : extra;
    float s = unpackHalf2x16(q >= 2u ? sw >> 16u : sw).x;
    if (q == 0u) wd.x = (wd.x & 0xffff0000u) | (extra & 0xffffu); // A's last codes where its scale was
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    [[unroll]] for (uint k = 0u; k < 4u; ++k) x[k] = avk_kv_codes4(wd[k], 0u);
#else
    [[unroll]] for (uint k = 0u; k < 2u; ++k) {
        x[k] = avk_kv_codes4(wd[k], 0u);       // low nibbles
        x[k + 2u] = avk_kv_codes4(wd[k], 16u); // high nibbles: 16 values on
    }
#endif
    return s;
#endif
}

// The run's codes as f32, unscaled; returns its scale.
float run_decode(bool values, uint words[RUN_WORDS], uint scale_word, uint code_byte, uint e0, uint g, out vec4 x[NVM])
{
    uint sh = (code_byte & 3u) * 8u;
    [[unroll]] for (uint k = 0u; k < NV; ++k) {
        uint c = sh == 0u ? words[k] : (words[k] >> sh) | (words[k + 1u] << (32u - sh));
        x[k] = avk_kv_codes4(c, e0 + 4u * k);
    }
    return avk_kv_run_scale(values, scale_word, code_byte, g);
}
#else
uint words_dim(uint part, uint s) { return part * 16u + s; } // (WORDS is false: never called)
#endif

#ifdef AVK_DECODE_HALF_QK
// Codes d0 .. d0+3 of word c as f16, unscaled (fp8: value / 256).
f16vec4 codes4_h(uint c, uint d0)
{
    uvec2 h = avk_kv_codes4_f16(c, d0, f16vec2(1.0));
    return f16vec4(unpackFloat2x16(h.x), unpackFloat2x16(h.y));
}

// words_decode's codes as f16.
float words_decode_h(uvec4 wd, uint extra, uint part, float fp8_scale, out f16vec4 x[NVM])
{
#if AVK_KV_FORMAT == AVK_KV_FP8
    [[unroll]] for (uint k = 0u; k < 4u; ++k) x[k] = codes4_h(wd[k], 0u);
    return fp8_scale;
#else
    float s = words_scale(wd, extra, part);
    if (part % 4u == 0u) wd.x = (wd.x & 0xffff0000u) | (extra & 0xffffu); // A's last codes where its scale was
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    [[unroll]] for (uint k = 0u; k < 4u; ++k) x[k] = codes4_h(wd[k], 0u);
#else
    [[unroll]] for (uint k = 0u; k < 2u; ++k) {
        x[k] = codes4_h(wd[k], 0u);
        x[k + 2u] = codes4_h(wd[k], 16u);
    }
#endif
    return s;
#endif
}

// run_decode's codes as f16.
float run_decode_h(bool values, uint words[RUN_WORDS], uint scale_word, uint code_byte, uint e0, uint g, out f16vec4 x[NVM])
{
    uint sh = (code_byte & 3u) * 8u;
    [[unroll]] for (uint k = 0u; k < NV; ++k) {
        uint c = sh == 0u ? words[k] : (words[k] >> sh) | (words[k + 1u] << (32u - sh));
        x[k] = codes4_h(c, e0 + 4u * k);
    }
    return avk_kv_run_scale(values, scale_word, code_byte, g);
}
#endif

// A row's partial scores over this lane's slice for the step's U keys (K
// unscaled where the cache is quantized: the caller applies ks).
vec4 lane_scores(QK_VEC qr[NV], QK_VEC kx[4][NVM])
{
    vec4 s4 = vec4(0.0);
#ifdef AVK_DECODE_HALF_QK
    [[unroll]] for (uint u = 0u; u < U; ++u) {
        f16vec2 a = f16vec2(0.0);
        [[unroll]] for (uint k = 0u; k < NV; ++k) {
            a = fma(qr[k].xy, kx[u][k].xy, a);
            a = fma(qr[k].zw, kx[u][k].zw, a);
            if (k % 2u == 1u || k + 1u == NV) { // 8 products a chain: f32 from there on
                s4[u] += float(a.x) + float(a.y);
                a = f16vec2(0.0);
            }
        }
    }
#else
    [[unroll]] for (uint k = 0u; k < NV; ++k) {
        s4.x += dot(qr[k], kx[0][k]);
        if (U > 1u) s4.y += dot(qr[k], kx[1][k]);
        if (U > 2u) s4.z += dot(qr[k], kx[2][k]);
        if (U > 3u) s4.w += dot(qr[k], kx[3][k]);
    }
#endif
    return s4;
}

// SPREAD: v[0 .. NS) summed over the lane group; this lane keeps its NSO
// sums (values own0 ..) in v[0 .. NSO). Level x halves what a lane holds until
// one value is left, then sums the copies.
void spread_scatter(inout float v[SP_MAX], uint lane)
{
    [[unroll]] for (uint x = KEY_LANES >> 1u; x > 0u; x >>= 1u) {
        uint n = NS * 2u * x / KEY_LANES; // values held before this level
        bool upper = (lane & x) != 0u;
        if (n >= 2u) {
            uint h = n / 2u;
            [[unroll]] for (uint i = 0u; i < h; ++i) {
                float give = upper ? v[i] : v[i + h], keep = upper ? v[i + h] : v[i];
                v[i] = keep + subgroupShuffleXor(give, x);
            }
        } else {
            v[0] += subgroupShuffleXor(v[0], x);
        }
    }
}

// The inverse: each lane's NSO values in, all NS out in index order.
void spread_gather(inout float v[SP_MAX], uint lane)
{
    [[unroll]] for (uint x = DUP; x < KEY_LANES; x <<= 1u) {
        uint n = NS * x / KEY_LANES; // values held before this level
        bool upper = (lane & x) != 0u;
        [[unroll]] for (uint i = 0u; i < n; ++i) {
            float got = subgroupShuffleXor(v[i], x);
            v[i + n] = upper ? v[i] : got;
            v[i] = upper ? got : v[i];
        }
    }
}

// Packed row r's score s for key j (base 2), its features applied; -inf where
// the row does not see j (past the range, its causal end kend, a window).
float decode_score(Work w, uint r, uint j, uint key_hi, uint kend, float s)
{
    bool vis = j < key_hi && j < kend;
    uvec2 hi = uvec2(0u);
    if ((avk_flags() & AVK_FLAG_WINDOW) != 0u || avk_score_mods()) {
        hi = avk_q_row(w, min(w.r0 + r, w.rows - 1u));
        vis = vis && j >= avk_key_begin(w.len, hi.y);
    }
    if (avk_softcap() > 0.0) s = avk_softcap_log2(s);
    if ((avk_flags() & AVK_FLAG_ALIBI) != 0u)
        s += alibi_slopes[hi.x] * LOG2E * float(int(j) - avk_row_pos(w.len, hi.y));
    if ((avk_flags() & AVK_FLAG_MASK) != 0u) { // an invisible key reads the mask at the last key
        uint mi = avk_mask_row(w.b, hi.x, hi.y) + min(j, key_hi - 1u);
        s += ((avk_flags() & AVK_FLAG_MASK_F16) != 0u ? avk_mask_f16(mi) : avk_mask_f32(mi)) * LOG2E;
    }
    return vis ? s : NEG_INF;
}

// SPREAD: a row's running max is a reference SPREAD_HEADROOM above the largest
// score seen, so a step rescales only when a score passes it (probabilities
// stay <= 1); the (max, sum, O) merges and the split partials take any reference.
const float SPREAD_HEADROOM = 8.0;

void main()
{
    Work w = flash_work(BR, BC);
    uint tid = gl_LocalInvocationID.x;
    uint lane = gl_SubgroupInvocationID, sgs = gl_SubgroupSize, sg = gl_SubgroupID, nsg = gl_NumSubgroups;
    uint part = lane % KEY_LANES;                  // which slice of D
    uint groups_per_sg = sgs / KEY_LANES;
    uint n_groups = nsg * groups_per_sg;
    uint e0 = part * SLICE, e0v = part * SLICE_V; // the lane's first K and V values

    QK_VEC q[BR][NV];
    vec4 o[BR][NVV];
    float q_unit[BR]; // HALF_QK: what a unit of row r's f16 Q is worth (a power of two), else 1
    float m[BR], l[BR];
    uint kend[BR];
    bool mods = avk_score_mods(), window = (avk_flags() & AVK_FLAG_WINDOW) != 0u;
    [[unroll]] for (uint r = 0u; r < BR; ++r) {
        uint pr = w.r0 + r;
        bool valid = pr < w.rows;
        uvec2 hi = avk_q_row(w, valid ? pr : 0u);
        kend[r] = valid ? avk_key_end(w.len, hi.y) : 0u;
        uint qbase = avk_q_offset(w.b, hi) / 4u + e0 / 4u;
        // the scale folded into Q: scores come out in base-2 units
        vec4 qf[NV];
        if (WORDS) { // the lane's values of D in its slots' order (words_dim)
            uint qoff = avk_q_offset(w.b, hi);
            [[unroll]] for (uint k = 0u; k < NV; ++k)
                [[unroll]] for (uint c = 0u; c < 4u; ++c) {
                    uint d = qoff + words_dim(part, 4u * k + c);
                    qf[k][c] = valid ? elem_to_vec4(q_data[d / 4u])[d % 4u] * avk_score_pre() : 0.0;
                }
        } else {
            [[unroll]] for (uint k = 0u; k < NV; ++k) qf[k] = valid ? elem_to_vec4(q_data[qbase + k]) * avk_score_pre() : vec4(0.0);
        }
#ifdef AVK_DECODE_HALF_QK
        float top = 0.0; // the row's largest |q| over the lane group
        [[unroll]] for (uint k = 0u; k < NV; ++k) {
            vec4 a = abs(qf[k]);
            top = max(top, max(max(a.x, a.y), max(a.z, a.w)));
        }
        [[unroll]] for (uint x = 1u; x < KEY_LANES; x <<= 1u) top = max(top, subgroupShuffleXor(top, x));
        int ex = 0;
        if (top > 0.0) frexp(top, ex); // top = f * 2^ex, f in [0.5, 1)
        q_unit[r] = ldexp(1.0, ex);
        [[unroll]] for (uint k = 0u; k < NV; ++k) q[r][k] = f16vec4(qf[k] * ldexp(1.0, -ex));
#else
        q_unit[r] = 1.0;
        [[unroll]] for (uint k = 0u; k < NV; ++k) q[r][k] = qf[k];
#endif
        [[unroll]] for (uint k = 0u; k < NVV; ++k) o[r][k] = vec4(0.0);
        m[r] = NEG_INF;
        l[r] = 0.0;
    }

    // SPREAD: this lane's scores (index own0 + i, row (own0 + i) / U) and their
    // rows' causal ends and running maxima (m[] by row, kept alike)
    uint own0 = (part / DUP) * NSO;
    uint own_kend[SP_MAX];
    float own_m[SP_MAX];
    [[unroll]] for (uint i = 0u; i < NSO; ++i) {
        uint r = (own0 + i) / U;
        own_kend[i] = 0u;
        [[unroll]] for (uint rr = 0u; rr < BR; ++rr) own_kend[i] = rr == r ? kend[rr] : own_kend[i];
        own_m[i] = NEG_INF;
    }

    // group `group` takes keys [j0, j0 + U) of every n_groups * U; the lane
    // groups of a subgroup take neighbouring keys, so each load instruction
    // reads sgs / KEY_LANES consecutive rows
    uint key_hi = min(w.kv_hi, w.kv_lo + w.ntiles * BC); // ntiles honours the test-only skip
    bool staged = false;
    uint page0 = 0u;
    if (AVK_PAGED != 0u && PAGE_SLOTS > 0u && pc.page_size > 0u) { // uniform: the barrier is reached by all
        page0 = w.kv_lo / avk_page_size();
        uint pages = key_hi > w.kv_lo ? (key_hi - 1u) / avk_page_size() - page0 + 1u : 0u;
        staged = pages <= PAGE_SLOTS;
        if (staged) {
            for (uint i = tid; i < pages; i += WG)
                page_sh[i] = uint(clamp(block_table[w.b * pc.max_pages + page0 + i], 0, int(pc.num_pages) - 1));
        }
        barrier();
    }
    uint stride = n_groups * U;
    uint probe_fold = 0u;
    uint trips = key_hi > w.kv_lo ? (key_hi - w.kv_lo + stride - 1u) / stride : 0u; // uniform
    // software pipeline: step t + 1's loads are issued before step t's math,
    // and step t + 2's rows are looked up then (a paged cache's block-table
    // read is a load of its own: it never delays the K/V loads)
    uvec4 rk[4][NRM], rv[4][NRM]; // U <= 4 used (glslang bounds-checks spec-sized arrays as size 1)
#if AVK_KV_FORMAT != AVK_KV_DTYPE
    uint wk[4][RUN_WORDS], wv[4][RUN_WORDS], sk[4], sv[4], bk[4], bv[4]; // runs: words, scale words, first bytes
    uvec4 xk[4], xv[4]; // WORDS: the code words and the extra words
    uint ek[4], ev[4];
#if AVK_KV_FORMAT == AVK_KV_FP8
    float fp8_ks = kv_scales[w.g] * AVK_KV_CODE_UNIT, fp8_vs = kv_scales[pc.kv_heads + w.g] * AVK_KV_CODE_UNIT;
#else
    const float fp8_ks = 1.0, fp8_vs = 1.0;
#endif
#endif
    bool next_ok[4];
    uint ahead_row[4];
    uint first = w.kv_lo + sg * groups_per_sg * U + lane / KEY_LANES;
    [[unroll]] for (uint u = 0u; u < U; ++u) {
        uint j = first + u * groups_per_sg;
        next_ok[u] = trips > 0u && j < key_hi;
        uint row = next_ok[u] ? decode_kv_row(w, j, staged, page0) : 0u;
#if AVK_KV_FORMAT != AVK_KV_DTYPE
        if (WORDS) {
            words_load(false, row, part, xk[u], ek[u]);
            words_load(true, row, part, xv[u], ev[u]);
        } else if (RUN) {
            run_load(false, row, e0, wk[u], sk[u], bk[u]);
            run_load(true, row, e0v, wv[u], sv[u], bv[u]);
        } else
#endif
        {
            [[unroll]] for (uint r = 0u; r < NR; ++r) rk[u][r] = raw_load(false, row, e0, r);
            [[unroll]] for (uint r = 0u; r < NRV; ++r) rv[u][r] = raw_load(true, row, e0v, r);
        }
        j += stride;
        ahead_row[u] = trips > 1u && j < key_hi ? decode_kv_row(w, j, staged, page0) : 0u;
    }
    for (uint t = 0u; t < trips; ++t) {
        uint base = first + t * stride;
        vec4 kk[4][NVM], vv[4][NVM];
#ifdef AVK_DECODE_HALF_QK
        f16vec4 kq[4][NVM]; // K as Q.K takes it: HALF_QK's f16 codes
#define KQ kq
#else
#define KQ kk
#endif
        bool key_ok[4];
        float ks[4] = float[4](1.0, 1.0, 1.0, 1.0), vs[4] = float[4](1.0, 1.0, 1.0, 1.0); // run scales
        [[unroll]] for (uint u = 0u; u < U; ++u) {
            key_ok[u] = next_ok[u];
            if (PROBE == 1u) {
#if AVK_KV_FORMAT != AVK_KV_DTYPE
                if (WORDS) {
                    probe_fold ^= xk[u].x ^ xk[u].y ^ xk[u].z ^ xk[u].w ^ ek[u] ^ xv[u].x ^ xv[u].y ^ xv[u].z ^ xv[u].w ^ ev[u];
                } else if (RUN) {
                    [[unroll]] for (uint i = 0u; i < RUN_WORDS; ++i) probe_fold ^= wk[u][i] ^ wv[u][i];
                    probe_fold ^= sk[u] ^ sv[u] ^ bk[u] ^ bv[u];
                } else
#endif
                {
                    [[unroll]] for (uint r = 0u; r < NR; ++r) probe_fold ^= rk[u][r].x ^ rk[u][r].y ^ rk[u][r].z ^ rk[u][r].w;
                    [[unroll]] for (uint r = 0u; r < NRV; ++r) probe_fold ^= rv[u][r].x ^ rv[u][r].y ^ rv[u][r].z ^ rv[u][r].w;
                }
                continue;
            }
#if AVK_KV_FORMAT != AVK_KV_DTYPE
#ifdef AVK_DECODE_HALF_QK
            if (WORDS) {
                ks[u] = words_decode_h(xk[u], ek[u], part, fp8_ks, kq[u]);
                vs[u] = words_decode(xv[u], ev[u], part, fp8_vs, vv[u]);
            } else if (RUN) {
                ks[u] = run_decode_h(false, wk[u], sk[u], bk[u], e0, w.g, kq[u]);
                vs[u] = run_decode(true, wv[u], sv[u], bv[u], e0v, w.g, vv[u]);
            } else
#else
            if (WORDS) {
                ks[u] = words_decode(xk[u], ek[u], part, fp8_ks, kk[u]);
                vs[u] = words_decode(xv[u], ev[u], part, fp8_vs, vv[u]);
            } else if (RUN) {
                ks[u] = run_decode(false, wk[u], sk[u], bk[u], e0, w.g, kk[u]);
                vs[u] = run_decode(true, wv[u], sv[u], bv[u], e0v, w.g, vv[u]);
            } else
#endif
#endif
            {
                raw_decode(false, rk[u], w.g, kk[u]);
                raw_decode(true, rv[u], w.g, vv[u]);
#ifdef AVK_DECODE_HALF_QK
                [[unroll]] for (uint k = 0u; k < NV; ++k) kq[u][k] = f16vec4(kk[u][k]); // (the host picks WORDS or RUN)
#endif
            }

            if (!key_ok[u]) { // V of a key past the range must not reach O, whatever the row holds
                [[unroll]] for (uint k = 0u; k < NVV; ++k) vv[u][k] = vec4(0.0);
                vs[u] = 0.0;
            }
        }
        if (t + 1u < trips) {
            [[unroll]] for (uint u = 0u; u < U; ++u) {
                uint j = base + stride + u * groups_per_sg;
                next_ok[u] = j < key_hi;
                uint row = ahead_row[u];
#if AVK_KV_FORMAT != AVK_KV_DTYPE
                if (WORDS) {
                    words_load(false, row, part, xk[u], ek[u]);
                    words_load(true, row, part, xv[u], ev[u]);
                } else if (RUN) {
                    run_load(false, row, e0, wk[u], sk[u], bk[u]);
                    run_load(true, row, e0v, wv[u], sv[u], bv[u]);
                } else
#endif
                {
                    [[unroll]] for (uint r = 0u; r < NR; ++r) rk[u][r] = raw_load(false, row, e0, r);
                    [[unroll]] for (uint r = 0u; r < NRV; ++r) rv[u][r] = raw_load(true, row, e0v, r);
                }
                j += stride;
                ahead_row[u] = j < key_hi ? decode_kv_row(w, j, staged, page0) : 0u;
            }
        }
        if (PROBE == 1u) continue;
        if (SPREAD != 0u) {
            float sc[SP_MAX];
            [[unroll]] for (uint r = 0u; r < BR; ++r) {
                vec4 s4 = lane_scores(q[r], KQ) * (vec4(ks[0], ks[1], ks[2], ks[3]) * q_unit[r]);
                [[unroll]] for (uint u = 0u; u < U; ++u) sc[r * U + u] = s4[u];
            }
            spread_scatter(sc, lane);
            bool grows = false;
            [[unroll]] for (uint i = 0u; i < NSO; ++i) {
                uint v = own0 + i;
                sc[i] = decode_score(w, v / U, base + (v % U) * groups_per_sg, key_hi, own_kend[i], sc[i]);
                grows = grows || sc[i] > own_m[i];
            }
            bool rescale = subgroupAny(grows); // uniform: every lane gathers the same kind of value
            if (!rescale) {
                [[unroll]] for (uint i = 0u; i < NSO; ++i) sc[i] = sc[i] == NEG_INF ? 0.0 : exp2(sc[i] - own_m[i]);
            }
            spread_gather(sc, lane);
            [[unroll]] for (uint r = 0u; r < BR; ++r) {
                vec4 p4 = vec4(0.0);
                [[unroll]] for (uint u = 0u; u < U; ++u) p4[u] = sc[r * U + u];
                if (rescale) { // sc holds scores: the row update as without SPREAD, the max with headroom
                    vec4 s4 = vec4(NEG_INF);
                    [[unroll]] for (uint u = 0u; u < U; ++u) s4[u] = sc[r * U + u];
                    float top = max(max(s4.x, s4.y), max(s4.z, s4.w));
                    float m_new = top > m[r] ? top + SPREAD_HEADROOM : m[r];
                    bool none = m_new == NEG_INF;
                    float alpha = none ? 1.0 : exp2(m[r] - m_new);
                    p4 = none ? vec4(0.0) : exp2(s4 - m_new);
                    l[r] *= alpha;
                    [[unroll]] for (uint k = 0u; k < NVV; ++k) o[r][k] *= alpha;
                    m[r] = m_new;
                }
                l[r] += (p4.x + p4.y) + (p4.z + p4.w);
                vec4 pv = p4 * vec4(vs[0], vs[1], vs[2], vs[3]);
                [[unroll]] for (uint k = 0u; k < NVV; ++k) {
                    vec4 acc = o[r][k] + pv.x * vv[0][k];
                    if (U > 1u) acc += pv.y * vv[1][k];
                    if (U > 2u) acc += pv.z * vv[2][k];
                    if (U > 3u) acc += pv.w * vv[3][k];
                    o[r][k] = acc;
                }
            }
            if (rescale) {
                [[unroll]] for (uint i = 0u; i < NSO; ++i) {
                    uint r = (own0 + i) / U;
                    [[unroll]] for (uint rr = 0u; rr < BR; ++rr) own_m[i] = rr == r ? m[rr] : own_m[i];
                }
            }
        } else
        [[unroll]] for (uint r = 0u; r < BR; ++r) {
            // each lane's own block scale, before the lanes add up
            vec4 s4 = lane_scores(q[r], KQ) * (vec4(ks[0], ks[1], ks[2], ks[3]) * q_unit[r]);
            [[unroll]] for (uint x = 1u; x < KEY_LANES; x <<= 1u) s4 += subgroupShuffleXor(s4, x);
            bvec4 vis;
            // a window's first key and the score hook's inputs are looked up here, behind their
            // flags, rather than kept per row: registers are what this body is short of
            uvec2 hi = uvec2(0u);
            uint kbegin = 0u;
            if (window || mods) {
                hi = avk_q_row(w, min(w.r0 + r, w.rows - 1u));
                kbegin = avk_key_begin(w.len, hi.y);
            }
            [[unroll]] for (uint u = 0u; u < 4u; ++u) {
                uint j = base + u * groups_per_sg;
                vis[u] = u < U && key_ok[u] && j < kend[r] && j >= kbegin;
            }
            // score features (avk_score_mod's) on all four scores, one uniform branch each;
            // invisible ones (mask read at the last key) are dropped below
            if (avk_softcap() > 0.0) {
                [[unroll]] for (uint u = 0u; u < 4u; ++u) s4[u] = avk_softcap_log2(s4[u]);
            }
            if ((avk_flags() & AVK_FLAG_ALIBI) != 0u) {
                float rel = float(int(base) - avk_row_pos(w.len, hi.y));
                s4 += (alibi_slopes[hi.x] * LOG2E) * (vec4(rel) + vec4(0.0, 1.0, 2.0, 3.0) * float(groups_per_sg));
            }
            if ((avk_flags() & AVK_FLAG_MASK) != 0u) {
                uint mrow = avk_mask_row(w.b, hi.x, hi.y), last = key_hi - 1u;
                if ((avk_flags() & AVK_FLAG_MASK_F16) != 0u) {
                    [[unroll]] for (uint u = 0u; u < 4u; ++u) s4[u] += avk_mask_f16(mrow + min(base + u * groups_per_sg, last)) * LOG2E;
                } else {
                    [[unroll]] for (uint u = 0u; u < 4u; ++u) s4[u] += avk_mask_f32(mrow + min(base + u * groups_per_sg, last)) * LOG2E;
                }
            }
            s4 = mix(vec4(NEG_INF), s4, vis);
            float m_new = max(m[r], max(max(s4.x, s4.y), max(s4.z, s4.w)));
            bool none = m_new == NEG_INF; // nothing visible to this group yet: the state stays
            float alpha = none ? 1.0 : exp2(m[r] - m_new);
            vec4 p4 = none ? vec4(0.0) : mix(vec4(0.0), exp2(s4 - m_new), vis);
            l[r] = l[r] * alpha + (p4.x + p4.y + p4.z + p4.w);
            vec4 pv = p4 * vec4(vs[0], vs[1], vs[2], vs[3]);
            [[unroll]] for (uint k = 0u; k < NVV; ++k) {
                vec4 acc = o[r][k] * alpha + pv.x * vv[0][k];
                if (U > 1u) acc += pv.y * vv[1][k];
                if (U > 2u) acc += pv.z * vv[2][k];
                if (U > 3u) acc += pv.w * vv[3][k];
                o[r][k] = acc;
            }
            m[r] = m_new;
        }
    }

    if (PROBE == 1u) { // the loads must reach the output
        m[0] = 0.0;
        l[0] = 1.0;
        o[0][0].x = float(probe_fold & 255u);
    }
    // merge the lane groups of the subgroup: lanes of equal `part` pair up
    for (uint x = KEY_LANES; x < sgs; x <<= 1u) {
        [[unroll]] for (uint r = 0u; r < BR; ++r) {
            float m_o = subgroupShuffleXor(m[r], x), l_o = subgroupShuffleXor(l[r], x);
            float mx = max(m[r], m_o);
            float a = m[r] == NEG_INF ? 0.0 : exp2(m[r] - mx), b = m_o == NEG_INF ? 0.0 : exp2(m_o - mx);
            [[unroll]] for (uint k = 0u; k < NVV; ++k) o[r][k] = o[r][k] * a + subgroupShuffleXor(o[r][k], x) * b;
            l[r] = l[r] * a + l_o * b;
            m[r] = mx;
        }
    }

    // merge the subgroups: common max per row, O summed in shared memory
    bool leader = lane < KEY_LANES; // group 0 of the subgroup holds its merged state
    if (lane == 0u) {
        [[unroll]] for (uint r = 0u; r < BR; ++r) {
            m_sh[sg * BR + r] = m[r];
            l_sh[sg * BR + r] = l[r];
        }
    }
    for (uint e = tid; e < BR * DV4; e += WG) o_sh[e] = vec4(0.0);
    barrier();
    [[unroll]] for (uint r = 0u; r < BR; ++r) {
        float mx = NEG_INF;
        for (uint s = 0u; s < nsg; ++s) mx = max(mx, m_sh[s * BR + r]);
        float a = m[r] == NEG_INF ? 0.0 : exp2(m[r] - mx);
        [[unroll]] for (uint k = 0u; k < NVV; ++k) o[r][k] *= a;
    }
    for (uint s = 0u; s < nsg; ++s) {
        if (sg == s && leader) {
            [[unroll]] for (uint r = 0u; r < BR; ++r) {
                if (WORDS) { // back to D's order
                    [[unroll]] for (uint k = 0u; k < NVV; ++k)
                        [[unroll]] for (uint c = 0u; c < 4u; ++c) {
                            uint d = words_dim(part, 4u * k + c);
                            o_sh[r * DV4 + d / 4u][d % 4u] += o[r][k][c];
                        }
                } else {
                    [[unroll]] for (uint k = 0u; k < NVV; ++k) o_sh[r * DV4 + e0v / 4u + k] += o[r][k];
                }
            }
        }
        barrier();
    }

    bool split = (pc.flags & AVK_FLAG_SPLIT) != 0u;
    for (uint e = tid; e < BR * DV4; e += WG) {
        uint r = e / DV4, d4 = e % DV4;
        uint pr = w.r0 + r;
        if (pr >= w.rows) continue;
        uvec2 hi = avk_q_row(w, pr);
        float mx = NEG_INF, sum = 0.0;
        for (uint s = 0u; s < nsg; ++s) mx = max(mx, m_sh[s * BR + r]);
        if (mx != NEG_INF)
            for (uint s = 0u; s < nsg; ++s) {
                float ms = m_sh[s * BR + r];
                if (ms != NEG_INF) sum += l_sh[s * BR + r] * exp2(ms - mx);
            }
        float keep = 1.0;
        if (!split && (avk_flags() & AVK_FLAG_SINKS) != 0u) {
            // the sink joins the denominator (split partials leave it to the merge)
            float sink = avk_sink_log2(hi.x), ms = max(mx, sink);
            keep = mx == NEG_INF ? 0.0 : exp2(mx - ms);
            sum = sum * keep + exp2(sink - ms);
            mx = ms;
        }
        vec4 out4 = sum > 0.0 ? o_sh[e] * keep / sum : vec4(0.0);
        if (split) {
            uint wrow = flash_ws_row(w.split, w.b, hi.x, hi.y);
            ws_o[wrow * DV4 + d4] = out4;
            if (d4 == 0u) ws_ml[wrow] = vec2(mx, sum);
        } else {
            o_data[avk_o_from_q(avk_q_offset(w.b, hi), D, DV) / 4u + d4] = vec4_to_elem(out4);
            if (d4 == 0u && (pc.flags & AVK_FLAG_WRITE_LSE) != 0u)
                lse_data[flash_lse_index(w.b, hi.x, hi.y)] = flash_lse(mx, sum);
        }
    }
}
