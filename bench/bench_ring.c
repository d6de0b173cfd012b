/* --ring G (bench_ring.h). */
#include "bench_ring.h"

#include "bench_stats.h"
#include "core/error.h"
#include "core/layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MIN_SAMPLES = 3, MAX_SAMPLES = 500, BUSY_GPU_MS = 3000 };
/* one device's baseline is left out where one run would take longer than this (a million tokens and more) */
static const double baseline_max_ms = 20000;

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int stopped(const bench_run_config *cfg) { return cfg->stop && *cfg->stop; }

static void progress(const bench_run_config *cfg, const char *phase, long done, long expected)
{
    if (cfg->on_progress) cfg->on_progress(cfg->progress_ctx, phase, done, expected);
}

void bench_ring_case_name(const char *case_name, int ranks, char *out, size_t n)
{
    snprintf(out, n, "%.80s-ring%d", case_name, ranks);
}

static double median(double *x, int n)
{
    bench_stats st;
    bench_stats_compute(x, n, &st);
    return st.median_ms;
}

/* Samples a run takes: the count --iters asks for, else enough for min_time at est ms each. */
static int sample_count(const bench_run_config *cfg, double est_ms)
{
    if (cfg->iters > 0) return (int)(cfg->iters < MAX_SAMPLES ? cfg->iters : MAX_SAMPLES);
    double want = ceil(cfg->min_time_s * 1e3 / (est_ms > 1e-3 ? est_ms : 1e-3));
    return want < MIN_SAMPLES ? MIN_SAMPLES : want > MAX_SAMPLES ? MAX_SAMPLES : (int)want;
}

/* Warm-up as bench_runner.c does it: cfg->warmup runs within the budget and, on an idle GPU,
 * at least cfg->warmup_s of wall time. run(ctx, &ms) is one run. */
static attnvk_status warm_up(const bench_run_config *cfg, const bench_target *t, double est_ms,
                             attnvk_status (*run)(void *ctx, double *ms), void *ctx, int *runs)
{
    long warm = cfg->warmup;
    if (warm > 0 && !cfg->iters) {
        long fit = (long)ceil(cfg->min_time_s * 1e3 / (est_ms > 1e-3 ? est_ms : 1e-3));
        warm = warm < fit ? warm : (fit > 1 ? fit : 1);
    }
    const double last_busy = bench_group_last_busy_ms(t->group);
    const int idle = last_busy < 0 || wall_ms() - last_busy > BUSY_GPU_MS;
    const double floor_ms = warm > 0 && idle && t->info.type != ATTNVK_DEVICE_CPU ? cfg->warmup_s * 1e3 : 0;
    attnvk_status s = ATTNVK_OK;
    const double t0 = wall_ms();
    *runs = 0;
    while (s == ATTNVK_OK && !stopped(cfg) && (*runs < warm || wall_ms() - t0 < floor_ms)) {
        double ms;
        s = run(ctx, &ms);
        ++*runs;
    }
    return s;
}

/* ---- the ring ---- */

typedef struct ring_job {
    attnvk_ring *ring;
    unsigned flags;
    double transfer_ms;
} ring_job;

static attnvk_status ring_sample(void *ctx, double *ms)
{
    ring_job *j = ctx;
    attnvk_ring_stats st;
    attnvk_status s = attnvk_ring_run(j->ring, j->flags, &st);
    *ms = st.total_ms;
    j->transfer_ms = st.transfer_ms;
    return s;
}

/* O's sampled rows against the reference. */
static attnvk_status check_output(attnvk_ring *ring, const bench_workload *w, bench_record *r)
{
    const attnvk_problem *p = &w->p;
    const size_t D = (size_t)attnvk_problem_head_dim_v(p);
    float *o = malloc(sizeof(float) * attnvk_o_elements(p)), *rows = malloc(sizeof(float) * (w->nrows ? w->nrows : 1) * D);
    attnvk_status s = o && rows ? attnvk_ring_download(ring, o, NULL)
                                : avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (size_t i = 0; i < w->nrows && s == ATTNVK_OK; ++i) {
        size_t row = w->rows[i];
        int q = (int)(row % (size_t)p->seq_q), h = (int)((row / (size_t)p->seq_q) % (size_t)p->heads);
        int b = (int)(row / ((size_t)p->seq_q * p->heads));
        memcpy(rows + i * D, o + avk_o_offset(p, b, h, q), sizeof(float) * D);
    }
    if (s == ATTNVK_OK) {
        r->check = bench_workload_compare(w, rows);
        r->have_check = 1;
        if (r->check.nonfinite)
            bench_record_set(r, BENCH_FAIL, "wrong output: %zu non-finite values", r->check.nonfinite);
        else if (!r->check.passed)
            bench_record_set(r, BENCH_FAIL, "wrong output: rel_l2 %.3e > tolerance %.0e", r->check.rel_l2,
                             r->check.tolerance);
    }
    free(o);
    free(rows);
    return s;
}

