/* The oracle: plain attention, float64 accumulation, rows split over threads. */
#include "core/parallel.h"
#include "core/reference.h"
#include "core/layout.h"

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
    const int D = p->head_dim;
    const int i = (int)(row % (size_t)p->seq_q);
    const int h = (int)((row / (size_t)p->seq_q) % (size_t)p->heads);
    const int b = (int)(row / ((size_t)p->seq_q * p->heads));
    const int g = h / (p->heads / p->kv_heads);
    const double scale = attnvk_problem_scale(p);
    int n = avk_visible_keys_of(p, i, avk_seq_len(p, job->kv_lens, b));
    if (job->drop_keys > 0) n = n > job->drop_keys ? n - job->drop_keys : 0;

    const float *qr = job->q + avk_q_offset(p, b, h, i);
    double m = -INFINITY;
    for (int j = 0; j < n; ++j) {
        const float *kr = job->k + avk_kv_offset(p, b, g, j);
        double s = 0;
        for (int d = 0; d < D; ++d) s += (double)qr[d] * kr[d];
        scores[j] = s * scale;
        if (scores[j] > m) m = scores[j];
    }
    for (int d = 0; d < D; ++d) acc[d] = 0;
    double sum = 0;
    for (int j = 0; j < n; ++j) {
        double e = exp(scores[j] - m);
        sum += e;
        const float *vr = job->v + avk_kv_offset(p, b, g, j);
        for (int d = 0; d < D; ++d) acc[d] += e * vr[d];
    }
    double inv = n > 0 ? 1.0 / sum : 0.0;
    double lse = n > 0 ? m + log(sum) : -INFINITY;
    if (job->out_f32) {
        float *orow = job->out_f32 + avk_q_offset(p, b, h, i);
        for (int d = 0; d < D; ++d) orow[d] = (float)(acc[d] * inv);
    }
    if (job->lse_f32) job->lse_f32[((size_t)b * p->heads + h) * p->seq_q + i] = (float)lse;
    if (job->out_f64)
        for (int d = 0; d < D; ++d) job->out_f64[slot * D + d] = acc[d] * inv;
    if (job->lse_f64) job->lse_f64[slot] = lse;
}

/* Rows [begin, end) of the job, with this slice's own scratch. */
static void work(void *ctx, size_t begin, size_t end)
{
    const avk_reference_job *job = ctx;
    const attnvk_problem *p = job->p;
    double *scores = malloc(sizeof(double) * (size_t)p->seq_kv);
    double *acc = malloc(sizeof(double) * (size_t)p->head_dim);
    if (scores && acc)
        for (size_t s = begin; s < end; ++s) attend_row(job, s, job->rows ? job->rows[s] : s, scores, acc);
    free(scores);
    free(acc);
}

void avk_reference_run(const avk_reference_job *job)
{
    /* small jobs aren't worth a thread each: about 64k multiply-adds a slice at least */
    size_t work_per_row = (size_t)job->p->seq_kv * job->p->head_dim;
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
