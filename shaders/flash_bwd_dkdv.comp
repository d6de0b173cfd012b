#version 450
// Backward pass 2: dK and dV. A workgroup per KEEP keys of one (batch, kv
// head): over the query heads of its group (GQA summed here, no atomics) and
// their STREAM-row tiles that see those keys, dV += P^T dO, dK += dS^T Q.
// Each thread owns fixed elements of dK and dV and sums in a fixed order.
// Grid (key blocks, kv heads, batch).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

#define QROWS STREAM
#define KROWS KEEP
#include "flash_bwd_tiles.glsl"

layout(binding = 5) writeonly buffer DKB { ELEM4 dk_data[]; };
layout(binding = 6) writeonly buffer DVB { ELEM4 dv_data[]; };

const uint EK = (KEEP * D4 + WG - 1u) / WG;  // dK vec4s per thread
const uint EV = (KEEP * DV4 + WG - 1u) / WG; // dV vec4s per thread

void main()
{
    uint tid = gl_LocalInvocationID.x;
    uint k0 = gl_WorkGroupID.x * KEEP, g = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
    uint len = avk_seq_len(b);
    bwd_load_keys(b, g, len, k0);
    vec4 dk[EK], dv[EV];
    [[unroll]] for (uint u = 0u; u < EK; ++u) dk[u] = vec4(0.0);
    [[unroll]] for (uint u = 0u; u < EV; ++u) dv[u] = vec4(0.0);
    for (uint h = g * pc.group; h < (g + 1u) * pc.group; ++h) {
        for (uint i0 = 0u; i0 < pc.seq_q; i0 += STREAM) {
            if (bwd_disjoint(len, i0, min(i0 + STREAM, pc.seq_q), k0, k0 + KEEP)) continue; // uniform
            barrier(); // the previous tile is consumed
            bwd_load_queries(b, h, i0);
            barrier();
            bwd_scores(b, h, len, i0, k0);
            barrier();
            // the rows outermost: where WG is a multiple of a row's vec4s (the spec constants fold
            // the test) a thread's elements share one column, so Q's and dO's vec4 of a row are
            // loaded once for all of them
            BWD_INNER_LOOP for (uint r = 0u; r < STREAM; ++r) {
                vec4 q_col = q_sh[r * KSTRIDE + tid % D4], do_col = do_sh[r * VSTRIDE + tid % DV4];
                [[unroll]] for (uint u = 0u; u < EK; ++u) {
                    uint e = tid + u * WG;
                    vec4 q = WG % D4 == 0u ? q_col : q_sh[r * KSTRIDE + e % D4];
                    if (e < KEEP * D4) dk[u] += ds_sh[r * PSTRIDE + e / D4] * q;
                }
                [[unroll]] for (uint u = 0u; u < EV; ++u) {
                    uint e = tid + u * WG;
                    vec4 o = WG % DV4 == 0u ? do_col : do_sh[r * VSTRIDE + e % DV4];
                    if (e < KEEP * DV4) dv[u] += p_sh[r * PSTRIDE + e / DV4] * o;
                }
            }
        }
    }
    float scale = pc.scale_log2 * LN2;
    [[unroll]] for (uint u = 0u; u < EK; ++u) {
        uint e = tid + u * WG, c = e / D4, d4 = e % D4;
        if (e < KEEP * D4 && k0 + c < pc.seq_kv) dk_data[avk_kv_row(b, g, k0 + c) * D4 + d4] = vec4_to_elem(dk[u] * scale);
    }
    [[unroll]] for (uint u = 0u; u < EV; ++u) {
        uint e = tid + u * WG, c = e / DV4, d4 = e % DV4;
        if (e < KEEP * DV4 && k0 + c < pc.seq_kv) dv_data[avk_kv_row(b, g, k0 + c) * DV4 + d4] = vec4_to_elem(dv[u]);
    }
}
