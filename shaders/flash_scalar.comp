#version 450
// FlashAttention-2 forward, portable version for any Vulkan 1.1 device.
// A workgroup owns BR packed rows (GQA: pack heads x queries) of one (batch, head group); TPR = WG/BR threads
// share a row. Per key tile: S = Q.K^T (each thread a few columns), online
// softmax in base 2 with f32 statistics, O += P.V (each thread a few vec4 of
// V's head dim). K and V take turns in one shared buffer. Q.K runs over D
// (Dk), P.V and O over DV (Dv, flash_common.glsl's AVK_DV).
//   MATH_F16: f16 storage, f16 shared tiles, P.V products in f16 (needs
//             shaderFloat16 + storageBuffer16BitAccess); Q.K^T products, O
//             accumulation and softmax statistics in f32.
//   otherwise ELEM_F32 / ELEM_F16 / ELEM_BF16 storage with f32 arithmetic.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// AVK_NO_SUBGROUP_OPS: the build for devices without subgroup shuffles (reductions
// through shared memory only; the shuffle capability is not even declared).
#ifndef AVK_NO_SUBGROUP_OPS
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
#ifdef MATH_F16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#endif

#include "flash_common.glsl"

layout(constant_id = 0) const uint BR = 16;        // query rows per workgroup
layout(constant_id = 1) const uint BC = 32;        // keys per tile
layout(constant_id = 2) const uint D = 64;         // Q and K head dim (multiple of 4)
layout(local_size_x_id = 3) in;                    // workgroup size
layout(constant_id = 4) const uint SUBGROUP_SIZE = 32;
layout(constant_id = 5) const uint SG_REDUCE = 0;  // 1: row reductions by subgroup shuffles

const uint WG = gl_WorkGroupSize.x;
const uint D4 = D / 4;
const uint DV = AVK_DV;                   // V and O head dim (multiple of 4)
const uint DV4 = DV / 4;
const uint TPR = WG / BR;                 // threads per query row (power of two)
const uint QPT = (DV4 + TPR - 1) / TPR;   // O vec4s per thread
const uint CPT = (BC + TPR - 1) / TPR;    // S columns per thread
const uint TSTRIDE = D4 + 1;              // padded Q and K tile row, in vec4s (bank spread)
const uint VSTRIDE = DV4 + 1;             // padded V tile row
const uint KV_WORDS = BC * (TSTRIDE > VSTRIDE ? TSTRIDE : VSTRIDE);
const uint PSTRIDE = BC + 1;

#ifdef MATH_F16
#define TVEC f16vec4
layout(binding = 0) readonly buffer QB { f16vec4 q_data[]; };
layout(binding = 1) readonly buffer KB { f16vec4 k_data[]; };
layout(binding = 2) readonly buffer VB { f16vec4 v_data[]; };
layout(binding = 3) writeonly buffer OB { f16vec4 o_data[]; };
vec4 load4(f16vec4 v) { return vec4(v); }
f16vec4 store4(vec4 v) { return f16vec4(v); }
// Q.K^T products in f32: f16 rounding there is multiplied by the scale and
// shows in every probability (P.V below stays in f16 arithmetic)
float tdot(f16vec4 a, f16vec4 b) { return dot(vec4(a), vec4(b)); }
#else
#define TVEC vec4
#include "flash_storage.glsl"
layout(binding = 0) readonly buffer QB { ELEM4 q_data[]; };
#if AVK_KV_FORMAT == AVK_KV_DTYPE
layout(binding = 1) readonly buffer KB { ELEM4 k_data[]; };
layout(binding = 2) readonly buffer VB { ELEM4 v_data[]; };
#endif
layout(binding = 3) writeonly buffer OB { ELEM4 o_data[]; };
vec4 load4(ELEM4 v) { return elem_to_vec4(v); }
ELEM4 store4(vec4 v) { return vec4_to_elem(v); }
float tdot(vec4 a, vec4 b) { return dot(a, b); }
#endif
layout(binding = 4) writeonly buffer LB { float lse_data[]; };
layout(binding = 5) writeonly buffer WOB { vec4 ws_o[]; };
layout(binding = 6) writeonly buffer WMB { vec2 ws_ml[]; };

shared TVEC q_sh[BR * TSTRIDE];
shared TVEC kv_sh[KV_WORDS];
shared float p_sh[BR * PSTRIDE];
shared float red_sh[2 * BR * TPR];

