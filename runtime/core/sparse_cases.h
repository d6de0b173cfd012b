/* The sparse-pattern cases (#20) and their runner, for `attnvk check` and the
 * tests: block layouts (random, a local band, causal, per head and per batch,
 * partial last blocks, an empty row of blocks, decode rows with GQA, a sink
 * and recent blocks past more hidden tiles than a work-group has lanes) and
 * LongNet's dilated attention (several groups, causal on and off, N not a
 * multiple of a segment, GQA). An implementation without the pattern answers
 * UNSUPPORTED with its name. */
#ifndef ATTNVK_SPARSE_CASES_H
#define ATTNVK_SPARSE_CASES_H

#include "attnvk/attnvk.h"
#include "core/score_cases.h" /* avk_score_result */

#include <stdint.h>

typedef struct avk_sparse_case {
    const char *label;
    attnvk_problem p;  /* dtype filled from the argument */
    double density;    /* a random layout's live share; < 0: a band of |density| blocks each side of the diagonal */
    int empty_row;     /* one row of blocks all zero */
    int recent;        /* > 0: the first block column (a sink) and the last `recent` only, StreamingLLM's shape */
} avk_sparse_case;

enum { AVK_SPARSE_CASES_MAX = 16 };

/* Fills up to max cases in dtype; returns the count. */
int avk_sparse_cases(attnvk_dtype dtype, avk_sparse_case *out, int max);

/* The case's block layout from seed (malloc'd, attnvk_block_layout_bytes long); NULL without one. */
uint8_t *avk_sparse_case_layout(const avk_sparse_case *c, uint64_t seed);

/* Fresh random inputs and the case's layout from seed, run through
 * attnvk_attention_host_inputs (O poisoned) with opts, every row checked
 * against the float64 reference. r->shape names the pattern. */
attnvk_status avk_sparse_case_run(attnvk_device *dev, const avk_sparse_case *c, const attnvk_kernel_options *opts,
                                  uint64_t seed, avk_score_result *r);

#endif
