/* `attnvk tune`: searches each device's configurations of attnvk's kernel
 * (variant, tiles, workgroup, split and the table's other knobs) on the shape
 * classes of a case list or suite, CLBlast-style, and writes the fastest
 * checked one per class to the device's tuning file (core/user_tuning.h),
 * which every later prepare reads before the built-in table. */
#include "bench_options.h"
#include "bench_suites.h"
#include "bench_targets.h"
#include "cli.h"
#include "tune_search.h"

#include "core/user_tuning.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char tune_usage[] =
    "usage: attnvk tune [--api LIST|all] [--device SPEC] [--case LIST | --suite NAME] [--dtype f32|f16|bf16]\n"
    "                   [--budget S] [--min-time S] [--max-candidates N] [--seed N]\n"
    "Finds the fastest configuration of attnvk's kernel on each selected device for each shape class of\n"
    "the cases (dtype, decode or prefill, head dims, kv format: what the tuning tables key on), the way\n"
    "CLBlast tunes: every configuration the backend can run there (variant x tiles x workgroup x the\n"
    "table's other knobs; x split count for decode) runs through the normal kernel path, is checked\n"
    "against the float64 reference and timed; wrong or failing ones are rejected with the reason. The\n"
    "best per class goes to the device's tuning file, which attnvk reads before its built-in table:\n"
    "$ATTNVK_TUNING_DIR, else $XDG_DATA_HOME/attnvk/tuning, else ~/.local/share/attnvk/tuning, one file\n"
    "per device, valid for its driver and attnvk version (ATTNVK_NO_TUNING=1 ignores it).\n"
    "  --api LIST     APIs to tune (default all)          --device SPEC  'api', 'api:N', index or name\n"
    "  --case LIST    suite cases by name (comma list); each class is timed on its case\n"
    "  --suite NAME   a bench suite (default quick); a class is timed on its middle case\n"
    "  --budget S     wall time of the whole search (default 60); the best so far is kept when it runs out\n"
    "  --min-time S   timed device time per candidate (default 0.05)\n"
    "  --max-candidates N  time at most N candidates per class, the table's own configuration first (default all)\n"
    "  --seed N       the candidates' order and the inputs (default 1)\n"
    "Exit status: 0 tuned (or nothing to tune), 1 no configuration could be measured, 2 a usage error.";

typedef struct tune_args {
    unsigned api_mask;
    int api_all;
    const char *device, *cases, *suite;
    attnvk_dtype dtype;
    int dtype_given;
    double budget_s, min_time_s;
    long max_candidates;
    uint64_t seed;
    int inject_wrong; /* hidden --test-wrong-candidate */
} tune_args;

static int parse_args(int argc, char **argv, tune_args *a)
{
    memset(a, 0, sizeof *a);
    bench_parse_api_list("all", &a->api_mask, &a->api_all);
    a->budget_s = 60;
    a->min_time_s = 0.05;
    a->seed = 1;
    for (int i = 1; i < argc; ++i) {
        const char *val = NULL;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            puts(tune_usage);
            return -1;
        }
        if (strcmp(argv[i], "--test-wrong-candidate") == 0) { /* hidden, for tests */
            a->inject_wrong = 1;
            continue;
        }
        static const char *const names[] = {"--api", "--device", "--case", "--suite", "--dtype", "--budget",
                                            "--min-time", "--seed", "--max-candidates"};
        int which = -1;
        for (int n = 0; n < 9 && which < 0; ++n) {
            int m = cli_option(argc, argv, &i, names[n], &val);
            if (m < 0) return cli_error(EXIT_USAGE, "tune: %s needs a value", names[n]);
            if (m > 0) which = n;
        }
        switch (which) {
        case 0:
            if (!bench_parse_api_list(val, &a->api_mask, &a->api_all))
                return cli_error(EXIT_USAGE, "tune: --api wants 'all' or a list of cpu, vulkan, opencl, cuda, hip, got '%s'", val);
            break;
        case 1:
            if (!cli_list_well_formed(val))
                return cli_error(EXIT_USAGE, "tune: --device wants a comma list of api, api:N, N or name, got '%s'", val);
            a->device = val;
            break;
        case 2:
            if (!cli_list_well_formed(val)) return cli_error(EXIT_USAGE, "tune: --case wants a comma list of case names, got '%s'", val);
            a->cases = val;
            break;
        case 3:
            if (!bench_suite_find(val)) return cli_error(EXIT_USAGE, "tune: unknown suite '%s' (see attnvk bench --help)", val);
            a->suite = val;
            break;
        case 4:
            if (!attnvk_dtype_from_name(val, &a->dtype)) return cli_error(EXIT_USAGE, "tune: --dtype wants f32, f16 or bf16, got '%s'", val);
            a->dtype_given = 1;
            break;
        case 5:
            if (!cli_parse_double(val, 1e-3, 1e6, &a->budget_s))
                return cli_error(EXIT_USAGE, "tune: --budget wants seconds > 0 (up to 1e6), got '%s'", val);
            break;
        case 6:
            if (!cli_parse_double(val, 1e-4, 60, &a->min_time_s))
                return cli_error(EXIT_USAGE, "tune: --min-time wants seconds in 0.0001..60, got '%s'", val);
            break;
        case 7:
            if (!cli_parse_u64(val, &a->seed)) return cli_error(EXIT_USAGE, "tune: --seed wants an integer in 0..2^64-1, got '%s'", val);
            break;
        case 8:
            if (!cli_parse_int(val, 1, 100000, &a->max_candidates))
                return cli_error(EXIT_USAGE, "tune: --max-candidates wants an integer in 1..100000, got '%s'", val);
            break;
        default: return cli_error(EXIT_USAGE, "tune: unknown option '%s' (see attnvk tune --help)", argv[i]);
        }
    }
    if (a->cases && a->suite) return cli_error(EXIT_USAGE, "tune: give --case or --suite, not both");
    if (!a->cases && !a->suite) a->suite = "quick";
    return 0;
}

