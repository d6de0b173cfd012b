/* `attnvk bench`: every case on every selected device and implementation, with
 * identical inputs, each output checked, then timed with device timestamps. */
#include "bench_options.h"
#include "bench_output.h"
#include "bench_progress.h"
#include "bench_runner.h"
#include "bench_suites.h"
#include "cli.h"
#include "history_db.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The cpu API is the float64 reference itself: under --api all it runs only
 * tiny cases next to other devices, and moderate ones when it is alone. */
static const double cpu_tiny_flops = 268435456.0;     /* 2^28 */
static const double cpu_alone_max_flops = 68719476736.0; /* 2^36, about a minute */
static const double cv_warning = 0.05;

typedef enum cpu_rule { CPU_RUN, CPU_OMIT, CPU_SKIP } cpu_rule;

typedef struct bench_session {
    bench_options o;
    attnvk_context *ctx;
    bench_target targets[BENCH_MAX_DEVICES];
    int ntargets;
    int cpu_alone;             /* no device of another API */
    bench_case *cases;
    int ncases;
    bench_results res;
    bench_progress progress;
    int write_failed;
    int noisy_cpu_records;     /* cv warnings on CPU-type devices, summed up at the end */
} bench_session;

static cpu_rule cpu_rule_for(const bench_session *s, const bench_target *t, const bench_case *c)
{
    if (t->info.api != ATTNVK_API_CPU || !s->o.api_all || s->o.device) return CPU_RUN;
    double flops = attnvk_problem_flops(&c->p);
    if (!s->cpu_alone) return flops <= cpu_tiny_flops ? CPU_RUN : CPU_OMIT;
    return flops <= cpu_alone_max_flops ? CPU_RUN : CPU_SKIP;
}

