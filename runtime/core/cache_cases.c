/* The KV-cache cases and their runner (see cache_cases.h). */
#include "core/cache_cases.h"
#include "core/kv_build.h"
#include "core/numeric.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int avk_cache_cases(attnvk_dtype dtype, avk_cache_case *out, int max)
{
    enum { D8 = ATTNVK_KV_DTYPE, Q8 = ATTNVK_KV_Q8_0, Q4 = ATTNVK_KV_Q4_0, F8 = ATTNVK_KV_FP8 };
    static const struct {
        const char *label;
        int b, h, hkv, nq, nk, d, causal, bshd, page, ragged, fmt;
        int32_t lens[8];
        int nlens;
    } cases[] = {
        {"gqa 1 decode", 2, 4, 4, 1, 300, 64, 0, 0, 0, 0, D8, {0}, 0},
        {"gqa 5 Nq4 causal", 1, 10, 2, 4, 257, 64, 1, 0, 0, 0, D8, {0}, 0},
        {"gqa 8 Nq16 causal bshd", 2, 16, 2, 16, 200, 128, 1, 1, 0, 0, D8, {0}, 0},
        {"gqa 32 decode", 1, 32, 1, 1, 520, 64, 0, 0, 0, 0, D8, {0}, 0},
        {"gqa 128 Nq4 causal", 1, 128, 1, 4, 130, 32, 1, 0, 0, 0, D8, {0}, 0},
        {"paged 16 ragged", 6, 8, 2, 1, 70, 64, 0, 0, 16, 0, D8, {0, 1, 15, 17, 70, 33}, 6},
        {"paged 32 Nq4 causal bshd", 5, 4, 1, 4, 100, 128, 1, 1, 32, 0, D8, {31, 33, 1, 100, 0}, 5},
        {"paged 256 prefill causal", 2, 4, 2, 70, 300, 64, 1, 0, 256, 0, D8, {255, 300}, 2},
        {"ragged contiguous", 3, 4, 2, 2, 150, 64, 0, 0, 0, 1, D8, {0, 150, 77}, 3},
        {"q8_0 decode", 2, 8, 2, 1, 400, 128, 0, 0, 0, 0, Q8, {0}, 0},
        {"q4_0 gqa 5 Nq4 causal", 1, 10, 2, 4, 333, 64, 1, 0, 0, 0, Q4, {0}, 0},
        {"fp8 decode bshd", 2, 8, 4, 1, 260, 128, 0, 1, 0, 0, F8, {0}, 0},
        {"q8_0 prefill causal", 1, 4, 2, 96, 96, 64, 1, 0, 0, 0, Q8, {0}, 0},
        {"q4_0 prefill bshd", 1, 2, 1, 50, 120, 128, 0, 1, 0, 0, Q4, {0}, 0},
        {"fp8 prefill causal", 1, 4, 2, 64, 130, 64, 1, 0, 0, 0, F8, {0}, 0},
        {"paged 16 q8_0 ragged", 4, 8, 2, 1, 90, 128, 0, 0, 16, 0, Q8, {0, 1, 17, 90}, 4},
        {"paged 32 q4_0 Nq16 causal", 2, 16, 2, 16, 64, 64, 1, 0, 32, 0, Q4, {64, 47}, 2},
        {"paged 16 fp8 gqa 8", 3, 16, 2, 1, 50, 128, 0, 0, 16, 0, F8, {15, 50, 1}, 3},
        {"paged 64 q8_0 D=256", 1, 2, 1, 1, 100, 256, 0, 0, 64, 0, Q8, {100}, 1},
        /* q4_0 at D=128, Nq=4 causal (16 packed rows) through page 17 (Vulkan's direct K/V operands) */
        {"paged 17 q4_0 Nq4 causal", 2, 8, 2, 4, 140, 128, 1, 0, 17, 0, Q4, {140, 19}, 2},
        /* D=96: three blocks a row, lanes whose slices straddle blocks; page 17 puts rows on both 8-byte parities */
        {"paged 17 q8_0 D=96 ragged", 3, 4, 2, 1, 120, 96, 0, 0, 17, 0, Q8, {120, 18, 16}, 3},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases && n < max; ++i, ++n) {
        avk_cache_case *c = &out[n];
        memset(c, 0, sizeof *c);
        c->label = cases[i].label;
        c->p.batch = cases[i].b;
        c->p.heads = cases[i].h;
        c->p.kv_heads = cases[i].hkv;
        c->p.seq_q = cases[i].nq;
        c->p.seq_kv = cases[i].nk;
        c->p.head_dim = cases[i].d;
        c->p.causal = cases[i].causal;
        c->p.layout = cases[i].bshd ? ATTNVK_LAYOUT_BSHD : ATTNVK_LAYOUT_BHSD;
        c->p.dtype = dtype;
        c->p.page_size = cases[i].page;
        c->p.ragged = cases[i].ragged;
        c->p.kv_format = (attnvk_kv_format)cases[i].fmt;
        memcpy(c->lens, cases[i].lens, sizeof c->lens);
        c->nlens = cases[i].nlens;
    }
    return n;
}

static attnvk_status upload(attnvk_device *dev, const void *src, size_t bytes, attnvk_buffer **out)
{
    attnvk_status s = attnvk_buffer_create(dev, bytes ? bytes : 4, out);
    if (s == ATTNVK_OK && src && bytes) s = attnvk_buffer_write(*out, 0, src, bytes);
    return s;
}

