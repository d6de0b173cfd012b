/* Sparse patterns (#20): block-sparse layouts and LongNet's dilated
 * attention, as attnvk.h defines them. The predicates every kernel's
 * visibility rules add to the contiguous ones (layout.h's
 * avk_visible_range), shared by the reference and the CPU kernel. */
#ifndef ATTNVK_SPARSE_H
#define ATTNVK_SPARSE_H

#include "attnvk/attnvk.h"

#include <stddef.h>
#include <stdint.h>

/* The rules attnvk_problem_validate applies to the two patterns: one-line errors. */
attnvk_status avk_sparse_validate(const attnvk_problem *p);

static inline int avk_layout_rows(const attnvk_problem *p) { return (p->seq_q + p->block_q - 1) / p->block_q; }
static inline int avk_layout_cols(const attnvk_problem *p) { return (p->seq_kv + p->block_k - 1) / p->block_k; }

/* The layout's blocks of query i of (b, h): one byte per key block. */
static inline const uint8_t *avk_layout_row(const attnvk_problem *p, const uint8_t *layout, int b, int h, int i)
{
    const size_t lb = p->layout_batch > 1 ? (size_t)b : 0, lh = p->layout_heads > 1 ? (size_t)h : 0;
    return layout + ((lb * (size_t)p->layout_heads + lh) * (size_t)avk_layout_rows(p) + (size_t)(i / p->block_q)) *
                        (size_t)avk_layout_cols(p);
}

/* Head h's dilation group, segment length, rate and offset. */
typedef struct avk_dilation {
    int segment, rate, offset;
} avk_dilation;

static inline avk_dilation avk_dilation_of(const attnvk_problem *p, int h)
{
    const int g = h / (p->heads / p->dilated_groups);
    const avk_dilation d = {p->dilated_segment[g], p->dilated_rate[g], g % p->dilated_rate[g]};
    return d;
}

static inline int avk_dilated_active(avk_dilation d, int pos) { return (pos % d.segment) % d.rate == d.offset; }

/* Narrows the keys [*lo, *hi) query i of head h may see to its dilation
 * segment; 0 when the query is inactive (it sees nothing). 1 without dilation. */
static inline int avk_sparse_row_range(const attnvk_problem *p, int h, int i, int *lo, int *hi)
{
    if (!p->dilated_groups) return 1;
    const avk_dilation d = avk_dilation_of(p, h);
    if (!avk_dilated_active(d, i)) {
        *hi = *lo;
        return 0;
    }
    const int s0 = i / d.segment * d.segment, s1 = s0 + d.segment;
    if (*lo < s0) *lo = s0;
    if (*hi > s1) *hi = s1;
    if (*hi < *lo) *hi = *lo;
    return 1;
}

/* Whether key j (inside the row's range) is visible under the patterns:
 * layout_row from avk_layout_row (NULL without a layout). */
static inline int avk_sparse_key_visible(const attnvk_problem *p, const uint8_t *layout_row, int h, int j)
{
    if (layout_row && !layout_row[j / p->block_k]) return 0;
    return !p->dilated_groups || avk_dilated_active(avk_dilation_of(p, h), j);
}

#endif
