#version 450
// Split-KV combine: each split wrote its rows normalised by its own sum, plus
// (max, sum) in base 2. One thread per (row, vec4 of O's head dim Dv) rescales
// the splits to the common max, adds the sink (AVK_FLAG_SINKS) and writes O
// (and the LSE) once.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "flash_common.glsl"
#include "flash_storage.glsl"

layout(constant_id = 2) const uint D = 64; // Dk: Q's rows, which place O's
layout(local_size_x = 64) in;
const uint DV = AVK_DV;
const uint D4 = DV / 4; // partial and O rows are Dv wide
const uint MERGE_BATCH = 8u; // splits whose loads are in flight at once

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

    // a sink joins once, here: a logit with no value (weight 1 at its own max)
    float sink = avk_sink_log2(h), m = sink;
    vec4 acc = vec4(0.0);
    float total = sink != NEG_INF ? 1.0 : 0.0;
    // The splits MERGE_BATCH at a time, every load of a batch issued before any
    // is used and the running max moved once per batch: a loop that waited on
    // each split's (max, sum) before loading its O took two round trips a split.
    for (uint s0 = 0u; s0 < pc.splits; s0 += MERGE_BATCH) {
        vec2 ml[MERGE_BATCH];
        vec4 po[MERGE_BATCH];
        [[unroll]] for (uint k = 0u; k < MERGE_BATCH; ++k) {
            // past the last split: its row again, masked below (no branch around the loads)
            uint wrow = flash_ws_row(min(s0 + k, pc.splits - 1u), b, h, i);
            ml[k] = ws_ml[wrow];
            po[k] = ws_o[wrow * D4 + d4];
            if (s0 + k >= pc.splits) ml[k] = vec2(NEG_INF, 0.0);
        }
        float batch_max = m;
        [[unroll]] for (uint k = 0u; k < MERGE_BATCH; ++k) if (ml[k].y > 0.0) batch_max = max(batch_max, ml[k].x);
        if (batch_max == NEG_INF) continue; // only empty splits so far
        float keep = exp2(m - batch_max);  // 0 while m is -inf
        total *= keep;
        acc *= keep;
        [[unroll]] for (uint k = 0u; k < MERGE_BATCH; ++k) {
            // an empty split's O may hold anything: selected away, never multiplied
            float weight = ml[k].y > 0.0 ? ml[k].y * exp2(ml[k].x - batch_max) : 0.0;
            total += weight;
            if (weight > 0.0) acc += po[k] * weight;
        }
        m = batch_max;
    }
    vec4 o = total > 0.0 ? acc / total : vec4(0.0);
    o_data[avk_o_from_q(avk_q_offset(b, uvec2(h, i)), D, DV) / 4u + d4] = vec4_to_elem(o);
    if ((pc.flags & AVK_FLAG_WRITE_LSE) != 0u && d4 == 0u)
        lse_data[flash_lse_index(b, h, i)] = total > 0.0 ? (m + log2(total)) * LN2 : NEG_INF;
}
