#version 450
// Test-only: the matrix decode body (flash_decode_mma_body.glsl) with emulated
// 8x8 matrices (cm_layout_emu.glsl), so lavapipe checks its packing, key
// groups, merge, masking, splits and quantized tiles. Run with MS = 8.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require // quantized K/V decode in f16

#include "cm_layout_emu.glsl"

#include "flash_decode_mma_body.glsl"

#include "flash_coopmat_emu_ops.glsl"
