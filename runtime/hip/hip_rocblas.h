/* The unfused rocBLAS baseline: S = scale * Q K^T (f32, strided-batched GEMM),
 * P = softmax(S) (a HIP kernel), O = P V (GEMM), and its backward. librocblas
 * is loaded at run time; absent means "unavailable" with the reason. */
#ifndef ATTNVK_HIP_ROCBLAS_H
#define ATTNVK_HIP_ROCBLAS_H

#include "hip/hip_internal.h"

typedef struct avk_hip_rocblas_kernel avk_hip_rocblas_kernel;

/* Fills the implementation row ("rocblas", unfused, available or why not). */
void avk_hip_rocblas_describe(avk_hip_device *dev, attnvk_impl_info *out);

attnvk_status avk_hip_rocblas_prepare(avk_hip_device *dev, const attnvk_problem *p, const attnvk_kernel_options *o,
                                      avk_hip_rocblas_kernel **out, attnvk_kernel_info *info);
attnvk_status avk_hip_rocblas_dispatch(avk_hip_device *dev, avk_hip_rocblas_kernel *k, const avk_dispatch *a,
                                       double *device_ms);
void avk_hip_rocblas_release(avk_hip_device *dev, avk_hip_rocblas_kernel *k);

/* attnvk_kernel_backward on a rocblas kernel (hip_rocblas_backward.c): the
 * materialised-P backward, dQ, dK, dV (and d(sink)) written whole on return;
 * `deterministic` keeps rocBLAS's GEMMs off atomics. */
attnvk_status avk_hip_rocblas_backward(avk_hip_device *dev, avk_hip_rocblas_kernel *k, const avk_backward_dispatch *a,
                                       double *device_ms);

/* The row-softmax kernel source as hipRTC takes it (archs without an object). */
struct avk_hip_source;
void avk_hip_rocblas_softmax_source(const char *defines, struct avk_hip_source *out);

/* Per-device state (the handle) and the library itself. */
void avk_hip_rocblas_close(avk_hip_device *dev);
void avk_hip_rocblas_unload(void);

/* Workspace the unfused path needs: f32 scores plus P in dtype, for every
 * (b, h) and all Nq x Nk pairs. */
unsigned long long avk_hip_rocblas_workspace_bytes(const attnvk_problem *p);

#endif
