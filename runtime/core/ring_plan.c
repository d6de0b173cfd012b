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

avk_ring_block_kind avk_ring_block(const avk_ring_plan *plan, int q_chunk, int k_chunk, const avk_ring_rules *rules)
{
    /* in the block's own indices: rows at i' = d .. d + lq - 1, keys 0 .. lk - 1 */
    const long long d = avk_ring_offset(plan, q_chunk, k_chunk);
    const long long lq = avk_ring_chunk_len(plan, q_chunk), lk = avk_ring_chunk_len(plan, k_chunk);
    const long long first = d, last = d + lq - 1;
    const int left = rules->window ? rules->window_left : -1, right = rules->window ? rules->window_right : -1;
    /* the keys some row sees: [first - left, last + right], and none past last when causal */
    long long lo = left >= 0 ? first - left : 0, hi = lk - 1;
    if (right >= 0 && last + right < hi) hi = last + right;
    if (rules->causal && last < hi) hi = last;
    if (lo > lk - 1 || hi < 0 || lo > hi) return AVK_RING_SKIP;
    /* every row sees every key: the last key within each row's reach, the first too */
    const int all_right = (!rules->causal || first >= lk - 1) && (right < 0 || first + right >= lk - 1);
    const int all_left = left < 0 || last - left <= 0;
    return all_right && all_left ? AVK_RING_FULL : AVK_RING_BOUNDED;
}
