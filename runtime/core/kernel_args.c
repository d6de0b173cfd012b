/* Fills the kernel contract's arguments from a problem (see kernel_args.h). */
#include "core/kernel_args.h"
#include "core/error.h"
#include "core/kv_cache.h"
#include "core/sparse.h"
#include "core/split_plan.h"

#include <stdlib.h>
#include <string.h>

int avk_gqa_pack(const attnvk_problem *p, int q_count, int max_rows)
{
    const int group = p->heads / p->kv_heads;
    /* patterns run a head per CTA: its rows share one head's layout or dilation */
    if (group <= 1 || !avk_is_decode(p) || p->block_sparse || p->dilated_groups) return 1;
    int pack = group;
    /* the largest divisor of group whose rows fit the cap (never below 1) */
    while (max_rows > 0 && pack > 1 && (int64_t)pack * q_count > max_rows) {
        do --pack;
        while (group % pack);
    }
    return pack;
}

void avk_kernel_args_fill(avk_kernel_args *a, const attnvk_problem *p, int q_begin, int q_count, int pack,
                          int write_lse)
{
    memset(a, 0, sizeof *a);
    const uint32_t D = (uint32_t)p->head_dim;
    a->batch = (U32)p->batch;
    a->heads = (U32)p->heads;
    a->kv_heads = (U32)p->kv_heads;
    a->group = (U32)(p->heads / p->kv_heads);
    a->pack = (U32)pack;
    a->seq_q = (U32)p->seq_q;
    a->seq_kv = (U32)p->seq_kv;
    a->q_begin = (U32)q_begin;
    a->q_count = (U32)q_count;
    if (p->layout == ATTNVK_LAYOUT_BHSD) {
        a->q_sb = (U32)p->heads * p->seq_q * D, a->q_sh = (U32)p->seq_q * D, a->q_ss = D;
        a->kv_sb = (U32)p->kv_heads * p->seq_kv, a->kv_sh = (U32)p->seq_kv, a->kv_ss = 1;
    } else {
        a->q_sb = (U32)p->seq_q * p->heads * D, a->q_sh = D, a->q_ss = (U32)p->heads * D;
        a->kv_sb = (U32)p->seq_kv * p->kv_heads, a->kv_sh = 1, a->kv_ss = (U32)p->kv_heads;
    }
    a->page_size = (U32)p->page_size;
    a->max_pages = (U32)p->max_pages;
    a->num_pages = (U32)p->num_pages;
    a->flags = (p->causal ? AVK_FLAG_CAUSAL : 0u) | (write_lse ? AVK_FLAG_WRITE_LSE : 0u) |
               (avk_problem_has_seq_lens(p) ? AVK_FLAG_SEQ_LENS : 0u);
    a->splits = 1;
    a->split_keys = (U32)p->seq_kv;
    a->scale_log2 = attnvk_problem_scale(p) * 1.4426950408889634f;
    const unsigned f = avk_problem_features(p);
    a->flags |= ((f & ATTNVK_FEATURE_TOP_LEFT) ? AVK_FLAG_TOP_LEFT : 0u) |
                ((f & ATTNVK_FEATURE_WINDOW) ? AVK_FLAG_WINDOW : 0u) | (p->alibi ? AVK_FLAG_ALIBI : 0u) |
                (p->sinks ? AVK_FLAG_SINKS : 0u) | (p->mask ? AVK_FLAG_MASK : 0u) |
                (p->mask && p->mask_dtype == ATTNVK_F16 ? AVK_FLAG_MASK_F16 : 0u);
    a->window_left = (f & ATTNVK_FEATURE_WINDOW) ? p->window_left : -1;
    a->window_right = (f & ATTNVK_FEATURE_WINDOW) ? p->window_right : -1;
    a->softcap = p->softcap;
    a->pos_offset = (f & ATTNVK_FEATURE_POSITION_OFFSET) ? p->position_offset : 0;
    if (p->block_sparse) { /* the layout takes the mask's binding and strides (core refuses both at once) */
        const uint32_t rows = (uint32_t)((p->seq_q + p->block_q - 1) / p->block_q);
        const uint32_t cols = (uint32_t)((p->seq_kv + p->block_k - 1) / p->block_k);
        a->flags |= AVK_FLAG_BLOCKS;
        a->pattern = (U32)p->block_q | (U32)p->block_k << 16;
        a->mask_sb = p->layout_batch > 1 ? rows * cols * (uint32_t)p->layout_heads : 0u;
        a->mask_sh = p->layout_heads > 1 ? rows * cols : 0u;
    }
    if (p->dilated_groups) {
        a->flags |= AVK_FLAG_DILATED;
        a->pattern = (U32)p->dilated_groups;
    }
    if (p->mask) {
        const uint32_t pair = (uint32_t)p->seq_q * (uint32_t)p->seq_kv;
        a->mask_sb = p->mask_batch > 1 ? pair * (uint32_t)p->mask_heads : 0u;
        a->mask_sh = p->mask_heads > 1 ? pair : 0u;
        /* a mask the heads share: a row block's heads walk together, its mask rows read from DRAM
         * once (ATTNVK_MASK_HEADS_FIRST=0: the plain walk). H100 (s42a, D=128 8k causal, B=2 H=16,
         * random mask, TFLOP/s): Vulkan 127.1 -> 132.4, OpenCL 117.0 -> 119.2 */
        const char *heads_first = getenv("ATTNVK_MASK_HEADS_FIRST");
        if (a->mask_sh == 0u && !(heads_first && !strcmp(heads_first, "0"))) a->flags |= AVK_FLAG_HEADS_FIRST;
    }
}

