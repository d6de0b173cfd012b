/* --pass bwd and fwd+bwd (bench_backward.h). */
#include "bench_backward.h"

#include "bench_stats.h"
#include "core/error.h"
#include "core/layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MIN_SAMPLES = 3, MAX_SAMPLES = 2000, BUSY_GPU_MS = 3000 };

typedef struct bwd_job {
    bench_target *t;
    const bench_run_config *cfg;
    attnvk_problem p;
    attnvk_kernel *kernel;     /* the record's implementation: its forward (fwd+bwd) and its backward */
    attnvk_kernel *lse_kernel; /* a vendor's record: attnvk's forward, for the O and LSE its backward reads */
    attnvk_tensors fwd;
    attnvk_grad_tensors grad;
    int stopped;
} bwd_job;

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int stop_requested(bwd_job *j)
{
    if (!j->stopped && j->cfg->stop && *j->cfg->stop) j->stopped = 1;
    return j->stopped;
}

static void progress(bwd_job *j, const char *phase, long done, long expected)
{
    if (j->cfg->on_progress) j->cfg->on_progress(j->cfg->progress_ctx, phase, done, expected);
}

/* Q, K, V, O, LSE, dO, dQ, dK, dV of one input set. */
static double grad_io_bytes(const attnvk_problem *p)
{
    const double es = (double)attnvk_dtype_size(p->dtype);
    const double qkvo = (double)attnvk_q_elements(p) + attnvk_kv_elements(p) + attnvk_v_elements(p) +
                        attnvk_o_elements(p);
    return es * (2 * qkvo) + 4.0 * p->batch * p->heads * p->seq_q;
}

/* What no backward record runs; 1 with r skipped. */
static int backward_precheck(const bench_target *t, const bench_run_config *cfg, bench_record *r)
{
    const attnvk_problem *p = &r->c.p;
    if (bench_memory_bound(p)) {
        bench_record_set(r, BENCH_SKIPPED, "decode shape (Nq = %d <= 16): the backward pass is benchmarked on "
                                           "training shapes",
                         p->seq_q);
        return 1;
    }
    if (p->page_size > 0 || p->kv_format != ATTNVK_KV_DTYPE) {
        bench_record_set(r, BENCH_SKIPPED, "the backward pass takes a contiguous K/V in the problem's dtype, not a "
                                           "paged or quantized cache");
        return 1;
    }
    double need = grad_io_bytes(p), limit = cfg->max_memory ? (double)cfg->max_memory : (double)t->info.memory_bytes;
    if (limit > 0 && need > limit) {
        char a[32], b[32];
        bench_format_bytes(need, a, sizeof a);
        bench_format_bytes(limit, b, sizeof b);
        bench_record_set(r, BENCH_SKIPPED, "needs %s of device memory (Q,K,V,O,LSE and dO,dQ,dK,dV), %s %s", a,
                         cfg->max_memory ? "--max-memory allows" : "the device has", b);
        return 1;
    }
    return 0;
}

static attnvk_status alloc(bwd_job *j, size_t bytes, attnvk_buffer **out)
{
    return attnvk_buffer_create(j->t->dev, bytes ? bytes : 4, out);
}

static attnvk_status allocate(bwd_job *j)
{
    const attnvk_problem *p = &j->p;
    const size_t es = attnvk_dtype_size(p->dtype);
    const size_t q = attnvk_q_elements(p) * es, k = attnvk_kv_elements(p) * es, v = attnvk_v_elements(p) * es,
                 o = attnvk_o_elements(p) * es, lse = sizeof(float) * (size_t)p->batch * p->heads * p->seq_q;
    attnvk_status s = alloc(j, q, &j->fwd.q);
    if (s == ATTNVK_OK) s = alloc(j, k, &j->fwd.k);
    if (s == ATTNVK_OK) s = alloc(j, v, &j->fwd.v);
    if (s == ATTNVK_OK) s = alloc(j, o, &j->fwd.o);
    if (s == ATTNVK_OK) s = alloc(j, lse, &j->fwd.lse);
    if (s == ATTNVK_OK) s = alloc(j, o, &j->grad.d_o);
    if (s == ATTNVK_OK) s = alloc(j, q, &j->grad.dq);
    if (s == ATTNVK_OK) s = alloc(j, k, &j->grad.dk);
    if (s == ATTNVK_OK) s = alloc(j, v, &j->grad.dv);
    return s;
}

