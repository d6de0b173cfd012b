/* A fork-join loop over host threads: the float64 reference and the input
 * generators split their work with it. */
#ifndef ATTNVK_CORE_PARALLEL_H
#define ATTNVK_CORE_PARALLEL_H

#include <stddef.h>

/* Calls fn(ctx, begin, end) over [0, n) in at most avk_cpu_threads() slices
 * of at least min_items items (fewer threads for small jobs); every slice but
 * the last starts and ends on a multiple of align. The calling thread takes
 * slice 0; a slice whose thread cannot start runs inline. Returns when all
 * are done. */
void avk_parallel_for(size_t n, size_t min_items, size_t align, void (*fn)(void *ctx, size_t begin, size_t end),
                      void *ctx);

#endif
