#version 450
// Test-only: the matrix decode body's direct K/V operands (flash_decode_mma_body.glsl,
// AVK_DIRECT_KV) with emulated 16x16 matrices (cm_layout_emu.glsl), each built from the 32
// lanes of NVIDIA's layout in turn, so lavapipe checks their loads, decodes, permutations of D
// and the merge through O's own columns. Run with MS = 16, quantized caches only.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require // quantized K/V decode in f16

#define EMU_MS 16u
#include "cm_layout_emu.glsl"

#define AVK_DIRECT_KV
#include "flash_decode_mma_body.glsl"

#include "flash_coopmat_emu_ops.glsl"
