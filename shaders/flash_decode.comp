#version 450
// Decode body (few packed rows, long K/V): a workgroup serves BR packed rows
// (GQA: the heads of one kv head x the queries) of one (batch, head group,
// split). Its subgroups stream alternate groups of four keys; each lane holds a slice of the
// head dim, so one key's K and V rows are read by a whole subgroup in one
// coalesced pass and every K/V byte leaves memory once per kv head. Scores
// are subgroup sums, the softmax is online per key in registers, and the
// subgroups' (max, sum, O) merge through shared memory at the end. Any
// subgroup size: slices are sized for the smallest (MIN_SUBGROUP).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

#include "flash_common.glsl"
#include "flash_storage.glsl"

layout(constant_id = 0) const uint BR = 8;          // packed rows per workgroup
layout(constant_id = 1) const uint BC = 64;         // key granule (split_keys is a multiple)
layout(constant_id = 2) const uint D = 128;         // head dim (multiple of 4)
layout(local_size_x_id = 3) in;
layout(constant_id = 4) const uint MIN_SUBGROUP = 32;

const uint WG = gl_WorkGroupSize.x;
const uint D4 = D / 4;
const uint VPL = (D4 + MIN_SUBGROUP - 1) / MIN_SUBGROUP; // vec4s of a row per lane
const uint MAX_SG = WG / MIN_SUBGROUP;

layout(binding = 0) readonly buffer QB { ELEM4 q_data[]; };
#if AVK_KV_FORMAT == AVK_KV_DTYPE
layout(binding = 1) readonly buffer KB { ELEM4 k_data[]; };
layout(binding = 2) readonly buffer VB { ELEM4 v_data[]; };
#endif
layout(binding = 3) writeonly buffer OB { ELEM4 o_data[]; };
layout(binding = 4) writeonly buffer LB { float lse_data[]; };
layout(binding = 5) writeonly buffer WOB { vec4 ws_o[]; };
layout(binding = 6) writeonly buffer WMB { vec2 ws_ml[]; };

shared float m_sh[MAX_SG * BR];
shared float l_sh[MAX_SG * BR];
shared vec4 o_sh[BR * D4];

vec4 kv_load(bool values, uint row, uint d4, uint g)
{
#if AVK_KV_FORMAT != AVK_KV_DTYPE
    return avk_kv_load4(values, row, d4 * 4u, g, D);
#else
    uint idx = row * D4 + d4;
    return elem_to_vec4(values ? v_data[idx] : k_data[idx]);
#endif
}

