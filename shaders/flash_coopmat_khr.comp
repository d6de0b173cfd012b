#version 450
// Matrix units through VK_KHR_cooperative_matrix (f16 inputs, f32
// accumulators). Built only when glslangValidator knows GL_KHR_cooperative_matrix.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

#define CM_A coopmat<float16_t, gl_ScopeSubgroup, MM, MK, gl_MatrixUseA>
#define CM_B coopmat<float16_t, gl_ScopeSubgroup, MK, MN, gl_MatrixUseB>
#define CM_C coopmat<float, gl_ScopeSubgroup, MM, MN, gl_MatrixUseAccumulator>
#define CM_LOAD_ROW(m, buf, off, stride) coopMatLoad(m, buf, off, stride, gl_CooperativeMatrixLayoutRowMajor)
#define CM_LOAD_COL(m, buf, off, stride) coopMatLoad(m, buf, off, stride, gl_CooperativeMatrixLayoutColumnMajor)
#define CM_STORE_ROW(m, buf, off, stride) coopMatStore(m, buf, off, stride, gl_CooperativeMatrixLayoutRowMajor)
#define CM_MAD(a, b, c) coopMatMulAdd(a, b, c)
#define CM_C_ZERO CM_C(0.0)
#define CM_ADD(a, b) ((a) + (b))

#include "flash_coopmat_body.glsl"
