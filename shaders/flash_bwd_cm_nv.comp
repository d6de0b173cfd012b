#version 450
// The backward's matrix-unit passes (flash_bwd_cm_body.glsl) through
// VK_NV_cooperative_matrix: f16 operands, f32 accumulators, MS x MS x MS
// (16 on NVIDIA). Built twice: BWD_DKDV (dK/dV) and without (dQ). The
// accumulator layout macros (cm_layout_nv.glsl) serve REG_SCORES, which the
// host sets only where its probe saw that layout (vk_rs_layout.c).
#extension GL_GOOGLE_include_directive : require

#include "cm_layout_nv.glsl"

#define CM_STORE_ROW(m, buf, off, stride) coopMatStoreNV(m, buf, off, stride, false)

#include "flash_bwd_cm_body.glsl"
