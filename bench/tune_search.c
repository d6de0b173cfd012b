/* `attnvk tune`'s search over one (device, shape class): the table's pick first
 * (the baseline), then the backend's candidates in a seeded random order, the
 * table's variant's first and the one that resolves to the baseline's kernel first
 * of all; the fastest few timed again beside the table's; for decode, the split
 * count of the best. */
#include "tune_search.h"

#include "bench_runner.h"
#include "core/kernel_tuning.h"
#include "core/test_hooks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double tune_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void entry_text(const avk_tuning *e, int split, char *out, size_t n)
{
    char splits[24] = "";
    if (split) snprintf(splits, sizeof splits, " split %d", split);
    snprintf(out, n, "%s %dx%d wg %d x[%d,%d,%d,%d]%s", e->variant, e->tile_br, e->tile_bc, e->workgroup_size,
             e->extra[0], e->extra[1], e->extra[2], e->extra[3], splits);
}

/* One checked, timed run; the record is left for the caller to read and free. */
enum { TUNE_FINALISTS = 3, TUNE_CONFIRM_TIME = 4 };
#define TUNE_WARMUP_S 0.2

static void run_timed(bench_target *t, const bench_workload *w, const bench_case *c, const tune_settings *s,
                      const avk_tuning *entry, int split, unsigned test_flags, double min_time_s, bench_record *r)
{
    attnvk_impl_info impl = {.name = "attnvk", .fused = 1, .available = 1};
    for (int i = 0; i < t->nimpls; ++i)
        if (strcmp(t->impls[i].name, "attnvk") == 0) impl = t->impls[i];
    /* every candidate warms the GPU up for TUNE_WARMUP_S first: 50 ms candidates between
     * pipeline builds never raised the H100's clocks, and the times drifted up to 5x (session 16:
     * the table's D=64 pick timed 12.9 ms, the bench's 2.4) */
    bench_run_config cfg = {.timed = 1, .min_time_s = min_time_s, .warmup = 1, .warmup_s = TUNE_WARMUP_S,
                            .warmup_always = 1, .launches = 0, .split_kv = split, .test_flags = test_flags,
                            .explicit_entry = entry, .stop = s->stop};
    bench_record_init(r, "attnvk", 1, 0, c);
    bench_run(t, &impl, w, &cfg, r);
}

static void run_one(bench_target *t, const bench_workload *w, const bench_case *c, const tune_settings *s,
                    const avk_tuning *entry, int split, unsigned test_flags, bench_record *r)
{
    run_timed(t, w, c, s, entry, split, test_flags, s->min_time_s, r);
}

static int passed(const bench_record *r) { return r->status == BENCH_OK && r->have_stats && r->stats.median_ms > 0; }

/* Fisher-Yates with a 64-bit LCG: the same order for the same seed */
static void shuffle(avk_tuning *a, int n, uint64_t seed)
{
    uint64_t x = seed | 1;
    for (int i = n - 1; i > 0; --i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int j = (int)((x >> 33) % (uint64_t)(i + 1));
        avk_tuning tmp = a[i];
        a[i] = a[j];
        a[j] = tmp;
    }
}

static int same_entry(const avk_tuning *a, const avk_tuning *b)
{
    return strcmp(a->variant, b->variant) == 0 && a->tile_br == b->tile_br && a->tile_bc == b->tile_bc &&
           a->workgroup_size == b->workgroup_size && memcmp(a->extra, b->extra, sizeof a->extra) == 0;
}

/* The table's variant's candidates first (in their shuffled order): a budget that runs out
 * has searched the table's family, and the other variants' slow scalar bodies (0.1-0.5 s a run
 * at 4k on the H100) come last. */
static void table_variant_first(avk_tuning *cands, int n, const char *variant)
{
    int front = 0;
    for (int i = 0; i < n; ++i)
        if (strcmp(cands[i].variant, variant) == 0) {
            avk_tuning keep = cands[i];
            memmove(cands + front + 1, cands + front, sizeof *cands * (size_t)(i - front));
            cands[front++] = keep;
        }
}

