/* `attnvk check`: the correctness sweep over every API, device and
 * implementation, no timing. For CI and after driver updates. */
#include "bench_options.h"
#include "core/test_hooks.h"
#include "bench_runner.h"
#include "bench_suites.h"
#include "cli.h"
#include "core/score_cases.h"
#include "core/sparse_cases.h"
#include "cmd_args.h"
#include "bench_workload.h"
#include "core/cache_cases.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char check_usage[] =
    "usage: attnvk check [--api LIST|all] [--device SPEC] [--impl LIST] [--dtype LIST] [--seed N] [--variant V]\n"
    "Runs the feature sweep (shapes, GQA, MQA, causal incl. Nq<Nk and empty rows, decode, odd lengths,\n"
    "D 32..512 and Dk != Dv, both layouts) in every dtype the device supports through every implementation, and\n"
    "the KV-cache cases (GQA group ratios 1..128, Nq 1/4/16, paged caches with ragged lengths, q8_0,\n"
    "q4_0, fp8) through attnvk's own kernel, and the score cases (softcap, windows, ALiBi, sinks,\n"
    "masks, top-left alignment; an implementation that lacks one skips it, naming it), the FP8 forward's\n"
    "cases with f16/bf16 (fp8 Q, K and V; tolerance 5e-2 on the dequantized inputs; skipped, naming the\n"
    "feature, where an implementation lacks it), and\n"
    "checks each output in full against the float64 CPU reference. Prints one line per case and\n"
    "'N passed, M failed, K skipped'; exits 1 on any failure, and when nothing passed (everything\n"
    "skipped: nothing was checked). The seed is printed (--seed replays). --variant V runs attnvk's\n"
    "kernel as variant V (as `attnvk bench --variant`); a case V cannot run is skipped, naming why.";

enum { MAX_CHECK_CASES = 64 };

typedef struct check_counts {
    int passed, failed, skipped;
} check_counts;

static int parse_dtypes(const char *s, check_args *a)
{
    char buf[64];
    if (!cli_list_well_formed(s) || strlen(s) >= sizeof buf) return 0;
    strcpy(buf, s);
    a->ndtypes = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (a->ndtypes == 3 || !attnvk_dtype_from_name(tok, &a->dtypes[a->ndtypes++])) return 0;
    return a->ndtypes > 0;
}

int check_parse_args(int argc, char **argv, check_args *a)
{
    memset(a, 0, sizeof *a);
    bench_parse_api_list("all", &a->api_mask, &a->api_all);
    a->dtypes[0] = ATTNVK_F32, a->dtypes[1] = ATTNVK_F16, a->dtypes[2] = ATTNVK_BF16;
    a->ndtypes = 3;
    a->seed = (uint64_t)time(NULL);
    for (int i = 1; i < argc; ++i) {
        const char *val = NULL;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            puts(check_usage);
            return -1;
        }
        if (strcmp(argv[i], "--test-wrong-kernel") == 0) { /* hidden, for tests */
            a->test_flags |= ATTNVK_TEST_SKIP_LAST_KV_TILE;
            continue;
        }
        static const char *const names[] = {"--api", "--device", "--impl", "--dtype", "--seed", "--variant"};
        int which = -1;
        for (int n = 0; n < 6 && which < 0; ++n) {
            int m = cli_option(argc, argv, &i, names[n], &val);
            if (m < 0) return cli_error(EXIT_USAGE, "check: %s needs a value", names[n]);
            if (m > 0) which = n;
        }
        int rc = 0;
        switch (which) {
        case 0:
            if (!bench_parse_api_list(val, &a->api_mask, &a->api_all))
                return cli_error(EXIT_USAGE, "check: --api wants 'all' or a list of cpu, vulkan, opencl, cuda, hip, got '%s'",
                                 val);
            break;
        case 1:
            if (!cli_list_well_formed(val))
                return cli_error(EXIT_USAGE, "check: --device wants a comma list of api, api:N, N or name, got '%s'", val);
            a->device = val;
            break;
        case 2:
            rc = cli_check_impls("check", val);
            if (rc) return rc;
            a->impls = val;
            break;
        case 3:
            if (!parse_dtypes(val, a)) return cli_error(EXIT_USAGE, "check: --dtype wants a list of f32, f16, bf16, got '%s'", val);
            break;
        case 4:
            if (!cli_parse_u64(val, &a->seed))
                return cli_error(EXIT_USAGE, "check: --seed wants an integer in 0..2^64-1, got '%s'", val);
            break;
        case 5: a->variant = val; break;
        default: return cli_error(EXIT_USAGE, "check: unknown option '%s' (see attnvk check --help)", argv[i]);
        }
    }
    /* after the loop: --api may follow --variant */
    return a->variant ? cli_check_variant("check", a->variant, a->api_mask) : 0;
}

