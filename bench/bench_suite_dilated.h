/* The dilated-attention suites (issue #20), one per sequence range:
 *   dilated         production, N 1K-16K (B·N = 48K tokens)
 *   dilated-medium  N 32K-128K (B = 1)
 *   dilated-long    N 256K-1M (B = 1)
 *   dilated-quick   N 256-512, small heads and segments: CI and a first look on a CPU
 * Every length and head dim (64, 128; H = 12, causal) runs dense flash attention
 * first, then LongNet's ladders (segments w·2^g, rates 2^g) whose longest
 * segment fits N; the dilated cases are named after their dense partner
 * ("...-causal" and "...-causal-dil2048_4096r1_2"). */
#ifndef ATTNVK_BENCH_SUITE_DILATED_H
#define ATTNVK_BENCH_SUITE_DILATED_H

#include "bench_record.h"

/* The suite's cases in dtype (BHSD) into *out (malloc'd; the caller frees): the count,
 * 0 for a name that is not a dilated suite, -1 when out of memory. */
int bench_dilated_cases(const char *suite, attnvk_dtype dtype, bench_case **out);

#endif
