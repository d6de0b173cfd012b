/* `attnvk run`'s score inputs: the mask, sinks and ALiBi slopes, read from
 * .npy files (or, for --alibi, made) and checked against the problem. */
#ifndef ATTNVK_RUN_SCORES_H
#define ATTNVK_RUN_SCORES_H

#include "cmd_args.h"
#include "core/npy.h"

typedef struct run_scores {
    avk_npy mask, sinks, slopes;
    float *made_slopes; /* --alibi: ggml's */
} run_scores;

/* Fills p's mask fields from the mask's shape and dtype and validates the
 * problem again: 0, or a one-line error naming the file and EXIT_USAGE. */
int run_load_scores(const run_args *a, attnvk_problem *p, run_scores *s);
/* Points in's mask, sinks and slopes at what was loaded (q, k, v untouched). */
void run_scores_inputs(const run_scores *s, attnvk_host_inputs *in);
void run_scores_free(run_scores *s);

#endif