static void release(bwd_job *j)
{
    attnvk_buffer *all[] = {j->fwd.q,     j->fwd.k,      j->fwd.v,     j->fwd.o,      j->fwd.lse,
                            j->fwd.mask,  j->fwd.sinks,  j->fwd.alibi_slopes, j->grad.d_o,
                            j->grad.dq,   j->grad.dk,    j->grad.dv};
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i) attnvk_buffer_destroy(all[i]);
    attnvk_kernel_destroy(j->kernel);
    attnvk_kernel_destroy(j->lse_kernel);
}

/* n host floats packed to dt and written whole. */
static attnvk_status write_values(bwd_job *j, attnvk_dtype dt, const float *src, size_t n, attnvk_buffer **b)
{
    const size_t bytes = n * attnvk_dtype_size(dt);
    if (!*b) {
        attnvk_status s = alloc(j, bytes, b);
        if (s != ATTNVK_OK) return s;
    }
    void *packed = malloc(bytes ? bytes : 1);
    if (!packed) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_pack(dt, src, packed, n);
    attnvk_status s = attnvk_buffer_write(*b, 0, packed, bytes);
    free(packed);
    return s;
}

/* NaN in every element, so whatever a kernel leaves unwritten shows. */
static attnvk_status poison(bwd_job *j, attnvk_buffer *b, size_t n)
{
    float *nan_values = malloc(sizeof(float) * (n ? n : 1));
    if (!nan_values) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (size_t i = 0; i < n; ++i) nan_values[i] = NAN;
    attnvk_status s = write_values(j, j->p.dtype, nan_values, n, &b);
    free(nan_values);
    return s;
}

static attnvk_status upload(bwd_job *j, const bench_grad_workload *w)
{
    const attnvk_problem *p = &j->p;
    const bench_workload *b = &w->base;
    attnvk_status s = write_values(j, p->dtype, b->q, attnvk_q_elements(p), &j->fwd.q);
    if (s == ATTNVK_OK) s = write_values(j, p->dtype, b->k, attnvk_kv_elements(p), &j->fwd.k);
    if (s == ATTNVK_OK) s = write_values(j, p->dtype, b->v, attnvk_v_elements(p), &j->fwd.v);
    if (s == ATTNVK_OK) s = write_values(j, p->dtype, w->d_o, attnvk_o_elements(p), &j->grad.d_o);
    if (s == ATTNVK_OK && b->mask) s = write_values(j, p->mask_dtype, b->mask, b->nmask, &j->fwd.mask);
    if (s == ATTNVK_OK && b->sinks) s = write_values(j, ATTNVK_F32, b->sinks, (size_t)p->heads, &j->fwd.sinks);
    if (s == ATTNVK_OK && b->slopes)
        s = write_values(j, ATTNVK_F32, b->slopes, (size_t)p->heads, &j->fwd.alibi_slopes);
    return s;
}

/* A whole tensor back as f32. */
static attnvk_status read_values(attnvk_buffer *b, attnvk_dtype dt, float *dst, size_t n)
{
    const size_t bytes = n * attnvk_dtype_size(dt);
    void *packed = malloc(bytes ? bytes : 1);
    if (!packed) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s = attnvk_buffer_read(b, 0, packed, bytes);
    if (s == ATTNVK_OK) attnvk_unpack(dt, packed, dst, n);
    free(packed);
    return s;
}

