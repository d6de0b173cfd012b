/* Element offsets for the two layouts; one place so nobody re-derives them. */
#ifndef ATTNVK_LAYOUT_H
#define ATTNVK_LAYOUT_H

#include "attnvk/attnvk.h"

#include <stdint.h>

/* Offset of element 0 of row (b, head, s) in a tensor of `heads` heads, `seq` rows and rows of dim values. */
static inline size_t avk_row_offset_dim(const attnvk_problem *p, int b, int head, int s, int heads, int seq, int dim)
{
    size_t D = (size_t)dim;
    if (p->layout == ATTNVK_LAYOUT_BHSD) return (((size_t)b * heads + head) * seq + s) * D;
    return (((size_t)b * seq + s) * heads + head) * D;
}

/* The same for Q and K rows (head_dim values). */
static inline size_t avk_row_offset(const attnvk_problem *p, int b, int head, int s, int heads, int seq)
{
    return avk_row_offset_dim(p, b, head, s, heads, seq, p->head_dim);
}

/* Dv: V and O rows (attnvk_problem.head_dim_v, 0 meaning head_dim). */
static inline int avk_head_dim_v(const attnvk_problem *p) { return p->head_dim_v > 0 ? p->head_dim_v : p->head_dim; }

static inline size_t avk_q_offset(const attnvk_problem *p, int b, int h, int i)
{
    return avk_row_offset(p, b, h, i, p->heads, p->seq_q);
}

static inline size_t avk_kv_offset(const attnvk_problem *p, int b, int g, int j)
{
    return avk_row_offset(p, b, g, j, p->kv_heads, p->seq_kv);
}

/* V's row of key j (Dv values) and O's row of query i (Dv values). */
static inline size_t avk_v_offset(const attnvk_problem *p, int b, int g, int j)
{
    return avk_row_offset_dim(p, b, g, j, p->kv_heads, p->seq_kv, avk_head_dim_v(p));
}

static inline size_t avk_o_offset(const attnvk_problem *p, int b, int h, int i)
{
    return avk_row_offset_dim(p, b, h, i, p->heads, p->seq_q, avk_head_dim_v(p));
}

/* i' of query row i in a sequence of len keys (attnvk_causal_align). */
static inline long long avk_row_position(const attnvk_problem *p, int i, int len)
{
    return (p->align == ATTNVK_ALIGN_TOP_LEFT ? (long long)i : (long long)i + len - p->seq_q) + p->position_offset;
}

/* Keys [*lo, *hi) that query row i may see in a sequence of len keys: the
 * causal bound and the window's sides (attnvk_problem); empty: *lo == *hi. */
static inline void avk_visible_range(const attnvk_problem *p, int i, int len, int *lo, int *hi)
{
    const long long pos = avk_row_position(p, i, len);
    long long a = 0, b = len;
    if (p->causal && pos + 1 < b) b = pos + 1;
    if (p->window && p->window_right >= 0 && pos + p->window_right + 1 < b) b = pos + p->window_right + 1;
    if (p->window && p->window_left >= 0 && pos - p->window_left > a) a = pos - p->window_left;
    if (b < 0) b = 0;
    if (a > b) a = b;
    *lo = (int)a;
    *hi = (int)b;
}

/* Sequence b's key count: kv_lens[b] clamped to 0..Nk (what every kernel does), or Nk. */
static inline int avk_seq_len(const attnvk_problem *p, const int32_t *kv_lens, int b)
{
    if (!kv_lens) return p->seq_kv;
    int32_t n = kv_lens[b];
    return n < 0 ? 0 : (n > p->seq_kv ? p->seq_kv : (int)n);
}

#endif
