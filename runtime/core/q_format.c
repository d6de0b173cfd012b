/* See q_format.h. */
#include "core/q_format.h"
#include "core/error.h"
#include "core/layout.h"

#include <math.h>

size_t avk_q_element_bytes(const attnvk_problem *p) { return avk_q_is_fp8(p) ? 1 : attnvk_dtype_size(p->dtype); }

size_t avk_q_bytes(const attnvk_problem *p) { return attnvk_q_elements(p) * avk_q_element_bytes(p); }

attnvk_status avk_q_format_validate(const attnvk_problem *p)
{
    if (p->q_format == ATTNVK_KV_DTYPE) return ATTNVK_OK;
    if (p->q_format != ATTNVK_KV_FP8) {
        if ((unsigned)p->q_format < ATTNVK_KV_FORMAT_COUNT)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "q format %s is not one Q can take (dtype or fp8)",
                            attnvk_kv_format_name(p->q_format));
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown q format %d (dtype or fp8)", (int)p->q_format);
    }
    if (p->kv_format != ATTNVK_KV_FP8)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "fp8 queries (the FP8 forward) need an fp8 K/V cache (kv format fp8), got kv format %s",
                        attnvk_kv_format_name(p->kv_format));
    if (p->dtype != ATTNVK_F16 && p->dtype != ATTNVK_BF16)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "fp8 queries (the FP8 forward) need dtype f16 or bf16 (O's dtype), got %s",
                        attnvk_dtype_name(p->dtype));
    return ATTNVK_OK;
}

double avk_forward_tolerance(const attnvk_problem *p)
{
    return avk_q_is_fp8(p) ? AVK_FP8_FORWARD_TOLERANCE : attnvk_tolerance(p->dtype);
}

void avk_q_fp8_scales(const attnvk_problem *p, const float *q, float *scales)
{
    const int D = p->head_dim;
    for (int h = 0; h < p->heads; ++h) {
        float amax = 0;
        for (int b = 0; b < p->batch; ++b)
            for (int i = 0; i < p->seq_q; ++i) {
                const float *row = q + avk_q_offset(p, b, h, i);
                for (int d = 0; d < D; ++d) amax = fmaxf(amax, fabsf(row[d]));
            }
        scales[h] = attnvk_fp8_scale(amax);
    }
}

void avk_fp8_one_scale(float *scales, int n)
{
    float top = 0;
    for (int i = 0; i < n; ++i) top = fmaxf(top, scales[i]);
    for (int i = 0; i < n; ++i) scales[i] = top;
}

void avk_q_encode(const attnvk_problem *p, const float *q, const float *scales, void *out)
{
    if (!avk_q_is_fp8(p)) {
        attnvk_pack(p->dtype, q, out, attnvk_q_elements(p));
        return;
    }
    unsigned char *dst = out;
    for (int b = 0; b < p->batch; ++b)
        for (int h = 0; h < p->heads; ++h)
            for (int i = 0; i < p->seq_q; ++i) {
                const size_t off = avk_q_offset(p, b, h, i); /* one byte per element: offsets are byte offsets */
                attnvk_kv_encode(ATTNVK_KV_FP8, p->head_dim, q + off, dst + off, 1, scales[h]);
            }
}

void avk_q_decode(const attnvk_problem *p, const void *q, const float *scales, float *out)
{
    if (!avk_q_is_fp8(p)) {
        attnvk_unpack(p->dtype, q, out, attnvk_q_elements(p));
        return;
    }
    const unsigned char *src = q;
    for (int b = 0; b < p->batch; ++b)
        for (int h = 0; h < p->heads; ++h)
            for (int i = 0; i < p->seq_q; ++i) {
                const size_t off = avk_q_offset(p, b, h, i);
                attnvk_kv_decode(ATTNVK_KV_FP8, p->head_dim, src + off, out + off, 1, scales[h]);
            }
}
