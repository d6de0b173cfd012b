/* The HIP backend's backward pass (hip_backward.c): loaded on a prepared
 * kernel's first attnvk_kernel_backward, kept with it until release. */
#ifndef ATTNVK_HIP_BACKWARD_H
#define ATTNVK_HIP_BACKWARD_H

#include "core/native_flash.h"
#include "hip/hip_internal.h"

typedef struct avk_hip_bwd avk_hip_bwd;

/* Runs dQ, dK, dV (and d(sink)) for the forward kernel nk planned, loading
 * its kernels into *bwd first when NULL; *device_ms: the passes' event time. */
attnvk_status avk_hip_backward(avk_hip_device *dev, const avk_native_kernel *nk, avk_hip_bwd **bwd,
                               const avk_backward_dispatch *a, double *device_ms);
void avk_hip_backward_release(avk_hip_device *dev, avk_hip_bwd *b);

#endif
