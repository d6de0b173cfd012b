/* Ring attention's merge of a block's partial (O, LSE) into a running
 * accumulator, on host memory: the CPU backend's merge and the core's
 * fallback for backends without one (the arithmetic of avk_merge_args). */
#ifndef ATTNVK_RING_MERGE_H
#define ATTNVK_RING_MERGE_H

#include "core/backend.h"

typedef struct avk_host_merge {
    const void *o_part;      /* dtype */
    const float *lse_part;
    float *o_acc, *lse_acc;
    void *o_out;             /* NULL, or dtype */
    attnvk_dtype dtype;
    int batch, heads, rows_per_head, dv;
    int first;
} avk_host_merge;

void avk_ring_merge_host(const avk_host_merge *m);

#endif
