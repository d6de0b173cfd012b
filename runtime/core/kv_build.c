/* See kv_build.h. */
#include "core/kv_build.h"
#include "core/error.h"
#include "core/kv_cache.h"
#include "core/layout.h"
#include "core/parallel.h"
#include "core/q_format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int avk_kv_pages_needed(const attnvk_problem *p, const int32_t *seq_lens)
{
    int64_t pages = 0;
    for (int b = 0; b < p->batch; ++b) {
        int len = seq_lens ? avk_seq_len(p, seq_lens, b) : p->seq_kv;
        pages += (len + p->page_size - 1) / p->page_size;
    }
    return pages > 0 ? (int)pages : 1; /* every length 0: one page nobody reads */
}

void avk_kv_host_free(avk_kv_host *h)
{
    free(h->k);
    free(h->v);
    free(h->block_table);
    free(h->seq_lens);
    free(h->kv_scales);
    memset(h, 0, sizeof *h);
}

static uint64_t next_random(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull; /* splitmix64 */
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* fp8: one scale per kv head from the largest magnitude among its used keys. */
static void fp8_scales(const attnvk_problem *p, const float *x, const int32_t *lens, float *scales)
{
    for (int g = 0; g < p->kv_heads; ++g) {
        float amax = 0;
        for (int b = 0; b < p->batch; ++b)
            for (int j = 0; j < (lens ? avk_seq_len(p, lens, b) : p->seq_kv); ++j) {
                const float *row = x + avk_kv_offset(p, b, g, j);
                for (int d = 0; d < p->head_dim; ++d) amax = fmaxf(amax, fabsf(row[d]));
            }
        scales[g] = attnvk_fp8_scale(amax);
    }
}

static void encode_row(const attnvk_problem *p, const float *src, uint8_t *dst, float scale)
{
    if (p->kv_format == ATTNVK_KV_DTYPE) attnvk_pack(p->dtype, src, dst, (size_t)p->head_dim);
    else attnvk_kv_encode(p->kv_format, p->head_dim, src, dst, 1, scale);
}

typedef struct encode_job {
    const attnvk_problem *p, *vview;
    const float *k, *v;
    avk_kv_host *out;
    int paged, has_lens;
} encode_job;

/* Encodes the rows of (which, b, g) items [begin, end): each writes only its own rows. */
static void encode_heads(void *ctx, size_t begin, size_t end)
{
    const encode_job *e = ctx;
    const attnvk_problem *p = e->p;
    const avk_kv_host *out = e->out;
    for (size_t item = begin; item < end; ++item) {
        const int which = (int)(item / ((size_t)p->batch * p->kv_heads));
        const int b = (int)(item / (size_t)p->kv_heads % (size_t)p->batch), g = (int)(item % (size_t)p->kv_heads);
        const attnvk_problem *pw = which ? e->vview : p;
        const size_t rb = attnvk_kv_row_bytes(pw);
        const float *src = which ? e->v : e->k;
        uint8_t *dst = which ? out->v : out->k;
        const int len = e->has_lens ? avk_seq_len(p, out->seq_lens, b) : p->seq_kv;
        const float scale = out->kv_scales ? out->kv_scales[which * p->kv_heads + g] : 1.f;
        for (int j = 0; j < (e->paged ? len : p->seq_kv); ++j) {
            size_t row;
            if (e->paged) {
                int32_t page = out->block_table[(size_t)b * p->max_pages + j / p->page_size];
                row = ((size_t)page * p->page_size + (size_t)(j % p->page_size)) * p->kv_heads + g;
            } else {
                row = avk_kv_offset(pw, b, g, j) / (size_t)pw->head_dim;
            }
            encode_row(pw, src + avk_kv_offset(pw, b, g, j), dst + row * rb, scale);
        }
    }
}

attnvk_status avk_kv_build(const attnvk_problem *p, const float *k, const float *v, const int32_t *seq_lens,
                           uint64_t seed, avk_kv_host *out)
{
    return avk_kv_build_scaled(p, k, v, seq_lens, seed, 0, out);
}

attnvk_status avk_kv_build_scaled(const attnvk_problem *p, const float *k, const float *v, const int32_t *seq_lens,
                                  uint64_t seed, int fp8_one_scale, avk_kv_host *out)
{
    memset(out, 0, sizeof *out);
    const int paged = p->page_size > 0, has_lens = avk_problem_has_seq_lens(p);
    if (paged && p->num_pages < avk_kv_pages_needed(p, seq_lens))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%d pages cannot hold these sequences (%d needed)", p->num_pages,
                        avk_kv_pages_needed(p, seq_lens));
    /* V's rows hold Dv values (an unequal pair is a contiguous cache: validation), as in attnvk_kv_gather */
    attnvk_problem vview = *p;
    vview.head_dim = avk_head_dim_v(p);
    out->bytes = attnvk_kv_bytes(p);
    const size_t v_bytes = attnvk_kv_bytes(&vview);
    out->k = calloc(1, out->bytes ? out->bytes : 1);
    out->v = calloc(1, v_bytes > out->bytes ? v_bytes : out->bytes ? out->bytes : 1);
    if (has_lens) out->seq_lens = malloc(sizeof(int32_t) * (size_t)p->batch);
    if (paged) out->block_table = malloc(sizeof(int32_t) * (size_t)p->batch * p->max_pages);
    if (p->kv_format == ATTNVK_KV_FP8) out->kv_scales = malloc(sizeof(float) * 2 * (size_t)p->kv_heads);
    int32_t *order = paged ? malloc(sizeof(int32_t) * (size_t)p->num_pages) : NULL;
    if (!out->k || !out->v || (has_lens && !out->seq_lens) || (paged && (!out->block_table || !order)) ||
        (p->kv_format == ATTNVK_KV_FP8 && !out->kv_scales)) {
        free(order);
        avk_kv_host_free(out);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the KV cache");
    }
    for (int b = 0; has_lens && b < p->batch; ++b) out->seq_lens[b] = seq_lens ? seq_lens[b] : p->seq_kv;
    if (out->kv_scales) {
        fp8_scales(p, k, out->seq_lens, out->kv_scales);
        fp8_scales(&vview, v, out->seq_lens, out->kv_scales + p->kv_heads);
        if (fp8_one_scale) {
            avk_fp8_one_scale(out->kv_scales, p->kv_heads);
            avk_fp8_one_scale(out->kv_scales + p->kv_heads, p->kv_heads);
        }
    }
    if (paged) { /* a shuffled free list; entries past a sequence's pages hold garbage */
        uint64_t s = seed;
        for (int i = 0; i < p->num_pages; ++i) order[i] = i;
        for (int i = p->num_pages - 1; i > 0; --i) {
            int j = (int)(next_random(&s) % (uint64_t)(i + 1));
            int32_t t = order[i];
            order[i] = order[j], order[j] = t;
        }
        int next = 0;
        for (int b = 0; b < p->batch; ++b) {
            int used = (avk_seq_len(p, out->seq_lens, b) + p->page_size - 1) / p->page_size;
            for (int e = 0; e < p->max_pages; ++e)
                out->block_table[(size_t)b * p->max_pages + e] =
                    e < used ? order[next++] : (int32_t)(next_random(&s) >> 33) * ((e & 1) ? -1 : 1);
        }
    }
    free(order);
    encode_job j = {.p = p, .vview = &vview, .k = k, .v = v, .out = out, .paged = paged, .has_lens = has_lens};
    avk_parallel_for((size_t)2 * p->batch * p->kv_heads, 1, 1, encode_heads, &j); /* K's (b, g) pairs, then V's */
    return ATTNVK_OK;
}

attnvk_status avk_kv_host_decoded(const attnvk_problem *p, const avk_kv_host *h, float *k, float *v)
{
    attnvk_status s = attnvk_kv_gather(p, h->k, h->block_table, h->seq_lens, h->kv_scales, 0, k);
    return s != ATTNVK_OK ? s : attnvk_kv_gather(p, h->v, h->block_table, h->seq_lens, h->kv_scales, 1, v);
}
