/* `attnvk run`'s score inputs: the mask, sinks, ALiBi slopes and block layout,
 * read from .npy files (or, for --alibi, made) and checked against the problem. */
#ifndef ATTNVK_RUN_SCORES_H
#define ATTNVK_RUN_SCORES_H

#include "cmd_args.h"
#include "core/npy.h"

typedef struct run_scores {
    avk_npy mask, sinks, slopes, layout;
    float *made_slopes; /* --alibi: ggml's */
} run_scores;

/* Fills p's mask and block layout fields from their files' shapes (and the
 * mask's dtype) and validates the problem again: 0, or a one-line error
 * naming the file and EXIT_USAGE. */
int run_load_scores(const run_args *a, attnvk_problem *p, run_scores *s);
/* Points in's mask, sinks, slopes and layout at what was loaded (q, k, v untouched). */
void run_scores_inputs(const run_scores *s, attnvk_host_inputs *in);
void run_scores_free(run_scores *s);

#endif