/* The table's entry the baseline ran (core/tuning.h's avk_pick_last) leads the candidates, as
 * an entry of this class: the table's configuration is always among those measured. */
static int table_entry_first(avk_tuning *cands, int n, const avk_tuning *table, const attnvk_problem *p)
{
    avk_tuning first = *table;
    first.vendor = first.architecture = first.device = NULL;
    first.dtype = (int)p->dtype;
    first.head_dim_min = first.head_dim_max = 0;
    first.decode = -1;
    for (int i = 0; i < n; ++i)
        if (same_entry(&cands[i], &first)) {
            cands[i] = cands[0];
            cands[0] = first;
            return n;
        }
    if (n == AVK_MAX_CANDIDATES) --n; /* the last of a full list gives way */
    memmove(cands + 1, cands, sizeof *cands * (size_t)n);
    cands[0] = first;
    return n + 1;
}

/* candidate i, timed ms, among the TUNE_FINALISTS fastest so far (kept sorted) */
static void keep_finalist(int *idx, double *ms, int *count, int i, double t)
{
    int at = *count;
    if (at == TUNE_FINALISTS) { /* full: replaces the slowest, if faster */
        if (t >= ms[--at]) return;
    } else {
        ++*count;
    }
    while (at > 0 && ms[at - 1] > t) idx[at] = idx[at - 1], ms[at] = ms[at - 1], --at;
    idx[at] = i, ms[at] = t;
}

static int is_finalist(const int *idx, int count, int i)
{
    for (int f = 0; f < count; ++f)
        if (idx[f] == i) return 1;
    return 0;
}

static int out_of_time(const tune_settings *s) { return tune_now_ms() >= s->deadline_ms || (s->stop && *s->stop); }

