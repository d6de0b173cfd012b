/* Test harness shared by every API's correctness test: fresh random inputs,
 * poisoned outputs (attnvk_attention_host does it), one tolerance table. */
#ifndef ATTNVK_TEST_UTIL_H
#define ATTNVK_TEST_UTIL_H

#include "attnvk/attnvk.h"
#include "core/cache_cases.h"
#include "core/test_hooks.h" /* ATTNVK_TEST_SKIP_LAST_KV_TILE */

#include <stdio.h>

extern int avk_test_failures;

#define EXPECT(cond, ...)                                                              \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            ++avk_test_failures;                                                       \
            fprintf(stderr, "%s:%d: expectation failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                              \
            fputc('\n', stderr);                                                       \
        }                                                                              \
    } while (0)

/* Seed for this run: $ATTNVK_TEST_SEED, else from the clock (printed, so a failure can be replayed). */
uint64_t avk_test_seed(void);

/* Fresh normal inputs for p (rounded to p->dtype), malloc'd. */
void avk_test_inputs(const attnvk_problem *p, uint64_t seed, float **q, float **k, float **v);

/* Runs p on dev with opts, checks against the reference (every row), prints
 * one line "ok|FAIL <label> <shape> rel_l2 ..." and returns 1 on pass.
 * A case the device reports UNSUPPORTED prints "skip" and returns 1 when
 * allow_unsupported, else fails. */
int avk_test_run_case(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                      const char *label, uint64_t seed, int allow_unsupported);

/* The feature matrix every backend must pass (shapes, GQA, MQA, causal with
 * Nq < Nk, decode, odd lengths, D 32..256, both layouts). Returns the count;
 * dtype and layout of each case are filled from the arguments. */
int avk_test_feature_cases(attnvk_dtype dtype, attnvk_problem *out, const char **labels, int max);

/* KV-cache cases (#12): the shared table in core/cache_cases.h. */
int avk_test_cache_cases(attnvk_dtype dtype, avk_cache_case *out, int max);

/* Builds the case's cache (shuffled pages, garbage past each sequence's
 * pages, quantized on the host), runs it through attnvk_kernel_run_tensors
 * with O poisoned, and checks every row against the float64 reference on
 * the decoded K/V. Prints one line; returns 1 on pass (or on an allowed
 * UNSUPPORTED, printed as skip). */
int avk_test_run_cache_case(attnvk_device *dev, const avk_cache_case *c, const attnvk_kernel_options *opts,
                            uint64_t seed, int allow_unsupported);

/* Opens the first device of api; returns NULL (and prints why) when there is none. */
attnvk_device *avk_test_open_api(attnvk_context *ctx, attnvk_api api);

/* Standard ending: prints "N passed, M failed" and returns the exit code. */
int avk_test_finish(int passed, int failed);

#endif
