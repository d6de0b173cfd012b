/* What hip_rocblas.c (the forward) shares with hip_rocblas_backward.c: the
 * loaded rocBLAS, the prepared kernel and the softmax module's flags. */
#ifndef ATTNVK_HIP_ROCBLAS_INTERNAL_H
#define ATTNVK_HIP_ROCBLAS_INTERNAL_H

#include "hip/hip_rocblas.h"
#include "hip/rocblas_abi.h"

typedef struct avk_rocblas_api {
    rocblas_create_handle_fn create_handle;
    rocblas_destroy_handle_fn destroy_handle;
    rocblas_set_stream_fn set_stream;
    rocblas_gemm_strided_batched_ex_fn gemm;
    rocblas_status_to_string_fn status_to_string; /* optional */
    rocblas_get_atomics_mode_fn get_atomics_mode; /* optional (rocBLAS before ROCm 3.8 has none) */
    rocblas_set_atomics_mode_fn set_atomics_mode; /* optional */
} avk_rocblas_api;

struct avk_hip_rocblas_kernel {
    attnvk_problem p;
    rocblas_handle handle;
    hipModule_t module;   /* kernels/softmax_rows.hip: the forward's and the backward's kernels */
    hipFunction_t softmax;
    void *scores, *probs; /* workspace: f32 S and dtype P */
    int key_limit;        /* Nk, or fewer with ATTNVK_TEST_SKIP_LAST_KV_TILE */
    int softmax_threads;
    int score_mod;        /* softcap, ALiBi or a mask: the _mod softmax */
    /* the backward's (hip_rocblas_backward.c), made on its first call */
    hipFunction_t bwd_rows, sink_grad, convert;
    void *bwd_dp, *bwd_share, *bwd_grads; /* dP/dS like the scores; d(sink) shares; f32 dQ|dK|dV (16-bit) */
};

/* The loaded library (prepare has loaded it before any kernel exists). */
const avk_rocblas_api *avk_hip_rocblas_api(void);
/* OK, or the rocBLAS status as an error naming `what`. */
attnvk_status avk_hip_rocblas_check(rocblas_status r, const char *what);
rocblas_datatype avk_hip_rocblas_type(attnvk_dtype d);
/* kernels/softmax_rows.hip's AVK_SM_* flags for p (opencl/softmax.cl's values) */
int avk_hip_rocblas_softmax_flags(const attnvk_problem *p);

/* Frees what the backward made (hip_rocblas_backward.c); the release calls it. */
void avk_hip_rocblas_backward_free(avk_hip_device *dev, avk_hip_rocblas_kernel *k);

#endif