/* n samples of run into out (malloc'd); the median in *med. */
static attnvk_status timed(const bench_run_config *cfg, int n, attnvk_status (*run)(void *, double *), void *ctx,
                           double *out, double *transfer, int *done)
{
    attnvk_status s = ATTNVK_OK;
    *done = 0;
    for (int i = 0; i < n && s == ATTNVK_OK && !stopped(cfg); ++i) {
        progress(cfg, "timing", i, n);
        s = run(ctx, &out[i]);
        if (transfer && s == ATTNVK_OK) transfer[i] = ((ring_job *)ctx)->transfer_ms;
        if (s == ATTNVK_OK) ++*done;
    }
    return s;
}

/* ---- one device: the scaling baselines ---- */

typedef struct single_job {
    attnvk_kernel *k;
    attnvk_tensors t;
} single_job;

static attnvk_status single_sample(void *ctx, double *ms)
{
    single_job *j = ctx;
    double t0 = wall_ms();
    attnvk_status s = attnvk_kernel_run_tensors(j->k, &j->t, 0, 0, NULL);
    *ms = wall_ms() - t0; /* wall time, as the ring's samples */
    return s;
}

/* The wall-time median of attnvk's kernel on p alone on t (NAN with the reason in note). */
static double time_single(bench_target *t, const attnvk_problem *p, const bench_run_config *cfg, int samples,
                          char *note, size_t nnote)
{
    single_job j = {0};
    const attnvk_kernel_options o = {.variant = cfg->variant, .tile_br = cfg->tile_br, .tile_bc = cfg->tile_bc};
    const size_t es = attnvk_dtype_size(p->dtype), nq = attnvk_q_elements(p), nkv = attnvk_kv_elements(p);
    float *host = malloc(sizeof(float) * (nq > nkv ? nq : nkv));
    void *packed = malloc(es * (nq > nkv ? nq : nkv));
    attnvk_status s = host && packed ? attnvk_kernel_prepare(t->dev, p, &o, &j.k, NULL)
                                     : avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_buffer **bufs[] = {&j.t.q, &j.t.k, &j.t.v, &j.t.o};
    const size_t counts[] = {nq, nkv, nkv, attnvk_o_elements(p)};
    for (int i = 0; i < 4 && s == ATTNVK_OK; ++i) {
        s = attnvk_buffer_create(t->dev, counts[i] * es, bufs[i]);
        if (s == ATTNVK_OK && i < 3) { /* timing inputs: seeded normals, as every case's */
            attnvk_fill_random(host, counts[i], 1000 + (uint64_t)i);
            attnvk_pack(p->dtype, host, packed, counts[i]);
            s = attnvk_buffer_write(*bufs[i], 0, packed, counts[i] * es);
        }
    }
    float *slopes = host;
    if (s == ATTNVK_OK && p->alibi) {
        attnvk_alibi_slopes(p->heads, slopes);
        s = attnvk_buffer_create(t->dev, sizeof(float) * p->heads, &j.t.alibi_slopes);
        if (s == ATTNVK_OK) s = attnvk_buffer_write(j.t.alibi_slopes, 0, slopes, sizeof(float) * p->heads);
    }
    double ms = NAN, est = 0;
    if (s == ATTNVK_OK) s = single_sample(&j, &est);
    int warm = 0, done = 0;
    if (s == ATTNVK_OK) s = warm_up(cfg, t, est, single_sample, &j, &warm);
    double *x = malloc(sizeof(double) * (size_t)samples);
    if (s == ATTNVK_OK && x) s = timed(cfg, samples, single_sample, &j, x, NULL, &done);
    if (s == ATTNVK_OK && done > 0) ms = median(x, done);
    if (s != ATTNVK_OK) snprintf(note, nnote, "%s", attnvk_last_error());
    free(x);
    free(host);
    free(packed);
    for (int i = 0; i < 4; ++i) attnvk_buffer_destroy(*bufs[i]);
    attnvk_buffer_destroy(j.t.alibi_slopes);
    attnvk_kernel_destroy(j.k);
    return ms;
}