static void shape_text(const attnvk_problem *p, char *out, size_t n)
{
    char dv[16] = ""; /* "/128": V and O's head dim where it differs */
    if (attnvk_problem_head_dim_v(p) != p->head_dim) snprintf(dv, sizeof dv, "/%d", attnvk_problem_head_dim_v(p));
    char dtype[24]; /* the FP8 forward: "fp8>f16", O's dtype after the arrow */
    if (p->q_format != ATTNVK_KV_DTYPE) snprintf(dtype, sizeof dtype, "%s>%s", bench_dtype_label(p), attnvk_dtype_name(p->dtype));
    else snprintf(dtype, sizeof dtype, "%s", attnvk_dtype_name(p->dtype));
    snprintf(out, n, "B%d H%d/%d Nq%d Nk%d D%d%s %s %s%s%s%s", p->batch, p->heads, p->kv_heads, p->seq_q, p->seq_kv,
             p->head_dim, dv, dtype, p->layout == ATTNVK_LAYOUT_BSHD ? "bshd" : "bhsd", p->causal ? " causal" : "",
             p->window ? " window" : "", p->sinks ? " sinks" : "");
}

/* Why a whole (device, implementation, dtype) block can't run, or NULL. */
static const char *blanket_reason(const bench_target *t, const attnvk_impl_info *impl, attnvk_dtype dt, char *buf,
                                  size_t n)
{
    if (!t->dev) snprintf(buf, n, "cannot open device: %s", t->open_error);
    else if (!impl->available) snprintf(buf, n, "%s", impl->reason[0] ? impl->reason : "not available");
    else if ((dt == ATTNVK_F16 && !t->info.fp16) || (dt == ATTNVK_BF16 && !t->info.bf16))
        snprintf(buf, n, "device has no %s support", attnvk_dtype_name(dt));
    else return NULL;
    return buf;
}

static void check_block(bench_target *t, int d, const attnvk_impl_info *impl, const bench_case *cases,
                        const bench_workload *w, int ncases, const bench_run_config *cfg, check_counts *counts)
{
    char dev[48], why[512], shape[128];
    snprintf(dev, sizeof dev, "%s:%d", attnvk_api_name(t->info.api), t->info.index);
    if (blanket_reason(t, impl, cases[0].p.dtype, why, sizeof why)) {
        printf("skip %-9s %-8s all %d %s cases: %s\n", dev, impl->name, ncases, attnvk_dtype_name(cases[0].p.dtype),
               why);
        counts->skipped += ncases;
        return;
    }
    for (int c = 0; c < ncases; ++c) {
        bench_record r;
        bench_record_init(&r, impl->name, impl->fused, d, &cases[c]);
        bench_run(t, impl, &w[c], cfg, &r);
        shape_text(&cases[c].p, shape, sizeof shape);
        const char *tag = r.status == BENCH_OK ? "ok  " : r.status == BENCH_FAIL ? "FAIL" : "skip";
        printf("%s %-9s %-8s %-24s %-40s", tag, dev, impl->name, cases[c].name, shape);
        if (r.have_check && !isnan(r.rel_l2_dequantized)) /* the FP8 forward: the checked error first */
            printf(" rel_l2_dequantized %.2e (vs inputs %.2e) tol %.0e %s", r.rel_l2_dequantized, r.check.rel_l2,
                   r.check.tolerance, r.have_kernel ? r.kernel.variant : "");
        else if (r.have_check)
            printf(" rel_l2 %.2e max_abs %.2e tol %.0e %s", r.check.rel_l2, r.check.max_abs, r.check.tolerance,
                   r.have_kernel ? r.kernel.variant : "");
        if (r.status != BENCH_OK) printf("  (%s)", r.reason);
        printf("\n");
        fflush(stdout);
        if (r.status == BENCH_OK) ++counts->passed;
        else if (r.status == BENCH_FAIL) ++counts->failed;
        else ++counts->skipped;
        bench_record_free(&r);
    }
}

/* One line for a case run outside the bench (cache and score cases), and its count:
 * a feature the implementation does not declare (UNSUPPORTED) is a skip with why. */
