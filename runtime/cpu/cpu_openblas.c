/* The CPU device's vendor baseline: unfused attention on OpenBLAS, loaded at
 * run time (libopenblas.so.0, Debian's libopenblas0; ATTNVK_OPENBLAS_LIBRARY
 * names another). Per (b, h) and tile of query rows:
 *   S = scale Q K^T        cblas_sgemm over the keys the tile's rows can see
 *   P = softmax(S)         every score feature, rows split over threads
 *   O = P V                cblas_sgemm, straight into O
 * The tile holds at most OB_SCORES scores, so memory stays bounded whatever
 * Nq x Nk is. Like cuBLAS's and CLBlast's baselines it runs f32 on
 * contiguous caches (ragged lengths too); OpenBLAS threads its GEMMs itself. */
#include "cpu/cpu_flash.h"
#include "cpu/cpu_simd.h"
#include "core/dynlib.h"
#include "core/error.h"
#include "core/layout.h"
#include "core/sparse.h"
#include "core/kv_cache.h"
#include "core/parallel.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 }; /* cblas.h's values */
enum { OB_SCORES = 8 << 20 };                                            /* 32 MiB of f32 scores a tile */

typedef void (*sgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a,
                         int lda, const float *b, int ldb, float beta, float *c, int ldc);
typedef char *(*config_fn)(void);

static avk_dynlib *ob_lib;
static sgemm_fn ob_sgemm;
static int ob_tried;
static char ob_reason[512];
static char ob_config[160];

int avk_openblas_available(const char **why)
{
    if (!ob_tried) {
        ob_tried = 1;
        const char *override = getenv("ATTNVK_OPENBLAS_LIBRARY");
        const char *const default_names[] = {"libopenblas.so.0", "libopenblas.so", NULL};
        const char *const override_names[] = {override, NULL};
        ob_lib = avk_dynlib_open(override && *override ? override_names : default_names);
        if (ob_lib) {
            const avk_symbol sym[] = {{"cblas_sgemm", (void **)&ob_sgemm}};
            if (avk_dynlib_bind(ob_lib, sym, 1) != ATTNVK_OK) {
                avk_dynlib_close(ob_lib);
                ob_lib = NULL;
                ob_sgemm = NULL;
            }
        }
        if (ob_lib) {
            config_fn config = (config_fn)avk_dynlib_sym(ob_lib, "openblas_get_config");
            const char *text = config ? config() : NULL;
            snprintf(ob_config, sizeof ob_config, "%s", text ? text : "OpenBLAS (no config)");
        } else {
            snprintf(ob_reason, sizeof ob_reason, "%s (Debian: apt-get install libopenblas0)", attnvk_last_error());
        }
    }
    if (why) *why = ob_lib ? "" : ob_reason;
    return ob_lib != NULL;
}

const char *avk_openblas_config(void) { return ob_config; }

void avk_openblas_unload(void)
{
    avk_dynlib_close(ob_lib);
    ob_lib = NULL;
    ob_sgemm = NULL;
    ob_tried = 0;
    ob_config[0] = '\0';
}

attnvk_status avk_openblas_check(const attnvk_problem *p)
{
    if (p->dtype != ATTNVK_F32)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the openblas baseline runs f32 only (cblas_sgemm)");
    if (p->page_size > 0) return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the openblas baseline does not support paged KV caches");
    if (p->kv_format != ATTNVK_KV_DTYPE)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the openblas baseline does not support %s KV caches",
                        attnvk_kv_format_name(p->kv_format));
    return ATTNVK_OK;
}

/* one row tile of one (b, h) */
typedef struct ob_tile {
    const avk_cpu_job *job;
    const avk_cpu_simd *simd;
    int b, h, i0, len, kl, width;
    float *s; /* [rows][width]: scores, then P */
} ob_tile;

