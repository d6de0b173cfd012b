/* cuDNN's FP8 fused attention (the "cudnn" vendor kernel for fp8 problems,
 * issue #16): the composite graph cudnn-frontend's sdpa_fp8 node lowers
 * itself to, with per-tensor descales. Q, K and V are e4m3, O is f16 or bf16:
 * on Blackwell straight from the graph, on Hopper (cuDNN 9.19: "FP8 input with
 * F16 output is only supported on Blackwell") as e4m3 the caller converts.
 * Private to cudnn_sdpa.c, which builds, binds and runs it like the 16-bit
 * graph. */
#ifndef ATTNVK_CUDNN_SDPA_FP8_H
#define ATTNVK_CUDNN_SDPA_FP8_H

#include "cuda/cudnn_scores.h"

/* The f32 values the graph reads (descales, scales) and writes (amaxes), one
 * device array of AVK_DNN_FP8_SLOTS floats owned by the prepared kernel; slot i
 * is bound as uid AVK_DNN_UID_FP8_FIRST + i. */
typedef enum avk_dnn_fp8_slot {
    AVK_DNN_FP8_DESCALE_Q,
    AVK_DNN_FP8_DESCALE_K,
    AVK_DNN_FP8_DESCALE_V,
    AVK_DNN_FP8_DESCALE_S, /* 1 / SCALE_S */
    AVK_DNN_FP8_SCALE_S,   /* P's scale into e4m3: P in [0, 1] takes the format's range */
    AVK_DNN_FP8_SCALE_O,   /* 1 for f16/bf16 O; e4m3 O: 1 / DESCALE_V (|O| <= max |V| onto the range) */
    AVK_DNN_FP8_AMAX_S,    /* written: max |P| */
    AVK_DNN_FP8_AMAX_O,    /* written: max |O| */
    AVK_DNN_FP8_SLOTS
} avk_dnn_fp8_slot;

/* What cuDNN's FP8 SDPA takes (UNSUPPORTED with the reason otherwise): Q, K
 * and V all e4m3 (q_format and kv_format fp8), O f16/bf16, Hopper or newer,
 * cuDNN 9.1 or newer, Dk = Dv a multiple of 16 up to 256, causal (top-left
 * or Nq = Nk) or none; no softcap, ALiBi, mask, sinks or window. version 0 or
 * cc_major 0: not known yet (host-side checks). */
attnvk_status avk_cudnn_fp8_supports(const attnvk_problem *p, int cc_major, size_t version);

/* Whether the graph writes O in e4m3 on a device of this compute capability (Hopper). */
int avk_cudnn_fp8_o_in_e4m3(int cc_major);

/* Adds the FP8 forward's operations for p (v: the by-value scalars); o_e4m3: O in e4m3. */
void avk_dnn_build_sdpa_fp8(avk_dnn_builder *b, const attnvk_problem *p, avk_dnn_score_values *v, int real_stats,
                            int o_e4m3);

/* The slots' values for these inputs: reads the per-head scales (q_scales f32
 * [H], kv_scales f32 [2][H_kv]) from the device and fails, with the heads
 * named, unless each tensor has one scale (cuDNN takes one per tensor); then
 * writes the descales and scales into slots (AVK_DNN_FP8_SLOTS floats);
 * o_e4m3: O's scale for e4m3, and *o_descale what turns it back (else 1).
 * dev's context is current; synchronous (a variant pack's rebind only). */
attnvk_status avk_cudnn_fp8_bind_scales(avk_cuda_device *dev, const attnvk_problem *p, CUdeviceptr q_scales,
                                        CUdeviceptr kv_scales, CUdeviceptr slots, int o_e4m3, float *o_descale);

#endif
