/* SPIR-V embedded at build time (runtime/vulkan/CMakeLists.txt). */
#ifndef ATTNVK_VK_SHADERS_H
#define ATTNVK_VK_SHADERS_H

#include <stddef.h>

#define AVK_SPV(name)                          \
    extern const unsigned char name[];         \
    extern const size_t name##_size;
AVK_SPV(avk_spv_flash_scalar_f32)
AVK_SPV(avk_spv_flash_scalar_f16)
AVK_SPV(avk_spv_flash_scalar_bf16)
AVK_SPV(avk_spv_flash_f16)
AVK_SPV(avk_spv_flash_coopmat_nv)
AVK_SPV(avk_spv_flash_coopmat_emu)
AVK_SPV(avk_spv_flash_coopmat_nv_rs)
AVK_SPV(avk_spv_flash_coopmat_rs_emu)
AVK_SPV(avk_spv_coopmat_nv_layout_probe)
AVK_SPV(avk_spv_split_reduce_f32)
AVK_SPV(avk_spv_split_reduce_f16)
AVK_SPV(avk_spv_split_reduce_bf16)
#ifdef ATTNVK_VK_KHR_COOPMAT_SHADER
AVK_SPV(avk_spv_flash_coopmat_khr)
#endif
#undef AVK_SPV

#endif
