/* Internals of the CPU reference shared with the CPU backend. */
#ifndef ATTNVK_REFERENCE_H
#define ATTNVK_REFERENCE_H

#include "attnvk/attnvk.h"

#include <math.h>

/* Row job: rows are flat (b*H + h)*Nq + i; drop_keys > 0 ignores the last
 * drop_keys visible keys of every row (the test-only wrong kernel). Either out_f32
 * (written into O's layout) or out_f64 (nrows x D) receives the result. */
typedef struct avk_reference_job {
    const attnvk_problem *p;
    const float *q, *k, *v;
    const int32_t *kv_lens; /* [B] keys per sequence, NULL: Nk */
    const float *mask, *sinks, *alibi_slopes; /* as in attnvk_host_inputs, when the problem asks */
    const uint8_t *block_layout;              /* with block_sparse */
    const size_t *rows; /* NULL: rows 0..nrows-1 */
    size_t nrows;
    int drop_keys;
    float *out_f32;
    float *lse_f32;     /* [B][H][Nq], may be NULL */
    double *out_f64;
    double *lse_f64;    /* nrows, may be NULL */
} avk_reference_job;

void avk_reference_run(const avk_reference_job *job);

/* Score of key j for a row at position pos (attnvk.h's order: scale, softcap,
 * ALiBi, mask); *dsdx, when asked, is its derivative with respect to
 * scale * dot: the softcap's 1 - tanh^2, else 1 (ALiBi and the mask add). */
static inline double avk_reference_score(const attnvk_problem *p, double dot, double scale, double slope, long long pos,
                                         const float *mask_row, int j, double *dsdx)
{
    double s = dot * scale, d = 1.0;
    if (p->softcap > 0) {
        const double t = tanh(s / p->softcap);
        s = p->softcap * t;
        d = 1.0 - t * t;
    }
    if (p->alibi) s += slope * (double)(j - pos);
    if (mask_row) s += mask_row[j];
    if (dsdx) *dsdx = d;
    return s;
}

/* Row i's mask of (b, h) in a [mask_batch][mask_heads][Nq][Nk] mask, or NULL without one. */
static inline const float *avk_reference_mask_row(const attnvk_problem *p, const float *mask, int b, int h, int i)
{
    if (!p->mask) return NULL;
    const size_t mb = p->mask_batch > 1 ? (size_t)b : 0, mh = p->mask_heads > 1 ? (size_t)h : 0;
    return mask + ((mb * p->mask_heads + mh) * p->seq_q + i) * (size_t)p->seq_kv;
}
int avk_cpu_threads(void);

#endif
