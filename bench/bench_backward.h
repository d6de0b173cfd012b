/* `attnvk bench --pass bwd|fwd+bwd`: the backward pass of one implementation on
 * one case. The forward runs once, untimed, for O and the LSE (a vendor baseline
 * keeps no LSE: attnvk's own forward on the same device provides both), then
 * attnvk_kernel_backward is checked on NaN-poisoned dQ, dK, dV against the float64
 * reference (attnvk_reference_backward) and timed; fwd+bwd times the forward and
 * the backward of each sample. Never aborts: every outcome is a record. */
#ifndef ATTNVK_BENCH_BACKWARD_H
#define ATTNVK_BENCH_BACKWARD_H

#include "bench_runner.h"

/* One (batch, KV head) group of query heads: the unit the reference is computed on
 * (dK and dV of a KV head sum over its query heads). */
typedef struct bench_grad_slice {
    int b, kv_head;
} bench_grad_slice;

/* One case's host side of the backward: the forward's workload (Q, K, V, score
 * inputs, O's checked rows), a seeded dO, and the float64 reference gradients of
 * the checked slices: every (b, KV head) of a small case, else the first and the last. */
typedef struct bench_grad_workload {
    bench_workload base;
    float *d_o;
    bench_grad_slice *slices;
    int nslices;
    float *ref_dq, *ref_dk, *ref_dv; /* slice after slice: G*Nq x Dk, Nk x Dk, Nk x Dv */
} bench_grad_workload;

/* Elements of one slice's dQ (which 0), dK (1) or dV (2). */
size_t bench_grad_slice_elements(const attnvk_problem *p, int which);
/* Copies the slice's rows of a full tensor (p's layout) into the slice's BHSD order:
 * which 0 a Q-shaped tensor (Dk rows), 1 K-shaped, 2 V-shaped, 3 O-shaped (Dv rows). */
void bench_grad_gather(const attnvk_problem *p, const bench_grad_slice *s, int which, const float *full, float *out);

/* Fails with OUT_OF_MEMORY (message set) when host memory is short. */
attnvk_status bench_grad_workload_create(const attnvk_problem *p, uint64_t seed, bench_grad_workload *w);
void bench_grad_workload_destroy(bench_grad_workload *w);

/* Hands the case's workload to a record, built on first use and shared; NULL with
 * the reason in why when it cannot be built. */
typedef const bench_grad_workload *(*bench_grad_source)(void *ctx, char *why, size_t n);

/* The record of cfg->pass (bwd or fwd+bwd), r initialised by the caller. */
void bench_backward_run(bench_target *t, const attnvk_impl_info *impl, const bench_run_config *cfg,
                        bench_grad_source source, void *ctx, bench_record *r);

#endif