/* ---- the record ---- */

static void scaling(bench_target *t0, const bench_run_config *cfg, int ranks, int samples, bench_record *r)
{
    struct bench_ring_result *g = &r->ring;
    char note[160] = "";
    const double ring_ms = r->stats.median_ms, single_estimate_ms = ring_ms * ranks;
    if (single_estimate_ms > baseline_max_ms) {
        snprintf(g->baseline_note, sizeof g->baseline_note,
                 "whole case on one device not run: about %.0f s a run (over %.0f s)", single_estimate_ms / 1e3,
                 baseline_max_ms / 1e3);
    } else {
        progress(cfg, "one device, the whole case", 0, 0);
        g->single_ms = time_single(t0, &r->c.p, cfg, samples, note, sizeof note);
        if (isnan(g->single_ms))
            snprintf(g->baseline_note, sizeof g->baseline_note, "whole case on one device: %s", note);
    }
    attnvk_problem share = r->c.p;
    share.seq_q = share.seq_kv = r->c.p.seq_q / ranks > 0 ? r->c.p.seq_q / ranks : 1;
    progress(cfg, "one device, an N/G share", 0, 0);
    g->shard_ms = time_single(t0, &share, cfg, samples, note, sizeof note);
    if (isnan(g->shard_ms) && !g->baseline_note[0])
        snprintf(g->baseline_note, sizeof g->baseline_note, "N/G share on one device: %s", note);
    g->tflops_per_rank = r->flops / (ring_ms * 1e-3) / 1e12 / ranks;
    g->strong_scaling = g->single_ms / (ranks * ring_ms);
    g->weak_scaling = g->tflops_per_rank / (attnvk_problem_flops(&share) / (g->shard_ms * 1e-3) / 1e12);
}

static void measure(attnvk_ring *ring, bench_target *t0, int ranks, const bench_run_config *cfg,
                    const bench_workload *w, bench_record *r)
{
    const attnvk_host_inputs in = {.q = w->q, .k = w->k, .v = w->v, .alibi_slopes = w->slopes};
    progress(cfg, "upload", 0, 0);
    attnvk_status s = attnvk_ring_upload(ring, &in);
    ring_job j = {.ring = ring};
    double est = 0;
    progress(cfg, "check", 0, 0);
    if (s == ATTNVK_OK) s = ring_sample(&j, &est);
    if (s == ATTNVK_OK) s = check_output(ring, w, r);
    if (s != ATTNVK_OK || !cfg->timed || stopped(cfg) || r->status != BENCH_OK) {
        if (s != ATTNVK_OK) bench_record_status(r, t0, s, "the checked run");
        return;
    }
    int n = sample_count(cfg, est), warm = 0, done = 0;
    s = warm_up(cfg, t0, est, ring_sample, &j, &warm);
    r->samples_ms = malloc(sizeof(double) * (size_t)n);
    double *transfer = malloc(sizeof(double) * (size_t)n), *compute = malloc(sizeof(double) * (size_t)n);
    if (!r->samples_ms || !transfer || !compute) s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (s == ATTNVK_OK) s = timed(cfg, n, ring_sample, &j, r->samples_ms, transfer, &done);
    r->nsamples = done;
    r->warmup_runs = warm;
    r->launches = r->input_sets = r->chunks = 1;
    if (s == ATTNVK_OK && done > 0) {
        bench_stats_compute(r->samples_ms, done, &r->stats);
        r->have_stats = 1;
        r->ring.transfer_ms = transfer[0] < 0 ? NAN : median(transfer, done);
        j.flags = ATTNVK_RING_NO_TRANSFERS;
        progress(cfg, "without transfers", 0, 0);
        int cdone = 0;
        s = timed(cfg, done, ring_sample, &j, compute, NULL, &cdone);
        if (s == ATTNVK_OK && cdone > 0) {
            r->ring.compute_only_ms = median(compute, cdone);
            double exposed = fmax(0.0, r->stats.median_ms - r->ring.compute_only_ms);
            if (r->ring.transfer_ms > 0)
                r->ring.hidden_fraction = fmax(0.0, fmin(1.0, 1.0 - exposed / r->ring.transfer_ms));
        }
        bench_group_mark_busy(t0->group, wall_ms());
        if (s == ATTNVK_OK && !stopped(cfg)) scaling(t0, cfg, ranks, done, r);
    }
    free(transfer);
    free(compute);
    if (s != ATTNVK_OK) bench_record_status(r, t0, s, "the timed runs");
}

