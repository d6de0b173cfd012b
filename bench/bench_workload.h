/* One case's host side, built once and shared by every device and
 * implementation: seeded inputs rounded to the dtype, the rows to check and
 * their float64 reference (computed once). */
#ifndef ATTNVK_BENCH_WORKLOAD_H
#define ATTNVK_BENCH_WORKLOAD_H

#include "attnvk/attnvk.h"
#include "core/kv_build.h"
#include "sparse_pattern.h"

#include <stdint.h>

enum { BENCH_SAMPLED_ROWS = 64 };

typedef struct bench_workload {
    attnvk_problem p;
    float *q, *k, *v;   /* f32 values exactly representable in p.dtype (Q: in its q format) */
    /* q, k, v packed in p.dtype (f16/bf16), made with them and uploaded as
     * they are by every implementation; NULL for f32 (q, k, v are the bytes),
     * for k and v of a cache (has_cache), or when the host is short of memory */
    void *q_packed, *k_packed, *v_packed;
    size_t *rows;       /* flat (b*H + h)*Nq + i, ascending */
    size_t nrows;
    int full;           /* every row is checked */
    double *ref;        /* nrows x Dv */
    /* A quantized or paged problem: the cache as uploaded (k, v above then
     * hold what it decodes to, which ref is computed on) and the reference
     * on the unquantized inputs, for quant_error (NULL when not quantized). */
    int has_cache;
    avk_kv_host cache;
    double *ref_inputs;
    /* fp8 queries (the FP8 forward): Q as uploaded, e4m3 in Q's layout, and
     * its scale per query head; q above then holds what it decodes to */
    unsigned char *q_fp8;
    float *q_scales;
    /* the score inputs the problem asks for (mask: 10% -inf), else NULL */
    float *mask, *sinks, *slopes;
    size_t nmask;
    /* a block-sparse problem's layout, generated from the case seed (NULL without) */
    uint8_t *layout;
    /* the records' FLOPs: attnvk_problem_flops, or with a layout exactly its
     * visible pairs' (attnvk_flops_inputs) */
    double flops;
} bench_workload;

/* Same inputs for the same case name and seed, whatever else runs. */
uint64_t bench_case_seed(uint64_t seed, const char *case_name);

/* SplitMix64's finalizer: the bench's seeded counters. */
uint64_t bench_mix64(uint64_t z);

/* Builds inputs and reference rows. full: check every row (else up to
 * BENCH_SAMPLED_ROWS rows: first, last, causal edges, tile edges, random).
 * Fails with ATTNVK_ERROR_OUT_OF_MEMORY (message set) when host memory is short. */
attnvk_status bench_workload_create(const attnvk_problem *p, uint64_t seed, int full, bench_workload *w);
/* The same for a case whose block layout the bench generates from pattern
 * (a block-sparse problem needs one; NULL otherwise). */
attnvk_status bench_workload_create_pattern(const attnvk_problem *p, const bench_block_pattern *pattern, uint64_t seed,
                                            int full, bench_workload *w);
void bench_workload_destroy(bench_workload *w);

/* Host bytes bench_workload_create needs, and whether the host has them (within 80%
 * of its memory); 0 with the one-line reason in why when it does not. */
int bench_workload_fits_host(const attnvk_problem *p, int full, char *why, size_t n);

/* Whether a case is small enough for a full check. */
int bench_workload_wants_full(const attnvk_problem *p);

/* Compares o_rows (nrows x Dv floats, in w->rows order) with the cached reference. */
attnvk_check bench_workload_compare(const bench_workload *w, const float *o_rows);
/* The same against other reference rows (ref_inputs: the quantization's total error). */
attnvk_check bench_workload_compare_to(const bench_workload *w, const double *ref, const float *o_rows);

#endif
