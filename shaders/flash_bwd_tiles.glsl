// The dK/dV and dQ passes' shared body (flash_bwd_dkdv.comp, flash_bwd_dq.comp):
// f32 tiles in shared memory as vec4 rows padded by one vec4 (column walks on
// distinct banks), QROWS query rows (Q, dO, their LSE and D_i) and KROWS keys
// (K, V), and the tile's P and dS from them. The includer defines QROWS and
// KROWS from its KEEP (the rows it owns) and STREAM (the tile it walks).
// Portable: no subgroup operations, no 16-bit arithmetic; Q, K, V, dO and the
// gradients in any storage type (flash_storage.glsl), f32 math.
#ifndef FLASH_BWD_TILES_GLSL
#define FLASH_BWD_TILES_GLSL

#include "flash_bwd_common.glsl"
#include "flash_storage.glsl"

layout(constant_id = 0) const uint KEEP = 16;   // rows a workgroup owns: keys (dK/dV) or query rows (dQ)
layout(constant_id = 1) const uint STREAM = 16; // rows of each tile it walks: query rows (dK/dV) or keys (dQ)

layout(binding = 0) readonly buffer QB { ELEM4 q_data[]; };
layout(binding = 1) readonly buffer KB { ELEM4 k_data[]; };
layout(binding = 2) readonly buffer VB { ELEM4 v_data[]; };
layout(binding = 3) readonly buffer DOB { ELEM4 do_data[]; };
layout(binding = 4) readonly buffer StatB { vec2 stats[]; }; // (LSE log2, D_i) per row: flash_bwd_pre.comp

const uint KSTRIDE = D4 + 1;  // padded Q and K rows, in vec4s
const uint VSTRIDE = DV4 + 1; // padded dO and V rows
const uint PSTRIDE = KROWS + 1;

shared vec4 q_sh[QROWS * KSTRIDE];
shared vec4 do_sh[QROWS * VSTRIDE];
shared vec2 stat_sh[QROWS];
shared vec4 k_sh[KROWS * KSTRIDE];
shared vec4 v_sh[KROWS * VSTRIDE];
shared float p_sh[QROWS * PSTRIDE];
shared float ds_sh[QROWS * PSTRIDE];

// Query rows i0 .. i0 + QROWS - 1 of (b, h): Q, dO and the statistics; rows
// past Nq are zeros with LSE +inf (P = 0).
void bwd_load_queries(uint b, uint h, uint i0)
{
    for (uint e = gl_LocalInvocationID.x; e < QROWS * D4; e += WG) {
        uint r = e / D4, d4 = e % D4, i = i0 + r;
        q_sh[r * KSTRIDE + d4] = i < pc.seq_q ? elem_to_vec4(q_data[avk_q_offset(b, uvec2(h, i)) / 4u + d4]) : vec4(0.0);
    }
    for (uint e = gl_LocalInvocationID.x; e < QROWS * DV4; e += WG) {
        uint r = e / DV4, d4 = e % DV4, i = i0 + r;
        uint o = avk_o_from_q(avk_q_offset(b, uvec2(h, i)), D, DV) / 4u;
        do_sh[r * VSTRIDE + d4] = i < pc.seq_q ? elem_to_vec4(do_data[o + d4]) : vec4(0.0);
    }
    for (uint r = gl_LocalInvocationID.x; r < QROWS; r += WG)
        stat_sh[r] = i0 + r < pc.seq_q ? stats[bwd_row(b, h, i0 + r)] : vec2(POS_INF, 0.0);
}

// Keys k0 .. k0 + KROWS - 1 of (b, kv head g): K and V rows; keys past the
// sequence's len are zeros (never visible: their rows may hold anything).
void bwd_load_keys(uint b, uint g, uint len, uint k0)
{
    for (uint e = gl_LocalInvocationID.x; e < KROWS * D4; e += WG) {
        uint c = e / D4, d4 = e % D4, j = k0 + c;
        k_sh[c * KSTRIDE + d4] = j < len ? elem_to_vec4(k_data[avk_kv_row(b, g, j) * D4 + d4]) : vec4(0.0);
    }
    for (uint e = gl_LocalInvocationID.x; e < KROWS * DV4; e += WG) {
        uint c = e / DV4, d4 = e % DV4, j = k0 + c;
        v_sh[c * VSTRIDE + d4] = j < len ? elem_to_vec4(v_data[avk_kv_row(b, g, j) * DV4 + d4]) : vec4(0.0);
    }
}

// P and dS of the loaded tiles (query rows from i0 of (b, h), keys from k0)
// into p_sh and ds_sh (bwd_p_ds), dP = dO . V.
void bwd_scores(uint b, uint h, uint len, uint i0, uint k0)
{
    float s_pre = avk_score_pre();
    float slope = (avk_flags() & AVK_FLAG_ALIBI) != 0u ? alibi_slopes[h] : 0.0;
    for (uint e = gl_LocalInvocationID.x; e < QROWS * KROWS; e += WG) {
        uint r = e / KROWS, c = e % KROWS, i = i0 + r, j = k0 + c;
        vec2 pd = vec2(0.0);
        if (i < pc.seq_q && j >= avk_key_begin(len, i) && j < avk_key_end(len, i)) {
            float x = 0.0, dp = 0.0;
            BWD_INNER_LOOP for (uint d4 = 0u; d4 < D4; ++d4) x += dot(q_sh[r * KSTRIDE + d4], k_sh[c * KSTRIDE + d4]);
            BWD_INNER_LOOP for (uint d4 = 0u; d4 < DV4; ++d4) dp += dot(do_sh[r * VSTRIDE + d4], v_sh[c * VSTRIDE + d4]);
            pd = bwd_p_ds(x, dp, stat_sh[r], b, h, len, i, j, s_pre, slope);
        }
        p_sh[r * PSTRIDE + c] = pd.x;
        ds_sh[r * PSTRIDE + c] = pd.y;
    }
}

#endif
