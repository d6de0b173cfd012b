/* `attnvk run --grad-out`: the backward pass on .npy files (run_grads.h). */
#include "run_grads.h"
#include "cli.h"
#include "core/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int run_grads_load(const run_args *a, const attnvk_problem *p, const avk_npy t[3], run_grads *g)
{
    memset(g, 0, sizeof *g);
    if (avk_npy_read(a->grad_out, &g->d_o) != ATTNVK_OK) return cli_error(EXIT_USAGE, "%s", attnvk_last_error());
    const int64_t want[4] = {t[0].shape[0], t[0].shape[1], t[0].shape[2], attnvk_problem_head_dim_v(p)};
    const avk_npy *d = &g->d_o;
    if (d->ndim != 4 || memcmp(d->shape, want, sizeof want) != 0) {
        char got[96] = "";
        for (int i = 0, n = 0; i < d->ndim && n < (int)sizeof got; ++i)
            n += snprintf(got + n, sizeof got - (size_t)n, "%s%lld", i ? "," : "", (long long)d->shape[i]);
        return cli_error(EXIT_USAGE, "run: --grad-out %s has shape [%s]; dO must have the output's shape [%lld,%lld,%lld,%lld]",
                         a->grad_out, got, (long long)want[0], (long long)want[1], (long long)want[2],
                         (long long)want[3]);
    }
    size_t bad = 0;
    for (size_t i = 0; i < d->count; ++i) bad += !isfinite(d->data[i]);
    attnvk_round_to_dtype(p->dtype, d->data, d->count);
    size_t inf = 0;
    for (size_t i = 0; i < d->count; ++i) inf += isinf(d->data[i]);
    if (bad) return cli_error(EXIT_USAGE, "run: --grad-out %s holds %zu NaN/Inf of %zu values; dO must be finite",
                              a->grad_out, bad, d->count);
    if (inf) return cli_error(EXIT_USAGE, "run: --grad-out %s has %zu values beyond the range of %s; use --dtype f32",
                              a->grad_out, inf, attnvk_dtype_name(p->dtype));
    return 0;
}

attnvk_status run_grads_compute(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                int deterministic, const attnvk_host_inputs *in, run_grads *g, float *o, float *lse,
                                attnvk_kernel_info *info, double *forward_ms)
{
    g->dq = malloc(sizeof(float) * attnvk_q_elements(p));
    g->dk = malloc(sizeof(float) * attnvk_kv_elements(p));
    g->dv = malloc(sizeof(float) * attnvk_v_elements(p));
    g->ds = malloc(sizeof(float) * (size_t)p->heads);
    if (!g->dq || !g->dk || !g->dv || !g->ds) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the gradients");
    attnvk_backward_options bopts;
    attnvk_backward_options_init(&bopts);
    bopts.deterministic = deterministic;
    const attnvk_host_grads hg = {.d_o = g->d_o.data, .dq = g->dq, .dk = g->dk, .dv = g->dv,
                                  .d_sinks = p->sinks ? g->ds : NULL};
    return attnvk_attention_backward_host(dev, p, opts, &bopts, in, &hg, o, lse, info, forward_ms, &g->ms);
}

static double rel_l2(const float *x, const float *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!isfinite(x[i])) return NAN;
        num += ((double)x[i] - ref[i]) * ((double)x[i] - ref[i]);
        den += (double)ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The gradients against the float64 reference: prints them, 1 when all pass. */
static int check_grads(const attnvk_problem *p, const attnvk_host_inputs *in, const run_grads *g)
{
    const size_t n[4] = {attnvk_q_elements(p), attnvk_kv_elements(p), attnvk_v_elements(p), (size_t)p->heads};
    float *ref[4] = {malloc(sizeof(float) * n[0]), malloc(sizeof(float) * n[1]), malloc(sizeof(float) * n[2]),
                     malloc(sizeof(float) * n[3])};
    int ok = ref[0] && ref[1] && ref[2] && ref[3];
    if (ok) {
        const attnvk_host_grads want = {.d_o = g->d_o.data, .dq = ref[0], .dk = ref[1], .dv = ref[2],
                                        .d_sinks = p->sinks ? ref[3] : NULL};
        attnvk_reference_backward(p, in, &want);
        const float *got[4] = {g->dq, g->dk, g->dv, g->ds};
        static const char *const name[4] = {"dq", "dk", "dv", "dsinks"};
        const double tol = attnvk_backward_tolerance(p->dtype);
        for (int i = 0; i < (p->sinks ? 4 : 3); ++i) {
            /* d(sinks) may cancel far below its terms: judged against their size */
            const double r = i == 3 ? attnvk_dsinks_error(p, in, g->d_o.data, got[i], ref[i]) : rel_l2(got[i], ref[i], n[i]);
            printf(" %s %.3e", name[i], r);
            ok = ok && r <= tol; /* NaN fails */
        }
        printf(" (tolerance %.0e): %s", tol, ok ? "pass" : "FAIL");
    }
    for (int i = 0; i < 4; ++i) free(ref[i]);
    return ok;
}

int run_grads_finish(const run_args *a, const attnvk_problem *p, const avk_npy t[3], const attnvk_host_inputs *in,
                     run_grads *g)
{
    const char *paths[4] = {a->out_dq, a->out_dk, a->out_dv, a->out_dsinks};
    const float *data[4] = {g->dq, g->dk, g->dv, g->ds};
    const int64_t sinks_shape[1] = {p->heads};
    const int64_t *shapes[4] = {t[0].shape, t[1].shape, t[2].shape, sinks_shape};
    for (int i = 0; i < 4; ++i)
        if (paths[i] && avk_npy_write(paths[i], data[i], i == 3 ? 1 : 4, shapes[i]) != ATTNVK_OK)
            return cli_error(EXIT_FAILED, "%s", attnvk_last_error());
    printf(", backward %.3f ms", g->ms);
    if (a->check && !check_grads(p, in, g)) return EXIT_FAILED;
    return 0;
}

void run_grads_free(run_grads *g)
{
    avk_npy_free(&g->d_o);
    free(g->dq), free(g->dk), free(g->dv), free(g->ds);
}
