/* Prepared kernels of the OpenCL backend: attnvk's flash kernel and the
 * unfused CLBlast baseline share one handle type. */
#ifndef ATTNVK_CL_KERNELS_H
#define ATTNVK_CL_KERNELS_H

#include "core/backend.h"
#include "core/kernel_args.h"
#include "opencl/cl_backward.h"
#include "opencl/cl_device.h"
#include "opencl/cl_tuning.h"

struct avk_bkernel {
    int is_clblast;
    attnvk_problem p;
    int write_lse;
    int nk_loop;         /* CLBlast: keys processed: Nk, less with ATTNVK_TEST_SKIP_LAST_KV_TILE */
    avk_kernel_args args; /* the contract's arguments (q_begin, q_count and the LSE flag set per dispatch) */
    avk_cl_config cfg;   /* flash kernel */
    cl_kernel main, reduce;
    cl_mem opart, lsepart; /* split-KV partials */
    cl_mem scores;       /* CLBlast: S/P for chunk_heads (b, h) pairs */
    int chunk_heads;     /* CLBlast: (b, h) pairs per GEMM-softmax-GEMM pass */
    cl_kernel timestamp;
    cl_mem dummy;        /* stands in for unused buffer arguments */
    /* CLBlast's backward (cl_clblast_backward.c), made on its first call */
    cl_kernel bwd_rows, bwd_sinks;
    cl_mem bwd_scores, bwd_dp, bwd_share; /* S then P, dP then dS ([B*H][Nq][Nk] f32); d(sink) shares */
    avk_cl_bwd *bwd; /* attnvk's backward kernels, once asked for (cl_backward.c) */
};

attnvk_status avk_cl_flash_prepare(avk_bdev *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                   avk_bkernel *k, attnvk_kernel_info *info);
attnvk_status avk_cl_flash_dispatch(avk_bdev *dev, avk_bkernel *k, const avk_dispatch *a, double *ms);

/* CLBlast (libclblast.so.1, loaded on first use). */
int avk_clblast_available(const char **reason);
attnvk_status avk_clblast_prepare(avk_bdev *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                  avk_bkernel *k, attnvk_kernel_info *info);
attnvk_status avk_clblast_dispatch(avk_bdev *dev, avk_bkernel *k, const avk_dispatch *a, double *ms);
void avk_clblast_unload(void);
/* Most elements one score buffer may hold ($ATTNVK_CLBLAST_MAX_ELEMENTS lowers it). */
uint64_t avk_clblast_max_elements(void);
/* One CLBlastSgemmBatched (row-major) on dev's queue; `what` names it in errors. */
attnvk_status avk_clblast_sgemm(avk_bdev *dev, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                                const float *alphas, cl_mem a, const size_t *a_offsets, size_t lda, cl_mem b,
                                const size_t *b_offsets, size_t ldb, const float *betas, cl_mem c,
                                const size_t *c_offsets, size_t ldc, size_t count, const char *what);
/* The materialised-P backward (f32), dispatched by the backend's backward entry. */
attnvk_status avk_clblast_backward(avk_bdev *dev, avk_bkernel *k, const avk_backward_dispatch *a, double *ms);

/* Layout strides in elements of rows of head_dim values: Q and K's with
 * Dk, O and V's with Dv. */
typedef struct avk_cl_strides {
    int q_row, kv_row;
    long long q_batch, q_head, kv_batch, kv_head;
} avk_cl_strides;
avk_cl_strides avk_cl_layout_strides(const attnvk_problem *p, int head_dim);

attnvk_status avk_cl_create_buffer(avk_bdev *dev, size_t bytes, const char *what, cl_mem *out);

#endif
