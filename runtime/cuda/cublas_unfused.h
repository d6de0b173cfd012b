/* cuBLAS unfused attention ("cublas"): S = scale * Q.K^T with
 * cublasGemmStridedBatchedEx (f32 out, f32 compute), the row softmax of
 * native/softmax.cu (NVRTC; causal, windows, top-left, softcap, ALiBi, masks
 * and sinks as attnvk.h defines them) writing P in place over S, then
 * O = P.V with a second strided-batched GEMM. It materialises the
 * B*H*Nq*Nk f32 scores: the workspace grows quadratically and a problem
 * whose scores do not fit in free device memory is UNSUPPORTED. */
#ifndef ATTNVK_CUBLAS_UNFUSED_H
#define ATTNVK_CUBLAS_UNFUSED_H

#include "cuda/cuda_internal.h"
#include "core/unfused_plan.h"

#include <stdint.h>

/* Loads libcublas (.so.13, .so.12, .so) once; ATTNVK_OK or UNAVAILABLE. */
attnvk_status avk_cublas_load(void);
const char *avk_cublas_version_text(void);

/* NVRTC-compiles native/softmax.cu for sm_<arch> ("90a", "80") and finds
 * every entry the host launches in the cubin: the host-side check the tests
 * run without a GPU. */
attnvk_status avk_softmax_compile_check(const char *arch, size_t *cubin_bytes);
/* Loads native/softmax.cu's module for dev (threads a block of its row kernels): from the cubin
 * cache or compiled now and stored; dev's context is current. cuDNN's FP8 row takes its
 * avk_fp8_out_* conversions from it. */
attnvk_status avk_softmax_module(avk_cuda_device *dev, int threads, CUmodule *module);

typedef struct avk_cublas_unfused avk_cublas_unfused;

attnvk_status avk_cublas_unfused_prepare(avk_cuda_device *dev, const attnvk_problem *p, avk_cublas_unfused **out,
                                         attnvk_kernel_info *info);
/* Enqueues GEMM, softmax, GEMM on dev->stream (dev's context is current). */
attnvk_status avk_cublas_unfused_enqueue(avk_cuda_device *dev, avk_cublas_unfused *k, const avk_dispatch *a);
/* The materialised-P backward (cublas_backward.c) on dev->stream, dev's
 * context current: the shared plan's GEMMs around native/softmax.cu's
 * backward row kernel. UNSUPPORTED where dP (B*H*Nq*Nk f32 beside the
 * scores) cannot be allocated. */
attnvk_status avk_cublas_unfused_backward(avk_cuda_device *dev, avk_cublas_unfused *k, const avk_backward_dispatch *a);
void avk_cublas_unfused_release(avk_cuda_device *dev, avk_cublas_unfused *k);

#endif
