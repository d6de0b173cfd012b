/* KV caches on the host: the quantized formats (encode is what attnvk
 * uploads, decode is exactly what the kernels read), paging rules, table
 * checks, and the gather that turns any cache into the reference's f32. */
#include "core/kv_cache.h"
#include "core/checked_math.h"
#include "core/error.h"
#include "core/layout.h"
#include "contract/kernel_flags.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const char *const kv_format_names[ATTNVK_KV_FORMAT_COUNT] = {"dtype", "q8_0", "q4_0", "fp8"};

const char *attnvk_kv_format_name(attnvk_kv_format f)
{
    return (unsigned)f < ATTNVK_KV_FORMAT_COUNT ? kv_format_names[f] : "?";
}

int attnvk_kv_format_from_name(const char *name, attnvk_kv_format *out)
{
    for (int f = 0; name && f < ATTNVK_KV_FORMAT_COUNT; ++f)
        if (strcmp(name, kv_format_names[f]) == 0) {
            *out = (attnvk_kv_format)f;
            return 1;
        }
    return 0;
}

static size_t row_bytes(attnvk_kv_format f, attnvk_dtype dtype, int D)
{
    switch (f) {
    case ATTNVK_KV_Q8_0: return (size_t)D / AVK_QBLOCK * AVK_Q8_0_BLOCK_BYTES;
    case ATTNVK_KV_Q4_0: return (size_t)D / AVK_QBLOCK * AVK_Q4_0_BLOCK_BYTES;
    case ATTNVK_KV_FP8: return (size_t)D;
    default: return (size_t)D * attnvk_dtype_size(dtype);
    }
}

size_t attnvk_kv_row_bytes(const attnvk_problem *p) { return row_bytes(p->kv_format, p->dtype, p->head_dim); }

size_t attnvk_kv_rows(const attnvk_problem *p)
{
    if (p->page_size > 0) return (size_t)p->num_pages * p->page_size * p->kv_heads;
    return (size_t)p->batch * p->kv_heads * p->seq_kv;
}

size_t attnvk_kv_bytes(const attnvk_problem *p) { return attnvk_kv_rows(p) * attnvk_kv_row_bytes(p); }

size_t attnvk_v_bytes(const attnvk_problem *p)
{
    return attnvk_kv_rows(p) * row_bytes(p->kv_format, p->dtype, avk_head_dim_v(p));
}

attnvk_status avk_kv_cache_validate(const attnvk_problem *p)
{
    if ((unsigned)p->kv_format >= ATTNVK_KV_FORMAT_COUNT)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown kv format %d (known: dtype, q8_0, q4_0, fp8)",
                        (int)p->kv_format);
    if ((p->kv_format == ATTNVK_KV_Q8_0 || p->kv_format == ATTNVK_KV_Q4_0) && p->head_dim % AVK_QBLOCK)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "kv format %s needs a head dim that is a multiple of %d (got %d)",
                        attnvk_kv_format_name(p->kv_format), AVK_QBLOCK, p->head_dim);
    if (p->ragged != 0 && p->ragged != 1)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ragged must be 0 or 1 (got %d)", p->ragged);
    if (p->page_size == 0) {
        if (p->num_pages || p->max_pages)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "num_pages and max_pages apply to paged caches only (page_size is 0)");
        return ATTNVK_OK;
    }
    if (p->page_size < 1 || p->page_size > AVK_MAX_PAGE_SIZE)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "page size must be in 1..%d (got %d)", AVK_MAX_PAGE_SIZE,
                        p->page_size);
    if (p->num_pages < 1 || p->max_pages < 1)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "a paged cache needs num_pages >= 1 and max_pages >= 1 (got %d, %d)",
                        p->num_pages, p->max_pages);
    if ((int64_t)p->max_pages * p->page_size < p->seq_kv)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "key length %d exceeds max_pages x page_size = %d x %d", p->seq_kv, p->max_pages,
                        p->page_size);
    int64_t elems, table;
    const int64_t dims[4] = {p->num_pages, p->page_size, p->kv_heads, p->head_dim};
    const int64_t tdims[2] = {p->batch, p->max_pages};
    if (!avk_checked_product(&elems, 4, dims) || elems > INT32_MAX || !avk_checked_product(&table, 2, tdims) ||
        table > INT32_MAX)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "paged cache too large: pages*page_size*Hkv*D = %d*%d*%d*%d and B*max_pages must each be at "
                        "most %d",
                        p->num_pages, p->page_size, p->kv_heads, p->head_dim, INT32_MAX);
    return ATTNVK_OK;
}

