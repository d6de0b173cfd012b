/* Ring attention's schedule (core/ring.c), pure arithmetic: how a sequence
 * is cut into chunks, which chunks each rank holds, and which (query chunk,
 * key chunk) blocks a step computes. */
#ifndef ATTNVK_RING_PLAN_H
#define ATTNVK_RING_PLAN_H

enum { AVK_RING_MAX_RANKS = 64, AVK_RING_MAX_CHUNKS = 2 * AVK_RING_MAX_RANKS };

typedef struct avk_ring_plan {
    int ranks;
    int chunks;  /* ranks, or 2 * ranks with zigzag */
    int zigzag;  /* rank r holds chunks r and 2 ranks - 1 - r */
    int seq;
    int begin[AVK_RING_MAX_CHUNKS + 1]; /* chunk c is tokens [begin[c], begin[c + 1]) */
} avk_ring_plan;

typedef enum avk_ring_block_kind {
    AVK_RING_SKIP = 0, /* no key of the chunk is visible to any query of the other */
    AVK_RING_FULL,     /* every key visible to every query: no causal or window bound inside */
    AVK_RING_BOUNDED,  /* the causal bound or the window cuts through it */
} avk_ring_block_kind;

/* The problem's visibility rules that decide a block's kind. */
typedef struct avk_ring_rules {
    int causal;
    int window, window_left, window_right; /* as attnvk_problem's */
} avk_ring_rules;

/* Cuts seq tokens for ranks ranks (zigzag or not); 0 when seq < chunks or
 * ranks is outside 1..AVK_RING_MAX_RANKS. The first seq % chunks chunks get
 * one token more. */
int avk_ring_plan_make(avk_ring_plan *plan, int ranks, int seq, int zigzag);
/* The chunks rank holds, in its order; returns 1 or 2. */
int avk_ring_rank_chunks(const avk_ring_plan *plan, int rank, int out[2]);
static inline int avk_ring_chunk_len(const avk_ring_plan *plan, int c) { return plan->begin[c + 1] - plan->begin[c]; }
/* Whose K/V chunks rank holds at step s: they started on rank (rank - s) mod ranks. */
static inline int avk_ring_source(const avk_ring_plan *plan, int rank, int step)
{
    return ((rank - step) % plan->ranks + plan->ranks) % plan->ranks;
}
/* Query chunk q_chunk's rows sit at i' = row + (its start - k_chunk's start)
 * among k_chunk's keys (the block's position offset). */
static inline int avk_ring_offset(const avk_ring_plan *plan, int q_chunk, int k_chunk)
{
    return plan->begin[q_chunk] - plan->begin[k_chunk];
}
avk_ring_block_kind avk_ring_block(const avk_ring_plan *plan, int q_chunk, int k_chunk, const avk_ring_rules *rules);

#endif
