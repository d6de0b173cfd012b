/* Ring attention's scatter of the whole sequence's inputs to the ranks'
 * chunks (BHSD in dtype on each device) and gather of O and the LSE. */
#include "core/ring.h"

#include "core/api_objects.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

/* Row (b, h, token) of a whole-sequence tensor of `heads` heads in p's layout. */
static size_t whole_row(const attnvk_problem *p, int heads, int b, int h, int token)
{
    return p->layout == ATTNVK_LAYOUT_BSHD ? ((size_t)b * p->seq_q + token) * heads + h
                                           : ((size_t)b * heads + h) * p->seq_q + token;
}

static void gather_chunk(const attnvk_problem *p, const float *whole, int heads, int begin, int len, float *chunk)
{
    size_t d = (size_t)p->head_dim;
    for (int b = 0; b < p->batch; b++)
        for (int h = 0; h < heads; h++)
            for (int t = 0; t < len; t++)
                memcpy(chunk + (((size_t)b * heads + h) * len + t) * d, whole + whole_row(p, heads, b, h, begin + t) * d,
                       d * sizeof(float));
}

static void scatter_chunk(const attnvk_problem *p, const float *chunk, int heads, int begin, int len, float *whole)
{
    size_t d = (size_t)p->head_dim;
    for (int b = 0; b < p->batch; b++)
        for (int h = 0; h < heads; h++)
            for (int t = 0; t < len; t++)
                memcpy(whole + whole_row(p, heads, b, h, begin + t) * d, chunk + (((size_t)b * heads + h) * len + t) * d,
                       d * sizeof(float));
}

static attnvk_status put_chunk(attnvk_ring *r, attnvk_buffer *buf, const float *whole, int heads, int chunk)
{
    const attnvk_problem *p = &r->p;
    int begin = r->plan.begin[chunk], len = avk_ring_chunk_len(&r->plan, chunk);
    size_t n = (size_t)p->batch * heads * len * p->head_dim;
    gather_chunk(p, whole, heads, begin, len, r->staging_f32);
    attnvk_pack(p->dtype, r->staging_f32, r->staging, n);
    return attnvk_buffer_write(buf, 0, r->staging, n * attnvk_dtype_size(p->dtype));
}

attnvk_status attnvk_ring_upload(attnvk_ring *r, const attnvk_host_inputs *in)
{
    if (!r || !in || !in->q || !in->k || !in->v)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring upload: no ring or no Q, K and V given");
    const attnvk_problem *p = &r->p;
    if (in->kv_lens) return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "ring attention: ragged lengths not supported yet");
    if (p->alibi && !in->alibi_slopes)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring upload: the problem has ALiBi but no slopes were given");
    attnvk_status s = ATTNVK_OK;
    r->uploaded = 0;
    for (int k = 0; k < r->ranks && s == ATTNVK_OK; k++) {
        ring_rank *rk = &r->rank[k];
        for (int i = 0; i < rk->n && s == ATTNVK_OK; i++) {
            s = put_chunk(r, rk->q[i], in->q, p->heads, rk->chunk[i]);
            if (s == ATTNVK_OK) s = put_chunk(r, rk->k[0][i], in->k, p->kv_heads, rk->chunk[i]);
            if (s == ATTNVK_OK) s = put_chunk(r, rk->v[0][i], in->v, p->kv_heads, rk->chunk[i]);
        }
        if (s == ATTNVK_OK && p->alibi) /* every block adds them at its own i' (its position offset) */
            s = attnvk_buffer_write(rk->slopes, 0, in->alibi_slopes, (size_t)p->heads * sizeof(float));
    }
    r->uploaded = s == ATTNVK_OK;
    return s;
}

attnvk_status attnvk_ring_download(attnvk_ring *r, float *o, float *lse)
{
    if (!r || !o) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring download: no ring or no output given");
    const attnvk_problem *p = &r->p;
    attnvk_status s = ATTNVK_OK;
    for (int k = 0; k < r->ranks && s == ATTNVK_OK; k++) {
        ring_rank *rk = &r->rank[k];
        for (int i = 0; i < rk->n && s == ATTNVK_OK; i++) {
            int c = rk->chunk[i], begin = r->plan.begin[c], len = avk_ring_chunk_len(&r->plan, c);
            size_t rows = (size_t)p->batch * p->heads * len, n = rows * p->head_dim;
            s = attnvk_buffer_read(rk->o[i], 0, r->staging, n * attnvk_dtype_size(p->dtype));
            if (s != ATTNVK_OK) break;
            attnvk_unpack(p->dtype, r->staging, r->staging_f32, n);
            scatter_chunk(p, r->staging_f32, p->heads, begin, len, o);
            if (!lse) continue;
            const float *chunk_lse = rk->host_acc_lse[i];
            if (rk->device_merge) {
                s = attnvk_buffer_read(rk->acc_lse[i], 0, r->staging_lse, rows * sizeof(float));
                chunk_lse = r->staging_lse;
            }
            for (size_t row = 0; row < rows && s == ATTNVK_OK; row++) /* row = (b * H + h) * len + t */
                lse[(row / len) * p->seq_q + begin + row % len] = chunk_lse[row];
        }
    }
    return s;
}