unsigned avk_problem_features(const attnvk_problem *p)
{
    unsigned f = 0;
    if (p->page_size > 0) f |= ATTNVK_FEATURE_PAGED;
    else if (p->ragged) f |= ATTNVK_FEATURE_RAGGED;
    if (p->kv_format == ATTNVK_KV_Q8_0) f |= ATTNVK_FEATURE_KV_Q8_0;
    if (p->kv_format == ATTNVK_KV_Q4_0) f |= ATTNVK_FEATURE_KV_Q4_0;
    if (p->kv_format == ATTNVK_KV_FP8) f |= ATTNVK_FEATURE_KV_FP8;
    if (p->softcap > 0) f |= ATTNVK_FEATURE_SOFTCAP;
    if (p->window && (p->window_left >= 0 || p->window_right >= 0)) f |= ATTNVK_FEATURE_WINDOW;
    if (p->alibi) f |= ATTNVK_FEATURE_ALIBI;
    if (p->sinks) f |= ATTNVK_FEATURE_SINKS;
    if (p->mask) f |= ATTNVK_FEATURE_MASK;
    if (p->align == ATTNVK_ALIGN_TOP_LEFT && (p->causal || (f & (ATTNVK_FEATURE_WINDOW | ATTNVK_FEATURE_ALIBI))))
        f |= ATTNVK_FEATURE_TOP_LEFT;
    if (avk_head_dim_v(p) != p->head_dim) f |= ATTNVK_FEATURE_HEAD_DIM_V;
    if (p->position_offset && (p->causal || (f & (ATTNVK_FEATURE_WINDOW | ATTNVK_FEATURE_ALIBI))))
        f |= ATTNVK_FEATURE_POSITION_OFFSET;
    if (p->block_sparse) f |= ATTNVK_FEATURE_BLOCK_SPARSE;
    if (p->dilated_groups) f |= ATTNVK_FEATURE_DILATED;
    if (p->q_format == ATTNVK_KV_FP8) f |= ATTNVK_FEATURE_Q_FP8;
    return f;
}

unsigned avk_score_mod_bits(const attnvk_problem *p)
{
    const unsigned f = avk_problem_features(p);
    return (f & ATTNVK_FEATURE_SOFTCAP ? AVK_MOD_SOFTCAP : 0u) | (f & ATTNVK_FEATURE_ALIBI ? AVK_MOD_ALIBI : 0u) |
           (f & ATTNVK_FEATURE_MASK ? AVK_MOD_MASK : 0u) |
           (f & ATTNVK_FEATURE_BLOCK_SPARSE ? AVK_MOD_BLOCKS : 0u) | (f & ATTNVK_FEATURE_DILATED ? AVK_MOD_DILATED : 0u);
}

const char *avk_feature_name(unsigned missing)
{
    /* first: an FP8 forward also needs its fp8 cache, and the forward is what was asked for */
    if (missing & ATTNVK_FEATURE_Q_FP8) return "fp8 queries (the FP8 forward)";
    if (missing & ATTNVK_FEATURE_PAGED) return "paged KV caches";
    if (missing & ATTNVK_FEATURE_RAGGED) return "per-sequence KV lengths (seq_lens)";
    if (missing & ATTNVK_FEATURE_KV_Q8_0) return "q8_0 KV caches";
    if (missing & ATTNVK_FEATURE_KV_Q4_0) return "q4_0 KV caches";
    if (missing & ATTNVK_FEATURE_KV_FP8) return "fp8 KV caches";
    if (missing & ATTNVK_FEATURE_SOFTCAP) return "logit softcap";
    if (missing & ATTNVK_FEATURE_WINDOW) return "sliding windows";
    if (missing & ATTNVK_FEATURE_ALIBI) return "ALiBi";
    if (missing & ATTNVK_FEATURE_SINKS) return "attention sinks";
    if (missing & ATTNVK_FEATURE_MASK) return "additive masks";
    if (missing & ATTNVK_FEATURE_TOP_LEFT) return "top-left causal alignment";
    if (missing & ATTNVK_FEATURE_HEAD_DIM_V) return "different K and V head dims";
    if (missing & ATTNVK_FEATURE_POSITION_OFFSET) return "a position offset";
    if (missing & ATTNVK_FEATURE_BLOCK_SPARSE) return "block-sparse layouts";
    if (missing & ATTNVK_FEATURE_DILATED) return "dilated attention";
    return "this feature";
}

