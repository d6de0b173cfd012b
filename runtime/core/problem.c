/* Shape rules shared by every backend, the CLI and the bench. */
#include "attnvk/attnvk.h"
#include "core/checked_math.h"
#include "core/error.h"
#include "core/kv_cache.h"
#include "core/layout.h"
#include "core/problem.h"
#include "core/q_format.h"
#include "core/sparse.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* 2^30: leaves room for i + Nk and j + Bc in int32 (tiles are at most 4096). */
enum { AVK_MAX_SEQ = 1 << 30 };

/* Dk/Dv pairs with Dv != Dk: DeepSeek MLA prefill and absorbed decode. */
static const struct { int dk, dv; } unequal_head_dims[] = {{192, 128}, {576, 512}};

/* V and O's head dim: equal to D (any D the shape rules take), or one of the
 * pairs above, with a contiguous cache in the problem's dtype. */
static attnvk_status avk_problem_validate_head_dim_v(const attnvk_problem *p)
{
    if (p->head_dim_v < 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "V head dim must be > 0 (0: = K's %d), got %d", p->head_dim,
                        p->head_dim_v);
    const int dv = avk_head_dim_v(p);
    if (dv == p->head_dim) return ATTNVK_OK;
    int known = 0;
    for (size_t i = 0; i < sizeof unequal_head_dims / sizeof *unequal_head_dims; ++i)
        known |= unequal_head_dims[i].dk == p->head_dim && unequal_head_dims[i].dv == dv;
    if (!known)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "unsupported head dims Dk=%d (Q, K) and Dv=%d (V, O): unequal pairs are 192/128 and 576/512",
                        p->head_dim, dv);
    if (p->kv_format != ATTNVK_KV_DTYPE || p->page_size > 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "head dims Dk=%d, Dv=%d need a contiguous K/V cache in the problem's dtype (not paged or "
                        "quantized)",
                        p->head_dim, dv);
    return ATTNVK_OK;
}

/* The score modifications and visibility bounds (attnvk.h): one-line errors. */
static attnvk_status avk_problem_validate_scores(const attnvk_problem *p)
{
    if (p->align != ATTNVK_ALIGN_BOTTOM_RIGHT && p->align != ATTNVK_ALIGN_TOP_LEFT)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown causal alignment %d (bottom-right or top-left)",
                        (int)p->align);
    if (p->window && (p->window_left < -1 || p->window_right < -1))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "window sides must be >= -1 (-1: unbounded), got %d,%d",
                        p->window_left, p->window_right);
    if (!isfinite(p->softcap) || p->softcap < 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "softcap must be finite and >= 0 (0: off)");
    if (p->position_offset <= -(1 << 30) || p->position_offset >= (1 << 30))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "position offset %d is outside -2^30..2^30", p->position_offset);
    if (!p->mask) return ATTNVK_OK;
    if (p->mask_batch != 1 && p->mask_batch != p->batch)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "mask batch dimension %d does not broadcast to B=%d (1 or B)",
                        p->mask_batch, p->batch);
    if (p->mask_heads != 1 && p->mask_heads != p->heads)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "mask head dimension %d does not broadcast to H=%d (1 or H)",
                        p->mask_heads, p->heads);
    if (p->mask_dtype != ATTNVK_F32 && p->mask_dtype != ATTNVK_F16)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "mask dtype must be f32 or f16");
    int64_t elems;
    const int64_t dims[4] = {p->mask_batch, p->mask_heads, p->seq_q, p->seq_kv};
    if (!avk_checked_product(&elems, 4, dims) || elems > INT32_MAX)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "mask too large: %d*%d*%d*%d must be at most %d elements",
                        p->mask_batch, p->mask_heads, p->seq_q, p->seq_kv, INT32_MAX);
    return ATTNVK_OK;
}

void attnvk_problem_init(attnvk_problem *p)
{
    if (p) memset(p, 0, sizeof *p); /* every default is zero (attnvk.h) */
}

