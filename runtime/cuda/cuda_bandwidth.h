/* The CUDA read-bandwidth measurement (backend slot read_bandwidth). */
#ifndef ATTNVK_CUDA_BANDWIDTH_H
#define ATTNVK_CUDA_BANDWIDTH_H

#include "core/backend.h"

#include <stddef.h>

/* NVRTC-compiles the streaming kernel (avk_read_bandwidth) for arch ("sm_90");
 * no GPU needed. *cubin is malloc'd. */
attnvk_status avk_cuda_bandwidth_compile(const char *arch, void **cubin, size_t *size);
attnvk_status avk_cuda_read_bandwidth(avk_bdev *dev, double *gbps);

#endif
