/* `attnvk run` on a KV cache: paged pages + block table + lengths, and K/V
 * quantized on the host with the same encoders the tests and bench use (and,
 * for the FP8 forward, Q in e4m3 with a scale per query head). */
#include "run_cache.h"
#include "cli.h"
#include "core/error.h"
#include "core/kv_build.h"
#include "core/q_format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int dims_in_range(const char *path, const avk_npy *t)
{
    for (int d = 0; d < t->ndim; ++d)
        if (t->shape[d] < 1 || t->shape[d] > (1ll << 30))
            return cli_error(EXIT_USAGE, "%s: dimension %d is %lld (must be 1..2^30)", path, d, (long long)t->shape[d]);
    return 0;
}

int run_load_paged(const run_args *a, avk_npy t[3], avk_npy tables[2], attnvk_problem *p)
{
    const char *paths[3] = {a->q, a->k, a->v};
    for (int i = 0; i < 3; ++i)
        if (avk_npy_read(paths[i], &t[i]) != ATTNVK_OK) return cli_error(EXIT_USAGE, "%s", attnvk_last_error());
    if (avk_npy_read_int32(a->block_table, "the block table", &tables[0]) != ATTNVK_OK ||
        avk_npy_read_int32(a->seq_lens, "seq_lens", &tables[1]) != ATTNVK_OK)
        return cli_error(EXIT_USAGE, "%s", attnvk_last_error());
    if (t[0].ndim != 4)
        return cli_error(EXIT_USAGE, "%s: expected 4 dimensions (%s), got %d", a->q,
                         a->layout == ATTNVK_LAYOUT_BHSD ? "B,H,S,D" : "B,S,H,D", t[0].ndim);
    for (int i = 1; i < 3; ++i)
        if (t[i].ndim != 4)
            return cli_error(EXIT_USAGE, "%s: paged K/V need 4 dimensions (num_pages,page_size,Hkv,D), got %d",
                             paths[i], t[i].ndim);
    if (tables[0].ndim != 2)
        return cli_error(EXIT_USAGE, "%s: the block table needs 2 dimensions (B,max_pages), got %d", a->block_table,
                         tables[0].ndim);
    if (tables[1].ndim != 1)
        return cli_error(EXIT_USAGE, "%s: seq_lens needs 1 dimension (B), got %d", a->seq_lens, tables[1].ndim);
    for (int i = 0; i < 3; ++i)
        if (dims_in_range(paths[i], &t[i])) return EXIT_USAGE;
    if (dims_in_range(a->block_table, &tables[0]) || dims_in_range(a->seq_lens, &tables[1])) return EXIT_USAGE;
    for (int d = 0; d < 4; ++d)
        if (t[1].shape[d] != t[2].shape[d]) return cli_error(EXIT_USAGE, "shape mismatch: K and V pages differ in dimension %d", d);
    const int s_axis = a->layout == ATTNVK_LAYOUT_BHSD ? 2 : 1, h_axis = a->layout == ATTNVK_LAYOUT_BHSD ? 1 : 2;
    if (t[0].shape[3] != t[1].shape[3])
        return cli_error(EXIT_USAGE, "shape mismatch: head dim %lld in Q, %lld in the K/V pages", (long long)t[0].shape[3],
                         (long long)t[1].shape[3]);
    if (tables[0].shape[0] != t[0].shape[0] || tables[1].shape[0] != t[0].shape[0])
        return cli_error(EXIT_USAGE, "shape mismatch: batch %lld in Q, %lld in the block table, %lld in seq_lens",
                         (long long)t[0].shape[0], (long long)tables[0].shape[0], (long long)tables[1].shape[0]);
    memset(p, 0, sizeof *p);
    p->batch = (int)t[0].shape[0];
    p->heads = (int)t[0].shape[h_axis];
    p->seq_q = (int)t[0].shape[s_axis];
    p->head_dim = (int)t[0].shape[3];
    p->num_pages = (int)t[1].shape[0];
    p->page_size = (int)t[1].shape[1];
    p->kv_heads = (int)t[1].shape[2];
    p->max_pages = (int)tables[0].shape[1];
    int rc = run_problem_from_options(a, p);
    if (rc) return rc;
    /* Nk = the longest sequence; each length is checked against the table's reach first */
    int64_t reach = (int64_t)p->max_pages * p->page_size, longest = 1;
    for (int b = 0; b < p->batch; ++b) {
        const int32_t len = tables[1].ints[b];
        if (len < 0) return cli_error(EXIT_USAGE, "%s: seq_lens[%d] = %d is negative", a->seq_lens, b, len);
        if (len > reach)
            return cli_error(EXIT_USAGE, "%s: seq_lens[%d] = %d exceeds max_pages x page_size = %d x %d", a->seq_lens, b,
                             len, p->max_pages, p->page_size);
        if (len > longest) longest = len;
    }
    p->seq_kv = (int)longest;
    if (attnvk_kv_tables_check(p, tables[0].ints, tables[1].ints) != ATTNVK_OK)
        return cli_error(EXIT_USAGE, "%s: %s", a->block_table, attnvk_last_error());
    if (attnvk_problem_validate(p) != ATTNVK_OK) return cli_error(EXIT_USAGE, "%s", attnvk_last_error());
    return 0;
}