/* The cases to tune on; -1 after a one-line error. */
static int build_cases(const tune_args *a, bench_case **out)
{
    bench_options o;
    memset(&o, 0, sizeof o);
    o.dtype = a->dtype;
    o.dtype_given = a->dtype_given;
    if (a->suite) {
        o.suite = a->suite;
        return bench_build_cases(&o, out);
    }
    char list[1024];
    snprintf(list, sizeof list, "%s", a->cases);
    int n = 0;
    bench_case *cases = calloc(64, sizeof *cases);
    if (!cases) return cli_error(EXIT_FAILED, "out of host memory"), -1;
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = n < 64 ? bench_find_case(&o, tok, &cases[n]) : -1;
        if (found <= 0) {
            free(cases);
            if (found == 0) cli_error(EXIT_USAGE, "tune: unknown case '%s' (a case name of a bench suite)", tok);
            return -1;
        }
        ++n;
    }
    *out = cases;
    return n;
}

/* One case per shape class: the middle one of the class's cases, in list order. */
static int classes_of(const bench_case *cases, int n, bench_case *out)
{
    int nclasses = 0;
    for (int i = 0; i < n; ++i) {
        avk_tuned_entry ci;
        avk_tuned_set_class(&ci, &cases[i].p);
        int seen = 0;
        for (int k = 0; k < nclasses && !seen; ++k) {
            avk_tuned_entry ck;
            avk_tuned_set_class(&ck, &out[k].p);
            seen = avk_tuned_same_class(&ci, &ck);
        }
        if (seen) continue;
        int members[256], m = 0;
        for (int j = i; j < n && m < 256; ++j) {
            avk_tuned_entry cj;
            avk_tuned_set_class(&cj, &cases[j].p);
            if (avk_tuned_same_class(&ci, &cj)) members[m++] = j;
        }
        out[nclasses++] = cases[members[m / 2]];
    }
    return nclasses;
}

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { stop_requested = sig; }

static int can_run(const bench_target *t, const attnvk_problem *p, char *why, size_t n)
{
    if (!t->dev) snprintf(why, n, "cannot open: %s", t->open_error);
    else if ((p->dtype == ATTNVK_F16 && !t->info.fp16) || (p->dtype == ATTNVK_BF16 && !t->info.bf16))
        snprintf(why, n, "no %s support", attnvk_dtype_name(p->dtype));
    else return 1;
    return 0;
}

