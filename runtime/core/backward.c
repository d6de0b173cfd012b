/* attnvk_kernel_backward: the backward pass's checks, done once here for
 * every backend, and its host convenience (attnvk_attention_backward_host). */
#include "core/api_objects.h"
#include "core/host_upload.h"
#include "core/kv_cache.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void attnvk_backward_options_init(attnvk_backward_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
}

static attnvk_status need_grad(const attnvk_kernel *k, const attnvk_buffer *b, size_t bytes, const char *what)
{
    if (!b) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "backward pass: the %s buffer is required (%zu bytes)", what, bytes);
    if (b->size < bytes)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "backward pass: the %s buffer holds %zu bytes; it needs %zu", what,
                        b->size, bytes);
    if (b->dev != k->dev) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "backward pass: the %s buffer belongs to another device", what);
    return ATTNVK_OK;
}

attnvk_status attnvk_kernel_backward(attnvk_kernel *k, const attnvk_tensors *fwd, const attnvk_grad_tensors *grad,
                                     const attnvk_backward_options *opts, double *device_ms)
{
    if (!k || !fwd || !grad) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "backward pass: no kernel, tensors or gradients given");
    attnvk_backward_options o;
    attnvk_backward_options_init(&o);
    if (opts) {
        if (opts->struct_size < offsetof(attnvk_backward_options, deterministic) + sizeof opts->deterministic)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "backward options: struct_size %zu is too small (call attnvk_backward_options_init)",
                            opts->struct_size);
        memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
    }
    const attnvk_problem *p = &k->problem;
    const attnvk_backend *be = k->dev->backend;
    if (p->page_size > 0 || p->kv_format != ATTNVK_KV_DTYPE)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the backward pass takes a contiguous K/V in the problem's dtype "
                                                  "(not a paged or quantized cache)");
    if (p->block_sparse || p->dilated_groups || (avk_problem_features(p) & ATTNVK_FEATURE_POSITION_OFFSET))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the backward pass of %s is not there yet",
                        p->block_sparse     ? "block-sparse attention"
                        : p->dilated_groups ? "dilated attention"
                                            : "a position offset");
    if (!be->backward)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the %s backend has no backward pass yet", attnvk_api_name(be->api));
    avk_backward_dispatch args;
    memset(&args, 0, sizeof args);
    attnvk_status s = avk_dispatch_fill(k, fwd, 0, 0, 1, &args.fwd);
    if (s != ATTNVK_OK) return s;
    const size_t es = attnvk_dtype_size(p->dtype), rows = (size_t)p->batch * p->heads * p->seq_q;
    s = need_grad(k, fwd->lse, rows * sizeof(float), "forward's LSE");
    if (s == ATTNVK_OK) s = need_grad(k, grad->d_o, attnvk_o_elements(p) * es, "dO");
    if (s == ATTNVK_OK) s = need_grad(k, grad->dq, attnvk_q_elements(p) * es, "dQ");
    if (s == ATTNVK_OK) s = need_grad(k, grad->dk, attnvk_kv_elements(p) * es, "dK");
    if (s == ATTNVK_OK) s = need_grad(k, grad->dv, attnvk_v_elements(p) * es, "dV");
    if (s == ATTNVK_OK && p->sinks && grad->d_sinks)
        s = need_grad(k, grad->d_sinks, (size_t)p->heads * sizeof(float), "d(sinks)");
    if (s != ATTNVK_OK) return s;
    args.fwd.lse = fwd->lse->bbuf;
    args.d_o = grad->d_o->bbuf;
    args.dq = grad->dq->bbuf;
    args.dk = grad->dk->bbuf;
    args.dv = grad->dv->bbuf;
    args.d_sinks = p->sinks && grad->d_sinks ? grad->d_sinks->bbuf : NULL;
    args.deterministic = o.deterministic != 0;
    s = avk_device_settle(k->dev);
    if (s != ATTNVK_OK) return s;
    attnvk_kernel_info info;
    memset(&info, 0, sizeof info);
    args.info = &info;
    double ms = 0;
    s = be->backward(k->dev->bdev, k->bkernel, &args, &ms);
    if (device_ms) *device_ms = ms;
    if (s == ATTNVK_OK && opts && opts->struct_size >= offsetof(attnvk_backward_options, info) + sizeof opts->info &&
        opts->info)
        *opts->info = info;
    return s;
}

/* ---- host convenience ---- */

/* A buffer of n dtype values, all NaN: what a kernel leaves unwritten shows. */
static attnvk_status poisoned(attnvk_device *dev, attnvk_dtype dt, size_t n, attnvk_buffer **out)
{
    float *nan_values = malloc(sizeof(float) * n);
    if (!nan_values) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (size_t i = 0; i < n; ++i) nan_values[i] = NAN;
    attnvk_status s = avk_upload_values(dev, dt, nan_values, n, out);
    free(nan_values);
    return s;
}

static attnvk_status download(attnvk_buffer *b, attnvk_dtype dt, float *dst, size_t n)
{
    const size_t bytes = n * attnvk_dtype_size(dt);
    void *packed = malloc(bytes);
    if (!packed) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s = attnvk_buffer_read(b, 0, packed, bytes);
    if (s == ATTNVK_OK) attnvk_unpack(dt, packed, dst, n);
    free(packed);
    return s;
}

