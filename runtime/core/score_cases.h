/* The score-modification cases (#13) and their runner, for `attnvk check`
 * and the tests: softcap, windows, ALiBi, sinks, masks (f32/f16, broadcast,
 * with -inf) and top-left alignment with Nq above and below Nk, alone and
 * together. Each implementation that does not declare a case's features
 * answers UNSUPPORTED with the feature's name. */
#ifndef ATTNVK_SCORE_CASES_H
#define ATTNVK_SCORE_CASES_H

#include "attnvk/attnvk.h"

#include <stdint.h>

typedef struct avk_score_case {
    const char *label;
    attnvk_problem p; /* dtype filled from the argument */
    int split_kv;     /* the split-KV count the tests force on it (0: their own) */
} avk_score_case;

enum { AVK_SCORE_CASES_MAX = 32 }; /* room for every case */

/* Fills up to max cases in dtype; returns the count. */
int avk_score_cases(attnvk_dtype dtype, avk_score_case *out, int max);

/* One case outside that list: a mask the heads share (f16, f32 for f32 problems) with ALiBi over
 * several row blocks and heads, for the tests of ATTNVK_MASK_HEADS_FIRST (kernel_flags.h's
 * AVK_FLAG_HEADS_FIRST: the grid walked heads first). */
avk_score_case avk_score_case_shared_mask(attnvk_dtype dtype);

typedef struct avk_score_result {
    char shape[160];    /* "B2 H4/2 Nq9 Nk14 D64 f32 softcap window=4,-1 sinks" */
    char message[512];  /* why, when the run did not return OK */
    attnvk_kernel_info info;
    attnvk_check check;
    double lse_err;     /* the sparse cases' LSE: largest error (relative past 1, inf: -inf missed or NaN), */
    size_t lse_bad;     /* and rows past the dtype's tolerance (they fail check.passed) */
} avk_score_result;

/* Fresh random inputs from seed (a mask with 10% -inf, sinks, ggml's ALiBi
 * slopes), run through attnvk_attention_host_inputs (O poisoned) with opts,
 * every row checked against the float64 reference on the same inputs. */
attnvk_status avk_score_case_run(attnvk_device *dev, const avk_score_case *c, const attnvk_kernel_options *opts,
                                 uint64_t seed, avk_score_result *r);

#endif
