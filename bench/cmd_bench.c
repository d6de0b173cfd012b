/* `attnvk bench`: every case on every selected device and implementation, with
 * identical inputs, each output checked, then timed with device timestamps. Rows
 * are printed, and --out rewritten, as records finish; SIGINT/SIGTERM stop after
 * the current dispatch with what finished printed and saved. */
#include "bench_backward.h"
#include "bench_cold.h"
#include "bench_options.h"
#include "bench_output.h"
#include "bench_progress.h"
#include "bench_ring.h"
#include "bench_runner.h"
#include "bench_suites.h"
#include "cli.h"
#include "core/atomic_file.h"
#include "history_db.h"
#include "text_layout.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/* The cpu API is the float64 reference itself: under --api all it runs only
 * tiny cases next to other devices, and moderate ones when it is alone. */
static const double cpu_tiny_flops = 268435456.0;     /* 2^28 */
static const double cpu_alone_max_flops = 68719476736.0; /* 2^36, about a minute */
static const double cv_warning = 0.05;

typedef enum cpu_rule { CPU_RUN, CPU_OMIT, CPU_SKIP } cpu_rule;

/* One record to write: case, device, implementation. */
typedef struct bench_unit {
    int c, d, i;
    int may_run; /* not ruled out by the checks that need no work (the progress ETA counts these) */
} bench_unit;

typedef struct bench_session {
    bench_options o;
    attnvk_context *ctx;
    bench_target targets[BENCH_MAX_DEVICES];
    int ntargets;
    int cpu_alone;             /* no device of another API */
    bench_case *cases;
    int ncases;
    bench_unit *units;
    int nunits;
    bench_workload workload;   /* of the case running now, built on first use */
    int workload_case;         /* -1: none */
    int have_workload;
    char workload_error[512];
    bench_grad_workload grads; /* --pass bwd, fwd+bwd: dO and the reference gradients of grads_case */
    int grads_case;            /* -1: none */
    int have_grads;
    char grads_error[512];
    int unit_case;             /* the case of the record running now */
    bench_results res;
    bench_progress progress;
    int write_failed, print_failed;
    int noisy_cpu_records;     /* cv warnings on CPU-type devices, summed up at the end */
    int ring_target[64];       /* --ring: each rank's target */
    int argc;                  /* the command line, for --cold's fresh processes */
    char **argv;
} bench_session;

/* The signal that asked the run to stop; the runner checks it before every dispatch. */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig) { stop_signal = sig; }

static void catch_stop_signals(struct sigaction *old_int, struct sigaction *old_term)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    /* a second Ctrl-C ends the process at once; drivers' own system calls are restarted */
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    stop_signal = 0;
    sigaction(SIGINT, &sa, old_int);
    sigaction(SIGTERM, &sa, old_term);
}

/* --max-time: SIGALRM stops the run the way SIGINT does, after the current dispatch
 * (the record it cuts short is dropped; the finished ones are kept). */
static void arm_max_time(double seconds)
{
    if (!(seconds > 0)) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval when = {.it_value = {.tv_sec = (time_t)seconds,
                                          .tv_usec = (suseconds_t)((seconds - floor(seconds)) * 1e6)}};
    setitimer(ITIMER_REAL, &when, NULL);
}

static void disarm_max_time(void)
{
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    signal(SIGALRM, SIG_DFL);
}

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

