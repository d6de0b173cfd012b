/* Internals of the CPU reference shared with the CPU backend. */
#ifndef ATTNVK_REFERENCE_H
#define ATTNVK_REFERENCE_H

#include "attnvk/attnvk.h"

/* Row job: rows are flat (b*H + h)*Nq + i; drop_keys > 0 ignores the last
 * drop_keys visible keys of every row (the test-only wrong kernel). Either out_f32
 * (written into O's layout) or out_f64 (nrows x D) receives the result. */
typedef struct avk_reference_job {
    const attnvk_problem *p;
    const float *q, *k, *v;
    const int32_t *kv_lens; /* [B] keys per sequence, NULL: Nk */
    const float *mask, *sinks, *alibi_slopes; /* as in attnvk_host_inputs, when the problem asks */
    const size_t *rows; /* NULL: rows 0..nrows-1 */
    size_t nrows;
    int drop_keys;
    float *out_f32;
    float *lse_f32;     /* [B][H][Nq], may be NULL */
    double *out_f64;
    double *lse_f64;    /* nrows, may be NULL */
} avk_reference_job;

void avk_reference_run(const avk_reference_job *job);
int avk_cpu_threads(void);

#endif
