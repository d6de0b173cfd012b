#version 450
// Test-only: the register-softmax algorithm (flash_coopmat_rs_body.glsl) on
// any device, with each "matrix" an 8x8 array held whole by every invocation
// (so every lane owns all 8 rows, no cross-lane reduction, lane 0 writes).
// Slow; it lets lavapipe check the tiling, masking, rescaling, buffering and
// split logic the NVIDIA variant shares. Run with MS = 8.
#extension GL_GOOGLE_include_directive : require

#include "cm_layout_emu.glsl"

#include "flash_coopmat_rs_body.glsl"

#include "flash_coopmat_emu_ops.glsl"
