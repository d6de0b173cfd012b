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

#endif
