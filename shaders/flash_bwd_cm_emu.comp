#version 450
// Test-only: the backward's matrix-unit passes (flash_bwd_cm_body.glsl) on any
// device, each "matrix" an 8x8 array held whole by every invocation
// (cm_layout_emu.glsl). Slow; it lets lavapipe check the tiling, staging,
// masking and accumulation that the tensor-core builds share. Run with MS = 8.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

#define EMU_INNER_UNROLL [[unroll]] // flash_coopmat_emu_ops.glsl says why
#define EMU_OUTER_UNROLL [[unroll]]
#include "cm_layout_emu.glsl"

#define CM_STORE_ROW(m, buf, off, stride) emu_store(m, off, stride)
void emu_store(emu_f m, uint off, uint stride);
void emu_store(emu_h m, uint off, uint stride);
#define BWD_CM_UNROLL [[dont_unroll]]

#include "flash_bwd_cm_body.glsl"

#include "flash_coopmat_emu_ops.glsl"

// f16 matrices (dS for dQ by atomics with REG_SCORES) as emu_store's f32 ones, a pair of halves a word
void emu_store(emu_h m, uint off, uint stride)
{
    EMU_OUTER_UNROLL for (uint r = 0u; r < EMU; ++r)
        EMU_INNER_UNROLL for (uint c = 0u; c < EMU; c += 2u) {
            uint h = (off + r * stride) * 8u + c;
            tile_sh[h / 8u][(h % 8u) / 2u] = packHalf2x16(vec2(m.v[r * EMU + c], m.v[r * EMU + c + 1u]));
        }
}
