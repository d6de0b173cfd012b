/* The hook between the CUDA backend and the vendor baselines (cuDNN SDPA,
 * cuBLAS unfused). The baselines implement it in cuda_vendor.c; until that file
 * exists, cuda_vendor_none.c lists no vendor implementations. */
#ifndef ATTNVK_CUDA_VENDOR_H
#define ATTNVK_CUDA_VENDOR_H

#include "cuda/cuda_internal.h"

/* Fills up to max entries ("cudnn", "cublas", ...) and returns how many exist. */
int avk_cuda_vendor_implementations(avk_cuda_device *dev, attnvk_impl_info *out, int max);

/* Called for options->implementation other than NULL/"attnvk". UNAVAILABLE for
 * an unknown name, UNSUPPORTED for a shape it can't run (with the reason). */
attnvk_status avk_cuda_vendor_prepare(avk_cuda_device *dev, const attnvk_problem *p,
                                      const attnvk_kernel_options *o, void **vendor_kernel,
                                      attnvk_kernel_info *info);

/* Enqueues on dev->stream (the dispatch's buffers: Q, K, V, O and the score
 * inputs its problem has); the backend times it with events and waits.
 * The backend has pushed dev's context. */
attnvk_status avk_cuda_vendor_enqueue(avk_cuda_device *dev, void *vendor_kernel, const avk_dispatch *a);

/* attnvk_kernel_backward on a vendor kernel: the CUDA backend's `backward` entry
 * (cuda_backend.c) hands a kernel with a vendor object here; dev's context is
 * pushed, the backend times it as it times a dispatch. UNSUPPORTED with the
 * reason where the baseline has no backward (yet). */
attnvk_status avk_cuda_vendor_backward(avk_cuda_device *dev, void *vendor_kernel, const avk_backward_dispatch *a);

void avk_cuda_vendor_release(avk_cuda_device *dev, void *vendor_kernel);

#endif
