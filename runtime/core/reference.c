/* The oracle: plain attention, float64 accumulation, rows split over threads. */
#include "core/parallel.h"
#include "core/reference.h"
#include "core/layout.h"
#include "core/sparse.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

int avk_cpu_threads(void)
{
    const char *env = getenv("ATTNVK_CPU_THREADS");
    long n = env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > 256) n = 256;
    return (int)n;
}

static void attend_row(const avk_reference_job *job, size_t slot, size_t row, double *scores, double *acc)
{
    const attnvk_problem *p = job->p;
    const int D = p->head_dim, Dv = avk_head_dim_v(p); /* Q.K over D, P.V and O over Dv */
    const int i = (int)(row % (size_t)p->seq_q);
    const int h = (int)((row / (size_t)p->seq_q) % (size_t)p->heads);
    const int b = (int)(row / ((size_t)p->seq_q * p->heads));
    const int g = h / (p->heads / p->kv_heads);
    const double scale = attnvk_problem_scale(p);
    const int len = avk_seq_len(p, job->kv_lens, b);
    int lo, hi;
    avk_visible_range(p, i, len, &lo, &hi);
    avk_sparse_row_range(p, h, i, &lo, &hi);
    if (job->drop_keys > 0) hi = hi - lo > job->drop_keys ? hi - job->drop_keys : lo;
    const long long pos = avk_row_position(p, i, len);
    const uint8_t *layout_row = p->block_sparse ? avk_layout_row(p, job->block_layout, b, h, i) : NULL;
    const int sparse = layout_row || p->dilated_groups;
    const double slope = p->alibi ? job->alibi_slopes[h] : 0.0;
    const float *mask_row = avk_reference_mask_row(p, job->mask, b, h, i);

    const float *qr = job->q + avk_q_offset(p, b, h, i);
    double m = p->sinks ? (double)job->sinks[h] : -INFINITY;
    for (int j = lo; j < hi; ++j) {
        if (sparse && !avk_sparse_key_visible(p, layout_row, h, j)) {
            scores[j - lo] = -INFINITY; /* adds nothing below */
            continue;
        }
        const float *kr = job->k + avk_kv_offset(p, b, g, j);
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += (double)qr[d] * kr[d];
        scores[j - lo] = avk_reference_score(p, dot, scale, slope, pos, mask_row, j, NULL);
        if (scores[j - lo] > m) m = scores[j - lo];
    }
    for (int d = 0; d < Dv; ++d) acc[d] = 0;
    double sum = 0;
    if (m != -INFINITY) { /* else no visible key (or all masked) and no sink: zeros */
        sum = p->sinks ? exp((double)job->sinks[h] - m) : 0.0;
        for (int j = lo; j < hi; ++j) {
            double e = exp(scores[j - lo] - m);
            if (e == 0) continue; /* a key no pattern shows (or the mask's -inf) */
            sum += e;
            const float *vr = job->v + avk_v_offset(p, b, g, j);
            for (int d = 0; d < Dv; ++d) acc[d] += e * vr[d];
        }
    }
    double inv = sum > 0 ? 1.0 / sum : 0.0;
    double lse = sum > 0 ? m + log(sum) : -INFINITY;
    if (job->out_f32) {
        float *orow = job->out_f32 + avk_o_offset(p, b, h, i);
        for (int d = 0; d < Dv; ++d) orow[d] = (float)(acc[d] * inv);
    }
    if (job->lse_f32) job->lse_f32[((size_t)b * p->heads + h) * p->seq_q + i] = (float)lse;
    if (job->out_f64)
        for (int d = 0; d < Dv; ++d) job->out_f64[slot * Dv + d] = acc[d] * inv;
    if (job->lse_f64) job->lse_f64[slot] = lse;
}

/* Rows [begin, end) of the job, with this slice's own scratch. */
static void work(void *ctx, size_t begin, size_t end)
{
    const avk_reference_job *job = ctx;
    const attnvk_problem *p = job->p;
    double *scores = malloc(sizeof(double) * (size_t)p->seq_kv);
    double *acc = malloc(sizeof(double) * (size_t)avk_head_dim_v(p));
    if (scores && acc)
        for (size_t s = begin; s < end; ++s) attend_row(job, s, job->rows ? job->rows[s] : s, scores, acc);
    free(scores);
    free(acc);
}

void avk_reference_run(const avk_reference_job *job)
{
    /* small jobs aren't worth a thread each: about 64k multiply-adds a slice at least */
    size_t work_per_row = (size_t)job->p->seq_kv * ((size_t)job->p->head_dim + avk_head_dim_v(job->p));
    size_t min_rows = work_per_row ? 65536 / work_per_row + 1 : 1;
    avk_parallel_for(job->nrows, min_rows, 1, work, (void *)job);
}

void attnvk_reference(const attnvk_problem *p, const float *q, const float *k, const float *v, float *o,
                      float *lse)
{
    avk_reference_job job = {.p = p, .q = q, .k = k, .v = v,
                             .nrows = (size_t)p->batch * p->heads * p->seq_q,
                             .out_f32 = o, .lse_f32 = lse};
    avk_reference_run(&job);
}

void attnvk_reference_rows(const attnvk_problem *p, const float *q, const float *k, const float *v,
                           const size_t *rows, size_t nrows, double *out, double *lse)
{
    avk_reference_job job = {.p = p, .q = q, .k = k, .v = v, .rows = rows, .nrows = nrows,
                             .out_f64 = out, .lse_f64 = lse};
    avk_reference_run(&job);
}

void attnvk_reference_ragged(const attnvk_problem *p, const float *q, const float *k, const float *v,
                             const int32_t *kv_lens, float *o, float *lse)
{
    avk_reference_job job = {.p = p, .q = q, .k = k, .v = v, .kv_lens = kv_lens,
                             .nrows = (size_t)p->batch * p->heads * p->seq_q,
                             .out_f32 = o, .lse_f32 = lse};
    avk_reference_run(&job);
}

void attnvk_reference_inputs(const attnvk_problem *p, const attnvk_host_inputs *in, float *o, float *lse)
{
    avk_reference_job job = {.p = p, .q = in->q, .k = in->k, .v = in->v, .kv_lens = in->kv_lens,
                             .mask = in->mask, .sinks = in->sinks, .alibi_slopes = in->alibi_slopes,
                             .block_layout = in->block_layout, .nrows = (size_t)p->batch * p->heads * p->seq_q,
                             .out_f32 = o, .lse_f32 = lse};
    avk_reference_run(&job);
}

void attnvk_alibi_slopes(int heads, float *out)
{
    int n = 1;
    while (n * 2 <= heads) n *= 2;
    const double m0 = pow(2.0, -8.0 / n), m1 = pow(2.0, -4.0 / n);
    for (int h = 0; h < heads; ++h) out[h] = (float)(h < n ? pow(m0, h + 1) : pow(m1, 2 * (h - n) + 1));
}
