#version 450
// `attnvk peak` matrix throughput through GL_NV_cooperative_matrix, the path
// of flash_coopmat_nv.comp: each subgroup of 32 keeps 8 independent 16x16 f32
// accumulators and runs coopMatMulAddNV on 16x16 f16 A and B (16x16x16, 8192
// FLOPs each) iters times; the sum of the accumulators is stored (binding 3,
// 256 floats per subgroup) so nothing is dropped. Binding 0 holds A then B
// (16x16 f16 each, rows of 2 uvec4).
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require

layout(local_size_x = 128) in;
layout(std430, binding = 0) readonly buffer In { uvec4 ab[]; };
layout(std430, binding = 3) writeonly buffer Out { float result[]; };
layout(push_constant) uniform Params { uint iters; } pc;

#define ACC fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

void main()
{
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a, b;
    coopMatLoadNV(a, ab, 0u, 2u, false);
    coopMatLoadNV(b, ab, 32u, 2u, false);
    ACC c0 = ACC(0.0), c1 = ACC(0.0), c2 = ACC(0.0), c3 = ACC(0.0);
    ACC c4 = ACC(0.0), c5 = ACC(0.0), c6 = ACC(0.0), c7 = ACC(0.0);
    for (uint i = 0u; i < pc.iters; ++i) {
        c0 = coopMatMulAddNV(a, b, c0);
        c1 = coopMatMulAddNV(a, b, c1);
        c2 = coopMatMulAddNV(a, b, c2);
        c3 = coopMatMulAddNV(a, b, c3);
        c4 = coopMatMulAddNV(a, b, c4);
        c5 = coopMatMulAddNV(a, b, c5);
        c6 = coopMatMulAddNV(a, b, c6);
        c7 = coopMatMulAddNV(a, b, c7);
    }
    ACC r = ((c0 + c1) + (c2 + c3)) + ((c4 + c5) + (c6 + c7));
    uint subgroup = gl_WorkGroupID.x * (gl_WorkGroupSize.x / 32u) + gl_SubgroupID;
    coopMatStoreNV(r, result, subgroup * 256u, 16u, false);
}
