/* The OpenCL backend's backward pass (cl_backward.c, opencl/flash_bwd.cl):
 * built on a prepared kernel's first attnvk_kernel_backward, kept with it
 * until release. */
#ifndef ATTNVK_CL_BACKWARD_H
#define ATTNVK_CL_BACKWARD_H

#include "core/backend.h"

typedef struct avk_cl_bwd avk_cl_bwd;

/* A backward configuration: tiles (keys x query rows per dK/dV work-group,
 * query rows x keys per dQ work-group) and work-group size. */
typedef struct avk_cl_bwd_config {
    int head_dim, head_dim_v, f16, unroll;
    int mma; /* 0: the portable body; 1: mma.sync (inline PTX), 2: the same emulated (flash_bwd_mma.cl) */
    int bc, bq, qb, kb, wg;
    int stages; /* the tensor-core body's buffers of the streamed tiles (Q/dO in dK/dV, K/V in dQ): 1 or 2 */
} avk_cl_bwd_config;

/* The first table entry for p's head dims whose local memory fits
 * local_mem bytes and whose work-group fits max_wg; UNSUPPORTED if none.
 * mma (as the config's) asks for the tensor-core body, taken where it
 * applies (f16, Dk and Dv multiples of 16 up to 128), else the portable one. */
attnvk_status avk_cl_bwd_select(uint64_t local_mem, size_t max_wg, int gpu, int mma, const attnvk_problem *p,
                                avk_cl_bwd_config *cfg);
/* local memory bytes of the dK/dV (dq 0) or dQ (dq 1) kernel */
size_t avk_cl_bwd_local_bytes(const avk_cl_bwd_config *c, int dq);

/* dQ, dK, dV (and d(sink)) for k's problem, building k's backward kernels
 * into *bwd first when NULL; *ms: the passes' profiled time. */
attnvk_status avk_cl_backward(avk_bdev *dev, avk_bkernel *k, avk_cl_bwd **bwd, const avk_backward_dispatch *a, double *ms);
void avk_cl_backward_release(avk_cl_bwd *b);

#endif
