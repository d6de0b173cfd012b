/* `attnvk run` on a KV cache: paged K/V pages with a block table and
 * lengths, and/or K/V quantized on the host (--kv-dtype). */
#ifndef ATTNVK_RUN_CACHE_H
#define ATTNVK_RUN_CACHE_H

#include "cmd_args.h"
#include "core/npy.h"

/* 1 when the run goes through the cache path. */
static inline int run_uses_cache(const run_args *a) { return a->block_table || a->kv_format != ATTNVK_KV_DTYPE; }

/* The fields of p that come from the options (causal, scale, dtype, layout,
 * kv format), then the heads check: 0, or a one-line error and EXIT_USAGE. */
int run_problem_from_options(const run_args *a, attnvk_problem *p);

/* Reads Q, the K/V pages, the block table and the lengths (tables[0], [1])
 * and derives the problem: one-line error and EXIT_USAGE on bad input. */
int run_load_paged(const run_args *a, avk_npy t[3], avk_npy tables[2], attnvk_problem *p);

/* Runs p on dev from the host tensors (t: Q and K/V, contiguous or pages,
 * already rounded to p->dtype; tables empty unless paged): encodes K/V in
 * p->kv_format (and Q in p->q_format), uploads, runs with O poisoned, reads O
 * (and lse when given). With check set, also fills *check against the
 * reference on the decoded cache (and decoded fp8 queries). */
attnvk_status run_cache_attention(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                  const avk_npy t[3], const avk_npy tables[2], float *o, float *lse,
                                  attnvk_kernel_info *info, double *ms, attnvk_check *check);

#endif
