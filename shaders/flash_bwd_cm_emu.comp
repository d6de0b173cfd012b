#version 450
// Test-only: the backward's matrix-unit passes (flash_bwd_cm_body.glsl) on any
// device, each "matrix" an 8x8 array held whole by every invocation
// (cm_layout_emu.glsl). Slow; it lets lavapipe check the tiling, staging,
// masking and accumulation that the tensor-core builds share. Run with MS = 8.
#extension GL_GOOGLE_include_directive : require

#include "cm_layout_emu.glsl"

#define CM_STORE_ROW(m, buf, off, stride) emu_store(m, off, stride)
void emu_store(emu_f m, uint off, uint stride);
#define BWD_CM_UNROLL [[dont_unroll]]
#define EMU_INNER_UNROLL [[unroll]] // flash_coopmat_emu_ops.glsl says why

#include "flash_bwd_cm_body.glsl"

#include "flash_coopmat_emu_ops.glsl"