/* rel-L2 of one gradient over the checked slices, at the backward's tolerance. */
static attnvk_status check_gradient(bwd_job *j, const bench_grad_workload *w, int which, attnvk_check *c)
{
    const attnvk_problem *p = &j->p;
    attnvk_buffer *b = which == 0 ? j->grad.dq : which == 1 ? j->grad.dk : j->grad.dv;
    const float *ref = which == 0 ? w->ref_dq : which == 1 ? w->ref_dk : w->ref_dv;
    const size_t n = which == 0 ? attnvk_q_elements(p) : which == 1 ? attnvk_kv_elements(p) : attnvk_v_elements(p);
    const size_t per = bench_grad_slice_elements(p, which);
    const int dim = which == 2 ? attnvk_problem_head_dim_v(p) : p->head_dim;
    float *all = malloc(sizeof(float) * n), *slice = malloc(sizeof(float) * per);
    attnvk_status s = all && slice ? read_values(b, p->dtype, all, n)
                                   : avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    memset(c, 0, sizeof *c);
    c->tolerance = attnvk_backward_tolerance(p->dtype);
    double diff2 = 0, ref2 = 0;
    for (int i = 0; i < w->nslices && s == ATTNVK_OK; ++i) {
        bench_grad_gather(p, &w->slices[i], which, all, slice);
        for (size_t e = 0; e < per; ++e) {
            double r = ref[per * i + e], x = slice[e];
            if (!isfinite(x)) {
                ++c->nonfinite;
                continue;
            }
            double d = fabs(x - r);
            diff2 += d * d;
            ref2 += r * r;
            if (d > c->max_abs) c->max_abs = d;
        }
        c->rows_checked += per / (size_t)dim;
    }
    c->rel_l2 = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    c->passed = c->nonfinite == 0 && c->rel_l2 <= c->tolerance;
    free(all);
    free(slice);
    return s;
}

/* O after the record's forward (fwd+bwd): the forward's check on its sampled rows. */
static attnvk_status check_forward(bwd_job *j, const bench_grad_workload *w, attnvk_check *c)
{
    const attnvk_problem *p = &j->p;
    const size_t n = attnvk_o_elements(p), D = (size_t)attnvk_problem_head_dim_v(p);
    float *all = malloc(sizeof(float) * n), *rows = malloc(sizeof(float) * w->base.nrows * D);
    attnvk_status s = all && rows ? read_values(j->fwd.o, p->dtype, all, n)
                                  : avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (size_t r = 0; r < w->base.nrows && s == ATTNVK_OK; ++r) {
        size_t row = w->base.rows[r];
        int i = (int)(row % (size_t)p->seq_q), h = (int)((row / (size_t)p->seq_q) % (size_t)p->heads);
        int b = (int)(row / ((size_t)p->seq_q * p->heads));
        memcpy(rows + r * D, all + avk_o_offset(p, b, h, i), sizeof(float) * D);
    }
    if (s == ATTNVK_OK) *c = bench_workload_compare(&w->base, rows);
    free(all);
    free(rows);
    return s;
}

/* The forward whose O and LSE the backward reads: attnvk's kernel itself, or for a
 * vendor's record attnvk's forward beside it (vendor kernels keep no LSE). */
static attnvk_status lse_forward(bwd_job *j)
{
    return attnvk_kernel_run_tensors(j->lse_kernel ? j->lse_kernel : j->kernel, &j->fwd, 0, 0, NULL);
}

/* The record's own forward, timed (fwd+bwd); for attnvk it also rewrites the LSE. */
static attnvk_status timed_forward(bwd_job *j, double *ms)
{
    *ms = 0;
    return attnvk_kernel_run_tensors(j->kernel, &j->fwd, 0, 0, ms);
}

/* info (may be NULL): what the backward's kernels were */
static attnvk_status timed_backward(bwd_job *j, double *ms, attnvk_kernel_info *info)
{
    *ms = 0;
    attnvk_backward_options o;
    attnvk_backward_options_init(&o);
    o.info = info;
    return attnvk_kernel_backward(j->kernel, &j->fwd, &j->grad, &o, ms);
}

/* The checked run: forward (fwd+bwd: O checked), then the backward on poisoned
 * gradients, each compared with the reference; the worst becomes r->check. */