/* Paged pages as given, encoded in place order: row r of the pages belongs to kv head r % H_kv;
 * fp8 takes one scale per kv head from its largest magnitude. */
static attnvk_status encode_pages(const attnvk_problem *p, const float *src, uint8_t *dst, float *scales)
{
    const size_t rows = attnvk_kv_rows(p), rb = attnvk_kv_row_bytes(p), D = (size_t)p->head_dim;
    if (p->kv_format == ATTNVK_KV_DTYPE) {
        attnvk_pack(p->dtype, src, dst, rows * D);
        return ATTNVK_OK;
    }
    if (p->kv_format == ATTNVK_KV_FP8)
        for (int g = 0; g < p->kv_heads; ++g) {
            float amax = 0;
            for (size_t r = (size_t)g; r < rows; r += (size_t)p->kv_heads)
                for (size_t d = 0; d < D; ++d) amax = fmaxf(amax, fabsf(src[r * D + d]));
            scales[g] = attnvk_fp8_scale(amax);
        }
    for (size_t r = 0; r < rows; ++r)
        attnvk_kv_encode(p->kv_format, p->head_dim, src + r * D, dst + r * rb, 1,
                         p->kv_format == ATTNVK_KV_FP8 ? scales[r % (size_t)p->kv_heads] : 1.f);
    return ATTNVK_OK;
}

/* The host cache: pages encoded as given, or a contiguous K/V through the shared builder. */
static attnvk_status build_cache(const attnvk_problem *p, const avk_npy t[3], avk_kv_host *h)
{
    if (p->page_size == 0) return avk_kv_build(p, t[1].data, t[2].data, NULL, 0, h);
    memset(h, 0, sizeof *h);
    h->bytes = attnvk_kv_bytes(p);
    h->k = malloc(h->bytes + 1);
    h->v = malloc(h->bytes + 1);
    if (p->kv_format == ATTNVK_KV_FP8) h->kv_scales = malloc(sizeof(float) * 2 * (size_t)p->kv_heads);
    if (!h->k || !h->v || (p->kv_format == ATTNVK_KV_FP8 && !h->kv_scales)) {
        avk_kv_host_free(h);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the KV cache");
    }
    encode_pages(p, t[1].data, h->k, h->kv_scales);
    encode_pages(p, t[2].data, h->v, h->kv_scales ? h->kv_scales + p->kv_heads : NULL);
    return ATTNVK_OK;
}

static attnvk_status upload(attnvk_device *dev, const void *src, size_t bytes, attnvk_buffer **out)
{
    attnvk_status s = attnvk_buffer_create(dev, bytes ? bytes : 4, out);
    if (s == ATTNVK_OK && src && bytes) s = attnvk_buffer_write(*out, 0, src, bytes);
    return s;
}

/* Q as stored (packed to the dtype, or fp8 queries' e4m3 with q_scales[H] made here) and,
 * for the check, the values the kernel decodes (qd; NULL when they are q's own). */
static attnvk_status encode_q(const attnvk_problem *p, const float *q, void *raw, float **q_scales, float **qd)
{
    *q_scales = *qd = NULL;
    if (!avk_q_is_fp8(p)) {
        attnvk_pack(p->dtype, q, raw, attnvk_q_elements(p));
        return ATTNVK_OK;
    }
    *q_scales = malloc(sizeof(float) * (size_t)p->heads);
    *qd = malloc(sizeof(float) * attnvk_q_elements(p) + 1);
    if (!*q_scales || !*qd) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for fp8 queries");
    avk_q_fp8_scales(p, q, *q_scales);
    avk_q_encode(p, q, *q_scales, raw);
    avk_q_decode(p, raw, *q_scales, *qd);
    return ATTNVK_OK;
}

