#include "core/ring_plan.h"

int avk_ring_plan_make(avk_ring_plan *plan, int ranks, int seq, int zigzag)
{
    if (ranks < 1 || ranks > AVK_RING_MAX_RANKS) return 0;
    int chunks = zigzag ? 2 * ranks : ranks;
    if (seq < chunks) return 0;
    plan->ranks = ranks;
    plan->chunks = chunks;
    plan->zigzag = zigzag;
    plan->seq = seq;
    int base = seq / chunks, extra = seq % chunks;
    plan->begin[0] = 0;
    for (int c = 0; c < chunks; c++) plan->begin[c + 1] = plan->begin[c] + base + (c < extra);
    return 1;
}

int avk_ring_rank_chunks(const avk_ring_plan *plan, int rank, int out[2])
{
    out[0] = rank;
    if (!plan->zigzag) return 1;
    out[1] = 2 * plan->ranks - 1 - rank;
    return 2;
}

avk_ring_block_kind avk_ring_block(const avk_ring_plan *plan, int q_chunk, int k_chunk, int causal)
{
    (void)plan; /* chunks are in sequence order, so their indices order them */
    if (!causal || k_chunk < q_chunk) return AVK_RING_FULL;
    return k_chunk == q_chunk ? AVK_RING_DIAG : AVK_RING_SKIP;
}
