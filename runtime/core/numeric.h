/* Seeded inputs in a dtype, generated once: what the bench and the tests upload. */
#ifndef ATTNVK_CORE_NUMERIC_H
#define ATTNVK_CORE_NUMERIC_H

#include "attnvk/attnvk.h"

#include <stddef.h>
#include <stdint.h>

/* attnvk_fill_random(x, n, seed) then attnvk_round_to_dtype(d, x, n), and
 * when packed is not NULL attnvk_pack(d, x, packed, n), in one pass over the
 * host's threads. The same values for a seed on any number of threads. */
void avk_fill_random_dtype(attnvk_dtype d, float *x, void *packed, size_t n, uint64_t seed);

#endif
