#version 450
// Backward pass 3: dQ. A workgroup per KEEP query rows of one (batch, head):
// over the STREAM-key tiles some of its rows see, dQ += dS K. Each thread
// owns fixed elements of dQ and sums in a fixed order. Grid (query blocks,
// heads, batch).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

#define QROWS KEEP
#define KROWS STREAM
#include "flash_bwd_tiles.glsl"

layout(binding = 5) writeonly buffer DQB { ELEM4 dq_data[]; };

const uint EQ = (KEEP * D4 + WG - 1u) / WG; // dQ vec4s per thread

void main()
{
    uint tid = gl_LocalInvocationID.x;
    uint i0 = gl_WorkGroupID.x * KEEP, h = gl_WorkGroupID.y, b = gl_WorkGroupID.z, g = h / pc.group;
    uint i1 = min(i0 + KEEP, pc.seq_q), len = avk_seq_len(b);
    bwd_load_queries(b, h, i0);
    vec4 dq[EQ];
    [[unroll]] for (uint u = 0u; u < EQ; ++u) dq[u] = vec4(0.0);
    // the keys some row of the block sees
    uint lo = avk_key_begin(len, i0), hi = avk_key_end(len, i1 - 1u);
    for (uint k0 = lo / STREAM * STREAM; k0 < hi; k0 += STREAM) {
        barrier(); // the previous tile is consumed
        bwd_load_keys(b, g, len, k0);
        barrier();
        bwd_scores(b, h, len, i0, k0);
        barrier();
        // the keys outermost: where WG is a multiple of a row's vec4s (folded) a thread's
        // elements share one column, so K's vec4 of a key is loaded once for all of them
        BWD_INNER_LOOP for (uint c = 0u; c < STREAM; ++c) {
            vec4 k_col = k_sh[c * KSTRIDE + tid % D4];
            [[unroll]] for (uint u = 0u; u < EQ; ++u) {
                uint e = tid + u * WG;
                vec4 k = WG % D4 == 0u ? k_col : k_sh[c * KSTRIDE + e % D4];
                if (e < KEEP * D4) dq[u] += ds_sh[(e / D4) * PSTRIDE + c] * k;
            }
        }
    }
    float scale = pc.scale_log2 * LN2;
    [[unroll]] for (uint u = 0u; u < EQ; ++u) {
        uint e = tid + u * WG, r = e / D4, d4 = e % D4;
        if (e < KEEP * D4 && i0 + r < i1) dq_data[avk_q_offset(b, uvec2(h, i0 + r)) / 4u + d4] = vec4_to_elem(dq[u] * scale);
    }
}
