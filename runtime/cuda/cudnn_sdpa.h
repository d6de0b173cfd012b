/* cuDNN fused attention ("cudnn"): the cuDNN 9 backend graph API, built in C
 * the way cudnn-frontend's SDPA node lowers itself (matmul, scale, score
 * modifications and the causal/window band from generated indices
 * (cudnn_scores.c), softmax from reductions with an optional sink, matmul),
 * planned by the engine heuristics. libcudnn.so.9 is loaded at run time;
 * without it the implementation is unavailable with the reason. */
#ifndef ATTNVK_CUDNN_SDPA_H
#define ATTNVK_CUDNN_SDPA_H

#include "cuda/cuda_internal.h"

typedef struct avk_cudnn_sdpa avk_cudnn_sdpa;

/* Loads libcudnn once; ATTNVK_OK or UNAVAILABLE with the reason. */
attnvk_status avk_cudnn_load(void);
/* "9.19.0" once loaded, else "". */
const char *avk_cudnn_version_text(void);

/* The support surface cudnn-frontend checks for fused SDPA (f16/bf16,
 * Dk and Dv multiples of 8 and <= 256 (so MLA's 192/128, on Hopper and newer
 * as cuDNN's support matrix lists it, and not 576/512), bottom-right causal
 * and windows only with Nq <= Nk,
 * ALiBi only beside a top-left causal diagonal, softcap only without masks
 * or windows, sinks from 9.13 and not for Nq = 1), and for fp8 problems the
 * FP8 graph's (avk_cudnn_fp8_supports): UNSUPPORTED with the reason for
 * anything outside it, before a graph is built. The one place a problem is
 * refused. */
attnvk_status avk_cudnn_sdpa_supports(const attnvk_problem *p, int cc_major);

/* Builds and finalizes every tensor and operation descriptor of the graph
 * for p on a device of compute capability cc_major (the FP8 graph's O is e4m3
 * on Hopper); needs the library but no GPU (the graph itself needs a handle).
 * Returns the number of operations in *ops. A host-side test of the graph. */
attnvk_status avk_cudnn_sdpa_check_descriptors(const attnvk_problem *p, int cc_major, int *ops);

/* Graph, heuristics (mode A, then fallback), execution plan and workspace for
 * p on dev; the plan is kept in the returned object. */
attnvk_status avk_cudnn_sdpa_prepare(avk_cuda_device *dev, const attnvk_problem *p, avk_cudnn_sdpa **out,
                                     attnvk_kernel_info *info);
/* Enqueues on dev->stream (dev's context is current). */
attnvk_status avk_cudnn_sdpa_enqueue(avk_cuda_device *dev, avk_cudnn_sdpa *k, const avk_dispatch *a);
/* The backward (cudnn_sdpa_bwd.c) on dev->stream: refused with the reason
 * where cuDNN's backward or attnvk's graph lacks a feature the forward takes
 * (avk_cudnn_bwd_supports); the graph is built at the first call per
 * deterministic flag and kept in k. a->fwd.lse is attnvk's forward LSE,
 * which is cuDNN's softmax stats as they are. dev's context is current. */
attnvk_status avk_cudnn_sdpa_backward(avk_cuda_device *dev, avk_cudnn_sdpa *k, const avk_backward_dispatch *a);
void avk_cudnn_sdpa_release(avk_cuda_device *dev, avk_cudnn_sdpa *k);

#endif
