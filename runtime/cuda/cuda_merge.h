/* Ring attention's merge on a CUDA device (native/ring_merge.cu, cuda_merge.c). */
#ifndef ATTNVK_CUDA_MERGE_H
#define ATTNVK_CUDA_MERGE_H

#include "cuda/cuda_internal.h"

/* backend.h's merge: launched on the device's own stream (the one async runs
 * use), returning without waiting. */
attnvk_status avk_cuda_merge(avk_bdev *dev, const avk_merge_args *a);
/* Unloads the merge's module (at close; the context current when usable). */
void avk_cuda_merge_release(avk_cuda_device *dev);
/* native/ring_merge.cu compiled by NVRTC for arch (e.g. "sm_90a") into a
 * malloc'd cubin, through the on-disk cache unless ATTNVK_CACHE_DIR=off
 * (driver_version keys it); UNAVAILABLE without NVRTC. */
attnvk_status avk_cuda_merge_compile(const char *arch, int driver_version, void **cubin, size_t *size);

/* The kernels the module holds, by dtype (f32, f16, bf16). */
extern const char *const avk_cuda_merge_kernels[3];

#endif
