#include "core/kernel_tuning.h"
#include "bench_runner.h"

#include "bench_roofline.h"
#include "bench_stats.h"
#include "core/error.h"
#include "core/layout.h"
#include "core/q_format.h"

#include <math.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_INPUT_SETS = 4,
    MIN_SAMPLES = 3,
    MAX_SAMPLES = 2000,
    PROBE_ATTEMPTS = 6,
    TRANSFER_ELEMENTS = 1 << 24, /* host staging per upload/poison write (packed over the host's threads) */
};
static const double rotate_below_bytes = 256.0 * 1048576.0; /* around last-level cache sizes: rotate sets */
static const double dispatch_budget_ms = 400.0;             /* keep each dispatch under ~0.5 s */
static const double probe_flops = 1e9;                       /* cases above this are probed and split */
static const double probe_enough_ms = 50.0;
static const double sample_target_ms = 2.0;                  /* --launches auto: back-to-back launches up to this */
enum { AUTO_MAX_LAUNCHES = 32 };

typedef struct io_set {
    attnvk_buffer *q, *k, *v, *o;
} io_set;

/* A paged or quantized case's tables and the score inputs, shared by every input set. */
typedef struct cache_tables {
    attnvk_buffer *block_table, *seq_lens, *kv_scales, *q_scales;
    attnvk_buffer *mask, *sinks, *slopes, *layout;
} cache_tables;

/* One record's run on a device: the kernel, its buffers, the dispatch plan. */
struct bench_job {
    bench_target *t;
    const bench_run_config *cfg;
    attnvk_problem p;
    const bench_workload *w;   /* set by bench_job_finish */
    attnvk_kernel *kernel;
    io_set sets[MAX_INPUT_SETS];
    cache_tables tables;
    int nsets, next_set;
    int *chunk_begin, *chunk_count;
    int nchunks;
    int launches;              /* per dispatch of a timed sample (1 for the check and the warm-up) */
    int splittable;            /* attnvk's kernel honours q_begin/q_count; vendor libraries take the whole problem */
    int stopped;               /* cfg->stop was seen: no further dispatch */
    const char *phase;         /* for progress reports */
    long samples_done, samples_expected;
};

/* Maps a library status to the record's status; DEVICE_LOST marks the device. */
void bench_record_status(bench_record *r, bench_target *t, attnvk_status s, const char *stage)
{
    const char *msg = attnvk_last_error();
    switch (s) {
    case ATTNVK_OK: return;
    case ATTNVK_ERROR_UNSUPPORTED: bench_record_set(r, BENCH_SKIPPED, "unsupported: %s", msg); return;
    case ATTNVK_ERROR_UNAVAILABLE: bench_record_set(r, BENCH_UNAVAILABLE, "%s", msg); return;
    case ATTNVK_ERROR_OUT_OF_MEMORY: bench_record_set(r, BENCH_SKIPPED, "out of memory (%s): %s", stage, msg); return;
    case ATTNVK_ERROR_DEVICE_LOST: t->lost = 1; break;
    default: break;
    }
    bench_record_set(r, BENCH_FAIL, "%s during %s: %s", attnvk_status_name(s), stage, msg);
}

static double row_flops(const attnvk_problem *p, int i)
{
    int lo, hi;
    avk_visible_range(p, i, p->seq_kv, &lo, &hi);
    const int seen = hi - lo;
    const double per_pair = 2.0 * ((double)p->head_dim + attnvk_problem_head_dim_v(p));
    return per_pair * p->batch * p->heads * (seen > 0 ? seen : 1); /* empty rows still cost a little */
}

/* Tells cfg->on_progress the phase (NULL: unchanged) and the dispatches done of those expected. */
static void report_progress(bench_job *st, const char *phase, long chunks_done)
{
    if (phase) st->phase = phase;
    if (!st->cfg->on_progress) return;
    long per = st->nchunks > 0 ? st->nchunks : 1;
    st->cfg->on_progress(st->cfg->progress_ctx, st->phase, st->samples_done * per + chunks_done,
                         (st->samples_expected > st->samples_done ? st->samples_expected : st->samples_done + 1) * per);
}

/* A stop request is honoured between dispatches, never inside one. */
static int stop_requested(bench_job *st)
{
    if (!st->stopped && st->cfg->stop && *st->cfg->stop) st->stopped = 1;
    return st->stopped;
}

