/* Element offsets for the two layouts; one place so nobody re-derives them. */
#ifndef ATTNVK_LAYOUT_H
#define ATTNVK_LAYOUT_H

#include "attnvk/attnvk.h"

#include <stdint.h>

/* Offset of element 0 of row (b, head, s) in a tensor of `heads` heads and `seq` rows. */
static inline size_t avk_row_offset(const attnvk_problem *p, int b, int head, int s, int heads, int seq)
{
    size_t D = (size_t)p->head_dim;
    if (p->layout == ATTNVK_LAYOUT_BHSD) return (((size_t)b * heads + head) * seq + s) * D;
    return (((size_t)b * seq + s) * heads + head) * D;
}

static inline size_t avk_q_offset(const attnvk_problem *p, int b, int h, int i)
{
    return avk_row_offset(p, b, h, i, p->heads, p->seq_q);
}

static inline size_t avk_kv_offset(const attnvk_problem *p, int b, int g, int j)
{
    return avk_row_offset(p, b, g, j, p->kv_heads, p->seq_kv);
}

/* Number of keys query row i may see in a sequence of len keys (bottom-right causal), 0..len. */
static inline int avk_visible_keys_of(const attnvk_problem *p, int i, int len)
{
    if (!p->causal) return len;
    long long seen = (long long)i + len - p->seq_q + 1;
    return seen < 0 ? 0 : (seen > len ? len : (int)seen);
}

/* Number of keys query row i may see (bottom-right causal), 0..Nk. */
static inline int avk_visible_keys(const attnvk_problem *p, int i)
{
    return avk_visible_keys_of(p, i, p->seq_kv);
}

/* Sequence b's key count: kv_lens[b] clamped to 0..Nk (what every kernel does), or Nk. */
static inline int avk_seq_len(const attnvk_problem *p, const int32_t *kv_lens, int b)
{
    if (!kv_lens) return p->seq_kv;
    int32_t n = kv_lens[b];
    return n < 0 ? 0 : (n > p->seq_kv ? p->seq_kv : (int)n);
}

#endif