attnvk_status avk_problem_validate_rules(const attnvk_problem *p)
{
    if (!p) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "no problem given");
    if (p->batch < 1) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "batch must be >= 1 (got %d)", p->batch);
    if (p->heads < 1) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "heads must be >= 1 (got %d)", p->heads);
    if (p->kv_heads < 1) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "kv heads must be >= 1 (got %d)", p->kv_heads);
    if (p->heads % p->kv_heads)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "heads (%d) is not a multiple of kv heads (%d)", p->heads,
                        p->kv_heads);
    if (p->seq_q < 1) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "query length must be >= 1 (got %d)", p->seq_q);
    if (p->seq_kv < 1) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "key length must be >= 1 (got %d)", p->seq_kv);
    if (p->head_dim < 1 || p->head_dim > 1024)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "head dim must be in 1..1024 (got %d)", p->head_dim);
    if (p->dtype != ATTNVK_F32 && p->dtype != ATTNVK_F16 && p->dtype != ATTNVK_BF16)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown dtype %d", (int)p->dtype);
    if (p->layout != ATTNVK_LAYOUT_BHSD && p->layout != ATTNVK_LAYOUT_BSHD)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown layout %d", (int)p->layout);
    if (!isfinite(p->scale) || p->scale < 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "scale must be finite and >= 0 (0 = 1/sqrt(D))");
    /* Kernels index with 32-bit ints: a row index i + Nk - Nq (causal) and a tile end j + Bc
     * must not wrap, nor (avk_problem_validate_kernel_limits) any per-tensor element offset. */
    if (p->seq_q > AVK_MAX_SEQ || p->seq_kv > AVK_MAX_SEQ)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "sequence lengths must be at most %d (got Nq %d, Nk %d)",
                        AVK_MAX_SEQ, p->seq_q, p->seq_kv);
    attnvk_status s = avk_problem_validate_scores(p);
    if (s == ATTNVK_OK) s = avk_problem_validate_head_dim_v(p);
    if (s == ATTNVK_OK) s = avk_sparse_validate(p);
    if (s == ATTNVK_OK) s = avk_kv_cache_validate(p);
    return s == ATTNVK_OK ? avk_q_format_validate(p) : s; /* after the cache: it names the kv format */
}

attnvk_status avk_problem_validate_kernel_limits(const attnvk_problem *p)
{
    /* Dv > Dk only with Dk = Dv (the pairs above have Dv < Dk): D bounds every tensor */
    int64_t q_elems, kv_elems;
    const int64_t q_dims[4] = {p->batch, p->heads, p->seq_q, p->head_dim};
    const int64_t kv_dims[4] = {p->batch, p->kv_heads, p->seq_kv, p->head_dim};
    if (!avk_checked_product(&q_elems, 4, q_dims) || !avk_checked_product(&kv_elems, 4, kv_dims) ||
        q_elems > INT32_MAX || kv_elems > INT32_MAX)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "tensor too large: B*H*Nq*D = %d*%d*%d*%d and B*Hkv*Nk*D = %d*%d*%d*%d must each be at most "
                        "%d elements",
                        p->batch, p->heads, p->seq_q, p->head_dim, p->batch, p->kv_heads, p->seq_kv, p->head_dim,
                        INT32_MAX);
    return ATTNVK_OK;
}

attnvk_status attnvk_problem_validate(const attnvk_problem *p)
{
    attnvk_status s = avk_problem_validate_rules(p);
    return s == ATTNVK_OK ? avk_problem_validate_kernel_limits(p) : s;
}

float attnvk_problem_scale(const attnvk_problem *p)
{
    return p->scale > 0 ? p->scale : (float)(1.0 / sqrt((double)p->head_dim));
}

int attnvk_problem_head_dim_v(const attnvk_problem *p) { return avk_head_dim_v(p); }

size_t attnvk_q_elements(const attnvk_problem *p)
{
    return (size_t)p->batch * p->heads * p->seq_q * p->head_dim;
}

size_t attnvk_kv_elements(const attnvk_problem *p)
{
    return (size_t)p->batch * p->kv_heads * p->seq_kv * p->head_dim;
}

size_t attnvk_v_elements(const attnvk_problem *p)
{
    return (size_t)p->batch * p->kv_heads * p->seq_kv * avk_head_dim_v(p);
}

size_t attnvk_o_elements(const attnvk_problem *p)
{
    return (size_t)p->batch * p->heads * p->seq_q * avk_head_dim_v(p);
}

double attnvk_problem_flops(const attnvk_problem *p)
{
    double per_pair = 2.0 * ((double)p->head_dim + avk_head_dim_v(p)); /* Q.K, then P.V */
    double bh = (double)p->batch * p->heads;
    double nq = p->seq_q, nk = p->seq_kv;
    if (p->dilated_groups) return attnvk_flops_inputs(p, NULL); /* exact: every pair is known without inputs */
    const int windowed = (avk_problem_features(p) & ATTNVK_FEATURE_WINDOW) != 0;
    if (!p->causal && !windowed) return per_pair * bh * nq * nk;
    if (!windowed && p->seq_q == p->seq_kv) return per_pair * bh * nq * nk / 2.0; /* FlashAttention convention */
    /* visible pairs, row by row (causal bound and window) */
    double pairs = 0;
    for (int i = 0; i < p->seq_q; ++i) {
        int lo, hi;
        avk_visible_range(p, i, p->seq_kv, &lo, &hi);
        pairs += hi - lo;
    }
    return per_pair * bh * pairs;
}

size_t attnvk_dtype_size(attnvk_dtype d) { return d == ATTNVK_F32 ? 4 : 2; }
