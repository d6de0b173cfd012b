/* SPIR-V embedded at build time (runtime/vulkan/CMakeLists.txt). */
#ifndef ATTNVK_VK_SHADERS_H
#define ATTNVK_VK_SHADERS_H

#include "core/embedded.h"

#include <stddef.h>

/* An embedded module and the name its pipelines are cached under. */
typedef struct spv_blob {
    const unsigned char *code;
    size_t size;
    const char *name;
} spv_blob;

#define SPV_BLOB(sym) {avk_spv_##sym, avk_spv_##sym##_size, #sym}

AVK_EMBEDDED(avk_spv_flash_scalar_f32)
AVK_EMBEDDED(avk_spv_flash_scalar_f16)
AVK_EMBEDDED(avk_spv_flash_scalar_bf16)
AVK_EMBEDDED(avk_spv_flash_f16)
AVK_EMBEDDED(avk_spv_flash_decode_f32)
AVK_EMBEDDED(avk_spv_flash_decode_f32_q8_0)
AVK_EMBEDDED(avk_spv_flash_decode_f32_q4_0)
AVK_EMBEDDED(avk_spv_flash_decode_f32_fp8)
AVK_EMBEDDED(avk_spv_flash_decode_f16)
AVK_EMBEDDED(avk_spv_flash_decode_f16_q8_0)
AVK_EMBEDDED(avk_spv_flash_decode_f16_q4_0)
AVK_EMBEDDED(avk_spv_flash_decode_f16_fp8)
AVK_EMBEDDED(avk_spv_flash_decode_f16_q8_0_half)
AVK_EMBEDDED(avk_spv_flash_decode_f16_q4_0_half)
AVK_EMBEDDED(avk_spv_flash_decode_f16_fp8_half)
AVK_EMBEDDED(avk_spv_flash_decode_bf16)
AVK_EMBEDDED(avk_spv_flash_decode_bf16_q8_0)
AVK_EMBEDDED(avk_spv_flash_decode_bf16_q4_0)
AVK_EMBEDDED(avk_spv_flash_decode_bf16_fp8)
AVK_EMBEDDED(avk_spv_flash_scalar_f32_q8_0)
AVK_EMBEDDED(avk_spv_flash_scalar_f16_q8_0)
AVK_EMBEDDED(avk_spv_flash_scalar_bf16_q8_0)
AVK_EMBEDDED(avk_spv_flash_scalar_f32_q4_0)
AVK_EMBEDDED(avk_spv_flash_scalar_f16_q4_0)
AVK_EMBEDDED(avk_spv_flash_scalar_bf16_q4_0)
AVK_EMBEDDED(avk_spv_flash_scalar_f32_fp8)
AVK_EMBEDDED(avk_spv_flash_scalar_f16_fp8)
AVK_EMBEDDED(avk_spv_flash_scalar_bf16_fp8)
AVK_EMBEDDED(avk_spv_flash_f16_nosg) /* without subgroup shuffles (AVK_NO_SUBGROUP_OPS) */
AVK_EMBEDDED(avk_spv_flash_scalar_f32_nosg)
AVK_EMBEDDED(avk_spv_flash_scalar_f32_q8_0_nosg)
AVK_EMBEDDED(avk_spv_flash_scalar_f32_q4_0_nosg)
AVK_EMBEDDED(avk_spv_flash_scalar_f32_fp8_nosg)
AVK_EMBEDDED(avk_spv_flash_scalar_f16_nosg)
AVK_EMBEDDED(avk_spv_flash_scalar_f16_q8_0_nosg)
AVK_EMBEDDED(avk_spv_flash_scalar_f16_q4_0_nosg)
AVK_EMBEDDED(avk_spv_flash_scalar_f16_fp8_nosg)
AVK_EMBEDDED(avk_spv_flash_scalar_bf16_nosg)
AVK_EMBEDDED(avk_spv_flash_scalar_bf16_q8_0_nosg)
AVK_EMBEDDED(avk_spv_flash_scalar_bf16_q4_0_nosg)
AVK_EMBEDDED(avk_spv_flash_scalar_bf16_fp8_nosg)
AVK_EMBEDDED(avk_spv_flash_coopmat_nv)
AVK_EMBEDDED(avk_spv_flash_coopmat_emu)
AVK_EMBEDDED(avk_spv_flash_coopmat_nv_rs)
AVK_EMBEDDED(avk_spv_flash_coopmat_rs_emu)
AVK_EMBEDDED(avk_spv_flash_decode_nv_rs)
AVK_EMBEDDED(avk_spv_flash_decode_nv_rs_q8_0)
AVK_EMBEDDED(avk_spv_flash_decode_nv_rs_q4_0)
AVK_EMBEDDED(avk_spv_flash_decode_nv_rs_fp8)
AVK_EMBEDDED(avk_spv_flash_decode_nv_direct_q8_0)
AVK_EMBEDDED(avk_spv_flash_decode_nv_direct_q4_0)
AVK_EMBEDDED(avk_spv_flash_decode_nv_direct_fp8)
AVK_EMBEDDED(avk_spv_flash_decode_direct_emu_q8_0)
AVK_EMBEDDED(avk_spv_flash_decode_direct_emu_q4_0)
AVK_EMBEDDED(avk_spv_flash_decode_direct_emu_fp8)
AVK_EMBEDDED(avk_spv_flash_decode_rs_emu)
AVK_EMBEDDED(avk_spv_flash_decode_rs_emu_q8_0)
AVK_EMBEDDED(avk_spv_flash_decode_rs_emu_q4_0)
AVK_EMBEDDED(avk_spv_flash_decode_rs_emu_fp8)
AVK_EMBEDDED(avk_spv_coopmat_nv_layout_probe)
AVK_EMBEDDED(avk_spv_split_reduce_f32)
AVK_EMBEDDED(avk_spv_split_reduce_f16)
AVK_EMBEDDED(avk_spv_split_reduce_bf16)
AVK_EMBEDDED(avk_spv_flash_coopmat_khr) /* coopmat-nv's, rewritten to KHR (tools/spirv_nv2khr.c) */
/* the register-softmax bodies and their layout probe, rewritten likewise (P = f16(S) as element moves) */
AVK_EMBEDDED(avk_spv_flash_coopmat_khr_rs)
AVK_EMBEDDED(avk_spv_flash_decode_khr_rs)
AVK_EMBEDDED(avk_spv_flash_decode_khr_rs_q8_0)
AVK_EMBEDDED(avk_spv_flash_decode_khr_rs_q4_0)
AVK_EMBEDDED(avk_spv_flash_decode_khr_rs_fp8)
AVK_EMBEDDED(avk_spv_coopmat_khr_layout_probe)
/* the backward pass (vk_backward.c): pre, dK/dV and dQ per storage type, the sink sum */
AVK_EMBEDDED(avk_spv_flash_bwd_pre_f32)
AVK_EMBEDDED(avk_spv_flash_bwd_pre_f16)
AVK_EMBEDDED(avk_spv_flash_bwd_pre_bf16)
AVK_EMBEDDED(avk_spv_flash_bwd_dkdv_f32)
AVK_EMBEDDED(avk_spv_flash_bwd_dkdv_f16)
AVK_EMBEDDED(avk_spv_flash_bwd_dkdv_bf16)
AVK_EMBEDDED(avk_spv_flash_bwd_dq_f32)
AVK_EMBEDDED(avk_spv_flash_bwd_dq_f16)
AVK_EMBEDDED(avk_spv_flash_bwd_dq_bf16)
AVK_EMBEDDED(avk_spv_flash_bwd_sinks)
AVK_EMBEDDED(avk_spv_flash_bwd_dq_cast) /* dQ by atomics: its f32 workspace into f16 */
AVK_EMBEDDED(avk_spv_flash_bwd_dkdv_f32_unroll) /* inner loops left to the driver: GPUs */
AVK_EMBEDDED(avk_spv_flash_bwd_dkdv_f16_unroll)
AVK_EMBEDDED(avk_spv_flash_bwd_dkdv_bf16_unroll)
AVK_EMBEDDED(avk_spv_flash_bwd_dq_f32_unroll)
AVK_EMBEDDED(avk_spv_flash_bwd_dq_f16_unroll)
AVK_EMBEDDED(avk_spv_flash_bwd_dq_bf16_unroll)
AVK_EMBEDDED(avk_spv_flash_bwd_cm_dkdv_nv) /* matrix units, f16 */
AVK_EMBEDDED(avk_spv_flash_bwd_cm_dq_nv)
AVK_EMBEDDED(avk_spv_flash_bwd_cm_dkdv_khr)
AVK_EMBEDDED(avk_spv_flash_bwd_cm_dkdv_atomic_nv) /* ... adding dQ by atomics */
AVK_EMBEDDED(avk_spv_flash_bwd_cm_dkdv_atomic_khr)
AVK_EMBEDDED(avk_spv_flash_bwd_cm_dkdv_atomic_emu)
AVK_EMBEDDED(avk_spv_flash_bwd_cm_dq_khr)
AVK_EMBEDDED(avk_spv_flash_bwd_cm_dkdv_emu) /* test-only */
AVK_EMBEDDED(avk_spv_flash_bwd_cm_dq_emu)

#endif
