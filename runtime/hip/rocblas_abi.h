/* The few rocBLAS declarations the unfused baseline (forward and backward)
 * calls. rocBLAS headers are not installed here, so the ABI subset is spelled
 * out (values from rocBLAS's public rocblas-types.h; stable since ROCm 3).
 * Never linked: dlopen only. */
#ifndef ATTNVK_ROCBLAS_ABI_H
#define ATTNVK_ROCBLAS_ABI_H

#include <stdint.h>

typedef struct _rocblas_handle *rocblas_handle;
typedef int32_t rocblas_int;
typedef int64_t rocblas_stride;

typedef enum { rocblas_status_success = 0, rocblas_status_memory_error = 5 } rocblas_status;
typedef enum { rocblas_operation_none = 111, rocblas_operation_transpose = 112 } rocblas_operation;
typedef enum {
    rocblas_datatype_f16_r = 150,
    rocblas_datatype_f32_r = 151,
    rocblas_datatype_bf16_r = 168,
} rocblas_datatype;
typedef enum { rocblas_gemm_algo_standard = 0 } rocblas_gemm_algo;
/* whether GEMMs may split k across workgroups summed with atomics (rocBLAS >= ROCm 3.8) */
typedef enum { rocblas_atomics_not_allowed = 0, rocblas_atomics_allowed = 1 } rocblas_atomics_mode;

typedef rocblas_status (*rocblas_create_handle_fn)(rocblas_handle *handle);
typedef rocblas_status (*rocblas_destroy_handle_fn)(rocblas_handle handle);
typedef rocblas_status (*rocblas_set_stream_fn)(rocblas_handle handle, void *stream);
typedef const char *(*rocblas_status_to_string_fn)(rocblas_status status);
typedef rocblas_status (*rocblas_set_atomics_mode_fn)(rocblas_handle handle, rocblas_atomics_mode mode);
typedef rocblas_status (*rocblas_get_atomics_mode_fn)(rocblas_handle handle, rocblas_atomics_mode *mode);
/* D = alpha * op(A) op(B) + beta * C, column-major, per batch element. */
typedef rocblas_status (*rocblas_gemm_strided_batched_ex_fn)(
    rocblas_handle handle, rocblas_operation trans_a, rocblas_operation trans_b, rocblas_int m, rocblas_int n,
    rocblas_int k, const void *alpha, const void *a, rocblas_datatype a_type, rocblas_int lda, rocblas_stride stride_a,
    const void *b, rocblas_datatype b_type, rocblas_int ldb, rocblas_stride stride_b, const void *beta, const void *c,
    rocblas_datatype c_type, rocblas_int ldc, rocblas_stride stride_c, void *d, rocblas_datatype d_type,
    rocblas_int ldd, rocblas_stride stride_d, rocblas_int batch_count, rocblas_datatype compute_type,
    rocblas_gemm_algo algo, int32_t solution_index, uint32_t flags);

#endif