/* The row softmax: visibility, softcap, ALiBi, mask, the sink; P normalised; the LSE */
static void softmax_rows(void *ctx, size_t begin, size_t end)
{
    const ob_tile *t = ctx;
    const attnvk_problem *p = t->job->p;
    for (size_t r = begin; r < end; ++r) {
        const int i = t->i0 + (int)r;
        float *s = t->s + r * (size_t)t->width;
        int lo, hi;
        avk_visible_range(p, i, t->len, &lo, &hi);
        avk_sparse_row_range(p, t->h, i, &lo, &hi);
        int e = (hi < t->kl + t->width ? hi : t->kl + t->width) - t->kl, a = (lo > t->kl ? lo : t->kl) - t->kl;
        if (e < 0) e = 0;
        if (a > e) a = e; /* an empty row: [a, e) empty inside the tile */
        const long long pos = avk_row_position(p, i, t->len);
        if (p->softcap > 0)
            for (int j = a; j < e; ++j) s[j] = p->softcap * tanhf(s[j] / p->softcap);
        if (p->alibi) {
            const float slope = t->job->alibi_slopes[t->h];
            for (int j = a; j < e; ++j) s[j] += slope * (float)((long long)(t->kl + j) - pos);
        }
        if (p->mask) {
            const size_t mb = p->mask_batch > 1 ? (size_t)t->b : 0, mh = p->mask_heads > 1 ? (size_t)t->h : 0;
            const size_t off = ((mb * p->mask_heads + mh) * p->seq_q + i) * (size_t)p->seq_kv + t->kl;
            if (p->mask_dtype == ATTNVK_F16)
                for (int j = a; j < e; ++j) s[j] += attnvk_f16_to_f32(((const uint16_t *)t->job->mask)[off + j]);
            else
                for (int j = a; j < e; ++j) s[j] += ((const float *)t->job->mask)[off + j];
        }
        if (p->block_sparse || p->dilated_groups) { /* the patterns as a dense mask: hidden keys -inf */
            const uint8_t *row = p->block_sparse ? avk_layout_row(p, t->job->block_layout, t->b, t->h, i) : NULL;
            for (int j = a; j < e; ++j)
                if (!avk_sparse_key_visible(p, row, t->h, t->kl + j)) s[j] = -INFINITY;
        }
        for (int j = a; j < e; ++j) s[j] *= LOG2E;
        const float sink = p->sinks ? t->job->sinks[t->h] * LOG2E : -INFINITY;
        float m = a < e ? t->simd->max(s + a, e - a) : -INFINITY;
        if (sink > m) m = sink;
        float sum = 0;
        if (m != -INFINITY) {
            if (a < e) sum = t->simd->exp2_sum(s + a, e - a, m);
            if (p->sinks) sum += exp2f(sink - m);
        }
        const float inv = sum > 0 ? 1.0f / sum : 0.f;
        for (int j = 0; j < a; ++j) s[j] = 0;
        if (sum > 0)
            for (int j = a; j < e; ++j) s[j] *= inv;
        else /* every visible key masked (-inf): no P, not -inf * 0 */
            for (int j = a; j < e; ++j) s[j] = 0;
        for (int j = e; j < t->width; ++j) s[j] = 0;
        if (t->job->lse)
            t->job->lse[((size_t)t->b * p->heads + t->h) * p->seq_q + i] =
                sum > 0 ? (float)(((double)m + log2((double)sum)) * LN2) : -INFINITY;
    }
}

attnvk_status avk_openblas_run(const avk_cpu_job *job)
{
    const attnvk_problem *p = job->p;
    if (!avk_openblas_available(NULL)) return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "openblas unavailable: %s", ob_reason);
    attnvk_status st = avk_openblas_check(p);
    if (st != ATTNVK_OK || job->q_count <= 0) return st;
    const int D = p->head_dim, Dv = avk_head_dim_v(p), G = p->heads / p->kv_heads;
    const int bshd = p->layout == ATTNVK_LAYOUT_BSHD;
    const int ldq = bshd ? p->heads * D : D, ldk = bshd ? p->kv_heads * D : D;
    const int ldv = bshd ? p->kv_heads * Dv : Dv, ldo = bshd ? p->heads * Dv : Dv;
    int tile = OB_SCORES / (p->seq_kv > 0 ? p->seq_kv : 1);
    if (tile < 1) tile = 1;
    if (tile > job->q_count) tile = job->q_count;
    float *s = malloc(sizeof(float) * (size_t)tile * (p->seq_kv > 0 ? (size_t)p->seq_kv : 1));
    if (!s) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the openblas score tile");
    const float *q = job->q, *k = job->k, *v = job->v;
    float *o = job->o;
    const float scale = attnvk_problem_scale(p);
    const int q_end = job->q_begin + job->q_count;
    for (int b = 0; b < p->batch; ++b) {
        const int len = job->seq_lens && avk_problem_has_seq_lens(p) ? avk_seq_len(p, job->seq_lens, b) : p->seq_kv;
        for (int h = 0; h < p->heads; ++h) {
            const int g = h / G;
            for (int i0 = job->q_begin; i0 < q_end; i0 += tile) {
                const int rows = q_end - i0 < tile ? q_end - i0 : tile;
                int kl = INT_MAX, kh = 0;
                for (int i = i0; i < i0 + rows; ++i) {
                    int lo, hi;
                    avk_visible_range(p, i, len, &lo, &hi);
                    if (lo < hi) {
                        if (lo < kl) kl = lo;
                        if (hi > kh) kh = hi;
                    }
                }
                ob_tile t = {.job = job, .simd = avk_cpu_simd_get(), .b = b, .h = h, .i0 = i0, .len = len,
                             .kl = kl < kh ? kl : 0, .width = kl < kh ? kh - kl : 0, .s = s};
                if (t.width > 0)
                    ob_sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_TRANS, rows, t.width, D, scale,
                             q + avk_q_offset(p, b, h, i0), ldq, k + avk_kv_offset(p, b, g, t.kl), ldk, 0.f, s,
                             t.width);
                /* at least 8k scores a thread */
                avk_parallel_for((size_t)rows, t.width > 0 ? 8192 / (size_t)t.width + 1 : (size_t)rows, 1,
                                 softmax_rows, &t);
                float *orow = o + avk_o_offset(p, b, h, i0);
                if (t.width > 0)
                    ob_sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, rows, Dv, t.width, 1.f, s, t.width,
                             v + avk_v_offset(p, b, g, t.kl), ldv, 0.f, orow, ldo);
                else
                    for (int r = 0; r < rows; ++r) memset(orow + (size_t)r * ldo, 0, sizeof(float) * (size_t)Dv);
            }
        }
    }
    free(s);
    return ATTNVK_OK;
}
