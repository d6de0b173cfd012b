#version 450
// The backward's matrix-unit passes (flash_bwd_cm_body.glsl) through
// VK_NV_cooperative_matrix: f16 operands, f32 accumulators, MS x MS x MS
// (16 on NVIDIA). Built twice: BWD_DKDV (dK/dV) and without (dQ).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

#define CM_A fcoopmatNV<16, gl_ScopeSubgroup, MS, MS>
#define CM_B fcoopmatNV<16, gl_ScopeSubgroup, MS, MS>
#define CM_C fcoopmatNV<32, gl_ScopeSubgroup, MS, MS>
#define CM_LOAD_ROW(m, buf, off, stride) coopMatLoadNV(m, buf, off, stride, false)
#define CM_LOAD_COL(m, buf, off, stride) coopMatLoadNV(m, buf, off, stride, true)
#define CM_STORE_ROW(m, buf, off, stride) coopMatStoreNV(m, buf, off, stride, false)
#define CM_MAD(a, b, c) coopMatMulAddNV(a, b, c)
#define CM_C_ZERO CM_C(0.0)

#include "flash_bwd_cm_body.glsl"
