#version 450
// Tensor cores through VK_NV_cooperative_matrix (f16 inputs, f32 accumulators).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

#define CM_A fcoopmatNV<16, gl_ScopeSubgroup, MM, MK>
#define CM_B fcoopmatNV<16, gl_ScopeSubgroup, MK, MN>
#define CM_C fcoopmatNV<32, gl_ScopeSubgroup, MM, MN>
#define CM_LOAD_ROW(m, buf, off, stride) coopMatLoadNV(m, buf, off, stride, false)
#define CM_LOAD_COL(m, buf, off, stride) coopMatLoadNV(m, buf, off, stride, true)
#define CM_STORE_ROW(m, buf, off, stride) coopMatStoreNV(m, buf, off, stride, false)
#define CM_MAD(a, b, c) coopMatMulAddNV(a, b, c)
#define CM_C_ZERO CM_C(0.0)
#define CM_ADD(a, b) ((a) + (b))

#include "flash_coopmat_body.glsl"
