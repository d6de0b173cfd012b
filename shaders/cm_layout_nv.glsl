// NVIDIA's accumulator layout for the register-softmax bodies (CM_* macros, see
// flash_coopmat_rs_body.glsl) through VK_NV_cooperative_matrix. The layout is
// what NVIDIA's driver showed on an H100 (580.159): lane l holds rows l/4 and
// l/4 + 8, columns 2*(l%4) + {0, 1} and the same + 8; element e is row
// l/4 + 8*(e>>2), column 2*(l%4) + (e&1) + 8*((e>>1)&1). GL_NV_cooperative_matrix
// leaves the layout to the implementation: the host runs
// coopmat_nv_layout_probe.comp on the device first and uses a variant built on
// this file only where the probe sees exactly this layout
// (runtime/vulkan/vk_rs_layout.c). Included first, never compiled alone.
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require

#define CM_F16_MATH 1 // f16 arithmetic is on (cm_score_mods.glsl's softcap pairs)
#define CM_A fcoopmatNV<16, gl_ScopeSubgroup, MS, MS>
#define CM_B fcoopmatNV<16, gl_ScopeSubgroup, MS, MS>
#define CM_C fcoopmatNV<32, gl_ScopeSubgroup, MS, MS>
#define CM_LOAD_ROW(m, buf, off, stride) coopMatLoadNV(m, buf, off, stride, false)
#define CM_LOAD_COL(m, buf, off, stride) coopMatLoadNV(m, buf, off, stride, true)
#define CM_MAD(a, b, c) coopMatMulAddNV(a, b, c)
#define CM_C_ZERO CM_C(0.0)
#define CM_A_FROM_C(c) CM_A(c)
#define CM_AT(m, e) (m)[e]

#define CM_ELEM_LOOP [[unroll]]
#define CM_LEN 8u
#define CM_SLOTS 2u
#define CM_SLOT(e) ((e) >> 2u)
#define CM_SLOT_ROW(lane, s) ((lane) / 4u + 8u * (s))
#define CM_COL(lane, e) (((lane) % 4u) * 2u + ((e) & 1u) + 8u * (((e) >> 1u) & 1u))
#define CM_ROW_MAX(x) row_max4(x)
#define CM_ROW_SUM(x) row_sum4(x)
#define CM_ROW_LEADER(lane) (((lane) & 3u) == 0u)
#define CM_WRITES(lane) true

// the four lanes of a row are l^1, l^2, l^3
float row_max4(float x)
{
    x = max(x, subgroupShuffleXor(x, 1u));
    return max(x, subgroupShuffleXor(x, 2u));
}

float row_sum4(float x)
{
    x += subgroupShuffleXor(x, 1u);
    return x + subgroupShuffleXor(x, 2u);
}

