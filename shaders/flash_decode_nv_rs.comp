#version 450
// Decode on NVIDIA tensor cores (flash_decode_mma_body.glsl) in the probed
// accumulator layout (cm_layout_nv.glsl); one build per kv format.
#extension GL_GOOGLE_include_directive : require

#include "cm_layout_nv.glsl"

#include "flash_decode_mma_body.glsl"
