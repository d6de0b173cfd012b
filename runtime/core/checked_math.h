/* Overflow-checked products. Every count or size that user input can feed
 * (options, .npy shapes, problems handed to the public API) is multiplied here,
 * so an absurd shape becomes an error instead of a wrapped, plausible number. */
#ifndef ATTNVK_CHECKED_MATH_H
#define ATTNVK_CHECKED_MATH_H

#include <stdint.h>

/* *out = factors[0] * ... * factors[n-1] (1 when n == 0). Returns 1, or 0 with
 * *out untouched when a partial product leaves the int64 range. */
static inline int avk_checked_product(int64_t *out, int n, const int64_t *factors)
{
    int64_t product = 1;
    for (int i = 0; i < n; ++i)
        if (__builtin_mul_overflow(product, factors[i], &product)) return 0;
    *out = product;
    return 1;
}

#endif
