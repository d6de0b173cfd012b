/* How Q is stored (attnvk_problem.q_format): in the problem's dtype, or as
 * OCP e4m3 bytes with one f32 scale per query head (the FP8 forward). The
 * host side of fp8 queries: sizes, per-head scales, encode, exact decode. */
#ifndef ATTNVK_Q_FORMAT_H
#define ATTNVK_Q_FORMAT_H

#include "attnvk/attnvk.h"

#include <stddef.h>

/* The FP8 forward's tolerance (relative L2 against the reference on the
 * dequantized Q, K and V): P is rounded to e4m3 for P V too, which alone is
 * worth a few percent on N(0,1) inputs, so f16's 5e-3 cannot hold. */
#define AVK_FP8_FORWARD_TOLERANCE 5e-2

static inline int avk_q_is_fp8(const attnvk_problem *p) { return p->q_format == ATTNVK_KV_FP8; }

/* Bytes of one Q element (1 for fp8 queries, else the dtype's) and of all of Q. */
size_t avk_q_element_bytes(const attnvk_problem *p);
size_t avk_q_bytes(const attnvk_problem *p);

/* The q_format rules (called by attnvk_problem_validate): one-line errors. */
attnvk_status avk_q_format_validate(const attnvk_problem *p);

/* The forward's tolerance for this problem: the FP8 forward's, else attnvk_tolerance(dtype). */
double avk_forward_tolerance(const attnvk_problem *p);

/* One scale per query head (scales[H]) from that head's largest magnitude in
 * q (f32, p->layout), over every batch and row. */
void avk_q_fp8_scales(const attnvk_problem *p, const float *q, float *scales);

/* Per-head fp8 scales made one per tensor: each of scales[n] becomes their
 * largest (the bench's workloads, which cuDNN's per-tensor FP8 SDPA reads too). */
void avk_fp8_one_scale(float *scales, int n);

/* q (f32, p->layout) in Q's storage: packed to p->dtype, or e4m3 with
 * scales[h] for head h (fp8 queries; scales from avk_q_fp8_scales). */
void avk_q_encode(const attnvk_problem *p, const float *q, const float *scales, void *out);

/* The inverse: Q's storage back to f32, exactly the values the kernels read. */
void avk_q_decode(const attnvk_problem *p, const void *q, const float *scales, float *out);

#endif