void tune_search(bench_target *t, const bench_case *c, const bench_workload *w, const tune_settings *s, tune_result *out)
{
    memset(out, 0, sizeof *out);
    out->baseline_ms = NAN;
    avk_tuned_set_class(&out->best, &c->p);
    char line[160], source[16] = "";
    bench_record r;
    /* twice: the first run pays for the build, cold caches and clocks, which the
     * candidates after it would not (the table's pick would look slower than it is) */
    run_one(t, w, c, s, NULL, 0, 0, &r);
    if (passed(&r)) {
        bench_record_free(&r);
        run_one(t, w, c, s, NULL, 0, 0, &r);
    }
    attnvk_kernel_info base = r.kernel;
    const int have_base = r.have_kernel;
    avk_tuning table;
    const int have_table = have_base && avk_pick_last(&table); /* read before any other prepare */
    if (passed(&r)) out->baseline_ms = r.stats.median_ms;
    bench_tuning_source(&r, source, sizeof source);
    printf("  baseline  %-44s %s\n", have_base ? base.variant : "-",
           passed(&r) ? "" : r.reason);
    if (passed(&r))
        printf("            %dx%d wg %d split %d (%s): %.4f ms\n", base.tile_br, base.tile_bc, base.workgroup_size,
               base.split_kv, source[0] ? source : "?", r.stats.median_ms);
    bench_record_free(&r);

    static avk_tuning cands[AVK_MAX_CANDIDATES];
    int n = avk_device_tuning_candidates(t->dev, &c->p, cands, AVK_MAX_CANDIDATES);
    shuffle(cands, n, s->seed);
    if (have_table) {
        table_variant_first(cands, n, table.variant);
        n = table_entry_first(cands, n, &table, &c->p);
    }
    out->candidates = n;
    printf("  %d candidate%s\n", n, n == 1 ? "" : "s");
    if (s->inject_wrong && n > 0) { /* the same configuration, deliberately wrong: must be rejected */
        out->wrong_injected = 1;
        entry_text(&cands[0], 0, line, sizeof line);
        run_one(t, w, c, s, &cands[0], 0, ATTNVK_TEST_SKIP_LAST_KV_TILE, &r);
        out->wrong_rejected = !passed(&r);
        printf("  injected  %-44s %s%s\n", line, out->wrong_rejected ? "rejected: " : "NOT REJECTED: ",
               out->wrong_rejected ? r.reason : "a wrong kernel passed the check");
        bench_record_free(&r);
    }
    double best_ms = INFINITY;
    int finalist[TUNE_FINALISTS], finalists = 0; /* the fastest candidates, fastest first */
    double finalist_ms[TUNE_FINALISTS];
    for (int i = 0; i < n; ++i) {
        if (s->max_candidates > 0 && i == s->max_candidates) break;
        if (i > 0 && out_of_time(s)) { /* the first (the table's kernel, as an entry) always runs */
            out->out_of_time = 1;
            printf("  budget reached after %d of %d candidates\n", i, n);
            break;
        }
        entry_text(&cands[i], 0, line, sizeof line);
        run_one(t, w, c, s, &cands[i], 0, 0, &r);
        if (passed(&r)) {
            ++out->timed;
            printf("  [%3d/%d] %-44s %.4f ms\n", i + 1, n, line, r.stats.median_ms);
            fflush(stdout); /* progress, also through a pipe */
            if (r.stats.median_ms < best_ms) {
                best_ms = r.stats.median_ms;
                avk_tuned_set_config(&out->best, &cands[i]);
                out->found = 1;
            }
            keep_finalist(finalist, finalist_ms, &finalists, i, r.stats.median_ms);
        } else {
            ++out->rejected;
            printf("  [%3d/%d] %-44s rejected: %s\n", i + 1, n, line, r.reason[0] ? r.reason : bench_status_name(r.status));
        }
        bench_record_free(&r);
    }
    /* the finalists and the table's entry again, each timed TUNE_CONFIRM_TIME times longer: one
     * short sample of a candidate can be lucky (or the clocks still low); the table's entry is
     * there so the pick is compared with the table's configuration in the same round */
    if (out->found && finalists > 1) {
        if (have_table && !is_finalist(finalist, finalists, 0) && finalists == TUNE_FINALISTS) --finalists;
        if (have_table && !is_finalist(finalist, finalists, 0)) finalist[finalists++] = 0;
        best_ms = INFINITY;
        for (int f = 0; f < finalists; ++f) {
            entry_text(&cands[finalist[f]], 0, line, sizeof line);
            run_timed(t, w, c, s, &cands[finalist[f]], 0, 0, s->min_time_s * TUNE_CONFIRM_TIME, &r);
            if (passed(&r)) {
                printf("  confirm   %-44s %.4f ms%s\n", line, r.stats.median_ms, have_table && finalist[f] == 0 ? " (the table's)" : "");
                if (have_table && finalist[f] == 0) out->baseline_ms = r.stats.median_ms;
                if (r.stats.median_ms < best_ms) best_ms = r.stats.median_ms, avk_tuned_set_config(&out->best, &cands[finalist[f]]);
            }
            bench_record_free(&r);
        }
        if (!isfinite(best_ms)) out->found = 0;
    }
    /* decode: split-KV counts for the best configuration (0 = the backend's plan) */
    if (out->found && out->best.decode) {
        avk_tuning best;
        avk_tuned_as_tuning(&out->best, &best);
        static const int splits[] = {1, 2, 4, 8, 16, 32};
        for (size_t i = 0; i < sizeof splits / sizeof *splits && !out_of_time(s); ++i) {
            entry_text(&best, splits[i], line, sizeof line);
            run_one(t, w, c, s, &best, splits[i], 0, &r);
            if (r.have_kernel && r.kernel.split_kv != splits[i] && splits[i] > 1) { /* the kernel plans its own */
                printf("  split     %-44s the kernel runs %d split(s): not searched\n", line, r.kernel.split_kv);
                bench_record_free(&r);
                break;
            }
            if (passed(&r)) {
                printf("  split     %-44s %.4f ms\n", line, r.stats.median_ms);
                if (r.stats.median_ms < best_ms) best_ms = r.stats.median_ms, out->best.split_kv = splits[i];
            } else {
                printf("  split     %-44s rejected: %s\n", line, r.reason);
            }
            bench_record_free(&r);
        }
    }
    out->best.median_ms = out->found ? best_ms : NAN;
    out->best.baseline_ms = out->baseline_ms;
    snprintf(out->best.case_name, sizeof out->best.case_name, "%s", c->name);
}