static attnvk_status run_chunk(bench_job *st, io_set *s, int begin, int count, double *ms)
{
    *ms = 0;
    if (stop_requested(st)) return ATTNVK_OK;
    if (begin == 0 && count == st->p.seq_q) count = 0; /* the plain whole-problem dispatch */
    const attnvk_tensors t = {.q = s->q, .k = s->k, .v = s->v, .o = s->o, .block_table = st->tables.block_table,
                              .seq_lens = st->tables.seq_lens, .kv_scales = st->tables.kv_scales,
                              .mask = st->tables.mask, .sinks = st->tables.sinks, .alibi_slopes = st->tables.slopes,
                              .block_layout = st->tables.layout, .q_scales = st->tables.q_scales};
    return attnvk_kernel_run_repeated(st->kernel, &t, begin, count, st->launches > 0 ? st->launches : 1, ms);
}

/* One sample: every chunk of the plan on one input set, device times summed. */
static attnvk_status run_sample(bench_job *st, io_set *s, double *total_ms)
{
    *total_ms = 0;
    for (int c = 0; c < st->nchunks && !st->stopped; ++c) {
        double ms = 0;
        attnvk_status rc = run_chunk(st, s, st->chunk_begin[c], st->chunk_count[c], &ms);
        if (rc != ATTNVK_OK) return rc;
        *total_ms += ms;
        if (st->nchunks > 1) report_progress(st, NULL, c + 1);
    }
    if (!st->stopped) ++st->samples_done;
    report_progress(st, NULL, 0);
    return ATTNVK_OK;
}

static attnvk_status set_plan(bench_job *st, int n)
{
    free(st->chunk_begin);
    free(st->chunk_count);
    st->chunk_begin = malloc(sizeof(int) * (size_t)n);
    st->chunk_count = malloc(sizeof(int) * (size_t)n);
    st->nchunks = n;
    if (!st->chunk_begin || !st->chunk_count) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    return ATTNVK_OK;
}

/* Splits the query rows so no dispatch should exceed the budget, from the
 * rate measured on growing probes of the first rows. Small cases and vendor
 * kernels: one chunk. */
static attnvk_status plan_chunks(bench_job *st)
{
    const attnvk_problem *p = &st->p;
    if (!st->splittable || attnvk_problem_flops(p) <= probe_flops || p->seq_q == 1) {
        attnvk_status s = set_plan(st, 1);
        if (s == ATTNVK_OK) st->chunk_begin[0] = 0, st->chunk_count[0] = p->seq_q;
        return s;
    }
    double target = probe_flops, rate = 0; /* FLOP per ms */
    for (int attempt = 0; attempt < PROBE_ATTEMPTS; ++attempt) {
        int rows = 0;
        double work = 0;
        while (rows < p->seq_q && work < target) work += row_flops(p, rows++);
        double ms = 0;
        attnvk_status s = run_chunk(st, &st->sets[0], 0, rows, &ms);
        if (s != ATTNVK_OK || st->stopped) return s;
        rate = work / (ms > 1e-6 ? ms : 1e-6);
        if (ms >= probe_enough_ms || rows == p->seq_q) break;
        double grow = 2 * probe_enough_ms / (ms > 0.01 ? ms : 0.01);
        target *= grow < 64 ? grow : 64;
    }
    double budget = rate * dispatch_budget_ms;
    int n = 0;
    double work = 0;
    for (int i = 0; i < p->seq_q; ++i) { /* count first, then fill */
        double f = row_flops(p, i);
        if (work > 0 && work + f > budget) ++n, work = 0;
        work += f;
    }
    attnvk_status s = set_plan(st, n + 1);
    if (s != ATTNVK_OK) return s;
    int c = 0, begin = 0;
    work = 0;
    for (int i = 0; i < p->seq_q; ++i) {
        double f = row_flops(p, i);
        if (work > 0 && work + f > budget) {
            st->chunk_begin[c] = begin, st->chunk_count[c] = i - begin, ++c;
            begin = i, work = 0;
        }
        work += f;
    }
    st->chunk_begin[c] = begin, st->chunk_count[c] = p->seq_q - begin;
    return ATTNVK_OK;
}

/* Writes the inputs to every set piece by piece: from the workload's packed
 * copy (or the f32 values themselves for f32), else packed here per piece. */
