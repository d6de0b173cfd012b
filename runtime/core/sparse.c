/* Sparse patterns' rules and their exact FLOP counts (sparse.h). */
#include "core/sparse.h"

#include "core/checked_math.h"
#include "core/error.h"
#include "core/layout.h"

#include <stdint.h>

static attnvk_status validate_layout(const attnvk_problem *p)
{
    if (p->block_q < 1 || p->block_k < 1)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "block size must be at least 1x1, got %dx%d", p->block_q,
                        p->block_k);
    if (p->layout_batch != 1 && p->layout_batch != p->batch)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "block layout batch dimension %d does not broadcast to B=%d (1 or B)",
                        p->layout_batch, p->batch);
    if (p->layout_heads != 1 && p->layout_heads != p->heads)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "block layout head dimension %d does not broadcast to H=%d (1 or H)",
                        p->layout_heads, p->heads);
    int64_t bytes;
    const int64_t dims[4] = {p->layout_batch, p->layout_heads, avk_layout_rows(p), avk_layout_cols(p)};
    if (!avk_checked_product(&bytes, 4, dims) || bytes > INT32_MAX)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "block layout too large: at most %d blocks", INT32_MAX);
    return ATTNVK_OK;
}

static attnvk_status validate_dilation(const attnvk_problem *p)
{
    const int g = p->dilated_groups;
    if (g < 0 || g > ATTNVK_MAX_DILATED_GROUPS)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "dilated attention takes 1..%d groups, got %d",
                        ATTNVK_MAX_DILATED_GROUPS, g);
    if (p->heads % g)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%d dilated groups do not divide H=%d heads into equal groups", g,
                        p->heads);
    for (int i = 0; i < g; ++i) {
        if (p->dilated_segment[i] < 1)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "dilated segment %d is %d: segments must be >= 1", i,
                            p->dilated_segment[i]);
        if (p->dilated_rate[i] < 1)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "dilated rate %d is %d: rates must be >= 1", i, p->dilated_rate[i]);
    }
    if (p->seq_q != p->seq_kv)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "dilated attention needs Nq = Nk (got %d and %d)", p->seq_q,
                        p->seq_kv);
    const char *other = p->block_sparse ? "a block layout"
                        : p->window ? "a window"
                        : p->alibi ? "ALiBi"
                        : p->mask ? "a mask"
                        : p->sinks ? "sinks"
                        : p->position_offset ? "a position offset"
                        : p->page_size > 0 || p->ragged ? "a paged or ragged cache"
                        : p->kv_format != ATTNVK_KV_DTYPE ? "a quantized cache"
                                                          : NULL;
    return other ? avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "dilated attention takes causal, softcap and GQA, not %s", other)
                 : ATTNVK_OK;
}

attnvk_status avk_sparse_validate(const attnvk_problem *p)
{
    attnvk_status s = p->block_sparse ? validate_layout(p) : ATTNVK_OK;
    return s == ATTNVK_OK && p->dilated_groups ? validate_dilation(p) : s;
}

size_t attnvk_block_layout_bytes(const attnvk_problem *p)
{
    if (!p || !p->block_sparse || p->block_q < 1 || p->block_k < 1) return 0;
    return (size_t)p->layout_batch * p->layout_heads * avk_layout_rows(p) * avk_layout_cols(p);
}

/* Visible pairs of head h of sequence b (len keys), the patterns' rules included. */
static double head_pairs(const attnvk_problem *p, const attnvk_host_inputs *in, int b, int h, int len)
{
    double pairs = 0;
    for (int i = 0; i < p->seq_q; ++i) {
        int lo, hi;
        avk_visible_range(p, i, len, &lo, &hi);
        if (!avk_sparse_row_range(p, h, i, &lo, &hi)) continue;
        const uint8_t *row = p->block_sparse && in && in->block_layout ? avk_layout_row(p, in->block_layout, b, h, i) : NULL;
        if (!row && !p->dilated_groups) {
            pairs += hi - lo;
            continue;
        }
        for (int j = lo; j < hi; ++j) pairs += avk_sparse_key_visible(p, row, h, j);
    }
    return pairs;
}

/* Dilated attention's visible pairs in closed form, a segment at a time: a
 * segment of L positions has n = ceil((L - o) / r) active ones, which see
 * n^2 pairs (n (n + 1) / 2 causal). O(H N / s), not O(H N s / r). */
static double dilated_pairs(const attnvk_problem *p)
{
    double pairs = 0;
    const int per_group = p->heads / p->dilated_groups;
    for (int g = 0; g < p->dilated_groups; ++g) {
        const avk_dilation d = avk_dilation_of(p, g * per_group);
        double group = 0;
        for (long long start = 0; start < p->seq_q; start += d.segment) {
            const long long len = p->seq_q - start < d.segment ? p->seq_q - start : d.segment;
            const double n = len > d.offset ? (double)((len - d.offset - 1) / d.rate + 1) : 0.0;
            group += p->causal ? n * (n + 1) / 2 : n * n;
        }
        pairs += group * per_group;
    }
    return pairs * p->batch;
}

double attnvk_flops_inputs(const attnvk_problem *p, const attnvk_host_inputs *in)
{
    if (!p) return 0;
    const double per_pair = 2.0 * ((double)p->head_dim + avk_head_dim_v(p));
    if (p->dilated_groups) return per_pair * dilated_pairs(p); /* no layout, lengths or window beside it */
    const int per_head = (p->block_sparse && in && in->block_layout && p->layout_heads > 1) || p->dilated_groups;
    const int per_batch = (p->block_sparse && in && in->block_layout && p->layout_batch > 1) || (in && in->kv_lens);
    double pairs = 0;
    for (int b = 0; b < (per_batch ? p->batch : 1); ++b) {
        const int len = in && in->kv_lens ? avk_seq_len(p, in->kv_lens, b) : p->seq_kv;
        for (int h = 0; h < (per_head ? p->heads : 1); ++h) pairs += head_pairs(p, in, b, h, len);
    }
    return per_pair * pairs * (per_batch ? 1 : p->batch) * (per_head ? 1 : p->heads);
}
