/* SPIR-V embedded at build time (runtime/vulkan/CMakeLists.txt). */
#ifndef ATTNVK_VK_SHADERS_H
#define ATTNVK_VK_SHADERS_H

#include "core/embedded.h"

AVK_EMBEDDED(avk_spv_flash_scalar_f32)
AVK_EMBEDDED(avk_spv_flash_scalar_f16)
AVK_EMBEDDED(avk_spv_flash_scalar_bf16)
AVK_EMBEDDED(avk_spv_flash_f16)
AVK_EMBEDDED(avk_spv_flash_coopmat_nv)
AVK_EMBEDDED(avk_spv_flash_coopmat_emu)
AVK_EMBEDDED(avk_spv_flash_coopmat_nv_rs)
AVK_EMBEDDED(avk_spv_flash_coopmat_rs_emu)
AVK_EMBEDDED(avk_spv_coopmat_nv_layout_probe)
AVK_EMBEDDED(avk_spv_split_reduce_f32)
AVK_EMBEDDED(avk_spv_split_reduce_f16)
AVK_EMBEDDED(avk_spv_split_reduce_bf16)
#ifdef ATTNVK_VK_KHR_COOPMAT_SHADER
AVK_EMBEDDED(avk_spv_flash_coopmat_khr)
#endif

#endif