// Reduce over the TPR threads of one row. Shared path: slot 0 (max) or 1
// (sum); contains a barrier, so all threads must call it.
float row_reduce(float x, uint r, uint t, uint slot, bool is_max)
{
#ifndef AVK_NO_SUBGROUP_OPS
    if (SG_REDUCE != 0u) {
        [[unroll]] for (uint m = 1u; m < TPR; m <<= 1u) {
            float y = subgroupShuffleXor(x, m);
            x = is_max ? max(x, y) : x + y;
        }
        return x;
    }
#endif
    uint base = slot * BR * TPR + r * TPR;
    red_sh[base + t] = x;
    barrier();
    float acc = red_sh[base];
    for (uint k = 1u; k < TPR; ++k) acc = is_max ? max(acc, red_sh[base + k]) : acc + red_sh[base + k];
    return acc;
}

// K rows (D values) or V rows (DV values) of keys j0 .. j0 + BC - 1.
void load_tile(uint j0, Work w, bool values)
{
    uint n4 = values ? DV4 : D4, stride = values ? VSTRIDE : TSTRIDE;
    for (uint e = gl_LocalInvocationID.x; e < BC * n4; e += WG) {
        uint c = e / n4, d4 = e % n4;
        uint j = j0 + c;
        TVEC v = TVEC(0);
        if (j < w.kv_hi) {
#if AVK_KV_FORMAT != AVK_KV_DTYPE
            v = avk_kv_load4(values, flash_kv_row(w, j), d4 * 4u, w.g, n4 * 4u);
#else
            uint idx = flash_kv_row(w, j) * n4 + d4;
#ifdef MATH_F16
            v = values ? v_data[idx] : k_data[idx];
#else
            v = values ? load4(v_data[idx]) : load4(k_data[idx]);
#endif
#endif
        }
        kv_sh[c * stride + d4] = v;
    }
}

