/* The comparison logic of `attnvk compare`: matching, verdicts, summaries. */
#include "results_compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *compare_verdict_name(compare_verdict v)
{
    static const char *names[VERDICT_COUNT] = {
        "NEW FAILURE", "ACCURACY", "REGRESSION", "improvement", "within noise", "same",
        "fixed",       "still failing", "no longer runs", "not run", "missing", "new",
    };
    return (unsigned)v < VERDICT_COUNT ? names[v] : "?";
}

static double or_zero(double v) { return isfinite(v) ? v : 0.0; }

/* The p95 of a run, or its median when the writer left it out. */
static double p95_of(const results_stats *s) { return isfinite(s->p95_ms) ? s->p95_ms : s->median_ms; }

bool compare_is_slower(const results_stats *base, const results_stats *next, double threshold)
{
    double b = base->median_ms, n = next->median_ms;
    return n > b * (1.0 + threshold) && n > p95_of(base) &&
           n - 2.0 * or_zero(next->std_ms) > b + 2.0 * or_zero(base->std_ms);
}

static bool is_faster(const results_stats *base, const results_stats *next, double threshold)
{
    double b = base->median_ms, n = next->median_ms;
    return n * (1.0 + threshold) < b && b > p95_of(next) && n + 2.0 * or_zero(next->std_ms) < b - 2.0 * or_zero(base->std_ms);
}

static bool has_time(const results_record *r)
{
    return r->status == RESULT_OK && r->stats.present && r->stats.median_ms > 0;
}

static double accuracy_growth(const results_record *b, const results_record *n)
{
    const double be = results_checked_rel_l2(&b->check), ne = results_checked_rel_l2(&n->check);
    if (!b->check.present || !n->check.present || !isfinite(be) || !isfinite(ne)) return NAN;
    double floor = isfinite(b->check.tolerance) ? b->check.tolerance * 1e-3 : 1e-12;
    return ne / fmax(be, floor);
}

static void judge(compare_row *row, double threshold)
{
    const results_record *b = row->base, *n = row->next;
    row->ratio = NAN;
    row->rel_l2_growth = NAN;
    if (!n) {
        row->verdict = VERDICT_MISSING;
        return;
    }
    if (!b) {
        row->verdict = VERDICT_NEW;
        return;
    }
    if (b->status == RESULT_OK && n->status == RESULT_FAIL) {
        row->verdict = VERDICT_NEW_FAILURE;
        return;
    }
    if (b->status == RESULT_FAIL) { /* a failed run's time is no result: nothing to compare it with */
        row->verdict = n->status == RESULT_FAIL ? VERDICT_STILL_FAILING : n->status == RESULT_OK ? VERDICT_FIXED : VERDICT_NOT_RUN;
        return;
    }
    if (b->status != RESULT_OK || n->status != RESULT_OK) {
        row->verdict = b->status == RESULT_OK ? VERDICT_NO_LONGER_RUNS : VERDICT_NOT_RUN;
        return;
    }
    if (has_time(b) && has_time(n)) {
        row->ratio = n->stats.median_ms / b->stats.median_ms;
        row->slower = compare_is_slower(&b->stats, &n->stats, threshold);
    }
    row->rel_l2_growth = accuracy_growth(b, n);
    if (row->rel_l2_growth > COMPARE_ACCURACY_GROWTH) row->verdict = VERDICT_ACCURACY;
    else if (row->slower) row->verdict = VERDICT_REGRESSION;
    else if (isnan(row->ratio)) row->verdict = VERDICT_SAME;
    else if (is_faster(&b->stats, &n->stats, threshold)) row->verdict = VERDICT_IMPROVEMENT;
    else if (row->ratio > 1.0 + threshold || row->ratio * (1.0 + threshold) < 1.0) row->verdict = VERDICT_NOISE;
    else row->verdict = VERDICT_SAME;
}

/* Is rec's device (same API) in run? */
static bool device_in(const results_run *run, const results_record *rec)
{
    for (int i = 0; i < run->record_count; ++i)
        if (strcmp(run->records[i].api, rec->api) == 0 && results_same_device(&run->records[i], rec)) return true;
    return false;
}

/* A device of one run that the other run lacks, and the other run's device of that name that
 * this run lacks: another card of the same model (the GPU machine lends a fresh card per
 * lease), matched by name. Two cards that are both in both runs still match by UUID only. */