static void report_case(bench_target *t, const char *dev, const attnvk_impl_info *impl, const char *label,
                        const char *shape, attnvk_status s, const attnvk_check *check, const char *variant,
                        const char *message, check_counts *counts)
{
    const int passed = s == ATTNVK_OK && check->passed, skipped = s == ATTNVK_ERROR_UNSUPPORTED;
    printf("%s %-9s %-8s %-24s %-40s", passed ? "ok  " : skipped ? "skip" : "FAIL", dev, impl->name, label, shape);
    if (s == ATTNVK_OK)
        printf(" rel_l2 %.2e max_abs %.2e tol %.0e %s%s", check->rel_l2, check->max_abs, check->tolerance, variant,
               check->nonfinite ? " (non-finite output)" : "");
    else printf("  (%s%s%s)", skipped ? "" : attnvk_status_name(s), skipped ? "" : ": ", message);
    printf("\n");
    fflush(stdout);
    if (s == ATTNVK_ERROR_DEVICE_LOST) t->lost = 1;
    if (passed) ++counts->passed;
    else if (skipped) ++counts->skipped;
    else ++counts->failed;
}

/* The KV-cache cases (core/cache_cases.c, the table every API's tests run) through
 * attnvk's own kernel; other implementations take
 * no cache. A feature the device lacks (UNSUPPORTED) prints as skipped, with why. */
static void check_cache_block(bench_target *t, const attnvk_impl_info *impl, attnvk_dtype dt,
                              const check_args *a, check_counts *counts)
{
    if (strcmp(impl->name, "attnvk") != 0) return;
    avk_cache_case cases[MAX_CHECK_CASES];
    const int ncases = avk_cache_cases(dt, cases, MAX_CHECK_CASES);
    char dev[48], why[512];
    snprintf(dev, sizeof dev, "%s:%d", attnvk_api_name(t->info.api), t->info.index);
    if (blanket_reason(t, impl, dt, why, sizeof why)) {
        printf("skip %-9s %-8s all %d %s kv-cache cases: %s\n", dev, impl->name, ncases, attnvk_dtype_name(dt), why);
        counts->skipped += ncases;
        return;
    }
    const attnvk_kernel_options opts = {.implementation = NULL, .variant = a->variant, .test_flags = a->test_flags}; /* attnvk's kernel */
    for (int c = 0; c < ncases; ++c) {
        if (t->lost) {
            printf("skip %-9s %-8s %-24s (device lost earlier)\n", dev, impl->name, cases[c].label);
            ++counts->skipped;
            continue;
        }
        avk_cache_result r;
        attnvk_status s = avk_cache_case_run(t->dev, &cases[c], &opts, bench_case_seed(a->seed, cases[c].label), &r);
        report_case(t, dev, impl, cases[c].label, r.shape, s, &r.check, r.info.variant, r.message, counts);
    }
}

/* A table of cases (core/score_cases.c, core/sparse_cases.c) through every
 * implementation; one that does not declare a case's features prints it as
 * skipped with the feature's name. */
typedef attnvk_status (*case_runner)(attnvk_device *dev, const void *c, const attnvk_kernel_options *opts, uint64_t seed,
                                     avk_score_result *r);

static attnvk_status run_score_case(attnvk_device *dev, const void *c, const attnvk_kernel_options *opts, uint64_t seed,
                                    avk_score_result *r)
{
    return avk_score_case_run(dev, c, opts, seed, r);
}

static attnvk_status run_sparse_case(attnvk_device *dev, const void *c, const attnvk_kernel_options *opts, uint64_t seed,
                                     avk_score_result *r)
{
    return avk_sparse_case_run(dev, c, opts, seed, r);
}

static void check_case_block(bench_target *t, const attnvk_impl_info *impl, attnvk_dtype dt, const check_args *a,
                             check_counts *counts, const char *kind, const void *cases, size_t stride, int ncases,
                             case_runner run)
{
    char dev[48], why[512];
    snprintf(dev, sizeof dev, "%s:%d", attnvk_api_name(t->info.api), t->info.index);
    if (blanket_reason(t, impl, dt, why, sizeof why)) {
        printf("skip %-9s %-8s all %d %s %s cases: %s\n", dev, impl->name, ncases, attnvk_dtype_name(dt), kind, why);
        counts->skipped += ncases;
        return;
    }
    const int own = strcmp(impl->name, "attnvk") == 0;
    const attnvk_kernel_options opts = {
        .implementation = own ? NULL : impl->name, .variant = own ? a->variant : NULL, .test_flags = a->test_flags};
    for (int c = 0; c < ncases; ++c) {
        const void *item = (const char *)cases + (size_t)c * stride;
        const char *label = *(const char *const *)item; /* both case structs begin with their label */
        if (t->lost) {
            printf("skip %-9s %-8s %-24s (device lost earlier)\n", dev, impl->name, label);
            ++counts->skipped;
            continue;
        }
        avk_score_result r;
        attnvk_status s = run(t->dev, item, &opts, bench_case_seed(a->seed, label), &r);
        report_case(t, dev, impl, label, r.shape, s, &r.check, r.info.variant, r.message, counts);
    }
}