static attnvk_status checked_run(bwd_job *j, const bench_grad_workload *w, bench_record *r, double *est_ms)
{
    const attnvk_problem *p = &j->p;
    attnvk_status s = poison(j, j->fwd.o, attnvk_o_elements(p));
    double fwd_ms = 0, bwd_ms = 0;
    if (s == ATTNVK_OK && r->pass == BENCH_PASS_FWD_BWD) {
        s = timed_forward(j, &fwd_ms);
        if (s == ATTNVK_OK) s = check_forward(j, w, &r->grad_check[BENCH_GRAD_O]);
        if (s == ATTNVK_OK) r->have_grad |= 1u << BENCH_GRAD_O;
    }
    if (s == ATTNVK_OK && (j->lse_kernel || r->pass == BENCH_PASS_BWD)) s = lse_forward(j);
    if (s == ATTNVK_OK) s = poison(j, j->grad.dq, attnvk_q_elements(p));
    if (s == ATTNVK_OK) s = poison(j, j->grad.dk, attnvk_kv_elements(p));
    if (s == ATTNVK_OK) s = poison(j, j->grad.dv, attnvk_v_elements(p));
    if (s == ATTNVK_OK) s = timed_backward(j, &bwd_ms, &r->bwd_kernel);
    r->have_bwd_kernel = s == ATTNVK_OK && r->bwd_kernel.variant[0] != '\0';
    for (int g = BENCH_GRAD_DQ; g <= BENCH_GRAD_DV && s == ATTNVK_OK; ++g) {
        s = check_gradient(j, w, g, &r->grad_check[g]);
        if (s == ATTNVK_OK) r->have_grad |= 1u << g;
    }
    if (s != ATTNVK_OK) return s;
    /* the worst by its distance to the tolerance; any non-finite value is worst of all */
    double worst = -1;
    for (int g = 0; g < BENCH_GRAD_COUNT; ++g) {
        if (!(r->have_grad & (1u << g))) continue;
        const attnvk_check *c = &r->grad_check[g];
        double score = c->nonfinite ? INFINITY : c->rel_l2 / c->tolerance;
        if (score > worst) worst = score, r->worst_grad = g;
    }
    r->check = r->grad_check[r->worst_grad];
    r->have_check = 1;
    const attnvk_check *c = &r->check;
    if (c->nonfinite)
        bench_record_set(r, BENCH_FAIL, "wrong %s: %zu non-finite values", bench_grad_name(r->worst_grad),
                         c->nonfinite);
    else if (!c->passed)
        bench_record_set(r, BENCH_FAIL, "wrong %s: rel_l2 %.3e > tolerance %.0e", bench_grad_name(r->worst_grad),
                         c->rel_l2, c->tolerance);
    *est_ms = fwd_ms + bwd_ms;
    return ATTNVK_OK;
}

/* One sample: the backward, after the record's forward with fwd+bwd. */
static attnvk_status run_sample(bwd_job *j, const bench_record *r, double *fwd_ms, double *bwd_ms)
{
    *fwd_ms = *bwd_ms = 0;
    attnvk_status s = ATTNVK_OK;
    if (r->pass == BENCH_PASS_FWD_BWD && !stop_requested(j)) s = timed_forward(j, fwd_ms);
    if (s == ATTNVK_OK && !stop_requested(j)) s = timed_backward(j, bwd_ms, NULL);
    return s;
}

/* Warm-up (cfg->warmup samples within the budget, and on an idle GPU at least
 * cfg->warmup_s of wall time, as bench_runner.c does), then the timed samples. */