attnvk_status run_cache_attention(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                  const avk_npy t[3], const avk_npy tables[2], float *o, float *lse,
                                  attnvk_kernel_info *info, double *ms, attnvk_check *check)
{
    const int paged = p->page_size > 0;
    const int32_t *table = paged ? tables[0].ints : NULL, *lens = paged ? tables[1].ints : NULL;
    const size_t nq = attnvk_q_elements(p), es = attnvk_dtype_size(p->dtype), nkv = attnvk_kv_elements(p);
    const size_t nlse = (size_t)p->batch * p->heads * p->seq_q;
    attnvk_kernel_options local = *opts;
    local.write_lse = lse != NULL;
    avk_kv_host cache;
    attnvk_status s = build_cache(p, t, &cache);
    if (s != ATTNVK_OK) return s;
    const size_t q_bytes = avk_q_bytes(p); /* fp8 queries: a byte an element; O keeps the dtype */
    void *qraw = malloc(q_bytes + 1), *oraw = malloc(nq * es + 1);
    float *q_scales = NULL, *q_decoded = NULL;
    attnvk_buffer *bq = NULL, *bk = NULL, *bv = NULL, *bo = NULL, *bt = NULL, *bl = NULL, *bs = NULL, *blse = NULL;
    attnvk_buffer *bqs = NULL;
    attnvk_kernel *kern = NULL;
    if (!qraw || !oraw) s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (s == ATTNVK_OK) s = attnvk_kernel_prepare(dev, p, &local, &kern, info);
    if (s == ATTNVK_OK) s = encode_q(p, t[0].data, qraw, &q_scales, &q_decoded);
    if (s == ATTNVK_OK) {
        memset(oraw, 0xff, nq * es); /* NaN in every dtype: rows left unwritten show */
        s = upload(dev, qraw, q_bytes, &bq);
    }
    if (s == ATTNVK_OK && q_scales) s = upload(dev, q_scales, sizeof(float) * (size_t)p->heads, &bqs);
    if (s == ATTNVK_OK) s = upload(dev, cache.k, cache.bytes, &bk);
    if (s == ATTNVK_OK) s = upload(dev, cache.v, cache.bytes, &bv);
    if (s == ATTNVK_OK) s = upload(dev, oraw, nq * es, &bo);
    if (s == ATTNVK_OK && paged) s = upload(dev, table, sizeof(int32_t) * (size_t)p->batch * p->max_pages, &bt);
    if (s == ATTNVK_OK && paged) s = upload(dev, lens, sizeof(int32_t) * (size_t)p->batch, &bl);
    if (s == ATTNVK_OK && cache.kv_scales) s = upload(dev, cache.kv_scales, sizeof(float) * 2 * p->kv_heads, &bs);
    if (s == ATTNVK_OK && lse) s = upload(dev, NULL, nlse * sizeof(float), &blse);
    if (s == ATTNVK_OK) {
        attnvk_tensors tensors = {.q = bq, .k = bk, .v = bv, .o = bo, .lse = blse, .block_table = bt,
                                  .seq_lens = bl, .kv_scales = bs, .q_scales = bqs};
        s = attnvk_kernel_run_tensors(kern, &tensors, 0, 0, ms);
    }
    if (s == ATTNVK_OK) s = attnvk_buffer_read(bo, 0, oraw, nq * es);
    if (s == ATTNVK_OK) attnvk_unpack(p->dtype, oraw, o, nq);
    if (s == ATTNVK_OK && lse) s = attnvk_buffer_read(blse, 0, lse, nlse * sizeof(float));
    if (s == ATTNVK_OK && check) { /* the reference reads the cache the kernel read, decoded */
        float *kd = malloc(nkv * sizeof(float) + 1), *vd = malloc(nkv * sizeof(float) + 1);
        if (!kd || !vd) s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the reference");
        if (s == ATTNVK_OK) s = attnvk_kv_gather(p, cache.k, table, lens, cache.kv_scales, 0, kd);
        if (s == ATTNVK_OK) s = attnvk_kv_gather(p, cache.v, table, lens, cache.kv_scales, 1, vd);
        if (s == ATTNVK_OK)
            *check = attnvk_check_output_ragged(p, q_decoded ? q_decoded : t[0].data, kd, vd, lens, o, NULL, 0);
        free(kd);
        free(vd);
    }
    attnvk_kernel_destroy(kern);
    attnvk_buffer *bufs[] = {bq, bk, bv, bo, bt, bl, bs, blse, bqs};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; ++i) attnvk_buffer_destroy(bufs[i]);
    avk_kv_host_free(&cache);
    free(q_scales);
    free(q_decoded);
    free(qraw);
    free(oraw);
    return s;
}