static void check_score_block(bench_target *t, const attnvk_impl_info *impl, attnvk_dtype dt, const check_args *a,
                              check_counts *counts)
{
    avk_score_case cases[MAX_CHECK_CASES];
    const int ncases = avk_score_cases(dt, cases, MAX_CHECK_CASES);
    check_case_block(t, impl, dt, a, counts, "score", cases, sizeof *cases, ncases, run_score_case);
}

/* The sparse patterns (#20): block layouts and dilated attention. */
static void check_sparse_block(bench_target *t, const attnvk_impl_info *impl, attnvk_dtype dt, const check_args *a,
                               check_counts *counts)
{
    avk_sparse_case cases[AVK_SPARSE_CASES_MAX];
    const int ncases = avk_sparse_cases(dt, cases, AVK_SPARSE_CASES_MAX);
    check_case_block(t, impl, dt, a, counts, "sparse", cases, sizeof *cases, ncases, run_sparse_case);
}

int cmd_check(int argc, char **argv)
{
    check_args a;
    int rc = check_parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    attnvk_context *ctx;
    rc = cli_context_create(&ctx);
    if (rc == 0) rc = cli_check_device_spec(ctx, "check", a.device);
    if (rc) {
        attnvk_context_destroy(ctx);
        return rc;
    }
    static bench_target targets[BENCH_MAX_DEVICES];
    int ntargets = bench_targets_open(ctx, a.api_mask, a.device, a.impls, targets, BENCH_MAX_DEVICES);
    if (ntargets == 0) {
        attnvk_context_destroy(ctx);
        /* a --device that selects nothing among the APIs asked for is a usage error */
        return cli_error(a.device ? EXIT_USAGE : EXIT_FAILED, "check: no visible device matches the --api%s%s given",
                         a.device ? " and --device " : "", a.device ? a.device : "");
    }
    printf("attnvk check: %d device(s), seed %llu\n", ntargets, (unsigned long long)a.seed);
    for (int api = 0; api < ATTNVK_API_COUNT; ++api) {
        const char *reason;
        if ((a.api_mask & (1u << api)) && attnvk_api_status(ctx, (attnvk_api)api, &reason) != ATTNVK_OK)
            printf("note %-9s unavailable: %s\n", attnvk_api_name((attnvk_api)api), reason);
    }
    bench_run_config cfg = {.timed = 0, .test_flags = a.test_flags, .variant = a.variant};
    check_counts counts = {0};
    bench_case cases[MAX_CHECK_CASES];
    static bench_workload workloads[MAX_CHECK_CASES];
    for (int di = 0; di < a.ndtypes && rc == 0; ++di) {
        int ncases = bench_check_cases(a.dtypes[di], cases, MAX_CHECK_CASES), built = 0;
        for (; built < ncases; ++built)
            if (bench_workload_create(&cases[built].p, bench_case_seed(a.seed, cases[built].name), 1,
                                      &workloads[built]) != ATTNVK_OK) {
                rc = cli_error(EXIT_FAILED, "check: %s", attnvk_last_error());
                break;
            }
        for (int d = 0; d < ntargets && rc == 0; ++d)
            for (int i = 0; i < targets[d].nimpls; ++i) {
                check_block(&targets[d], d, &targets[d].impls[i], cases, workloads, ncases, &cfg, &counts);
                check_cache_block(&targets[d], &targets[d].impls[i], a.dtypes[di], &a, &counts);
                check_score_block(&targets[d], &targets[d].impls[i], a.dtypes[di], &a, &counts);
                check_sparse_block(&targets[d], &targets[d].impls[i], a.dtypes[di], &a, &counts);
            }
        for (int c = 0; c < built; ++c) bench_workload_destroy(&workloads[c]);
    }
    bench_targets_close(targets, ntargets);
    attnvk_context_destroy(ctx);
    if (rc) return rc;
    printf("%d passed, %d failed, %d skipped\n", counts.passed, counts.failed, counts.skipped);
    if (counts.failed) return EXIT_FAILED;
    /* a sweep where everything was skipped checked nothing: CI must not read it as a pass */
    if (counts.passed == 0) return cli_error(EXIT_FAILED, "check: nothing was checked (%d skipped)", counts.skipped);
    return EXIT_OK;
}