/* ---- fp8 e4m3 (OCP "fn": no infinities, 0x7f/0xff are NaN, max 448) ---- */
static uint8_t fp8_encode(float x)
{
    uint8_t sign = signbit(x) ? 0x80 : 0;
    float a = fabsf(x);
    if (!(a == a)) return 0x7f; /* NaN stays NaN */
    if (a >= AVK_FP8_MAX) return sign | 0x7e;
    if (a < 0x1p-6f) return sign | (uint8_t)nearbyintf(a * 0x1p9f); /* subnormal; 8 rounds up to 2^-6 */
    int e2;
    float f = frexpf(a, &e2); /* a = f * 2^e2, f in [0.5, 1) */
    int exp = e2 - 1;         /* a = (2f) 2^exp */
    int mant = (int)nearbyintf((2.f * f - 1.f) * 8.f);
    if (mant == 8) mant = 0, ++exp;
    int code = ((exp + 7) << 3) | mant;
    return sign | (uint8_t)(code > 0x7e ? 0x7e : code);
}

static float fp8_decode(uint8_t c)
{
    int e = (c >> 3) & 15, m = c & 7;
    float v = e == 0 ? ldexpf((float)m, -9) : ldexpf(1.f + m / 8.f, e - 7);
    if (e == 15 && m == 7) v = NAN;
    return c & 0x80 ? -v : v;
}

float attnvk_fp8_scale(float amax) { return amax > 0 && isfinite(amax) ? amax / AVK_FP8_MAX : 1.f; }

/* ---- ggml blocks ---- */
static void put_f16(uint8_t *dst, float x)
{
    uint16_t h = attnvk_f32_to_f16(x);
    dst[0] = (uint8_t)(h & 0xff), dst[1] = (uint8_t)(h >> 8);
}

static float get_f16(const uint8_t *src) { return attnvk_f16_to_f32((uint16_t)(src[0] | src[1] << 8)); }

static void q8_0_encode(const float *x, uint8_t *blk)
{
    float amax = 0;
    for (int k = 0; k < AVK_QBLOCK; ++k) amax = fmaxf(amax, fabsf(x[k]));
    const float d = amax / 127.f, id = d > 0 ? 1.f / d : 0.f;
    put_f16(blk, d);
    for (int k = 0; k < AVK_QBLOCK; ++k) blk[2 + k] = (uint8_t)(int8_t)roundf(x[k] * id);
}

static void q4_0_encode(const float *x, uint8_t *blk)
{
    float amax = 0, vmax = 0; /* the value of largest magnitude, sign kept, maps to -8 */
    for (int k = 0; k < AVK_QBLOCK; ++k)
        if (fabsf(x[k]) > amax) amax = fabsf(x[k]), vmax = x[k];
    const float d = vmax / -8.f, id = d != 0 ? 1.f / d : 0.f;
    put_f16(blk, d);
    for (int k = 0; k < AVK_QBLOCK / 2; ++k) {
        int lo = (int)(x[k] * id + 8.5f), hi = (int)(x[k + AVK_QBLOCK / 2] * id + 8.5f);
        lo = lo < 0 ? 0 : (lo > 15 ? 15 : lo);
        hi = hi < 0 ? 0 : (hi > 15 ? 15 : hi);
        blk[2 + k] = (uint8_t)(lo | hi << 4);
    }
}

void attnvk_kv_encode(attnvk_kv_format f, int D, const float *src, void *dst, size_t rows, float scale)
{
    uint8_t *out = dst;
    const size_t blocks = (size_t)D / AVK_QBLOCK * rows;
    if (f == ATTNVK_KV_Q8_0)
        for (size_t b = 0; b < blocks; ++b) q8_0_encode(src + b * AVK_QBLOCK, out + b * AVK_Q8_0_BLOCK_BYTES);
    else if (f == ATTNVK_KV_Q4_0)
        for (size_t b = 0; b < blocks; ++b) q4_0_encode(src + b * AVK_QBLOCK, out + b * AVK_Q4_0_BLOCK_BYTES);
    else if (f == ATTNVK_KV_FP8) {
        const float inv = scale > 0 ? 1.f / scale : 1.f;
        for (size_t e = 0; e < (size_t)D * rows; ++e) out[e] = fp8_encode(src[e] * inv);
    }
}

