#version 450
// Tensor cores through VK_NV_cooperative_matrix with the softmax in registers
// (flash_coopmat_rs_body.glsl) in NVIDIA's probed layout (cm_layout_nv.glsl).
#extension GL_GOOGLE_include_directive : require

#include "cm_layout_nv.glsl"

#include "flash_coopmat_rs_body.glsl"