void main()
{
    Work w = flash_work(BR, BC);
    uint tid = gl_LocalInvocationID.x;
    uint r = tid / TPR, t = tid % TPR;
    uint prow = w.r0 + r;                 // this thread's packed row
    bool row_ok = prow < w.rows;
    uvec2 hi = avk_q_row(w, row_ok ? prow : 0u);
    uint head = hi.x, row = hi.y;
    uint row_end = avk_key_end(w.len, row), row_begin = flash_row_begin(w, row); // keys [begin, end) visible
    int pos = avk_row_pos(w.len, row);
    float slope = (avk_flags() & AVK_FLAG_ALIBI) != 0u ? alibi_slopes[head] : 0.0;
    uint mask_row = avk_mask_row(w.b, head, row);
    float s_pre = avk_score_pre(); // scale_log2, or with a softcap its tanh's argument per raw unit

    for (uint e = tid; e < BR * D4; e += WG) {
        uint rr = e / D4, d4 = e % D4;
        uint pr = w.r0 + rr;
        TVEC v = TVEC(0);
        if (pr < w.rows) {
            uint qi = flash_q_offset(w, avk_q_row(w, pr)) / 4u + d4;
#ifdef MATH_F16
            v = q_data[qi];
#else
            v = load4(q_data[qi]);
#endif
        }
        q_sh[rr * TSTRIDE + d4] = v;
    }

    vec4 o_acc[QPT];
    [[unroll]] for (uint q = 0u; q < QPT; ++q) o_acc[q] = vec4(0.0);
    float m_i = NEG_INF, l_i = 0.0;

    for (uint tile = 0u; tile < w.ntiles; ++tile) {
        uint j0 = w.kv_lo + tile * BC;
        barrier(); // previous tile's P.V reads are done
        load_tile(j0, w, false);
        barrier();

        float s[CPT];
        [[unroll]] for (uint k = 0u; k < CPT; ++k) s[k] = 0.0;
        for (uint d4 = 0u; d4 < D4; ++d4) {
            TVEC qv = q_sh[r * TSTRIDE + d4];
            [[unroll]] for (uint k = 0u; k < CPT; ++k) {
                uint c = t + k * TPR;
                if (c < BC) s[k] += tdot(qv, kv_sh[c * TSTRIDE + d4]);
            }
        }
        [[unroll]] for (uint k = 0u; k < CPT; ++k) s[k] *= s_pre; // log2 units, or the softcap's tanh argument
        // score features (avk_score_mod's): one uniform branch each, a straight run over the
        // thread's scores; keys it does not see (read at the last key) are dropped below
        if (avk_softcap() > 0.0) {
            [[unroll]] for (uint k = 0u; k < CPT; ++k) s[k] = avk_softcap_log2(s[k]);
        }
        if ((avk_flags() & AVK_FLAG_ALIBI) != 0u) {
            float rel = float(int(j0 + t) - pos), sl = slope * LOG2E;
            [[unroll]] for (uint k = 0u; k < CPT; ++k) s[k] += sl * (rel + float(k * TPR));
        }
        if ((avk_flags() & AVK_FLAG_MASK) != 0u) {
            uint last = w.kv_hi - 1u;
            if ((avk_flags() & AVK_FLAG_MASK_F16) != 0u) {
                [[unroll]] for (uint k = 0u; k < CPT; ++k) s[k] += avk_mask_f16(mask_row + min(j0 + t + k * TPR, last)) * LOG2E;
            } else {
                [[unroll]] for (uint k = 0u; k < CPT; ++k) s[k] += avk_mask_f32(mask_row + min(j0 + t + k * TPR, last)) * LOG2E;
            }
        }
        float tmax = NEG_INF;
        [[unroll]] for (uint k = 0u; k < CPT; ++k) {
            uint c = t + k * TPR;
            uint j = j0 + c;
            bool visible = c < BC && j < w.kv_hi && j < row_end && j >= row_begin;
            if ((avk_flags() & AVK_PATTERNS) != 0u) visible = visible && avk_pattern_visible(w.b, head, row, j);
            s[k] = visible ? s[k] : NEG_INF;
            tmax = max(tmax, s[k]);
        }
        tmax = row_reduce(tmax, r, t, 0u, true);
        barrier(); // every thread is done reading K

        load_tile(j0, w, true);
        float m_new = max(m_i, tmax);
        float alpha = m_new == m_i ? 1.0 : exp2(m_i - m_new);
        float psum = 0.0;
        [[unroll]] for (uint k = 0u; k < CPT; ++k) {
            uint c = t + k * TPR;
            float p = s[k] == NEG_INF ? 0.0 : exp2(s[k] - m_new);
            if (c < BC) p_sh[r * PSTRIDE + c] = p;
            psum += p;
        }
        psum = row_reduce(psum, r, t, 1u, false);
        barrier(); // V and P are in shared memory

        l_i = l_i * alpha + psum;
        m_i = m_new;
        [[unroll]] for (uint q = 0u; q < QPT; ++q) o_acc[q] *= alpha;
        for (uint c = 0u; c < BC; ++c) {
            float p = p_sh[r * PSTRIDE + c];
            [[unroll]] for (uint q = 0u; q < QPT; ++q) {
                uint d4 = t + q * TPR;
#ifdef MATH_F16
                if (d4 < DV4) o_acc[q] += vec4(float16_t(p) * kv_sh[c * VSTRIDE + d4]);
#else
                if (d4 < DV4) o_acc[q] += p * kv_sh[c * VSTRIDE + d4];
#endif
            }
        }
    }

    if (!row_ok) return; // no barriers follow
    if ((avk_flags() & (AVK_FLAG_SINKS | AVK_FLAG_SPLIT)) == AVK_FLAG_SINKS) {
        // the sink joins the denominator (split partials leave it to the merge)
        float sink = avk_sink_log2(head), mx = max(m_i, sink);
        float keep = m_i == NEG_INF ? 0.0 : exp2(m_i - mx);
        [[unroll]] for (uint q = 0u; q < QPT; ++q) o_acc[q] *= keep;
        l_i = l_i * keep + exp2(sink - mx);
        m_i = mx;
    }
    float inv_l = l_i > 0.0 ? 1.0 / l_i : 0.0;
    if ((pc.flags & AVK_FLAG_SPLIT) != 0u) {
        uint wrow = flash_ws_row(w.split, w.b, head, flash_row(w, row));
        [[unroll]] for (uint q = 0u; q < QPT; ++q) {
            uint d4 = t + q * TPR;
            if (d4 < DV4) ws_o[wrow * DV4 + d4] = o_acc[q] * inv_l;
        }
        if (t == 0u) ws_ml[wrow] = vec2(m_i, l_i);
        return;
    }
    uint o_base = avk_o_from_q(flash_q_offset(w, hi), D, DV) / 4u;
    [[unroll]] for (uint q = 0u; q < QPT; ++q) {
        uint d4 = t + q * TPR;
        if (d4 < DV4) o_data[o_base + d4] = store4(o_acc[q] * inv_l);
    }
    if ((pc.flags & AVK_FLAG_WRITE_LSE) != 0u && t == 0u) lse_data[flash_lse_index(w.b, head, flash_row(w, row))] = flash_lse(m_i, l_i);
}