static attnvk_status timed_runs(bwd_job *j, bench_record *r, double est)
{
    const bench_run_config *cfg = j->cfg;
    const int both = r->pass == BENCH_PASS_FWD_BWD;
    long warm = cfg->warmup;
    est = est > 1e-3 ? est : 1e-3;
    if (warm > 0 && !cfg->iters) {
        long fit = (long)ceil(cfg->min_time_s * 1e3 / est);
        warm = warm < fit ? warm : (fit > 1 ? fit : 1);
        if (est >= cfg->min_time_s * 1e3) warm = 0;
    }
    const double last_busy = bench_group_last_busy_ms(j->t->group);
    const int idle = cfg->warmup_always || last_busy < 0 || wall_ms() - last_busy > BUSY_GPU_MS;
    const double floor_ms = warm > 0 && idle && j->t->info.type != ATTNVK_DEVICE_CPU ? cfg->warmup_s * 1e3 : 0;
    attnvk_status s = ATTNVK_OK;
    long done = 0;
    const double t0 = wall_ms();
    progress(j, "warm-up", 0, warm);
    while (s == ATTNVK_OK && !stop_requested(j) && (done < warm || wall_ms() - t0 < floor_ms)) {
        double f, b;
        s = run_sample(j, r, &f, &b);
        if (s == ATTNVK_OK) est = f + b > 1e-3 ? f + b : 1e-3;
        ++done;
    }
    r->warmup_runs = (int)done;
    r->launches = 1;
    r->input_sets = 1;
    r->chunks = 1;
    if (s != ATTNVK_OK || j->stopped) return s;
    long n = cfg->iters;
    if (n <= 0) {
        double want = ceil(cfg->min_time_s * 1e3 / est);
        n = want < MIN_SAMPLES ? MIN_SAMPLES : want > MAX_SAMPLES ? MAX_SAMPLES : (long)want;
    }
    double *fwd = malloc(sizeof(double) * (size_t)n), *bwd = malloc(sizeof(double) * (size_t)n);
    r->samples_ms = malloc(sizeof(double) * (size_t)n);
    if (!fwd || !bwd || !r->samples_ms) s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    const double t1 = wall_ms(), wall_budget_ms = 1.25 * cfg->min_time_s * 1e3;
    for (long i = 0; i < n && s == ATTNVK_OK && !stop_requested(j); ++i) {
        progress(j, "timing", i, n);
        s = run_sample(j, r, &fwd[i], &bwd[i]);
        if (s != ATTNVK_OK || j->stopped) break;
        r->samples_ms[i] = fwd[i] + bwd[i];
        r->nsamples = (int)i + 1;
        if (cfg->iters <= 0 && i + 1 >= MIN_SAMPLES && wall_ms() - t1 >= wall_budget_ms) break;
    }
    if (r->nsamples > 0) {
        bench_stats_compute(r->samples_ms, r->nsamples, &r->stats);
        r->have_stats = 1;
        if (both) {
            bench_stats_compute(fwd, r->nsamples, &r->fwd_stats);
            bench_stats_compute(bwd, r->nsamples, &r->bwd_stats);
            r->have_pass_stats = 1;
        }
    }
    free(fwd);
    free(bwd);
    if (s == ATTNVK_OK) bench_group_mark_busy(j->t->group, wall_ms());
    return s;
}

/* Prepares the record's kernel (and a vendor's LSE forward); 0 when r is final. */
static int prepare(bwd_job *j, const attnvk_impl_info *impl, bench_record *r)
{
    const bench_run_config *cfg = j->cfg;
    const int own = strcmp(impl->name, "attnvk") == 0;
    attnvk_kernel_options o = {.implementation = own ? NULL : impl->name, .write_lse = own};
    if (own) {
        o.test_flags = cfg->test_flags;
        o.variant = cfg->variant;
        o.tile_br = cfg->tile_br, o.tile_bc = cfg->tile_bc;
        o.split_kv = (int)cfg->split_kv;
    }
    progress(j, "prepare", 0, 0);
    attnvk_status s = attnvk_kernel_prepare(j->t->dev, &j->p, &o, &j->kernel, &r->kernel);
    if (s != ATTNVK_OK) {
        j->kernel = NULL;
        bench_record_status(r, j->t, s, "prepare");
        return 0;
    }
    r->have_kernel = 1;
    r->memory_bytes = (uint64_t)(grad_io_bytes(&j->p) + (double)r->kernel.workspace_bytes);
    /* without buffers the core answers UNSUPPORTED for a backend with no backward before it
     * looks at them (INVALID_ARGUMENT otherwise): no input is built for such a record */
    const attnvk_tensors none = {0};
    const attnvk_grad_tensors no_grad = {0};
    s = attnvk_kernel_backward(j->kernel, &none, &no_grad, NULL, NULL);
    if (s == ATTNVK_ERROR_UNSUPPORTED) {
        bench_record_set(r, BENCH_SKIPPED, "unsupported: %s", attnvk_last_error());
        return 0;
    }
    if (own) return 1;
    const attnvk_kernel_options lse = {.write_lse = 1};
    attnvk_kernel_info info;
    s = attnvk_kernel_prepare(j->t->dev, &j->p, &lse, &j->lse_kernel, &info);
    if (s != ATTNVK_OK) {
        j->lse_kernel = NULL;
        bench_record_status(r, j->t, s, "prepare of attnvk's forward (O and LSE for the vendor's backward)");
        return 0;
    }
    r->memory_bytes += info.workspace_bytes;
    return 1;
}

