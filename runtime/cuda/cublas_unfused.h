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

#include <stdint.h>

/* One strided-batched GEMM pair: `count` problems whose Q, K, S (GEMM 1) and
 * P, V, O (GEMM 2) operands start at the offsets (elements) and step by the
 * strides. Q and K rows hold Dk values, V and O rows Dv. */
typedef struct avk_unfused_call {
    int64_t q_offset, kv_offset, s_offset, v_offset, o_offset;
    int64_t q_stride, kv_stride, s_stride, v_stride, o_stride;
    int count;
} avk_unfused_call;

/* How the (b, h) problems map onto strided batches for both layouts and GQA:
 * BHSD packs the H/Hkv query heads that share a KV head into one GEMM of
 * G*Nq rows (one call in all); BSHD loops over heads or over (batch, head in
 * group), whichever needs fewer calls. S is [B][H][Nq][Nk] in every case. */
typedef struct avk_unfused_plan {
    int rows;            /* query rows per GEMM */
    int ld_q, ld_kv;     /* row pitch of Q and K, elements */
    int ld_o, ld_v;      /* of O and V (Dv rows) */
    int call_count;
    avk_unfused_call *calls;
    uint64_t scores_bytes; /* B*H*Nq*Nk*4: the workspace */
} avk_unfused_plan;

attnvk_status avk_unfused_plan_make(const attnvk_problem *p, avk_unfused_plan *plan);
void avk_unfused_plan_free(avk_unfused_plan *plan);

/* Loads libcublas (.so.13, .so.12, .so) once; ATTNVK_OK or UNAVAILABLE. */
attnvk_status avk_cublas_load(void);
const char *avk_cublas_version_text(void);

/* NVRTC-compiles native/softmax.cu for sm_<arch> ("90a", "80") and finds
 * every entry the host launches in the cubin: the host-side check the tests
 * run without a GPU. */
attnvk_status avk_softmax_compile_check(const char *arch, size_t *cubin_bytes);

typedef struct avk_cublas_unfused avk_cublas_unfused;

attnvk_status avk_cublas_unfused_prepare(avk_cuda_device *dev, const attnvk_problem *p, avk_cublas_unfused **out,
                                         attnvk_kernel_info *info);
/* Enqueues GEMM, softmax, GEMM on dev->stream (dev's context is current). */
attnvk_status avk_cublas_unfused_enqueue(avk_cuda_device *dev, avk_cublas_unfused *k, const avk_dispatch *a);
void avk_cublas_unfused_release(avk_cuda_device *dev, avk_cublas_unfused *k);

#endif
