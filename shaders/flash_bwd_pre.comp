#version 450
// Backward pass 1: per query row, D_i = rowsum(dO * O) in f32, stored with
// the row's LSE in the log2 domain (+inf for a row without keys, so every P
// of it is exp2(-inf) = 0); with sinks, the row's share of d(sink):
// -exp(sink_h - LSE_i) * D_i. A thread per row of [B][H][Nq].
#extension GL_GOOGLE_include_directive : require

#include "flash_bwd_common.glsl"
#include "flash_storage.glsl"

layout(binding = 0) readonly buffer OB { ELEM4 o_data[]; };
layout(binding = 1) readonly buffer DOB { ELEM4 do_data[]; };
layout(binding = 2) writeonly buffer ShareB { float sink_share[]; };
layout(binding = 4) readonly buffer LB { float lse_data[]; };
layout(binding = 5) writeonly buffer StatB { vec2 stats[]; };

void main()
{
    // a 2-D grid: rows / WG groups may exceed maxComputeWorkGroupCount[0]
    uint row = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * WG + gl_LocalInvocationID.x;
    if (row >= pc.batch * pc.heads * pc.seq_q) return;
    uint i = row % pc.seq_q, h = row / pc.seq_q % pc.heads, b = row / pc.seq_q / pc.heads;
    uint o = avk_o_from_q(avk_q_offset(b, uvec2(h, i)), D, DV) / 4u;
    float delta = 0.0;
    for (uint d4 = 0u; d4 < DV4; ++d4) delta += dot(elem_to_vec4(o_data[o + d4]), elem_to_vec4(do_data[o + d4]));
    float lse = lse_data[row];
    stats[row] = vec2(lse == NEG_INF ? POS_INF : lse * LOG2E, delta);
    if ((avk_flags() & AVK_FLAG_SINKS) != 0u)
        sink_share[row] = lse == NEG_INF ? 0.0 : -exp2(avk_sink_log2(h) - lse * LOG2E) * delta;
}
