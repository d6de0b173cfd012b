#version 450
// Ring attention's merge (runtime/core/backend.h, avk_merge_args): folds one
// block's partial (O, LSE) into the f32 accumulator (o_acc, lse_acc), with the
// arithmetic of runtime/core/ring_merge.c. A workgroup of gl_WorkGroupSize.x
// invocations (specialization constant 0) owns ROWS consecutive rows
// (constant 1): invocation i < ROWS works out row i's weights into shared
// memory, then the whole group streams the rows' values. O in f16/bf16 is
// read and written as 32-bit words of two halves, so no 16-bit storage is
// needed; ROWS is even (vk_merge.c), so a group's values start on a word and
// a word two rows share (odd Dv) belongs to one group: no atomics.
#extension GL_GOOGLE_include_directive : require
#include "flash_storage.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 4;

layout(push_constant) uniform MergeArgs {
    uint rows;          // batch * heads * rows_per_head
    uint dv;
    uint first;         // 1: the accumulator becomes the block's result
    uint has_out;       // o_out is bound
} pc;

#if defined(ELEM_F32)
layout(binding = 0) readonly buffer OPartB { float o_part[]; };
layout(binding = 4) writeonly buffer OOutB { float o_out[]; };
#else
layout(binding = 0) readonly buffer OPartB { uint o_part[]; };
layout(binding = 4) buffer OOutB { uint o_out[]; };
#endif
layout(binding = 1) readonly buffer LPartB { float lse_part[]; };
layout(binding = 2) buffer OAccB { float o_acc[]; };
layout(binding = 3) buffer LAccB { float lse_acc[]; };

const uint MODE_COPY = 0u;  // first block: acc = part
const uint MODE_ZERO = 1u;  // both LSEs -inf: acc = (0, -inf)
const uint MODE_BLEND = 2u; // weighted by exp(lse - max)

float neg_inf() { return uintBitsToFloat(0xff800000u); }

// each row's weights (phase 1), read by the whole group (phase 2)
shared uint row_mode[ROWS];
shared float row_wa[ROWS], row_wp[ROWS], row_inv[ROWS];

// The merged value of element e (of the group's local row lr) whose partial value is x.
float merged(uint lr, uint e, float x)
{
    if (row_mode[lr] == MODE_COPY) return x;
    if (row_mode[lr] == MODE_ZERO) return 0.0;
    return (o_acc[e] * row_wa[lr] + x * row_wp[lr]) * row_inv[lr];
}

#if !defined(ELEM_F32)
vec2 word_to_vec2(uint w)
{
#if defined(ELEM_F16)
    return unpackHalf2x16(w);
#else
    return bf16x2_to_vec2(w);
#endif
}

uint vec2_to_word(vec2 v)
{
#if defined(ELEM_F16)
    return packHalf2x16(v);
#else
    return bf16_round(v.x) | (bf16_round(v.y) << 16);
#endif
}
#endif

void main()
{
    uint row0 = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * ROWS;
    if (row0 >= pc.rows) return; // the whole group
    uint rows_here = min(ROWS, pc.rows - row0), t = gl_LocalInvocationID.x, threads = gl_WorkGroupSize.x;

    // phase 1: row t's weights; lse_acc[r] is read and rewritten by this invocation only
    if (t < rows_here) {
        uint r = row0 + t, mode = MODE_COPY;
        float wa = 0.0, wp = 1.0, inv = 1.0;
        float lp = lse_part[r], lse = lp;
        if (pc.first == 0u) {
            float la = lse_acc[r], m = max(la, lp);
            if (m == neg_inf()) {
                mode = MODE_ZERO;
                lse = m;
            } else {
                mode = MODE_BLEND;
                // exp(-inf) spelled out: Vulkan's precision rules leave infinities to the driver
                wa = la == neg_inf() ? 0.0 : exp(la - m);
                wp = lp == neg_inf() ? 0.0 : exp(lp - m);
                inv = 1.0 / (wa + wp);
                lse = m + log(wa + wp);
            }
        }
        row_mode[t] = mode;
        row_wa[t] = wa;
        row_wp[t] = wp;
        row_inv[t] = inv;
        lse_acc[r] = lse;
    }
    barrier();

    // phase 2: the group's values, [begin, end)
    uint begin = row0 * pc.dv, end = (row0 + rows_here) * pc.dv;
#if defined(ELEM_F32)
    for (uint e = begin + t; e < end; e += threads) {
        float a = merged(e / pc.dv - row0, e, o_part[e]);
        o_acc[e] = a;
        if (pc.has_out != 0u) o_out[e] = a;
    }
#else
    for (uint w = begin / 2u + t; 2u * w < end; w += threads) {
        uint e = 2u * w;
        bool hi = e + 1u < end; // else the word's high half lies past O's last value
        vec2 x = word_to_vec2(o_part[w]), a = vec2(0.0);
        a.x = merged(e / pc.dv - row0, e, x.x);
        o_acc[e] = a.x;
        if (hi) {
            a.y = merged((e + 1u) / pc.dv - row0, e + 1u, x.y);
            o_acc[e + 1u] = a.y;
        }
        if (pc.has_out != 0u) o_out[w] = hi ? vec2_to_word(a) : (o_out[w] & 0xffff0000u) | (vec2_to_word(a) & 0xffffu);
    }
#endif
}