/* Buffers, inputs, the checked run and the timed runs; *stage names what failed. */
static attnvk_status run_job(bwd_job *j, bench_grad_source source, void *ctx, bench_record *r, const char **stage)
{
    *stage = "allocation";
    attnvk_status s = allocate(j);
    if (s != ATTNVK_OK) return s;
    char why[512] = "";
    progress(j, "inputs and reference gradients", 0, 0);
    const bench_grad_workload *w = source(ctx, why, sizeof why);
    if (!w) {
        bench_record_set(r, BENCH_SKIPPED, "host: %s", why);
        return ATTNVK_OK;
    }
    *stage = "upload";
    progress(j, "upload", 0, 0);
    s = upload(j, w);
    if (s != ATTNVK_OK || stop_requested(j)) return s;
    *stage = "the checked run";
    progress(j, "check", 0, 0);
    double est = 0;
    s = checked_run(j, w, r, &est);
    if (s != ATTNVK_OK || !j->cfg->timed || j->stopped) return s;
    *stage = "the timed runs";
    return timed_runs(j, r, est);
}

void bench_backward_run(bench_target *t, const attnvk_impl_info *impl, const bench_run_config *cfg,
                        bench_grad_source source, void *ctx, bench_record *r)
{
    r->pass = cfg->pass;
    r->flops = attnvk_problem_flops(&r->c.p) * (cfg->pass == BENCH_PASS_FWD_BWD ? 3.5 : 2.5);
    if (bench_precheck(t, impl, cfg, r) || backward_precheck(t, cfg, r)) return;
    bwd_job j = {.t = t, .cfg = cfg, .p = r->c.p};
    if (prepare(&j, impl, r)) {
        const char *stage = "";
        attnvk_status s = run_job(&j, source, ctx, r, &stage);
        if (s != ATTNVK_OK) bench_record_status(r, t, s, stage);
    }
    r->interrupted = j.stopped;
    release(&j);
    if (r->status == BENCH_SKIPPED || r->status == BENCH_UNAVAILABLE) { /* no partial results */
        bench_record_free(r);
        r->have_stats = r->have_check = r->have_pass_stats = 0;
        r->have_grad = r->have_bwd_kernel = 0;
    }
    bench_derive_metrics(t, r);
    /* GB/s: what the backward reads and writes at least (Q, K, V, O, LSE, dO in; dQ, dK, dV out), plus
     * the forward's with fwd+bwd; the forward's roofline does not describe it */
    if (isfinite(r->gbytes_per_s))
        r->gbytes_per_s = (grad_io_bytes(&r->c.p) + (r->pass == BENCH_PASS_FWD_BWD ? bench_io_bytes(&r->c.p) : 0)) /
                          (r->stats.median_ms * 1e-3) / 1e9;
    r->bandwidth_fraction = r->read_bandwidth_gbps = NAN;
    r->arithmetic_intensity = r->attainable_tflops = r->roofline_fraction = NAN;
    r->bound = NULL;
}
