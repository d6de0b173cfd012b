/* Checks shared by the OpenCL tests beyond test_util's plain case run:
 * log-sum-exp against the reference, query-row ranges on poisoned outputs,
 * and the deliberately wrong kernel. Each returns 1 on pass and prints one line. */
#ifndef ATTNVK_CL_CHECKS_H
#define ATTNVK_CL_CHECKS_H

#include "test_util.h"

/* O and LSE (write_lse) against attnvk_reference, -inf rows included. */
int avk_cl_check_lse(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                     const char *label, uint64_t seed);

/* Runs rows [begin, begin+count) of every (b, h) into a NaN-poisoned O:
 * those rows must match the reference, the others must stay NaN, and the
 * whole output must then FAIL the check (NaN never passes). */
int avk_cl_check_row_range(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                           int begin, int count, const char *label, uint64_t seed);

/* ATTNVK_TEST_SKIP_LAST_KV_TILE must produce an output that fails the check. */
int avk_cl_check_skip_tile_fails(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                 const char *label, uint64_t seed);

/* A decode problem with score features (p->mask, sinks, alibi, softcap,
 * window) on a KV cache (p->page_size, p->kv_format; lens cycled over the
 * batch as seq_lens): the cache built as the cache cases build it (shuffled
 * pages, quantized on the host), a mask with 10% -inf, sinks and ggml's
 * slopes, O poisoned, every row against the reference on the decoded K/V. */
int avk_cl_check_cache_scores(attnvk_device *dev, const attnvk_problem *p, const int32_t *lens, int nlens,
                              const attnvk_kernel_options *opts, const char *label, uint64_t seed);

/* A status the call must return (UNSUPPORTED, INVALID_ARGUMENT...), with an
 * optional fragment its message must contain. */
int avk_cl_expect_status(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                         attnvk_status want, const char *fragment, const char *label);

#endif