void attnvk_kv_decode(attnvk_kv_format f, int D, const void *src, float *dst, size_t rows, float scale)
{
    const uint8_t *in = src;
    const size_t blocks = (size_t)D / AVK_QBLOCK * rows;
    if (f == ATTNVK_KV_Q8_0)
        for (size_t b = 0; b < blocks; ++b) {
            const uint8_t *blk = in + b * AVK_Q8_0_BLOCK_BYTES;
            const float d = get_f16(blk);
            for (int k = 0; k < AVK_QBLOCK; ++k) dst[b * AVK_QBLOCK + k] = d * (float)(int8_t)blk[2 + k];
        }
    else if (f == ATTNVK_KV_Q4_0)
        for (size_t b = 0; b < blocks; ++b) {
            const uint8_t *blk = in + b * AVK_Q4_0_BLOCK_BYTES;
            const float d = get_f16(blk);
            for (int k = 0; k < AVK_QBLOCK / 2; ++k) {
                dst[b * AVK_QBLOCK + k] = d * (float)((blk[2 + k] & 15) - 8);
                dst[b * AVK_QBLOCK + k + AVK_QBLOCK / 2] = d * (float)((blk[2 + k] >> 4) - 8);
            }
        }
    else if (f == ATTNVK_KV_FP8)
        for (size_t e = 0; e < (size_t)D * rows; ++e) dst[e] = fp8_decode(in[e]) * scale;
}

/* ---- paging ---- */
attnvk_status attnvk_kv_tables_check(const attnvk_problem *p, const int32_t *table, const int32_t *seq_lens)
{
    if (!avk_problem_has_seq_lens(p)) return ATTNVK_OK;
    if (!seq_lens) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "seq_lens are required for a paged or ragged cache");
    if (p->page_size > 0 && !table) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "a paged cache needs a block table");
    for (int b = 0; b < p->batch; ++b) {
        const int32_t len = seq_lens[b];
        if (len < 0) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "seq_lens[%d] = %d is negative", b, len);
        if (p->page_size > 0 && (int64_t)len > (int64_t)p->max_pages * p->page_size)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "seq_lens[%d] = %d exceeds the block table's %d pages x page size %d", b, len, p->max_pages,
                            p->page_size);
        if (len > p->seq_kv)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "seq_lens[%d] = %d exceeds the key length %d", b, len,
                            p->seq_kv);
        if (p->page_size == 0) continue;
        const int used = (int)(((int64_t)len + p->page_size - 1) / p->page_size);
        for (int k = 0; k < used; ++k) {
            const int32_t page = table[(size_t)b * p->max_pages + k];
            if (page < 0 || page >= p->num_pages)
                return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "block_table[%d][%d] = %d is out of range 0..%d", b, k,
                                page, p->num_pages - 1);
        }
    }
    return ATTNVK_OK;
}

size_t avk_kv_row_index(const attnvk_problem *p, const int32_t *table, int b, int g, int j)
{
    if (p->page_size == 0) return avk_kv_offset(p, b, g, j) / (size_t)p->head_dim;
    int32_t page = table[(size_t)b * p->max_pages + j / p->page_size];
    page = page < 0 ? 0 : (page >= p->num_pages ? p->num_pages - 1 : page);
    return ((size_t)page * p->page_size + (size_t)(j % p->page_size)) * p->kv_heads + g;
}

attnvk_status attnvk_kv_gather(const attnvk_problem *p, const void *kv_bytes, const int32_t *table,
                               const int32_t *seq_lens, const float *kv_scales, int which, float *out)
{
    if (p->page_size > 0 && (!table || !seq_lens))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "a paged cache needs its block table and seq_lens");
    if (p->kv_format == ATTNVK_KV_FP8 && !kv_scales)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "an fp8 cache needs its kv scales");
    /* V's rows hold Dv values; an unequal pair is contiguous in dtype (validation), so rows follow the layout */
    attnvk_problem view = *p;
    if (which == 1) view.head_dim = avk_head_dim_v(p);
    p = &view;
    const int D = p->head_dim;
    const size_t rb = attnvk_kv_row_bytes(p);
    const uint8_t *in = kv_bytes;
    for (int b = 0; b < p->batch; ++b) {
        const int len = avk_problem_has_seq_lens(p) ? avk_seq_len(p, seq_lens, b) : p->seq_kv;
        for (int g = 0; g < p->kv_heads; ++g)
            for (int j = 0; j < p->seq_kv; ++j) {
                float *dst = out + avk_kv_offset(p, b, g, j);
                if (j >= len) {
                    memset(dst, 0, sizeof(float) * (size_t)D);
                    continue;
                }
                const uint8_t *row = in + avk_kv_row_index(p, table, b, g, j) * rb;
                if (p->kv_format == ATTNVK_KV_DTYPE) attnvk_unpack(p->dtype, row, dst, (size_t)D);
                else
                    attnvk_kv_decode(p->kv_format, D, row, dst, 1,
                                     p->kv_format == ATTNVK_KV_FP8 ? kv_scales[which * p->kv_heads + g] : 1.f);
            }
    }
    return ATTNVK_OK;
}