void avk_kernel_args_dilated_view(avk_kernel_args *a, const attnvk_problem *p)
{
    if (!p->dilated_groups) return;
    /* Nq = Nk, so bottom-right and top-left agree; a view's rows and keys both count from 0 */
    a->flags = (a->flags & ~(U32)AVK_FLAG_DILATED) | AVK_FLAG_DILATED_VIEW | AVK_FLAG_TOP_LEFT;
}

/* Rows of the largest residue class of a segment of group d: ceil(min(s, N) / r). */
static int64_t view_rows(avk_dilation d, int n)
{
    const int64_t span = d.segment < n ? d.segment : n;
    return (span + d.rate - 1) / d.rate;
}

int64_t avk_dilated_view_blocks(const attnvk_problem *p, int br)
{
    int64_t most = 0;
    const int per_group = p->heads / p->dilated_groups;
    for (int g = 0; g < p->dilated_groups; ++g) {
        const avk_dilation d = avk_dilation_of(p, g * per_group);
        const int64_t segments = ((int64_t)p->seq_q + d.segment - 1) / d.segment;
        const int64_t blocks = segments * d.rate * ((view_rows(d, p->seq_q) + br - 1) / br);
        if (blocks > most) most = blocks;
    }
    return most;
}

attnvk_status avk_dilated_view_rows(const avk_kernel_args *a, const attnvk_problem *p, int q_begin, int q_count)
{
    if (!(a->flags & AVK_FLAG_DILATED_VIEW) || (q_begin == 0 && q_count == p->seq_q)) return ATTNVK_OK;
    return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "dilated attention runs all %d query rows at once (asked %d+%d)",
                    p->seq_q, q_begin, q_count);
}

int64_t avk_grid_row_blocks(const avk_kernel_args *a, const attnvk_problem *p, int q_count, int br)
{
    return (a->flags & AVK_FLAG_DILATED_VIEW) ? avk_dilated_view_blocks(p, br) : avk_row_blocks((int)a->pack, q_count, br);
}

/* The most keys a view row sees: a segment's residue class. */
static int64_t dilated_view_keys(const attnvk_problem *p)
{
    int64_t most = 0;
    const int per_group = p->heads / p->dilated_groups;
    for (int g = 0; g < p->dilated_groups; ++g) {
        const int64_t keys = view_rows(avk_dilation_of(p, g * per_group), p->seq_q);
        if (keys > most) most = keys;
    }
    return most;
}

int64_t avk_kernel_args_span(const avk_kernel_args *a, int br, int tile)
{
    const int64_t seq_kv = a->seq_kv, seq_q = a->seq_q, left = a->window_left;
    if (!(a->flags & AVK_FLAG_WINDOW) || left < 0) return seq_kv;
    const int64_t pack = a->pack > 0 ? a->pack : 1, t = tile > 0 ? tile : 1;
    /* rows [r0, r0 + br) hold queries r0 / pack .. (r0 + br - 1) / pack: at most br / pack + 2 */
    const int64_t block_queries = br / pack + 2, queries = seq_q < block_queries ? seq_q : block_queries;
    /* keys past the block's last query: none when causal, window_right, else up to the end */
    const int64_t right = (a->flags & AVK_FLAG_CAUSAL) ? 0 : a->window_right >= 0 ? a->window_right : seq_kv;
    /* the first row sees from i' - left, the last up to i'_last + right (inclusive) */
    int64_t span = queries + left + right + t;
    /* bottom-right rows end at the sequence's end: i' <= len - 1, i'_first >= len - Nq */
    if (!(a->flags & AVK_FLAG_TOP_LEFT) && seq_q + left + t < span) span = seq_q + left + t;
    return span < seq_kv ? span : seq_kv;
}

int avk_kernel_args_split(avk_kernel_args *a, const attnvk_problem *p, int br, int bc, int compute_units,
                          int resident, int whole_waves, int requested)
{
    const int view = (a->flags & AVK_FLAG_DILATED_VIEW) != 0;
    const int64_t units = (int64_t)p->batch * (p->heads / (int)a->pack) * avk_grid_row_blocks(a, p, (int)a->q_count, br);
    avk_split_request r = {.kv_len = view ? dilated_view_keys(p) : avk_kernel_args_span(a, br, bc), .kv_tile = bc, .workgroups = units,
                           .compute_units = compute_units, .resident = resident, .whole_waves = whole_waves,
                           .requested = requested, .decode = avk_is_decode(p)};
    avk_split_plan plan = avk_plan_split_kv(&r);
    a->splits = (U32)plan.splits;
    a->split_keys = (U32)((int64_t)plan.tiles_per_split * bc);
    if (plan.splits > 1) a->flags |= AVK_FLAG_SPLIT;
    else a->split_keys = (U32)p->seq_kv;
    return plan.splits;
}