void bench_ring_run(bench_target *targets, const int *rank_target, int ranks, const bench_run_config *cfg,
                    const bench_workload *w, bench_record *r)
{
    struct bench_ring_result *g = &r->ring;
    r->have_ring = 1;
    g->ranks = ranks;
    g->transfer_ms = g->compute_only_ms = g->hidden_fraction = g->single_ms = g->shard_ms = NAN;
    g->strong_scaling = g->weak_scaling = g->tflops_per_rank = NAN;
    attnvk_device *devs[64];
    for (int i = 0; i < ranks; ++i) {
        bench_target *t = &targets[rank_target[i]];
        g->rank_device[i] = rank_target[i];
        const attnvk_impl_info *own = NULL;
        for (int k = 0; k < t->nimpls; ++k)
            if (!strcmp(t->impls[k].name, "attnvk")) own = &t->impls[k];
        if (!own) {
            bench_record_set(r, BENCH_SKIPPED, "%s device %s has no attnvk kernel", attnvk_api_name(t->info.api),
                             t->info.name);
            return;
        }
        if (bench_precheck(t, own, cfg, r)) return;
        devs[i] = t->dev;
    }
    bench_target *t0 = &targets[rank_target[0]];
    attnvk_ring_options o;
    attnvk_ring_options_init(&o);
    o.kernel.variant = cfg->variant;
    o.kernel.tile_br = cfg->tile_br, o.kernel.tile_bc = cfg->tile_bc;
    attnvk_ring *ring = NULL;
    progress(cfg, "prepare", 0, 0);
    attnvk_status s = attnvk_ring_create(devs, ranks, &w->p, &o, &ring);
    if (s != ATTNVK_OK) {
        bench_record_status(r, t0, s, "ring setup");
        return;
    }
    const char *why = NULL;
    snprintf(g->transport, sizeof g->transport, "%s", attnvk_ring_transport_name(ring, &why));
    snprintf(g->transport_note, sizeof g->transport_note, "%s", why ? why : "");
    measure(ring, t0, ranks, cfg, w, r);
    attnvk_ring_destroy(ring);
    r->interrupted = stopped(cfg);
    if (r->status == BENCH_SKIPPED || r->status == BENCH_UNAVAILABLE) { /* no partial results */
        bench_record_free(r);
        r->have_stats = r->have_check = 0;
    }
    bench_derive_metrics(t0, r);
    r->arithmetic_intensity = r->attainable_tflops = r->roofline_fraction = NAN; /* one device's roofline */
    r->bound = NULL;
}

/* ---- the summary after a table or Markdown ---- */

static void put_ms(strbuf *b, const char *label, double ms)
{
    if (isnan(ms)) sb_printf(b, "%s -", label);
    else sb_printf(b, "%s %.3f ms", label, ms);
}

static void put_percent(strbuf *b, const char *label, double x)
{
    if (isnan(x)) sb_printf(b, "%s -", label);
    else sb_printf(b, "%s %.0f%%", label, 100 * x);
}

int bench_ring_line(strbuf *b, const bench_record *r)
{
    {
        if (!r->have_ring || !r->have_stats) return 0;
        const struct bench_ring_result *g = &r->ring;
        sb_printf(b, "ring %s: %d ranks (devices", r->c.name, g->ranks);
        for (int k = 0; k < g->ranks; ++k) sb_printf(b, "%s%d", k ? "," : " ", g->rank_device[k]);
        sb_printf(b, ") over %s%s%s%s: %.3f ms, %.2f TFLOP/s, %.2f per rank; ", g->transport,
                  g->transport_note[0] ? " (" : "", g->transport_note, g->transport_note[0] ? ")" : "",
                  r->stats.median_ms, r->tflops, g->tflops_per_rank);
        put_ms(b, "transfers", g->transfer_ms);
        put_percent(b, ",", g->hidden_fraction);
        sb_puts(b, " hidden; ");
        put_percent(b, "strong scaling", g->strong_scaling);
        put_ms(b, " (one device", g->single_ms);
        put_percent(b, "), weak", g->weak_scaling);
        put_ms(b, " (N/G share", g->shard_ms);
        sb_printf(b, ")%s%s", g->baseline_note[0] ? "; " : "", g->baseline_note);
    }
    return 1;
}
