/* The CUDA backend's backward pass (cuda_backward.c): loaded on a prepared
 * kernel's first attnvk_kernel_backward, kept with it until release. */
#ifndef ATTNVK_CUDA_BACKWARD_H
#define ATTNVK_CUDA_BACKWARD_H

#include "core/native_flash.h"
#include "cuda/cuda_internal.h"

typedef struct avk_cuda_bwd avk_cuda_bwd;

/* the shared native layer's driver table for CUDA (cuda_backend.c) */
extern const avk_native_driver avk_cuda_native_driver;

/* Runs dQ, dK, dV (and d(sink)) for the forward kernel nk planned, loading
 * its kernels into *bwd first when NULL; *device_ms: the passes' event time. */
attnvk_status avk_cuda_backward(avk_cuda_device *dev, const avk_native_kernel *nk, avk_cuda_bwd **bwd,
                                const avk_backward_dispatch *a, double *device_ms);
void avk_cuda_backward_release(avk_cuda_device *dev, avk_cuda_bwd *b);

#endif
