// What both cooperative-matrix bodies (flash_coopmat_body.glsl,
// flash_coopmat_rs_body.glsl) declare alike: extensions, the shared interface
// and the specialization constants 0-4 the host sets for every variant
// (runtime/vulkan/vk_pipeline.c). Included, never compiled alone.
#ifndef FLASH_COOPMAT_COMMON_GLSL
#define FLASH_COOPMAT_COMMON_GLSL
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require

#include "flash_common.glsl"

layout(constant_id = 0) const uint BR = 64;
layout(constant_id = 1) const uint BC = 32;
layout(constant_id = 2) const uint D = 128;
layout(local_size_x_id = 3) in;
layout(constant_id = 4) const uint SUBGROUP_SIZE = 32;

const uint WG = gl_WorkGroupSize.x;
const uint NSG = WG / SUBGROUP_SIZE;      // subgroups per workgroup
const uint RS = BR / NSG;                 // query rows per subgroup

// D is Dk (Q and K rows, Q.K), DV is Dv (V and O rows, P.V). The matrices see
// both rounded up to MAT_GRAIN with zero columns (D = 40 or 72: one more
// k-step of zeros), so any multiple of 8 runs; real columns are DKP - D and
// DVP - DV short of the padded ones. runtime/vulkan/vk_variants.c sizes
// shared memory with the same rounding.
const uint DV = AVK_DV;
const uint MAT_GRAIN = 16u;
const uint DKP = (D + MAT_GRAIN - 1u) / MAT_GRAIN * MAT_GRAIN;
const uint DVP = (DV + MAT_GRAIN - 1u) / MAT_GRAIN * MAT_GRAIN;
#endif