static attnvk_status upload(bench_job *st, const float *src, const void *packed, size_t n, int which)
{
    attnvk_dtype dt = st->p.dtype;
    size_t es = attnvk_dtype_size(dt), piece = n < TRANSFER_ELEMENTS ? n : TRANSFER_ELEMENTS;
    if (dt == ATTNVK_F32) packed = src;
    unsigned char *staging = packed ? NULL : malloc(piece * es);
    if (!packed && !staging) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s = ATTNVK_OK;
    for (size_t off = 0; off < n && s == ATTNVK_OK; off += piece) {
        size_t m = n - off < piece ? n - off : piece;
        const unsigned char *bytes = packed ? (const unsigned char *)packed + off * es : staging;
        if (!packed) attnvk_pack(dt, src + off, staging, m);
        for (int i = 0; i < st->nsets && s == ATTNVK_OK; ++i) {
            attnvk_buffer *b = which == 0 ? st->sets[i].q : which == 1 ? st->sets[i].k : st->sets[i].v;
            s = attnvk_buffer_write(b, off * es, bytes, m * es);
        }
    }
    free(staging);
    return s;
}

static attnvk_status new_buffer(bench_job *st, const void *src, size_t bytes, attnvk_buffer **out)
{
    attnvk_status s = attnvk_buffer_create(st->t->dev, bytes, out);
    return s == ATTNVK_OK ? attnvk_buffer_write(*out, 0, src, bytes) : s;
}

/* The cache as built on the host (quantized, paged) into every set, and its tables. */
static attnvk_status upload_cache(bench_job *st, const bench_workload *w)
{
    const attnvk_problem *p = &w->p;
    attnvk_status s = ATTNVK_OK;
    for (int i = 0; i < st->nsets && s == ATTNVK_OK; ++i) {
        s = attnvk_buffer_write(st->sets[i].k, 0, w->cache.k, w->cache.bytes);
        if (s == ATTNVK_OK) s = attnvk_buffer_write(st->sets[i].v, 0, w->cache.v, w->cache.bytes);
    }
    if (s == ATTNVK_OK && w->cache.block_table)
        s = new_buffer(st, w->cache.block_table, sizeof(int32_t) * (size_t)p->batch * p->max_pages,
                       &st->tables.block_table);
    if (s == ATTNVK_OK && w->cache.seq_lens)
        s = new_buffer(st, w->cache.seq_lens, sizeof(int32_t) * (size_t)p->batch, &st->tables.seq_lens);
    if (s == ATTNVK_OK && w->cache.kv_scales)
        s = new_buffer(st, w->cache.kv_scales, sizeof(float) * 2 * (size_t)p->kv_heads, &st->tables.kv_scales);
    return s;
}

/* fp8 queries (the FP8 forward): the e4m3 bytes into every set, and Q's scales. */
static attnvk_status upload_fp8_q(bench_job *st, const bench_workload *w)
{
    attnvk_status s = ATTNVK_OK;
    for (int i = 0; i < st->nsets && s == ATTNVK_OK; ++i)
        s = attnvk_buffer_write(st->sets[i].q, 0, w->q_fp8, avk_q_bytes(&w->p));
    return s == ATTNVK_OK ? new_buffer(st, w->q_scales, sizeof(float) * (size_t)w->p.heads, &st->tables.q_scales) : s;
}

/* The mask (in its dtype), sinks, ALiBi slopes and block layout the problem asks for. */
static attnvk_status upload_scores(bench_job *st, const bench_workload *w)
{
    const attnvk_problem *p = &w->p;
    attnvk_status s = ATTNVK_OK;
    if (w->mask) {
        const size_t bytes = w->nmask * attnvk_dtype_size(p->mask_dtype);
        void *packed = malloc(bytes);
        if (!packed) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for the mask");
        attnvk_pack(p->mask_dtype, w->mask, packed, w->nmask);
        s = new_buffer(st, packed, bytes, &st->tables.mask);
        free(packed);
    }
    if (s == ATTNVK_OK && w->sinks) s = new_buffer(st, w->sinks, sizeof(float) * p->heads, &st->tables.sinks);
    if (s == ATTNVK_OK && w->slopes) s = new_buffer(st, w->slopes, sizeof(float) * p->heads, &st->tables.slopes);
    if (s == ATTNVK_OK && w->layout) s = new_buffer(st, w->layout, attnvk_block_layout_bytes(p), &st->tables.layout);
    return s;
}