static void utc_now(char *out, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void sleep_s(double s)
{
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static int write_out(bench_session *s)
{
    if (!s->o.out || s->write_failed) return 0;
    bench_results_link(&s->res);
    char *text = bench_render(&s->res, s->o.format);
    int rc = text ? bench_write_atomic(s->o.out, text) : -1;
    free(text);
    if (rc) {
        s->write_failed = 1;
        bench_progress_clear(&s->progress);
        cli_error(EXIT_FAILED, "bench: cannot write '%s'", s->o.out);
    }
    return rc;
}

/* --save: the same JSON the results file gets, stored as one transaction. */
static int save_history(bench_session *s)
{
    bench_results_link(&s->res);
    char *text = bench_render(&s->res, BENCH_FMT_JSON);
    char err[512] = "";
    long long id = 0;
    int rc = text ? history_save_results(s->o.db, text, &id, err, sizeof err) : 1;
    free(text);
    if (rc != 0) return cli_error(EXIT_FAILED, "bench: cannot save to the history: %s", err[0] ? err : "out of memory");
    fprintf(stderr, "attnvk: saved as run #%lld in %s\n", id, s->o.db ? s->o.db : "the default history database");
    return 0;
}

static void warn_spread(bench_session *s, const bench_record *r)
{
    if (r->status != BENCH_OK || !r->have_stats || r->nsamples < 3 || r->stats.cv <= cv_warning) return;
    const bench_target *t = &s->targets[r->device_index];
    if (t->info.type == ATTNVK_DEVICE_CPU) { /* shared host cores: expected, one line at the end */
        ++s->noisy_cpu_records;
        return;
    }
    bench_progress_clear(&s->progress);
    fprintf(stderr, "attnvk: warning: %s %s on %s, %s: run-to-run spread cv %.1f%% > %.0f%%\n", r->implementation,
            attnvk_api_name(t->info.api), t->info.name, r->c.name, r->stats.cv * 100, cv_warning * 100);
}

static int count_units(const bench_session *s)
{
    int n = 0;
    for (int c = 0; c < s->ncases; ++c)
        for (int d = 0; d < s->ntargets; ++d)
            if (cpu_rule_for(s, &s->targets[d], &s->cases[c]) != CPU_OMIT) n += s->targets[d].nimpls;
    return n;
}

static void add_record(bench_session *s, bench_record *r)
{
    warn_spread(s, r);
    if (bench_results_add(&s->res, r) != 0) {
        bench_record_free(r);
        bench_progress_clear(&s->progress);
        cli_error(EXIT_FAILED, "bench: out of host memory for the results");
        return;
    }
    write_out(s);
    bench_progress_step(&s->progress);
}

static void run_case(bench_session *s, const bench_case *c, const bench_run_config *cfg)
{
    bench_workload w;
    int have_workload = 0;
    char workload_error[512] = "";
    for (int d = 0; d < s->ntargets; ++d) {
        bench_target *t = &s->targets[d];
        cpu_rule rule = cpu_rule_for(s, t, c);
        if (rule == CPU_OMIT) continue;
        for (int i = 0; i < t->nimpls; ++i) {
            const attnvk_impl_info *impl = &t->impls[i];
            char what[256];
            snprintf(what, sizeof what, "%s on %s:%d %s", c->name, attnvk_api_name(t->info.api), t->info.index,
                     impl->name);
            bench_progress_update(&s->progress, what);
            bench_record r;
            bench_record_init(&r, impl->name, impl->fused, d, c);
            if (rule == CPU_SKIP) {
                bench_record_set(&r, BENCH_SKIPPED,
                                 "%.0f GFLOP is too slow for the cpu reference under --api all; use --api cpu to run it",
                                 r.flops / 1e9);
            } else {
                /* the kernel, the memory checks and the device buffers come first: a case that
                 * cannot run ends here, before any host input or reference is built */
                bench_job *job = bench_job_begin(t, impl, cfg, &r);
                if (job && !have_workload && !workload_error[0]) {
                    /* built on first use, shared by every later device and implementation */
                    uint64_t seed = bench_case_seed(s->o.seed, c->name);
                    if (bench_workload_create(&c->p, seed, bench_workload_wants_full(&c->p), &w) == ATTNVK_OK)
                        have_workload = 1;
                    else
                        snprintf(workload_error, sizeof workload_error, "%s", attnvk_last_error());
                }
                if (job && have_workload) {
                    bench_job_finish(job, &w, cfg, &r);
                } else if (job) {
                    bench_job_abort(job);
                    bench_record_set(&r, BENCH_SKIPPED, "host: %s", workload_error);
                }
            }
            add_record(s, &r);
        }
    }
    if (have_workload) bench_workload_destroy(&w);
}

static int open_targets(bench_session *s)
{
    if (attnvk_context_create(&s->ctx) != ATTNVK_OK) return cli_error(EXIT_FAILED, "%s", attnvk_last_error());
    s->ntargets = bench_targets_open(s->ctx, s->o.api_mask, s->o.device, s->o.impls, s->targets, BENCH_MAX_DEVICES);
    for (int a = 0; a < ATTNVK_API_COUNT; ++a) {
        const char *reason;
        if (!s->o.api_all && (s->o.api_mask & (1u << a)) &&
            attnvk_api_status(s->ctx, (attnvk_api)a, &reason) != ATTNVK_OK)
            fprintf(stderr, "attnvk: note: %s unavailable: %s\n", attnvk_api_name((attnvk_api)a), reason);
    }
    if (s->ntargets == 0)
        return cli_error(EXIT_FAILED, "bench: no visible device matches --api %s%s%s", s->o.api_text,
                         s->o.device ? " --device " : "",
                         s->o.device ? s->o.device : "");
    s->cpu_alone = 1;
    for (int d = 0; d < s->ntargets; ++d)
        if (s->targets[d].info.api != ATTNVK_API_CPU) s->cpu_alone = 0;
    return 0;
}

static int print_results(bench_session *s)
{
    bench_results_link(&s->res);
    bench_format stdout_format = s->o.out ? BENCH_FMT_TABLE : s->o.format;
    char *text = bench_render(&s->res, stdout_format);
    if (!text) return cli_error(EXIT_FAILED, "bench: out of host memory");
    fputs(text, stdout);
    fflush(stdout);
    free(text);
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    bench_session *s = calloc(1, sizeof *s);
    if (!s) return cli_error(EXIT_FAILED, "out of host memory");
    int rc = bench_parse_options(argc, argv, &s->o);
    if (rc) {
        free(s);
        return rc < 0 ? EXIT_OK : rc;
    }
    s->ncases = bench_build_cases(&s->o, &s->cases);
    if (s->ncases <= 0) {
        if (s->ncases == 0) cli_error(EXIT_USAGE, "bench: suite '%s' has no causal cases", s->o.suite);
        free(s->cases);
        free(s);
        return EXIT_USAGE;
    }
    const bench_suite *suite = s->o.suite ? bench_suite_find(s->o.suite) : NULL;
    bench_results *res = &s->res;
    res->opts = &s->o;
    res->suite = s->o.suite;
    res->dtype = s->cases[0].p.dtype;
    utc_now(res->created, sizeof res->created);
    rc = open_targets(s);
    if (rc == 0) {
        res->ctx = s->ctx;
        res->devices = s->targets;
        res->ndevices = s->ntargets;
        if (s->o.out && write_out(s) != 0) rc = EXIT_USAGE; /* an unwritable --out is caught before any work */
    }
    if (rc == 0) {
        bench_run_config cfg = {
            .timed = 1, .iters = s->o.iters, .min_time_s = s->o.min_time_s, .warmup = s->o.warmup,
            .variant = s->o.variant, .tile_br = s->o.tile_br, .tile_bc = s->o.tile_bc, .split_kv = s->o.split_kv,
            .test_flags = s->o.test_flags, .max_memory = s->o.max_memory,
            .fused_only_suite = suite && suite->fused_only ? suite->name : NULL,
        };
        bench_progress_start(&s->progress, count_units(s));
        for (int c = 0; c < s->ncases; ++c) {
            if (c > 0) sleep_s(s->o.cooldown_s);
            run_case(s, &s->cases[c], &cfg);
        }
        bench_progress_finish(&s->progress);
        rc = print_results(s);
        if (s->noisy_cpu_records)
            fprintf(stderr, "attnvk: warning: %d record(s) on CPU devices had a run-to-run spread (cv) above %.0f%%\n",
                    s->noisy_cpu_records, cv_warning * 100);
        for (int i = 0; i < res->nrecords && rc == 0; ++i)
            if (res->records[i].status == BENCH_FAIL) rc = EXIT_FAILED;
        if (rc == 0 && s->write_failed) rc = EXIT_FAILED;
        if (s->o.save && save_history(s) != 0 && rc == 0) rc = EXIT_FAILED;
    }
    bench_results_free(res);
    bench_targets_close(s->targets, s->ntargets);
    attnvk_context_destroy(s->ctx);
    free(s->cases);
    free(s);
    return rc;
}
