/* attnvk's flash kernel on HIP: the embedded code object for the device's
 * gfx architecture (or hipRTC), launched with hipModuleLaunchKernel. */
#ifndef ATTNVK_HIP_FLASH_H
#define ATTNVK_HIP_FLASH_H

#include "core/native_flash.h"
#include "hip/hip_internal.h"

typedef struct avk_hip_flash_kernel avk_hip_flash_kernel;

void avk_hip_flash_describe(avk_hip_device *dev, attnvk_impl_info *out);
attnvk_status avk_hip_flash_prepare(avk_hip_device *dev, const attnvk_problem *p, const attnvk_kernel_options *o,
                                    avk_hip_flash_kernel **out, attnvk_kernel_info *info);
attnvk_status avk_hip_flash_dispatch(avk_hip_device *dev, avk_hip_flash_kernel *k, const avk_dispatch *a,
                                     double *device_ms);
void avk_hip_flash_release(avk_hip_device *dev, avk_hip_flash_kernel *k);
/* The kernel source and its headers as hipRTC takes them, with the -D options. */
struct avk_hip_source;
void avk_hip_flash_source(const char *defines, struct avk_hip_source *out);
/* the same for the backward's source (native/attn_bwd.cu) */
void avk_hip_backward_source(const char *defines, struct avk_hip_source *out);
/* the planned arguments of a prepared kernel, which its backward pass reuses */
const avk_native_kernel *avk_hip_flash_native(const avk_hip_flash_kernel *k);
/* the shared native layer's driver table for HIP */
extern const avk_native_driver avk_hip_native_driver;
/* Unloads every module of the device (at close). */
void avk_hip_flash_close(avk_hip_device *dev);

#endif