/* Tunes every class on t within [now, deadline); the entries found go to its file. 1: one was written. */
static int tune_device(bench_target *t, const bench_case *classes, int nclasses, const tune_args *a, double deadline,
                       int *wrong_missed)
{
    printf("%s:%d %s (driver %s)\n", attnvk_api_name(t->info.api), t->info.index, t->info.name, t->info.driver_version);
    avk_tuned_entry found[64];
    int nfound = 0;
    for (int k = 0; k < nclasses && !stop_requested; ++k) {
        avk_tuned_entry cls;
        avk_tuned_set_class(&cls, &classes[k].p);
        char text[96], why[320];
        avk_tuned_class_text(&cls, text, sizeof text);
        if (!can_run(t, &classes[k].p, why, sizeof why)) {
            printf(" class %s: skipped (%s)\n", text, why);
            continue;
        }
        const double now = tune_now_ms(), share = (deadline - now) / (nclasses - k);
        printf(" class %s on %s (%.1f s)\n", text, classes[k].name, share > 0 ? share / 1e3 : 0.0);
        bench_workload w;
        if (bench_workload_create(&classes[k].p, bench_case_seed(a->seed, classes[k].name), 1, &w) != ATTNVK_OK) {
            printf("  skipped: %s\n", attnvk_last_error());
            continue;
        }
        tune_settings s = {.min_time_s = a->min_time_s, .deadline_ms = now + share, .inject_wrong = a->inject_wrong,
                           .max_candidates = (int)a->max_candidates,
                           .seed = a->seed, .stop = &stop_requested};
        tune_result r;
        tune_search(t, &classes[k], &w, &s, &r);
        bench_workload_destroy(&w);
        if (r.wrong_injected && !r.wrong_rejected) ++*wrong_missed;
        if (!r.found) {
            printf("  nothing measured: the table's pick stays\n");
            continue;
        }
        char speedup[48] = "";
        if (isfinite(r.baseline_ms) && r.best.median_ms > 0)
            snprintf(speedup, sizeof speedup, ", %.2fx the table's pick", r.baseline_ms / r.best.median_ms);
        printf("  best: %s %dx%d wg %d x[%d,%d,%d,%d] split %d: %.4f ms%s (%d timed, %d rejected of %d)\n",
               r.best.variant, r.best.tile_br, r.best.tile_bc, r.best.workgroup_size, r.best.extra[0], r.best.extra[1],
               r.best.extra[2], r.best.extra[3], r.best.split_kv, r.best.median_ms, speedup, r.timed, r.rejected,
               r.candidates);
        if (nfound < 64) found[nfound++] = r.best;
    }
    if (!nfound) return 0;
    char path[1024];
    if (avk_user_tuning_save(&t->info, found, nfound, path, sizeof path) != ATTNVK_OK) {
        cli_error(EXIT_FAILED, "tune: %s", attnvk_last_error());
        return 0;
    }
    printf(" wrote %s (%d class%s)\n", path, nfound, nfound == 1 ? "" : "es");
    return 1;
}

int cmd_tune(int argc, char **argv)
{
    tune_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    bench_case *cases = NULL;
    int ncases = build_cases(&a, &cases);
    if (ncases < 0) return EXIT_USAGE;
    static bench_case classes[256];
    const int nclasses = classes_of(cases, ncases < 256 ? ncases : 256, classes);
    free(cases);
    /* the baseline is the built-in table's pick, never a previous tuning file's */
    setenv("ATTNVK_NO_TUNING", "1", 1);
    attnvk_context *ctx;
    rc = cli_context_create(&ctx);
    if (rc == 0) rc = cli_check_device_spec(ctx, "tune", a.device);
    if (rc) {
        attnvk_context_destroy(ctx);
        return rc;
    }
    static bench_target targets[BENCH_MAX_DEVICES];
    const int ntargets = bench_targets_open(ctx, a.api_mask, a.device, "attnvk", targets, BENCH_MAX_DEVICES);
    if (ntargets == 0) {
        attnvk_context_destroy(ctx);
        return cli_error(a.device ? EXIT_USAGE : EXIT_FAILED, "tune: no visible device matches the --api%s%s given",
                         a.device ? " and --device " : "", a.device ? a.device : "");
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    printf("attnvk tune: %d device(s), %d shape class(es), budget %.0f s\n", ntargets, nclasses, a.budget_s);
    const double start = tune_now_ms(), end = start + a.budget_s * 1e3;
    int written = 0, wrong_missed = 0;
    for (int d = 0; d < ntargets && !stop_requested; ++d) {
        const double share = (end - tune_now_ms()) / (ntargets - d);
        written += tune_device(&targets[d], classes, nclasses, &a, tune_now_ms() + share, &wrong_missed);
    }
    printf("tuned %d device(s) in %.1f s\n", written, (tune_now_ms() - start) / 1e3);
    bench_targets_close(targets, ntargets);
    attnvk_context_destroy(ctx);
    if (wrong_missed) return cli_error(EXIT_FAILED, "tune: %d injected wrong candidate(s) passed the check", wrong_missed);
    if (stop_requested) return 128 + (int)stop_requested;
    return written ? EXIT_OK : cli_error(EXIT_FAILED, "tune: no configuration could be measured");
}
