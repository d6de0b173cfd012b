#version 450
// Backward pass 4 (with sinks): d(sink_h), head h's row shares (flash_bwd_pre.comp)
// summed in a fixed order: a workgroup per head, strided partial sums, then a
// fixed tree. WG is a power of two.
#extension GL_GOOGLE_include_directive : require

#include "flash_bwd_common.glsl"

layout(binding = 0) readonly buffer ShareB { float sink_share[]; };
layout(binding = 1) writeonly buffer DSinkB { float d_sinks[]; };

shared float part[WG];

void main()
{
    uint h = gl_WorkGroupID.x, t = gl_LocalInvocationID.x, n = pc.batch * pc.seq_q;
    float sum = 0.0;
    for (uint r = t; r < n; r += WG) sum += sink_share[bwd_row(r / pc.seq_q, h, r % pc.seq_q)];
    part[t] = sum;
    barrier();
    for (uint s = WG / 2u; s > 0u; s /= 2u) {
        if (t < s) part[t] += part[t + s];
        barrier();
    }
    if (t == 0u) d_sinks[h] = part[0];
}