static bool same_model_elsewhere(const compare_result *r, const results_record *a, const results_record *b)
{
    return strcmp(a->implementation, b->implementation) == 0 && strcmp(a->api, b->api) == 0 &&
           strcmp(a->device_name, b->device_name) == 0 && results_same_case(&a->kase, &b->kase) &&
           !device_in(r->next, a) && !device_in(r->base, b);
}

static int match_rows(compare_result *r)
{
    const results_run *base = r->base, *next = r->next;
    bool *used = calloc((size_t)next->record_count + 1, 1);
    r->rows = calloc((size_t)base->record_count + (size_t)next->record_count + 1, sizeof *r->rows);
    if (!used || !r->rows) {
        free(used);
        return -1;
    }
    for (int pass = 0; pass < 2; ++pass) /* by UUID (or name where one lacks it), then by model */
        for (int i = 0; i < base->record_count; ++i) {
            if (pass == 0) r->rows[r->row_count++].base = &base->records[i];
            compare_row *row = &r->rows[i];
            if (row->next) continue;
            for (int j = 0; j < next->record_count; ++j)
                if (!used[j] && (pass == 0 ? results_same_key(row->base, &next->records[j])
                                           : same_model_elsewhere(r, row->base, &next->records[j]))) {
                    used[j] = true;
                    row->next = &next->records[j];
                    ++r->matched;
                    r->matched_by_name |= pass == 1;
                    break;
                }
        }
    for (int j = 0; j < next->record_count; ++j)
        if (!used[j]) r->rows[r->row_count++].next = &next->records[j];
    free(used);
    return 0;
}

static const results_record *any_side(const compare_row *row) { return row->base ? row->base : row->next; }

static int summarize(compare_result *r)
{
    r->summaries = calloc((size_t)r->row_count + 1, sizeof *r->summaries);
    double *log_sum = calloc((size_t)r->row_count + 1, sizeof *log_sum);
    if (!r->summaries || !log_sum) {
        free(log_sum);
        return -1;
    }
    for (int i = 0; i < r->row_count; ++i) {
        const compare_row *row = &r->rows[i];
        const results_record *rec = any_side(row);
        int k = 0;
        while (k < r->summary_count &&
               !(strcmp(r->summaries[k].api, rec->api) == 0 && strcmp(r->summaries[k].implementation, rec->implementation) == 0 &&
                 strcmp(r->summaries[k].device, rec->device_name) == 0))
            ++k;
        compare_summary *s = &r->summaries[k];
        if (k == r->summary_count) {
            ++r->summary_count;
            snprintf(s->api, sizeof s->api, "%s", rec->api);
            snprintf(s->implementation, sizeof s->implementation, "%s", rec->implementation);
            snprintf(s->device, sizeof s->device, "%s", rec->device_name);
        }
        if (isfinite(row->ratio)) {
            ++s->cases;
            log_sum[k] += -log(row->ratio);
        }
        s->regressions += row->slower;
        s->improvements += row->verdict == VERDICT_IMPROVEMENT;
        s->new_failures += row->verdict == VERDICT_NEW_FAILURE;
    }
    for (int k = 0; k < r->summary_count; ++k)
        r->summaries[k].geomean_speedup = r->summaries[k].cases ? exp(log_sum[k] / r->summaries[k].cases) : NAN;
    free(log_sum);
    return 0;
}

/* One line per (API, device) seen on either side: the drivers before and after. */
static int collect_drivers(compare_result *r)
{
    size_t cap = (size_t)r->base->record_count + (size_t)r->next->record_count + 1;
    r->drivers = calloc(cap, sizeof *r->drivers);
    const results_record **ids = calloc(cap, sizeof *ids);
    if (!r->drivers || !ids) {
        free(ids);
        return -1;
    }
    const results_run *side[2] = {r->base, r->next};
    for (int s = 0; s < 2; ++s)
        for (int i = 0; i < side[s]->record_count; ++i) {
            const results_record *rec = &side[s]->records[i];
            int k = 0;
            while (k < r->driver_count && !(strcmp(ids[k]->api, rec->api) == 0 && results_same_device(ids[k], rec))) ++k;
            compare_driver *d = &r->drivers[k];
            if (k == r->driver_count) {
                ids[r->driver_count++] = rec;
                snprintf(d->api, sizeof d->api, "%s", rec->api);
                snprintf(d->device, sizeof d->device, "%s", rec->device_name);
            }
            char *slot = s == 0 ? d->base_driver : d->next_driver;
            if (!slot[0]) snprintf(slot, sizeof d->base_driver, "%s", rec->driver_version);
        }
    free(ids);
    return 0;
}

