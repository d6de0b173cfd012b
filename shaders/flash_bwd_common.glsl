// The backward pass's shared pieces (issue #18; runtime/vulkan/vk_backward.c
// runs its passes): the contract prelude, the head dims and the workgroup
// size, and the per-row statistics the pre pass leaves for the others. The
// FlashAttention-2 backward as native/attn_bwd.cu: P recomputed per tile as
// exp2(S - LSE) through the prelude's hooks, every workgroup owning what it
// writes (no atomics: bit-identical runs). Included, never compiled alone.
#ifndef FLASH_BWD_COMMON_GLSL
#define FLASH_BWD_COMMON_GLSL

#include "flash_common.glsl"

layout(constant_id = 2) const uint D = 64; // Q and K head dim (multiple of 4)
layout(local_size_x_id = 3) in;

const uint WG = gl_WorkGroupSize.x;
const uint D4 = D / 4;
const uint DV = AVK_DV; // V and O head dim (multiple of 4)
const uint DV4 = DV / 4;

#define POS_INF uintBitsToFloat(0x7f800000u)

// The inner loops over a head dim or a tile: left to the driver with
// AVK_BWD_UNROLL (the GPU build), kept rolled otherwise (the build for CPU
// devices: llvmpipe unrolls them whole and compiles the pipelines for 13 s
// instead of 2).
#ifdef AVK_BWD_UNROLL
#define BWD_INNER_LOOP
#else
#define BWD_INNER_LOOP [[dont_unroll]]
#endif

// Row (b, h, i) of the [B][H][Nq] LSE, D_i and sink shares (flash_lse_index's order).
uint bwd_row(uint b, uint h, uint i) { return flash_lse_index(b, h, i); }

// Whether rows [i0, i1) of a sequence of len keys see none of keys [k0, k1):
// visible ranges only grow with i, so the first and last rows decide.
bool bwd_disjoint(uint len, uint i0, uint i1, uint k0, uint k1)
{
    return avk_key_end(len, i1 - 1u) <= k0 || avk_key_begin(len, i0) >= k1;
}

// P and dS of query row i of (b, h) against key j, from the raw q.k (x) and
// dO.v (dp), the row's st = (LSE log2, D_i) and the head's ALiBi slope: the
// score through the contract's hook (avk_score_mod, visible keys only, as the
// forward), P = exp2(score - LSE), dS = P (dP - D_i) times the softcap's
// derivative 1 - tanh^2 (per raw q.k; dK and dQ take the softmax scale at the
// end). Both 0 where the key is not visible, whatever x and dp hold.
vec2 bwd_p_ds(float x, float dp, vec2 st, uint b, uint h, uint len, uint i, uint j, float s_pre, float slope)
{
    if (i >= pc.seq_q || j < avk_key_begin(len, i) || j >= avk_key_end(len, i)) return vec2(0.0);
    float s = x * s_pre;
    float prob = exp2(avk_score_mod(s, j, avk_row_pos(len, i), slope, avk_mask_row(b, h, i)) - st.x);
    float dsdx = 1.0;
    if (avk_softcap() > 0.0) {
        float t = tanh(clamp(s, -15.0, 15.0)); // avk_softcap_log2's
        dsdx = 1.0 - t * t;
    }
    return vec2(prob, prob == 0.0 ? 0.0 : prob * (dp - st.y) * dsdx);
}

#endif
