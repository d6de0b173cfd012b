/* What cublas_unfused.c (the forward) shares with cublas_backward.c: the
 * prepared kernel and thin wrappers over the loaded cuBLAS. */
#ifndef ATTNVK_CUBLAS_INTERNAL_H
#define ATTNVK_CUBLAS_INTERNAL_H

#include "cuda/cublas_unfused.h"

#include <cublas_api.h>

struct avk_cublas_unfused {
    cublasHandle_t handle;
    avk_unfused_plan plan;
    attnvk_problem problem;
    CUdeviceptr scores;
    CUmodule module;
    CUfunction softmax;
    int threads, cached_cols;
    int score_mod; /* softcap, ALiBi or a mask: the _mod softmax */
    float scale;
    /* the backward's (cublas_backward.c), made on its first call */
    CUfunction bwd_rows, sink_grad, convert;
    CUdeviceptr bwd_dp, bwd_share, bwd_grads; /* dP/dS like the scores; d(sink) shares; f32 dQ|dK|dV (16-bit) */
};

/* native/softmax.cu's AVK_SM_* flags for p (opencl/softmax.cl's values) */
int avk_cublas_softmax_flags(const attnvk_problem *p);
cudaDataType avk_cublas_type(attnvk_dtype d);
/* native/softmax.cu's backward row entry for d (mod: with score modifications) */
const char *avk_cublas_bwd_entry(attnvk_dtype d, int mod);

/* cublasGemmStridedBatchedEx with f32 compute on k's handle; `what` names it in errors. */
attnvk_status avk_cublas_gemm(avk_cublas_unfused *k, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                              int kk, const float *alpha, const void *a, cudaDataType at, int lda, long long sa,
                              const void *b, cudaDataType bt, int ldb, long long sb, const float *beta, void *c,
                              cudaDataType ct, int ldc, long long sc, int count, const char *what);

#endif