/* NaN in every element of O, so whatever the kernel fails to write shows. */
static attnvk_status poison_output(bench_job *st)
{
    attnvk_dtype dt = st->p.dtype;
    size_t n = attnvk_o_elements(&st->p), es = attnvk_dtype_size(dt);
    size_t piece = n < TRANSFER_ELEMENTS ? n : TRANSFER_ELEMENTS;
    unsigned char *nan_bytes = malloc(piece * es);
    if (!nan_bytes) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    float nan_f32 = NAN;
    uint16_t nan_16 = dt == ATTNVK_F16 ? 0x7e00u : 0x7fc0u;
    for (size_t i = 0; i < piece; ++i) {
        if (dt == ATTNVK_F32) memcpy(nan_bytes + i * 4, &nan_f32, 4);
        else memcpy(nan_bytes + i * 2, &nan_16, 2);
    }
    attnvk_status s = ATTNVK_OK;
    for (size_t off = 0; off < n && s == ATTNVK_OK; off += piece) {
        size_t m = n - off < piece ? n - off : piece;
        s = attnvk_buffer_write(st->sets[0].o, off * es, nan_bytes, m * es);
    }
    free(nan_bytes);
    return s;
}

/* The checked rows of set 0's O as f32, in the workload's row order. */
static attnvk_status read_checked_rows(bench_job *st, float *o_rows)
{
    const attnvk_problem *p = &st->w->p;
    /* O's rows: Dv values */
    size_t D = (size_t)attnvk_problem_head_dim_v(p), es = attnvk_dtype_size(p->dtype), nq = attnvk_o_elements(p);
    size_t bytes = st->w->full ? nq * es : D * es;
    unsigned char *packed = malloc(bytes);
    float *all = st->w->full ? malloc(nq * sizeof(float)) : NULL;
    attnvk_status s = ATTNVK_OK;
    if (!packed || (st->w->full && !all)) s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (s == ATTNVK_OK && st->w->full) {
        s = attnvk_buffer_read(st->sets[0].o, 0, packed, bytes);
        if (s == ATTNVK_OK) attnvk_unpack(p->dtype, packed, all, nq);
    }
    for (size_t r = 0; r < st->w->nrows && s == ATTNVK_OK; ++r) {
        size_t row = st->w->rows[r];
        int i = (int)(row % (size_t)p->seq_q), h = (int)((row / (size_t)p->seq_q) % (size_t)p->heads);
        int b = (int)(row / ((size_t)p->seq_q * p->heads));
        size_t off = avk_o_offset(p, b, h, i);
        if (st->w->full) {
            memcpy(o_rows + r * D, all + off, D * sizeof(float));
        } else {
            s = attnvk_buffer_read(st->sets[0].o, off * es, packed, D * es);
            if (s == ATTNVK_OK) attnvk_unpack(p->dtype, packed, o_rows + r * D, D);
        }
    }
    free(packed);
    free(all);
    return s;
}

/* Compares set 0's O with the reference; `after` names what wrote it when that was
 * not the checked run (the record keeps the checked run's numbers). */
static attnvk_status check_output(bench_job *st, bench_record *r, const char *after)
{
    float *o_rows = malloc(sizeof(float) * st->w->nrows * (size_t)attnvk_problem_head_dim_v(&st->w->p));
    if (!o_rows) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s = read_checked_rows(st, o_rows);
    if (s == ATTNVK_OK) {
        attnvk_check c = bench_workload_compare(st->w, o_rows); /* against what the kernel read: the gate */
        const int fp8_forward = avk_q_is_fp8(&st->w->p);
        if (!after) {
            r->check = c;
            r->have_check = 1;
            if (st->w->ref_inputs) r->quant_error = bench_workload_compare_to(st->w, st->w->ref_inputs, o_rows).rel_l2;
            if (fp8_forward) { /* issue #16 measures against the unquantized inputs: rel_l2 reports that */
                const attnvk_check inputs = bench_workload_compare_to(st->w, st->w->ref_inputs, o_rows);
                r->rel_l2_dequantized = c.rel_l2;
                r->check.rel_l2 = inputs.rel_l2;
                r->check.max_abs = inputs.max_abs;
            }
        }
        if (c.nonfinite)
            bench_record_set(r, BENCH_FAIL, "wrong result%s%s: %zu non-finite values in %zu checked rows",
                             after ? " after " : "", after ? after : "", c.nonfinite, c.rows_checked);
        else if (!c.passed)
            bench_record_set(r, BENCH_FAIL, "wrong result%s%s: %s %.3e > tolerance %.0e over %zu rows",
                             after ? " after " : "", after ? after : "", fp8_forward ? "rel_l2_dequantized" : "rel_l2",
                             c.rel_l2, c.tolerance, c.rows_checked);
    }
    free(o_rows);
    return s;
}

