/* A fork-join loop over a persistent pool of host threads: the float64
 * reference, the CPU kernels and the input generators split their work with it. */
#ifndef ATTNVK_CORE_PARALLEL_H
#define ATTNVK_CORE_PARALLEL_H

#include <stddef.h>

/* Calls fn(ctx, begin, end) over [0, n) in at most avk_cpu_threads() slices
 * of at least min_items items (fewer threads for small jobs); every slice but
 * the last starts and ends on a multiple of align. The calling thread and the
 * pool's workers (started on first use, avk_cpu_threads() - 1 of them, joined
 * at exit) claim the slices; returns when all are done. A call from inside a
 * slice (nested), or while another thread's call holds the pool, runs
 * fn(ctx, 0, n) inline on the calling thread: never a deadlock, only less
 * parallelism. */
void avk_parallel_for(size_t n, size_t min_items, size_t align, void (*fn)(void *ctx, size_t begin, size_t end),
                      void *ctx);

#endif
