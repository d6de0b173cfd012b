/* attnvk_attention_host: the one-call path used by `attnvk run` and tests. */
#include "attnvk/attnvk.h"
#include "core/error.h"
#include "core/host_upload.h"
#include "core/kv_build.h"
#include "core/q_format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

attnvk_status avk_upload_values(attnvk_device *dev, attnvk_dtype dt, const float *src, size_t n, attnvk_buffer **out)
{
    const size_t bytes = n * attnvk_dtype_size(dt);
    void *packed = malloc(bytes ? bytes : 1);
    if (!packed) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory (%zu bytes)", bytes);
    attnvk_pack(dt, src, packed, n);
    attnvk_status s = attnvk_buffer_create(dev, bytes, out);
    if (s == ATTNVK_OK) s = attnvk_buffer_write(*out, 0, packed, bytes);
    free(packed);
    return s;
}

/* NaN in every element, so anything the kernel leaves unwritten shows. */
static attnvk_status poison(attnvk_buffer *buf, attnvk_dtype dt, size_t n)
{
    size_t es = attnvk_dtype_size(dt);
    unsigned char *nan_bytes = malloc(n * es);
    if (!nan_bytes) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (dt == ATTNVK_F32) {
        float nanf_ = NAN;
        for (size_t i = 0; i < n; ++i) memcpy(nan_bytes + i * 4, &nanf_, 4);
    } else {
        uint16_t h = dt == ATTNVK_F16 ? 0x7e00u : 0x7fc0u;
        for (size_t i = 0; i < n; ++i) memcpy(nan_bytes + i * 2, &h, 2);
    }
    attnvk_status s = attnvk_buffer_write(buf, 0, nan_bytes, n * es);
    free(nan_bytes);
    return s;
}

attnvk_status attnvk_attention_host(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                    const float *q, const float *k, const float *v, float *o, float *lse,
                                    attnvk_kernel_info *info, double *device_ms)
{
    const attnvk_host_inputs in = {.q = q, .k = k, .v = v};
    return attnvk_attention_host_inputs(dev, p, opts, &in, o, lse, info, device_ms);
}

static attnvk_status upload_bytes(attnvk_device *dev, const void *src, size_t bytes, attnvk_buffer **out)
{
    attnvk_status s = attnvk_buffer_create(dev, bytes, out);
    return s == ATTNVK_OK ? attnvk_buffer_write(*out, 0, src, bytes) : s;
}

/* Q in its storage: packed to the dtype, or fp8 queries in e4m3 with one
 * scale per query head from that head's largest magnitude (q_scales). */
static attnvk_status upload_q(attnvk_device *dev, const attnvk_problem *p, const float *q, attnvk_tensors *t)
{
    if (!avk_q_is_fp8(p)) return avk_upload_values(dev, p->dtype, q, attnvk_q_elements(p), &t->q);
    const size_t bytes = avk_q_bytes(p);
    float *scales = malloc(sizeof(float) * (size_t)p->heads);
    void *encoded = malloc(bytes ? bytes : 1);
    attnvk_status s = scales && encoded ? ATTNVK_OK : avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for Q");
    if (s == ATTNVK_OK) {
        avk_q_fp8_scales(p, q, scales);
        avk_q_encode(p, q, scales, encoded);
        s = upload_bytes(dev, encoded, bytes, &t->q);
    }
    if (s == ATTNVK_OK) s = upload_bytes(dev, scales, sizeof(float) * (size_t)p->heads, &t->q_scales);
    free(scales);
    free(encoded);
    return s;
}

/* K and V: packed to the dtype, or a contiguous quantized cache encoded here
 * (fp8: a scale per kv head, kv_scales), as the bench and `attnvk run` build it. */
static attnvk_status upload_kv(attnvk_device *dev, const attnvk_problem *p, const attnvk_host_inputs *in,
                               attnvk_tensors *t)
{
    if (p->kv_format == ATTNVK_KV_DTYPE) {
        attnvk_status s = avk_upload_values(dev, p->dtype, in->k, attnvk_kv_elements(p), &t->k);
        return s == ATTNVK_OK ? avk_upload_values(dev, p->dtype, in->v, attnvk_v_elements(p), &t->v) : s;
    }
    avk_kv_host cache;
    attnvk_status s = avk_kv_build(p, in->k, in->v, p->ragged ? in->kv_lens : NULL, 0, &cache);
    if (s != ATTNVK_OK) return s;
    s = upload_bytes(dev, cache.k, attnvk_kv_bytes(p), &t->k);
    if (s == ATTNVK_OK) s = upload_bytes(dev, cache.v, attnvk_v_bytes(p), &t->v);
    if (s == ATTNVK_OK && cache.kv_scales)
        s = upload_bytes(dev, cache.kv_scales, sizeof(float) * 2 * (size_t)p->kv_heads, &t->kv_scales);
    avk_kv_host_free(&cache);
    return s;
}