int compare_runs(const results_run *base, const results_run *next, double threshold, compare_result *out)
{
    memset(out, 0, sizeof *out);
    out->threshold = threshold;
    out->base = base;
    out->next = next;
    if (match_rows(out) != 0) return -1;
    for (int i = 0; i < out->row_count; ++i) {
        judge(&out->rows[i], threshold);
        out->counts[out->rows[i].verdict]++;
        out->regressions += out->rows[i].slower;
    }
    if (summarize(out) != 0 || collect_drivers(out) != 0) {
        compare_free(out);
        return -1;
    }
    return 0;
}

void compare_free(compare_result *r)
{
    free(r->rows);
    free(r->summaries);
    free(r->drivers);
    r->rows = NULL;
    r->summaries = NULL;
    r->drivers = NULL;
    r->row_count = r->summary_count = r->driver_count = 0;
}

bool compare_failed(const compare_result *r)
{
    return r->regressions > 0 || r->counts[VERDICT_NEW_FAILURE] > 0 || r->counts[VERDICT_ACCURACY] > 0 ||
           compare_cold_regressions(r) > 0;
}

/* ---- cold start (`attnvk bench --cold`; the rule is in results_compare.h) ---- */

double compare_cold_threshold(const compare_result *r) { return fmax(r->threshold, COMPARE_COLD_THRESHOLD); }

/* new / base first_result_ms of one kind of start; NAN unless both reached a result */
static double start_ratio(bool have_base, double base, bool have_next, double next)
{
    return have_base && have_next && base > 0 && isfinite(next) ? next / base : NAN;
}

static bool start_grew(bool have_base, double base, bool have_next, double next, double t)
{
    return isfinite(start_ratio(have_base, base, have_next, next)) && next > base * (1.0 + t) &&
           next - base > COMPARE_COLD_FLOOR_MS;
}

bool compare_cold_row(const compare_result *r, const compare_row *row, compare_cold *out)
{
    memset(out, 0, sizeof *out);
    out->cold_ratio = out->warm_ratio = NAN;
    if (!row->base || !row->next || !row->base->cold_start.present || !row->next->cold_start.present) return false;
    out->base = &row->base->cold_start;
    out->next = &row->next->cold_start;
    const bench_cold_result *b = out->base, *n = out->next;
    const double t = compare_cold_threshold(r);
    out->cold_ratio = start_ratio(b->have_cold, b->cold.first_result_ms, n->have_cold, n->cold.first_result_ms);
    out->warm_ratio = start_ratio(b->have_warm, b->warm.first_result_ms, n->have_warm, n->warm.first_result_ms);
    /* a record that no longer runs at all is the main comparison's verdict, not a cold-start one */
    out->lost = row->next->status == RESULT_OK && ((b->have_cold && !n->have_cold) || (b->have_warm && !n->have_warm));
    out->regressed = out->lost ||
                     start_grew(b->have_cold, b->cold.first_result_ms, n->have_cold, n->cold.first_result_ms, t) ||
                     start_grew(b->have_warm, b->warm.first_result_ms, n->have_warm, n->warm.first_result_ms, t);
    out->improved = !out->regressed &&
                    (start_grew(n->have_cold, n->cold.first_result_ms, b->have_cold, b->cold.first_result_ms, t) ||
                     start_grew(n->have_warm, n->warm.first_result_ms, b->have_warm, b->warm.first_result_ms, t));
    return true;
}

int compare_cold_rows(const compare_result *r)
{
    int n = 0;
    compare_cold c;
    for (int i = 0; i < r->row_count; ++i) n += compare_cold_row(r, &r->rows[i], &c);
    return n;
}

int compare_cold_regressions(const compare_result *r)
{
    int n = 0;
    compare_cold c;
    for (int i = 0; i < r->row_count; ++i) n += compare_cold_row(r, &r->rows[i], &c) && c.regressed;
    return n;
}