void main()
{
    Work w = flash_work(BR, BC);
    uint tid = gl_LocalInvocationID.x;
    uint lane = gl_SubgroupInvocationID, sgs = gl_SubgroupSize, sg = gl_SubgroupID, nsg = gl_NumSubgroups;

    vec4 q[BR][VPL], o[BR][VPL];
    float m[BR], l[BR];
    uint kend[BR];
    [[unroll]] for (uint r = 0u; r < BR; ++r) {
        uint pr = w.r0 + r;
        bool valid = pr < w.rows;
        uvec2 hi = avk_q_row(w, valid ? pr : 0u);
        kend[r] = valid ? avk_key_end(w.len, hi.y) : 0u;
        uint qbase = avk_q_offset(w.b, hi) / 4u;
        [[unroll]] for (uint k = 0u; k < VPL; ++k) {
            uint d4 = lane + k * sgs;
            // the scale folded into Q: scores come out in base-2 units
            q[r][k] = valid && d4 < D4 ? elem_to_vec4(q_data[qbase + d4]) * pc.scale_log2 : vec4(0.0);
            o[r][k] = vec4(0.0);
        }
        m[r] = NEG_INF;
        l[r] = 0.0;
    }

    // four keys per step: their loads are in flight together, and one vec4
    // subgroup sum yields all four scores of a row
    uint key_hi = min(w.kv_hi, w.kv_lo + w.ntiles * BC); // ntiles honours the test-only skip
    for (uint j0 = w.kv_lo + sg * 4u; j0 < key_hi; j0 += nsg * 4u) {
        vec4 kk[4][VPL], vv[4][VPL];
        [[unroll]] for (uint u = 0u; u < 4u; ++u) {
            uint j = j0 + u;
            bool key_ok = j < key_hi;
            uint row = key_ok ? avk_kv_row(w.b, w.g, j) : 0u;
            [[unroll]] for (uint k = 0u; k < VPL; ++k) {
                uint d4 = lane + k * sgs;
                bool ok = key_ok && d4 < D4;
                kk[u][k] = ok ? kv_load(false, row, d4, w.g) : vec4(0.0);
                vv[u][k] = ok ? kv_load(true, row, d4, w.g) : vec4(0.0);
            }
        }
        [[unroll]] for (uint r = 0u; r < BR; ++r) {
            vec4 s4 = vec4(0.0);
            [[unroll]] for (uint k = 0u; k < VPL; ++k)
                s4 += vec4(dot(q[r][k], kk[0][k]), dot(q[r][k], kk[1][k]), dot(q[r][k], kk[2][k]), dot(q[r][k], kk[3][k]));
            s4 = subgroupAdd(s4);
            uint visible = kend[r] > j0 ? min(kend[r] - j0, 4u) : 0u; // uniform in the subgroup
            visible = min(visible, key_hi - j0);
            if (visible == 0u) continue;
            bvec4 vis = lessThan(uvec4(0u, 1u, 2u, 3u), uvec4(visible));
            s4 = mix(vec4(NEG_INF), s4, vis);
            float m_new = max(max(m[r], max(s4.x, s4.y)), max(s4.z, s4.w));
            float alpha = exp2(m[r] - m_new);
            vec4 p4 = mix(vec4(0.0), exp2(s4 - m_new), vis);
            l[r] = l[r] * alpha + (p4.x + p4.y + p4.z + p4.w);
            [[unroll]] for (uint k = 0u; k < VPL; ++k)
                o[r][k] = o[r][k] * alpha + p4.x * vv[0][k] + p4.y * vv[1][k] + p4.z * vv[2][k] + p4.w * vv[3][k];
            m[r] = m_new;
        }
    }

    // merge the subgroups: common max per row, O summed in shared memory
    if (lane == 0u) {
        [[unroll]] for (uint r = 0u; r < BR; ++r) {
            m_sh[sg * BR + r] = m[r];
            l_sh[sg * BR + r] = l[r];
        }
    }
    for (uint e = tid; e < BR * D4; e += WG) o_sh[e] = vec4(0.0);
    barrier();
    [[unroll]] for (uint r = 0u; r < BR; ++r) {
        float mx = NEG_INF;
        for (uint s = 0u; s < nsg; ++s) mx = max(mx, m_sh[s * BR + r]);
        float a = m[r] == NEG_INF ? 0.0 : exp2(m[r] - mx);
        [[unroll]] for (uint k = 0u; k < VPL; ++k) o[r][k] *= a;
    }
    for (uint s = 0u; s < nsg; ++s) {
        if (sg == s) {
            [[unroll]] for (uint r = 0u; r < BR; ++r)
                [[unroll]] for (uint k = 0u; k < VPL; ++k) {
                    uint d4 = lane + k * sgs;
                    if (d4 < D4) o_sh[r * D4 + d4] += o[r][k];
                }
        }
        barrier();
    }

    bool split = (pc.flags & AVK_FLAG_SPLIT) != 0u;
    for (uint e = tid; e < BR * D4; e += WG) {
        uint r = e / D4, d4 = e % D4;
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
        vec4 out4 = sum > 0.0 ? o_sh[e] / sum : vec4(0.0);
        if (split) {
            uint wrow = flash_ws_row(w.split, w.b, hi.x, hi.y);
            ws_o[wrow * D4 + d4] = out4;
            if (d4 == 0u) ws_ml[wrow] = vec2(mx, sum);
        } else {
            o_data[avk_q_offset(w.b, hi) / 4u + d4] = vec4_to_elem(out4);
            if (d4 == 0u && (pc.flags & AVK_FLAG_WRITE_LSE) != 0u)
                lse_data[flash_lse_index(w.b, hi.x, hi.y)] = flash_lse(mx, sum);
        }
    }
}