attnvk_status attnvk_attention_host_inputs(attnvk_device *dev, const attnvk_problem *p,
                                           const attnvk_kernel_options *opts, const attnvk_host_inputs *in,
                                           float *o, float *lse, attnvk_kernel_info *info, double *device_ms)
{
    attnvk_status s = attnvk_problem_validate(p);
    if (s != ATTNVK_OK) return s;
    if (p->page_size > 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "a paged cache takes attnvk_kernel_run_tensors");
    if ((p->ragged && !in->kv_lens) || (p->mask && !in->mask) || (p->sinks && !in->sinks) ||
        (p->alibi && !in->alibi_slopes) || (p->block_sparse && !in->block_layout))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "the problem asks for %s, and none was given",
                        p->ragged && !in->kv_lens ? "sequence lengths"
                        : p->mask && !in->mask    ? "a mask"
                        : p->sinks && !in->sinks  ? "sinks"
                        : p->alibi && !in->alibi_slopes ? "ALiBi slopes"
                                                  : "a block layout");
    attnvk_kernel_options local = {0};
    if (opts) local = *opts;
    if (lse) local.write_lse = 1;
    size_t no = attnvk_o_elements(p);
    size_t nlse = (size_t)p->batch * p->heads * p->seq_q;
    size_t nmask = p->mask ? (size_t)p->mask_batch * p->mask_heads * p->seq_q * (size_t)p->seq_kv : 0;
    attnvk_tensors t = {0};
    attnvk_kernel *kern = NULL;
    void *packed_o = NULL;

    s = attnvk_kernel_prepare(dev, p, &local, &kern, info);
    if (s == ATTNVK_OK) s = upload_q(dev, p, in->q, &t);
    if (s == ATTNVK_OK) s = upload_kv(dev, p, in, &t);
    if (s == ATTNVK_OK) s = attnvk_buffer_create(dev, no * attnvk_dtype_size(p->dtype), &t.o);
    if (s == ATTNVK_OK) s = poison(t.o, p->dtype, no);
    if (s == ATTNVK_OK && lse) s = attnvk_buffer_create(dev, nlse * sizeof(float), &t.lse);
    if (s == ATTNVK_OK && lse) s = poison(t.lse, ATTNVK_F32, nlse);
    if (s == ATTNVK_OK && p->ragged) s = upload_bytes(dev, in->kv_lens, sizeof(int32_t) * p->batch, &t.seq_lens);
    if (s == ATTNVK_OK && p->mask) s = avk_upload_values(dev, p->mask_dtype, in->mask, nmask, &t.mask);
    if (s == ATTNVK_OK && p->sinks) s = upload_bytes(dev, in->sinks, sizeof(float) * p->heads, &t.sinks);
    if (s == ATTNVK_OK && p->alibi)
        s = upload_bytes(dev, in->alibi_slopes, sizeof(float) * p->heads, &t.alibi_slopes);
    if (s == ATTNVK_OK && p->block_sparse)
        s = upload_bytes(dev, in->block_layout, attnvk_block_layout_bytes(p), &t.block_layout);
    if (s == ATTNVK_OK) s = attnvk_kernel_run_tensors(kern, &t, 0, 0, device_ms);
    if (s == ATTNVK_OK) {
        packed_o = malloc(no * attnvk_dtype_size(p->dtype));
        if (!packed_o) s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    if (s == ATTNVK_OK) s = attnvk_buffer_read(t.o, 0, packed_o, no * attnvk_dtype_size(p->dtype));
    if (s == ATTNVK_OK) attnvk_unpack(p->dtype, packed_o, o, no);
    if (s == ATTNVK_OK && lse) s = attnvk_buffer_read(t.lse, 0, lse, nlse * sizeof(float));

    free(packed_o);
    attnvk_kernel_destroy(kern);
    attnvk_buffer *all[] = {t.q,    t.k,     t.v,          t.o,          t.lse,       t.seq_lens,
                            t.mask, t.sinks, t.alibi_slopes, t.block_layout, t.kv_scales, t.q_scales};
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i) attnvk_buffer_destroy(all[i]);
    return s;
}