attnvk_status attnvk_attention_backward_host(attnvk_device *dev, const attnvk_problem *p,
                                             const attnvk_kernel_options *opts, const attnvk_backward_options *bopts,
                                             const attnvk_host_inputs *in, const attnvk_host_grads *g, float *o,
                                             float *lse, attnvk_kernel_info *info, double *forward_ms,
                                             double *backward_ms)
{
    if (!dev || !p || !in || !g || !o || !g->d_o || !g->dq || !g->dk || !g->dv)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "backward pass: a device, problem, inputs, dO, O, dQ, dK and dV are required");
    attnvk_status s = attnvk_problem_validate(p);
    if (s != ATTNVK_OK) return s;
    if ((p->ragged && !in->kv_lens) || (p->mask && !in->mask) || (p->sinks && !in->sinks) ||
        (p->alibi && !in->alibi_slopes))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "backward pass: the problem asks for an input (lengths, mask, "
                                                       "sinks or ALiBi slopes) that was not given");
    attnvk_kernel_options local = {0};
    if (opts) local = *opts;
    local.write_lse = 1;
    const size_t nq = attnvk_q_elements(p), nk = attnvk_kv_elements(p), nv = attnvk_v_elements(p);
    const size_t no = attnvk_o_elements(p), rows = (size_t)p->batch * p->heads * p->seq_q;
    const size_t nmask = p->mask ? (size_t)p->mask_batch * p->mask_heads * p->seq_q * (size_t)p->seq_kv : 0;
    attnvk_tensors t = {0};
    attnvk_grad_tensors gt = {0};
    attnvk_kernel *kern = NULL;
    float *lse_host = lse ? lse : malloc(sizeof(float) * rows);
    if (!lse_host) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");

    s = attnvk_kernel_prepare(dev, p, &local, &kern, info);
    if (s == ATTNVK_OK) s = avk_upload_values(dev, p->dtype, in->q, nq, &t.q);
    if (s == ATTNVK_OK) s = avk_upload_values(dev, p->dtype, in->k, nk, &t.k);
    if (s == ATTNVK_OK) s = avk_upload_values(dev, p->dtype, in->v, nv, &t.v);
    if (s == ATTNVK_OK) s = poisoned(dev, p->dtype, no, &t.o);
    if (s == ATTNVK_OK) s = poisoned(dev, ATTNVK_F32, rows, &t.lse);
    if (s == ATTNVK_OK && p->ragged) {
        s = attnvk_buffer_create(dev, sizeof(int32_t) * p->batch, &t.seq_lens);
        if (s == ATTNVK_OK) s = attnvk_buffer_write(t.seq_lens, 0, in->kv_lens, sizeof(int32_t) * p->batch);
    }
    if (s == ATTNVK_OK && p->mask) s = avk_upload_values(dev, p->mask_dtype, in->mask, nmask, &t.mask);
    if (s == ATTNVK_OK && p->sinks) s = avk_upload_values(dev, ATTNVK_F32, in->sinks, (size_t)p->heads, &t.sinks);
    if (s == ATTNVK_OK && p->alibi) s = avk_upload_values(dev, ATTNVK_F32, in->alibi_slopes, (size_t)p->heads, &t.alibi_slopes);
    if (s == ATTNVK_OK) s = attnvk_kernel_run_tensors(kern, &t, 0, 0, forward_ms);
    if (s == ATTNVK_OK) s = avk_upload_values(dev, p->dtype, g->d_o, no, &gt.d_o);
    if (s == ATTNVK_OK) s = poisoned(dev, p->dtype, nq, &gt.dq);
    if (s == ATTNVK_OK) s = poisoned(dev, p->dtype, nk, &gt.dk);
    if (s == ATTNVK_OK) s = poisoned(dev, p->dtype, nv, &gt.dv);
    if (s == ATTNVK_OK && p->sinks && g->d_sinks) s = poisoned(dev, ATTNVK_F32, (size_t)p->heads, &gt.d_sinks);
    if (s == ATTNVK_OK) s = attnvk_kernel_backward(kern, &t, &gt, bopts, backward_ms);
    if (s == ATTNVK_OK) s = download(t.o, p->dtype, o, no);
    if (s == ATTNVK_OK) s = download(t.lse, ATTNVK_F32, lse_host, rows);
    if (s == ATTNVK_OK) s = download(gt.dq, p->dtype, g->dq, nq);
    if (s == ATTNVK_OK) s = download(gt.dk, p->dtype, g->dk, nk);
    if (s == ATTNVK_OK) s = download(gt.dv, p->dtype, g->dv, nv);
    if (s == ATTNVK_OK && gt.d_sinks) s = download(gt.d_sinks, ATTNVK_F32, g->d_sinks, (size_t)p->heads);

    if (!lse) free(lse_host);
    attnvk_kernel_destroy(kern);
    attnvk_buffer *all[] = {t.q, t.k, t.v, t.o, t.lse, t.seq_lens, t.mask, t.sinks, t.alibi_slopes,
                            gt.d_o, gt.dq, gt.dk, gt.dv, gt.d_sinks};
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i) attnvk_buffer_destroy(all[i]);
    return s;
}