/* Returns early (EINTR) when a stop signal arrives. */
static void sleep_s(double s)
{
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Prints a part of the output (takes text), on a line the progress bar has left. */
static void print_part(bench_session *s, char *text)
{
    if (!text) {
        if (!s->print_failed) cli_error(EXIT_FAILED, "bench: out of host memory for the output");
        s->print_failed = 1;
        return;
    }
    if (*text) {
        bench_progress_clear(&s->progress);
        fputs(text, stdout);
        fflush(stdout);
    }
    free(text);
}

/* --cold's table after a final table or md (malloc'd, "" for other formats; NULL: out of memory). */
static char *cold_table(bench_session *s, bench_format f)
{
    strbuf b = {0};
    if (s->o.cold) bench_cold_table(&b, &s->res, f);
    if (b.failed) {
        sb_free(&b);
        return NULL;
    }
    return b.data ? b.data : strdup("");
}

/* bench_render with --cold's table after a final table or md (JSON records carry their cold_start). */
static char *render(bench_session *s, bench_format f, int final)
{
    char *text = bench_render(&s->res, f, final);
    if (!s->o.cold || !text || !final || f == BENCH_FMT_JSON || f == BENCH_FMT_JSONL) return text;
    char *table = cold_table(s, f);
    char *both = table ? malloc(strlen(text) + strlen(table) + 1) : NULL;
    if (both) strcat(strcpy(both, text), table);
    free(text);
    free(table);
    return both;
}

/* The whole --out file again, atomically, so it is valid at every moment. */
static void write_out(bench_session *s, int final)
{
    if (!s->o.out || s->write_failed) return;
    char *text = render(s, s->o.format, final);
    attnvk_status st = text ? avk_atomic_write(s->o.out, text, strlen(text)) : ATTNVK_ERROR_OUT_OF_MEMORY;
    free(text);
    if (st == ATTNVK_OK) return;
    s->write_failed = 1;
    bench_progress_clear(&s->progress);
    cli_error(EXIT_FAILED, "bench: cannot write the results: %s",
              st == ATTNVK_ERROR_OUT_OF_MEMORY ? "out of host memory" : attnvk_last_error());
}

/* --save: the same JSON the results file gets, stored as one transaction. */
static int save_history(bench_session *s)
{
    char *text = render(s, BENCH_FMT_JSON, 1);
    char err[512] = "";
    long long id = 0;
    int rc = text ? history_save_or_keep(s->o.db, text, &id, err, sizeof err) : 1;
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

/* Within a case: vendor kernels first (fused, then unfused), then attnvk's kernels and the
 * reference, so each attnvk row is printed with its speedup over a vendor kernel that already ran. */
static int run_pass(const attnvk_impl_info *impl)
{
    if (!bench_is_vendor(impl->name)) return 2;
    return impl->fused ? 0 : 1;
}

/* --ring: one record per case, over the selected devices in order (virtual ranks when fewer). */
static int plan_ring_units(bench_session *s)
{
    s->units = calloc((size_t)s->ncases + 1, sizeof *s->units);
    if (!s->units) return cli_error(EXIT_FAILED, "out of host memory");
    for (int i = 0; i < s->o.ring; ++i) s->ring_target[i] = i % s->ntargets;
    int own = 0;
    for (int i = 0; i < s->targets[0].nimpls; ++i)
        if (!strcmp(s->targets[0].impls[i].name, "attnvk")) own = i;
    for (int c = 0; c < s->ncases; ++c) s->units[s->nunits++] = (bench_unit){c, 0, own, 1};
    return 0;
}

static int plan_units(bench_session *s, const bench_run_config *cfg)
{
    if (s->o.ring) return plan_ring_units(s);
    int per_case = 0;
    for (int d = 0; d < s->ntargets; ++d) per_case += s->targets[d].nimpls;
    s->units = calloc((size_t)(s->ncases * per_case) + 1, sizeof *s->units);
    if (!s->units) return cli_error(EXIT_FAILED, "out of host memory");
    s->nunits = 0;
    for (int c = 0; c < s->ncases; ++c)
        for (int pass = 0; pass < 3; ++pass)
            for (int d = 0; d < s->ntargets; ++d) {
                cpu_rule rule = cpu_rule_for(s, &s->targets[d], &s->cases[c]);
                if (rule == CPU_OMIT) continue;
                for (int i = 0; i < s->targets[d].nimpls; ++i) {
                    const attnvk_impl_info *impl = &s->targets[d].impls[i];
                    if (run_pass(impl) != pass) continue;
                    bench_record scratch;
                    bench_record_init(&scratch, impl->name, impl->fused, d, &s->cases[c]);
                    int may_run = rule == CPU_RUN && !bench_precheck(&s->targets[d], impl, cfg, &scratch);
                    s->units[s->nunits++] = (bench_unit){c, d, i, may_run};
                }
            }
    return 0;
}

static void progress_hook(void *ctx, const char *phase, long done, long expected)
{
    bench_progress_within(ctx, phase, done, expected);
}

/* The case's inputs and reference rows, built once and shared by every later record of the case. */
static const bench_workload *case_workload(bench_session *s, int c)
{
    if (s->workload_case != c) {
        if (s->have_workload) bench_workload_destroy(&s->workload);
        s->have_workload = 0;
        s->workload_error[0] = '\0';
        s->workload_case = c;
    }
    if (!s->have_workload && !s->workload_error[0]) {
        const bench_case *bc = &s->cases[c];
        bench_progress_within(&s->progress, "inputs and reference", 0, 0);
        if (bench_workload_create_pattern(&bc->p, &bc->block_pattern, bench_case_seed(s->o.seed, bc->name),
                                          bench_workload_wants_full(&bc->p), &s->workload) == ATTNVK_OK)
            s->have_workload = 1;
        else
            snprintf(s->workload_error, sizeof s->workload_error, "%s", attnvk_last_error());
    }
    return s->have_workload ? &s->workload : NULL;
}

/* The backward's inputs and reference gradients of the running record's case, built once per case. */
static const bench_grad_workload *case_grads(void *ctx, char *why, size_t n)
{
    bench_session *s = ctx;
    const int c = s->unit_case;
    if (s->grads_case != c) {
        if (s->have_grads) bench_grad_workload_destroy(&s->grads);
        s->have_grads = 0;
        s->grads_error[0] = '\0';
        s->grads_case = c;
    }
    if (!s->have_grads && !s->grads_error[0]) {
        const bench_case *bc = &s->cases[c];
        if (bench_grad_workload_create(&bc->p, bench_case_seed(s->o.seed, bc->name), &s->grads) == ATTNVK_OK)
            s->have_grads = 1;
        else
            snprintf(s->grads_error, sizeof s->grads_error, "%s", attnvk_last_error());
    }
    if (!s->have_grads) snprintf(why, n, "%s", s->grads_error);
    return s->have_grads ? &s->grads : NULL;
}

static void add_record(bench_session *s, bench_record *r)
{
    int ran = r->status == BENCH_OK || r->status == BENCH_FAIL;
    warn_spread(s, r);
    bench_progress_step(&s->progress, ran);
    if (bench_results_add(&s->res, r) != 0) {
        bench_record_free(r);
        bench_progress_clear(&s->progress);
        cli_error(EXIT_FAILED, "bench: out of host memory for the results");
        return;
    }
    bench_results_link(&s->res);
    print_part(s, bench_render_row(&s->res, s->res.nrecords - 1, s->o.format));
    write_out(s, 0);
}

static void run_unit(bench_session *s, const bench_unit *u, const bench_run_config *cfg)
{
    bench_target *t = &s->targets[u->d];
    const attnvk_impl_info *impl = &t->impls[u->i];
    const bench_case *c = &s->cases[u->c];
    char what[256];
    snprintf(what, sizeof what, "%s %s:%d %s", c->name, attnvk_api_name(t->info.api), t->info.index, impl->name);
    bench_progress_record(&s->progress, what, u->may_run);
    bench_record r;
    bench_record_init(&r, impl->name, impl->fused, u->d, c);
    if (s->o.ring) {
        bench_case rc = *c;
        bench_ring_case_name(c->name, (int)s->o.ring, rc.name, sizeof rc.name);
        bench_record_init(&r, "attnvk", 1, u->d, &rc);
        const bench_workload *w = case_workload(s, u->c);
        if (w) bench_ring_run(s->targets, s->ring_target, (int)s->o.ring, cfg, w, &r);
        else bench_record_set(&r, BENCH_SKIPPED, "host: %s", s->workload_error);
    } else if (cpu_rule_for(s, t, c) == CPU_SKIP) {
        bench_record_set(&r, BENCH_SKIPPED,
                         "%.0f GFLOP is too slow for the cpu reference under --api all; use --api cpu to run it",
                         r.flops / 1e9);
    } else if (cfg->pass != BENCH_PASS_FWD) {
        s->unit_case = u->c;
        bench_backward_run(t, impl, cfg, case_grads, s, &r);
    } else {
        /* the kernel, the memory checks and the device buffers come first: a case that
         * cannot run ends here, before any host input or reference is built */
        bench_job *job = bench_job_begin(t, impl, cfg, &r);
        const bench_workload *w = job ? case_workload(s, u->c) : NULL;
        if (w) {
            bench_job_finish(job, w, cfg, &r);
        } else if (job) {
            bench_job_abort(job);
            bench_record_set(&r, BENCH_SKIPPED, "host: %s", s->workload_error);
        }
    }
    if (!r.interrupted && s->o.cold && r.status == BENCH_OK) {
        const bench_cold_unit cu = {
            .argc = s->argc, .argv = s->argv, .case_index = u->c, .case_name = c->name, .api = t->info.api,
            .device_index = t->info.index, .implementation = impl->name, .runs = (int)s->o.cold_runs,
            .on_phase = progress_hook, .ctx = &s->progress,
        };
        bench_cold_measure(&cu, &r.cold_start);
        r.interrupted = stop_signal != 0; /* the starts saw the signal too */
    }
    if (r.interrupted) { /* cut short by a stop signal: not a result */
        bench_record_free(&r);
        return;
    }
    add_record(s, &r);
}

static int open_targets(bench_session *s)
{
    int rc = cli_context_create(&s->ctx);
    if (rc == 0) rc = cli_check_device_spec(s->ctx, "bench", s->o.device);
    if (rc) return rc;
    s->ntargets = bench_targets_open(s->ctx, s->o.api_mask, s->o.device, s->o.impls, s->targets, BENCH_MAX_DEVICES);
    for (int a = 0; a < ATTNVK_API_COUNT; ++a) {
        const char *reason;
        if (!s->o.api_all && (s->o.api_mask & (1u << a)) &&
            attnvk_api_status(s->ctx, (attnvk_api)a, &reason) != ATTNVK_OK)
            fprintf(stderr, "attnvk: note: %s unavailable: %s\n", attnvk_api_name((attnvk_api)a), reason);
    }
    if (s->ntargets == 0)
        return cli_error(s->o.device ? EXIT_USAGE : EXIT_FAILED, "bench: no visible device matches --api %s%s%s", s->o.api_text,
                         s->o.device ? " --device " : "",
                         s->o.device ? s->o.device : "");
    s->cpu_alone = 1;
    for (int d = 0; d < s->ntargets; ++d)
        if (s->targets[d].info.api != ATTNVK_API_CPU) s->cpu_alone = 0;
    return 0;
}

/* Every unit in order; returns at the first stop signal. */
static void run_all(bench_session *s, const bench_run_config *cfg)
{
    int ran_to = 0;
    for (int u = 0; u < s->nunits; ++u) if (s->units[u].may_run) ++ran_to;
    bench_progress_start(&s->progress, s->nunits, ran_to);
    for (int u = 0; u < s->nunits && !stop_signal; ++u) {
        if (u > 0 && s->units[u].c != s->units[u - 1].c) {
            sleep_s(s->o.cooldown_s);
            if (stop_signal) break;
        }
        run_unit(s, &s->units[u], cfg);
    }
    bench_progress_finish(&s->progress);
    if (s->have_workload) bench_workload_destroy(&s->workload);
    s->have_workload = 0;
    if (s->have_grads) bench_grad_workload_destroy(&s->grads);
    s->have_grads = 0;
}

/* The tail, the final --out, the closing messages; the exit status. */
static int finish(bench_session *s)
{
    bench_results *res = &s->res;
    res->stopped_by = stop_signal;
    print_part(s, bench_render_tail(res, s->o.format));
    if (s->o.cold && s->o.format != BENCH_FMT_JSON && s->o.format != BENCH_FMT_JSONL)
        print_part(s, cold_table(s, s->o.format));
    write_out(s, 1);
    if (s->noisy_cpu_records)
        fprintf(stderr, "attnvk: warning: %d record(s) on CPU devices had a run-to-run spread (cv) above %.0f%%\n",
                s->noisy_cpu_records, cv_warning * 100);
    if (res->stopped_by == SIGALRM) /* a bound the user set: the records that finished are the run */
        fprintf(stderr, "attnvk: --max-time %g s reached: %d of %d records finished%s%s\n", s->o.max_time_s,
                res->nrecords, res->planned, s->o.out && !s->write_failed ? "; they are in " : "",
                s->o.out && !s->write_failed ? s->o.out : "");
    else if (res->stopped_by) {
        fprintf(stderr, "attnvk: stopped by %s: %d of %d records finished%s%s%s\n",
                res->stopped_by == SIGINT ? "SIGINT" : "SIGTERM", res->nrecords, res->planned,
                s->o.out && !s->write_failed ? "; they are in " : "", s->o.out && !s->write_failed ? s->o.out : "",
                s->o.save ? "; not saved to the history (the run is incomplete)" : "");
        return 128 + res->stopped_by;
    }
    int rc = s->print_failed || s->write_failed ? EXIT_FAILED : EXIT_OK;
    for (int i = 0; i < res->nrecords && rc == EXIT_OK; ++i)
        if (res->records[i].status == BENCH_FAIL) rc = EXIT_FAILED;
    if (s->o.save && save_history(s) != 0 && rc == EXIT_OK) rc = EXIT_FAILED;
    return rc;
}

static int bench_session_run(bench_session *s)
{
    const bench_suite *suite = s->o.suite ? bench_suite_find(s->o.suite) : NULL;
    bench_results *res = &s->res;
    res->opts = &s->o;
    res->suite = s->o.suite;
    res->dtype = suite && !s->o.dtype_given ? suite->dtype : s->o.dtype;
    res->cases = s->cases;
    res->ncases = s->ncases;
    res->width = text_table_width(s->o.compact);
    utc_now(res->created, sizeof res->created);
    /* an unwritable --out is caught before any work */
    if (s->o.out && avk_check_writable(s->o.out) != ATTNVK_OK)
        return cli_error(EXIT_USAGE, "bench: cannot write --out: %s", attnvk_last_error());
    char db_err[1200];
    if (s->o.save && history_preflight(s->o.db, db_err, sizeof db_err) != 0) /* before any work, like --out */
        return cli_error(EXIT_USAGE, "bench: --save: %s", db_err);
    int rc = open_targets(s);
    if (rc) return rc;
    res->ctx = s->ctx;
    res->devices = s->targets;
    res->ndevices = s->ntargets;
    bench_run_config cfg = {
        .timed = 1, .iters = s->o.iters, .min_time_s = s->o.min_time_s, .warmup = s->o.warmup, .launches = s->o.launches,
        .warmup_s = s->o.warmup_s,
        .variant = s->o.variant, .tile_br = s->o.tile_br, .tile_bc = s->o.tile_bc, .split_kv = s->o.split_kv,
        .test_flags = s->o.test_flags, .max_memory = s->o.max_memory,
        .fused_only_suite = suite && suite->fused_only ? suite->name : NULL,
        .stop = &stop_signal, .on_progress = progress_hook, .progress_ctx = &s->progress, .pass = s->o.pass,
    };
    if ((rc = plan_units(s, &cfg)) != 0) return rc;
    res->planned = s->nunits;
    print_part(s, bench_render_head(res, s->o.format));
    write_out(s, 0);
    run_all(s, &cfg);
    return finish(s);
}

int cmd_bench(int argc, char **argv)
{
    bench_session *s = calloc(1, sizeof *s);
    if (!s) return cli_error(EXIT_FAILED, "out of host memory");
    s->workload_case = -1;
    s->grads_case = -1;
    int rc = bench_parse_options(argc, argv, &s->o);
    if (rc) {
        free(s);
        return rc < 0 ? EXIT_OK : rc;
    }
    s->ncases = bench_build_cases(&s->o, &s->cases);
    if (s->ncases <= 0) {
        if (s->ncases == 0) cli_error(EXIT_USAGE, "bench: suite '%s' has no case left after --causal/--dtype/--max-seq/--case", s->o.suite);
        free(s->cases);
        free(s);
        return EXIT_USAGE;
    }
    if (s->o.cold_child) { /* one start of --cold, in its fresh process */
        rc = bench_cold_child(&s->o, s->cases, s->ncases);
        free(s->cases);
        free(s);
        return rc;
    }
    s->argc = argc;
    s->argv = argv;
    struct sigaction old_int, old_term;
    catch_stop_signals(&old_int, &old_term);
    arm_max_time(s->o.max_time_s);
    rc = bench_session_run(s);
    disarm_max_time();
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    bench_results_free(&s->res);
    bench_targets_close(s->targets, s->ntargets);
    attnvk_context_destroy(s->ctx);
    free(s->units);
    free(s->cases);
    free(s);
    return rc;
}
