/* The KV-cache cases (#12) and their runner, shared by `attnvk check` and
 * every API's tests so both exercise one table: GQA packing over group
 * ratios 1..128, Nq 1/4/16, paged caches with ragged lengths (0, 1,
 * page_size +- 1), contiguous ragged, and q8_0 / q4_0 / fp8 for decode and
 * prefill. */
#ifndef ATTNVK_CACHE_CASES_H
#define ATTNVK_CACHE_CASES_H

#include "attnvk/attnvk.h"

#include <stdint.h>

typedef struct avk_cache_case {
    const char *label;
    attnvk_problem p;       /* dtype filled from the argument; num_pages/max_pages by the runner */
    int32_t lens[8];        /* seq_lens cycled over the batch (paged or ragged) */
    int nlens;
} avk_cache_case;

/* Fills up to max cases in dtype; returns the count. */
int avk_cache_cases(attnvk_dtype dtype, avk_cache_case *out, int max);

typedef struct avk_cache_result {
    attnvk_status status;   /* OK: ran and was checked (see check.passed) */
    char shape[200];        /* "B2 H8/2 Nq1 Nk400 D128 f32 bhsd kv=q8_0 page=0" */
    char message[512];      /* why, when status is not OK */
    attnvk_kernel_info info;
    attnvk_check check;
} avk_cache_result;

/* Fresh normal inputs for p, rounded to p->dtype (the seeds every test has
 * always used), malloc'd with a spare element; 0 when out of host memory. */
int avk_random_inputs(const attnvk_problem *p, uint64_t seed, float **q, float **k, float **v);

/* Builds the case's cache (fresh random inputs from seed, shuffled pages,
 * garbage past each sequence's pages, quantized on the host), runs it through
 * attnvk_kernel_run_tensors with O poisoned, and checks every row against the
 * float64 reference on the decoded K/V. Returns r->status. */
attnvk_status avk_cache_case_run(attnvk_device *dev, const avk_cache_case *c, const attnvk_kernel_options *opts,
                                 uint64_t seed, avk_cache_result *r);

#endif
