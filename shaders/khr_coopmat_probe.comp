#version 450
// CMake compiles this to learn whether glslangValidator knows GL_KHR_cooperative_matrix.
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(binding = 0) buffer B { float data[]; };
void main()
{
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(1.0);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>(1.0);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    c = coopMatMulAdd(a, b, c);
    coopMatStore(c, data, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
