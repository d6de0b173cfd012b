#version 450
// Split-KV combine: each split wrote its rows normalised by its own sum, plus
// (max, sum) in base 2. One thread per (row, vec4 of O's head dim Dv) rescales
// the splits to the common max, adds the sink (AVK_FLAG_SINKS) and writes O
// (and the LSE) once.
#extension GL_GOOGLE_include_directive : require
#include "flash_common.glsl"
#include "flash_storage.glsl"

layout(constant_id = 2) const uint D = 64; // Dk: Q's rows, which place O's
layout(local_size_x = 64) in;
const uint DV = AVK_DV;
const uint D4 = DV / 4; // partial and O rows are Dv wide

layout(binding = 3) writeonly buffer OB { ELEM4 o_data[]; };
layout(binding = 4) writeonly buffer LB { float lse_data[]; };
layout(binding = 5) readonly buffer WOB { vec4 ws_o[]; };
layout(binding = 6) readonly buffer WMB { vec2 ws_ml[]; };

void main()
{
    uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint qn = pc.q_count;
    uint rows = pc.batch * pc.heads * qn;
    uint row = gid / D4, d4 = gid % D4;
    if (row >= rows) return;
    uint bh = row / qn;
    uint i = pc.q_begin + row % qn;
    uint b = bh / pc.heads, h = bh % pc.heads;

    // a sink joins once, here: a logit with no value
    float sink = avk_sink_log2(h), m = sink;
    for (uint s = 0u; s < pc.splits; ++s) m = max(m, ws_ml[flash_ws_row(s, b, h, i)].x);
    vec4 acc = vec4(0.0);
    float total = 0.0;
    if (m != NEG_INF) {
        if (sink != NEG_INF) total = exp2(sink - m);
        for (uint s = 0u; s < pc.splits; ++s) {
            uint wrow = flash_ws_row(s, b, h, i);
            vec2 ml = ws_ml[wrow];
            float weight = ml.y > 0.0 ? ml.y * exp2(ml.x - m) : 0.0;
            if (weight > 0.0) acc += ws_o[wrow * D4 + d4] * weight;
            total += weight;
        }
    }
    vec4 o = total > 0.0 ? acc / total : vec4(0.0);
    o_data[avk_o_from_q(avk_q_offset(b, uvec2(h, i)), D, DV) / 4u + d4] = vec4_to_elem(o);
    if ((pc.flags & AVK_FLAG_WRITE_LSE) != 0u && d4 == 0u)
        lse_data[flash_lse_index(b, h, i)] = total > 0.0 ? (m + log2(total)) * LN2 : NEG_INF;
}
