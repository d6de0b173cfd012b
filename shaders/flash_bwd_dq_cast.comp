#version 450
// Backward, after dK/dV with dQ by atomics (flash_bwd_cm_body.glsl's
// BWD_DQ_ATOMIC): the f32 dQ workspace, in Q's element order, into dQ in f16.
// A thread per 8 values of a row of [B][H][Nq]; Q's strides, so gaps stay.
#extension GL_GOOGLE_include_directive : require

#include "flash_bwd_common.glsl"

layout(binding = 0) readonly buffer AccB { vec4 acc[]; };
layout(binding = 1) writeonly buffer DQB { uvec4 dq_data[]; };

void main()
{
    // a 2-D grid, as the pre pass's
    uint e = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * WG + gl_LocalInvocationID.x;
    const uint D8 = D / 8u;
    uint row = e / D8, d8 = e % D8;
    if (row >= pc.batch * pc.heads * pc.seq_q) return;
    uint i = row % pc.seq_q, h = row / pc.seq_q % pc.heads, b = row / pc.seq_q / pc.heads;
    uint at = avk_q_offset(b, uvec2(h, i)) / 8u + d8; // 8 values: two vec4 of the workspace
    vec4 lo = acc[2u * at], hi = acc[2u * at + 1u];
    dq_data[at] = uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
}