static attnvk_status checked_run(bench_job *st, bench_record *r, double *ms)
{
    attnvk_status s = poison_output(st);
    if (s == ATTNVK_OK) s = run_sample(st, &st->sets[0], ms);
    if (s != ATTNVK_OK || st->stopped) return s;
    return check_output(st, r, NULL);
}

static int compare_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Warm-up: at least cfg->warmup samples (fewer for long cases) and, on a GPU idle
 * for the last 3 seconds, at least cfg->warmup_s of wall time. An idle GPU needs busy
 * time before its clocks are up: on the H100 with no CUDA context open anywhere, the
 * first ~170 Vulkan decode dispatches (~0.3 s) ran 4.5x slower than the rest. A
 * record that follows another on the same GPU (any API) within 3 s (uploading a
 * large case's inputs takes that long) finds the clocks up and skips the floor.
 * *est: the median of the last samples. */
enum { BUSY_GPU_MS = 3000 };
static attnvk_status warm_up(bench_job *st, const bench_run_config *cfg, double *est, bench_record *r)
{
    enum { TAIL = 9 };
    double tail[TAIL];
    long warm = cfg->warmup, done = 0;
    if (warm > 0 && !cfg->iters) { /* long cases: a warm-up no longer than the budget */
        long fit = (long)ceil(cfg->min_time_s * 1e3 / *est);
        warm = warm < fit ? warm : (fit > 1 ? fit : 1);
        /* a checked run as long as the whole budget has warmed the device already */
        if (*est >= cfg->min_time_s * 1e3) warm = 0;
    }
    const double last_busy = bench_group_last_busy_ms(st->t->group);
    const int idle = cfg->warmup_always || last_busy < 0 || wall_ms() - last_busy > BUSY_GPU_MS;
    const double floor_ms = warm > 0 && idle && st->t->info.type != ATTNVK_DEVICE_CPU ? cfg->warmup_s * 1e3 : 0;
    attnvk_status s = ATTNVK_OK;
    st->samples_expected = st->samples_done + warm + (cfg->iters > 0 ? cfg->iters : MIN_SAMPLES);
    report_progress(st, "warm-up", 0);
    const double t0 = wall_ms();
    while (s == ATTNVK_OK && !st->stopped && (done < warm || wall_ms() - t0 < floor_ms)) {
        s = run_sample(st, &st->sets[st->next_set++ % st->nsets], &tail[done % TAIL]);
        ++done;
    }
    if (s != ATTNVK_OK || st->stopped) return s;
    if (done > 0) {
        int n = done < TAIL ? (int)done : TAIL;
        qsort(tail, (size_t)n, sizeof(double), compare_ms);
        *est = tail[n / 2] > 1e-6 ? tail[n / 2] : 1e-6;
    }
    r->warmup_runs = (int)done;
    return ATTNVK_OK;
}

/* Warm-up, then as many samples as fit the time budget (or --iters), rotating input sets. */
static attnvk_status timed_runs(bench_job *st, const bench_run_config *cfg, double check_ms, bench_record *r)
{
    double budget_ms = cfg->min_time_s * 1e3, est = check_ms > 0 ? check_ms : 1e-3;
    attnvk_status s = warm_up(st, cfg, &est, r);
    if (s != ATTNVK_OK || st->stopped) return s;
    st->launches = (int)cfg->launches;
    if (st->launches <= 0) /* auto: only over one input set (rotated sets exist to defeat the cache) */
        st->launches = st->nsets == 1 && st->nchunks == 1 && est < sample_target_ms
                           ? (int)fmin(ceil(sample_target_ms / est), AUTO_MAX_LAUNCHES)
                           : 1;
    r->launches = st->launches;
    est *= st->launches;
    long n = cfg->iters;
    if (n <= 0) {
        double want = ceil(budget_ms / est);
        n = want < MIN_SAMPLES ? MIN_SAMPLES : want > MAX_SAMPLES ? MAX_SAMPLES : (long)want;
    }
    r->samples_ms = malloc(sizeof(double) * (size_t)n);
    if (!r->samples_ms) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    st->samples_expected = st->samples_done + n;
    report_progress(st, "timing", 0);
    /* the budget is device time, but a sample of a kernel of microseconds costs more in
     * launch and synchronisation than on the device: wall time bounds it too */
    const double t0 = wall_ms(), wall_budget_ms = 1.25 * budget_ms;
    for (long i = 0; i < n && s == ATTNVK_OK && !st->stopped; ++i) {
        s = run_sample(st, &st->sets[st->next_set++ % st->nsets], &r->samples_ms[i]);
        if (s == ATTNVK_OK && !st->stopped) r->nsamples = (int)i + 1;
        if (cfg->iters <= 0 && i + 1 >= MIN_SAMPLES && wall_ms() - t0 >= wall_budget_ms) break;
    }
    if (r->nsamples > 0) {
        bench_stats_compute(r->samples_ms, r->nsamples, &r->stats);
        r->have_stats = 1;
    }
    if (s == ATTNVK_OK) bench_group_mark_busy(st->t->group, wall_ms());
    return s;
}

void bench_derive_metrics(bench_target *t, bench_record *r)
{
    const attnvk_problem *p = &r->c.p;
    if (bench_memory_bound(p) && r->status == BENCH_OK && r->have_stats && !r->interrupted) {
        double read = bench_target_read_bandwidth(t);
        r->read_bandwidth_gbps = read > 0 ? read : NAN;
    }
    double seconds = r->stats.median_ms * 1e-3;
    if (r->status != BENCH_OK || !r->have_stats || !(seconds > 0)) return;
    r->tflops = r->flops / seconds / 1e12;
    r->tokens_per_s = (double)p->batch * p->seq_q / seconds;
    r->gbytes_per_s = bench_io_bytes(p) / seconds / 1e9;
    r->bandwidth_fraction = r->read_bandwidth_gbps > 0 ? r->gbytes_per_s / r->read_bandwidth_gbps : NAN;
    bench_roofline(t, r);
    /* the measured compute roof where `attnvk peak` cached one, else the datasheet table */
    double peak = isfinite(r->compute_peak_tflops) ? r->compute_peak_tflops : bench_peak_tflops(t->info.name, p->dtype);
    r->peak_fraction = peak > 0 ? r->tflops / peak : NAN;
}

static int dtype_supported(const attnvk_device_info *d, attnvk_dtype dt)
{
    return dt == ATTNVK_F32 || (dt == ATTNVK_F16 && d->fp16) || (dt == ATTNVK_BF16 && d->bf16);
}

static double score_bytes(const attnvk_problem *p)
{
    return (double)attnvk_dtype_size(p->dtype) * p->batch * p->heads * (double)p->seq_q * p->seq_kv;
}

/* 1 (and r skipped) when io + workspace exceeds --max-memory or the device's memory. */
static int over_memory(const bench_target *t, const bench_run_config *cfg, double workspace, bench_record *r)
{
    double io = bench_io_bytes(&r->c.p);
    double limit = cfg->max_memory ? (double)cfg->max_memory : (double)t->info.memory_bytes;
    if (!(limit > 0 && io + workspace > limit)) return 0;
    char need[32], qkvo[32], ws[32], have[32], parts[96];
    bench_format_bytes(io + workspace, need, sizeof need);
    bench_format_bytes(io, qkvo, sizeof qkvo);
    bench_format_bytes(workspace, ws, sizeof ws);
    bench_format_bytes(limit, have, sizeof have);
    if (workspace > 0) snprintf(parts, sizeof parts, "Q,K,V,O %s + workspace %s", qkvo, ws);
    else snprintf(parts, sizeof parts, "Q,K,V,O");
    bench_record_set(r, BENCH_SKIPPED, "needs %s of device memory (%s), %s %s", need, parts,
                     cfg->max_memory ? "--max-memory allows" : "the device has", have);
    return 1;
}

int bench_precheck(const bench_target *t, const attnvk_impl_info *impl, const bench_run_config *cfg, bench_record *r)
{
    const attnvk_problem *p = &r->c.p;
    if (!impl->available) {
        bench_record_set(r, BENCH_UNAVAILABLE, "%s", impl->reason[0] ? impl->reason : "not available");
        return 1;
    }
    if (!t->dev) {
        bench_record_set(r, BENCH_UNAVAILABLE, "cannot open device: %s", t->open_error);
        return 1;
    }
    if (t->lost) {
        bench_record_set(r, BENCH_SKIPPED, "device lost earlier in this run");
        return 1;
    }
    if (!dtype_supported(&t->info, p->dtype)) {
        bench_record_set(r, BENCH_SKIPPED, "%s device has no %s support", attnvk_api_name(t->info.api),
                         attnvk_dtype_name(p->dtype));
        return 1;
    }
    if (!impl->fused && cfg->fused_only_suite) {
        char need[32];
        bench_format_bytes(score_bytes(p), need, sizeof need);
        bench_record_set(r, BENCH_SKIPPED, "unfused baseline left out of suite '%s': its Nq x Nk scores need %s",
                         cfg->fused_only_suite, need);
        return 1;
    }
    /* what any kernel of this kind needs at least; the kernel's own workspace is checked after prepare */
    if (over_memory(t, cfg, impl->fused ? 0 : score_bytes(p), r)) return 1;
    char why[160];
    if (!bench_workload_fits_host(p, bench_workload_wants_full(p), why, sizeof why)) {
        bench_record_set(r, BENCH_SKIPPED, "host: %s", why);
        return 1;
    }
    return 0;
}

/* Prepares the kernel and decides the input sets; 0 when the record is already final. */
static int prepare(bench_job *st, const attnvk_impl_info *impl, const bench_run_config *cfg, bench_record *r)
{
    const attnvk_problem *p = &st->p;
    const attnvk_device_info *d = &st->t->info;
    double io = bench_io_bytes(p);
    /* the flash kernel: attnvk's, or the cpu API's float64 reference; kernel options are theirs,
     * vendor libraries reject them */
    int own_kernel = strcmp(impl->name, "attnvk") == 0;
    attnvk_kernel_options opts = {.implementation = own_kernel ? NULL : impl->name};
    /* dilated attention runs as strided views over every row at once (a view's rows are every r-th
     * row of a segment: kernel_flags.h's AVK_FLAG_DILATED_VIEW), and at N s / r^2 pairs needs no chunks */
    st->splittable = own_kernel && !p->dilated_groups;
    if (own_kernel) {
        opts.test_flags = cfg->test_flags;
        opts.variant = cfg->variant;
        opts.tile_br = cfg->tile_br, opts.tile_bc = cfg->tile_bc;
        opts.split_kv = (int)cfg->split_kv;
    }
    report_progress(st, "prepare", 0);
    attnvk_status s = own_kernel && cfg->explicit_entry
                          ? avk_kernel_prepare_explicit(st->t->dev, p, &opts, cfg->explicit_entry, &st->kernel, &r->kernel)
                          : attnvk_kernel_prepare(st->t->dev, p, &opts, &st->kernel, &r->kernel);
    if (s != ATTNVK_OK) {
        st->kernel = NULL;
        bench_record_status(r, st->t, s, "prepare");
        return 0;
    }
    r->have_kernel = 1;
    double workspace = (double)r->kernel.workspace_bytes;
    if (!impl->fused && workspace < score_bytes(p)) workspace = score_bytes(p); /* in case the backend leaves it out */
    r->memory_bytes = (uint64_t)(io + workspace);
    if (over_memory(st->t, cfg, workspace, r)) return 0;
    double limit = cfg->max_memory ? (double)cfg->max_memory : (double)d->memory_bytes;
    st->nsets = io < rotate_below_bytes ? MAX_INPUT_SETS : 1;
    while (st->nsets > 1 && limit > 0 && st->nsets * io + workspace > 0.5 * limit) --st->nsets;
    return 1;
}

static attnvk_status allocate_sets(bench_job *st)
{
    const attnvk_problem *p = &st->p;
    size_t es = attnvk_dtype_size(p->dtype);
    size_t qb = avk_q_bytes(p), ob = attnvk_o_elements(p) * es, kb = attnvk_kv_bytes(p), vb = attnvk_v_bytes(p);
    for (int i = 0; i < st->nsets; ++i) {
        io_set *x = &st->sets[i];
        attnvk_status s = attnvk_buffer_create(st->t->dev, qb, &x->q);
        if (s == ATTNVK_OK) s = attnvk_buffer_create(st->t->dev, kb, &x->k);
        if (s == ATTNVK_OK) s = attnvk_buffer_create(st->t->dev, vb, &x->v);
        if (s == ATTNVK_OK) s = attnvk_buffer_create(st->t->dev, ob, &x->o);
        if (s == ATTNVK_OK) continue;
        attnvk_buffer_destroy(x->q);
        attnvk_buffer_destroy(x->k);
        attnvk_buffer_destroy(x->v);
        memset(x, 0, sizeof *x);
        if (i == 0 || s != ATTNVK_ERROR_OUT_OF_MEMORY) return s;
        st->nsets = i; /* fewer rotated copies rather than none */
        break;
    }
    return ATTNVK_OK;
}

void bench_job_abort(bench_job *st)
{
    if (!st) return;
    for (int i = 0; i < MAX_INPUT_SETS; ++i) {
        attnvk_buffer_destroy(st->sets[i].q);
        attnvk_buffer_destroy(st->sets[i].k);
        attnvk_buffer_destroy(st->sets[i].v);
        attnvk_buffer_destroy(st->sets[i].o);
    }
    attnvk_buffer_destroy(st->tables.block_table);
    attnvk_buffer_destroy(st->tables.seq_lens);
    attnvk_buffer_destroy(st->tables.kv_scales);
    attnvk_buffer_destroy(st->tables.q_scales);
    attnvk_buffer_destroy(st->tables.mask);
    attnvk_buffer_destroy(st->tables.sinks);
    attnvk_buffer_destroy(st->tables.slopes);
    attnvk_buffer_destroy(st->tables.layout);
    attnvk_kernel_destroy(st->kernel);
    free(st->chunk_begin);
    free(st->chunk_count);
    free(st);
}

/* A record that did not run keeps no partial results. */
static void drop_partial(bench_record *r)
{
    if (r->status != BENCH_SKIPPED && r->status != BENCH_UNAVAILABLE) return;
    bench_record_free(r);
    r->have_stats = r->have_check = 0;
}

bench_job *bench_job_begin(bench_target *t, const attnvk_impl_info *impl, const bench_run_config *cfg,
                           bench_record *r)
{
    if (bench_precheck(t, impl, cfg, r)) return NULL;
    bench_job *st = calloc(1, sizeof *st);
    if (!st) {
        bench_record_set(r, BENCH_SKIPPED, "out of host memory");
        return NULL;
    }
    st->t = t;
    st->cfg = cfg;
    st->phase = "";
    st->p = r->c.p;
    st->samples_expected = 1; /* the checked run */
    if (!prepare(st, impl, cfg, r)) {
        bench_job_abort(st);
        drop_partial(r);
        return NULL;
    }
    report_progress(st, "allocation", 0);
    attnvk_status s = allocate_sets(st);
    if (s != ATTNVK_OK) {
        bench_record_status(r, t, s, "allocation");
        bench_job_abort(st);
        drop_partial(r);
        return NULL;
    }
    return st;
}

void bench_job_finish(bench_job *st, const bench_workload *w, const bench_run_config *cfg, bench_record *r)
{
    st->w = w;
    const char *stage = "upload";
    report_progress(st, "upload", 0);
    attnvk_status s = w->q_fp8 ? upload_fp8_q(st, w) : upload(st, w->q, w->q_packed, attnvk_q_elements(&w->p), 0);
    if (s == ATTNVK_OK && w->has_cache) s = upload_cache(st, w);
    else {
        if (s == ATTNVK_OK) s = upload(st, w->k, w->k_packed, attnvk_kv_elements(&w->p), 1);
        if (s == ATTNVK_OK) s = upload(st, w->v, w->v_packed, attnvk_v_elements(&w->p), 2);
    }
    if (s == ATTNVK_OK) s = upload_scores(st, w);
    if (s == ATTNVK_OK) {
        stage = "the probe run";
        report_progress(st, "probe", 0);
        s = plan_chunks(st);
    }
    r->input_sets = st->nsets;
    r->chunks = st->nchunks;
    double check_ms = 0;
    if (s == ATTNVK_OK && !st->stopped) {
        stage = "the checked run";
        report_progress(st, "check", 0);
        s = checked_run(st, r, &check_ms);
    }
    if (s == ATTNVK_OK && cfg->timed && !st->stopped) {
        stage = "the timed runs";
        s = timed_runs(st, cfg, check_ms, r);
        /* back-to-back launches share O (and a split's workspace): what the last one left must be right too */
        if (s == ATTNVK_OK && r->launches > 1 && r->status == BENCH_OK && !st->stopped)
            s = check_output(st, r, "back-to-back launches");
    }
    if (s != ATTNVK_OK) bench_record_status(r, st->t, s, stage);
    r->interrupted = st->stopped;
    drop_partial(r);
    if (w->layout) r->flops = w->flops; /* the layout's visible pairs, not the dense count */
    bench_derive_metrics(st->t, r);
    bench_job_abort(st);
}

void bench_run(bench_target *t, const attnvk_impl_info *impl, const bench_workload *w, const bench_run_config *cfg,
               bench_record *r)
{
    bench_job *job = bench_job_begin(t, impl, cfg, r);
    if (job) bench_job_finish(job, w, cfg, r);
}