int avk_random_inputs(const attnvk_problem *p, uint64_t seed, float **q, float **k, float **v)
{
    const size_t nq = attnvk_q_elements(p), nkv = attnvk_kv_elements(p), nv = attnvk_v_elements(p);
    *q = malloc(nq * sizeof(float) + 1);
    *k = malloc(nkv * sizeof(float) + 1);
    *v = malloc(nv * sizeof(float) + 1);
    if (!*q || !*k || !*v) return 0;
    avk_fill_random_dtype(p->dtype, *q, NULL, nq, seed * 3 + 1);
    avk_fill_random_dtype(p->dtype, *k, NULL, nkv, seed * 3 + 2);
    avk_fill_random_dtype(p->dtype, *v, NULL, nv, seed * 3 + 3);
    return 1;
}

attnvk_status avk_cache_case_run(attnvk_device *dev, const avk_cache_case *c, const attnvk_kernel_options *opts,
                                 uint64_t seed, avk_cache_result *r)
{
    memset(r, 0, sizeof *r);
    attnvk_problem p = c->p;
    int32_t *lens = NULL;
    if (c->nlens > 0) {
        lens = malloc(sizeof(int32_t) * (size_t)p.batch);
        if (lens)
            for (int b = 0; b < p.batch; ++b) lens[b] = c->lens[b % c->nlens];
    }
    if (p.page_size > 0) {
        p.max_pages = (p.seq_kv + p.page_size - 1) / p.page_size + 1; /* a garbage column past every sequence */
        p.num_pages = 0;
        p.num_pages = avk_kv_pages_needed(&p, lens) + 3; /* spare pages nobody owns */
    }
    snprintf(r->shape, sizeof r->shape, "B%d H%d/%d Nq%d Nk%d D%d %s %s%s kv=%s page=%d", p.batch, p.heads, p.kv_heads,
             p.seq_q, p.seq_kv, p.head_dim, attnvk_dtype_name(p.dtype), p.layout == ATTNVK_LAYOUT_BHSD ? "bhsd" : "bshd",
             p.causal ? " causal" : "", attnvk_kv_format_name(p.kv_format), p.page_size);
    float *q = NULL, *k = NULL, *v = NULL;
    const size_t nq = attnvk_q_elements(&p), nkv = attnvk_kv_elements(&p), es = attnvk_dtype_size(p.dtype);
    const int have_inputs = avk_random_inputs(&p, seed, &q, &k, &v);
    float *kd = malloc(nkv * sizeof(float) + 1), *vd = malloc(nkv * sizeof(float) + 1), *o = malloc(nq * sizeof(float) + 1);
    void *qraw = malloc(nq * es + 1), *oraw = malloc(nq * es + 1);
    avk_kv_host cache;
    attnvk_buffer *bq = NULL, *bk = NULL, *bv = NULL, *bo = NULL, *bt = NULL, *bl = NULL, *bs = NULL;
    attnvk_kernel *kern = NULL;
    attnvk_status s = ATTNVK_OK;
    int built = 0;
    if (!have_inputs || !kd || !vd || !o || !qraw || !oraw || (c->nlens > 0 && !lens)) {
        s = ATTNVK_ERROR_OUT_OF_MEMORY;
        snprintf(r->message, sizeof r->message, "out of host memory");
        goto done;
    }
    s = attnvk_problem_validate(&p);
    if (s == ATTNVK_OK) s = avk_kv_build(&p, k, v, lens, seed ^ 0x5eed, &cache);
    built = s == ATTNVK_OK;
    if (s == ATTNVK_OK) s = avk_kv_host_decoded(&p, &cache, kd, vd);
    if (s == ATTNVK_OK) s = attnvk_kernel_prepare(dev, &p, opts, &kern, &r->info);
    if (s == ATTNVK_OK) {
        attnvk_pack(p.dtype, q, qraw, nq);
        memset(oraw, 0xff, nq * es); /* NaN in every dtype: rows left unwritten cannot pass */
        s = upload(dev, qraw, nq * es, &bq);
        if (s == ATTNVK_OK) s = upload(dev, cache.k, cache.bytes, &bk);
        if (s == ATTNVK_OK) s = upload(dev, cache.v, cache.bytes, &bv);
        if (s == ATTNVK_OK) s = upload(dev, oraw, nq * es, &bo);
        if (s == ATTNVK_OK && cache.block_table)
            s = upload(dev, cache.block_table, sizeof(int32_t) * (size_t)p.batch * p.max_pages, &bt);
        if (s == ATTNVK_OK && cache.seq_lens) s = upload(dev, cache.seq_lens, sizeof(int32_t) * (size_t)p.batch, &bl);
        if (s == ATTNVK_OK && cache.kv_scales) s = upload(dev, cache.kv_scales, sizeof(float) * 2 * p.kv_heads, &bs);
        if (s == ATTNVK_OK) {
            attnvk_tensors t = {.q = bq, .k = bk, .v = bv, .o = bo, .block_table = bt, .seq_lens = bl, .kv_scales = bs};
            double ms;
            s = attnvk_kernel_run_tensors(kern, &t, 0, 0, &ms);
        }
        if (s == ATTNVK_OK) s = attnvk_buffer_read(bo, 0, oraw, nq * es);
    }
    if (s != ATTNVK_OK) {
        snprintf(r->message, sizeof r->message, "%s", attnvk_last_error());
    } else {
        attnvk_unpack(p.dtype, oraw, o, nq);
        r->check = attnvk_check_output_ragged(&p, q, kd, vd, cache.seq_lens, o, NULL, 0);
    }
done:
    r->status = s;
    attnvk_kernel_destroy(kern);
    attnvk_buffer *bufs[] = {bq, bk, bv, bo, bt, bl, bs};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; ++i) attnvk_buffer_destroy(bufs[i]);
    if (built) avk_kv_host_free(&cache);
    free(lens);
    free(q), free(k), free(v), free(kd), free(vd), free(o), free(qraw), free(oraw);
    return s;
}
