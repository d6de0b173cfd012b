/* cuDNN's fused SDPA backward ("cudnn" vendor kernel, issue #18): the
 * composite backend graph cudnn-frontend's SDPA backward node lowers itself to
 * on cuDNN 9.x (its SDPA_BWD operation descriptor of 9.19 has no mask, band or
 * score-input attributes, so the composite graph is the one that covers what
 * the forward runs). Private to cudnn_sdpa.c, which keeps one per kernel and
 * flag, built at the first backward and reused. */
#ifndef ATTNVK_CUDNN_SDPA_BWD_H
#define ATTNVK_CUDNN_SDPA_BWD_H

#include "cuda/cudnn_graph.h"

typedef struct avk_cudnn_bwd avk_cudnn_bwd;

/* What the backward refuses beyond the forward's refusals
 * (avk_cudnn_sdpa_supports): softcap, d(sinks), cuDNN's backward head-dim
 * limits per architecture, versions with known backward bugs, Nk not a
 * multiple of 128 before 9.16, deterministic on Blackwell. UNSUPPORTED with
 * the reason; the one place the backward refuses a problem. cc_major 0: any. */
attnvk_status avk_cudnn_bwd_supports(const attnvk_problem *p, int cc_major, int deterministic, int wants_d_sinks);

/* Builds and finalizes every tensor and operation descriptor of the backward
 * graph (needs the library, no GPU); *ops: how many operations. */
attnvk_status avk_cudnn_bwd_check_descriptors(const attnvk_problem *p, int deterministic, int *ops);

/* Graph, plan and memory for p on handle (bound to dev->stream); dev's
 * context is current. */
attnvk_status avk_cudnn_bwd_prepare(avk_cuda_device *dev, cudnnHandle_t handle, const attnvk_problem *p,
                                    int deterministic, avk_cudnn_bwd **out);
/* Enqueues dQ, dK, dV on dev->stream from the dispatch's Q, K, V, O, LSE, dO. */
attnvk_status avk_cudnn_bwd_run(avk_cuda_device *dev, cudnnHandle_t handle, avk_cudnn_bwd *k,
                                const avk_backward_dispatch *a);
/* dev's context is current. */
void avk_cudnn_bwd_release(avk_cuda_device *dev, avk_cudnn_bwd *k);

#endif
