/* The report page: sections for comparisons and runs, tables, and the charts. */
#include "report_html.h"
#include "report_charts.h"
#include "report_crossover.h"
#include "report_roofline.h"
#include "report_sparse.h"
#include "report_tables.h"
#include "results_compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "attnvk/attnvk.h"

static const char css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:18px 24px;color:#222;background:#f6f7f9}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:26px 0 8px;border-bottom:2px solid #d0d4da;padding-bottom:4px}"
    "h3{font-size:15px;margin:18px 0 6px}p.sub{color:#555;margin:2px 0 10px;font-size:13px}"
    "figure{margin:10px 0;background:#fff;border:1px solid #d8dbe0;border-radius:6px;padding:6px;overflow-x:auto;"
    "display:inline-block;max-width:calc(100vw - 80px);vertical-align:top}"
    "figure.wide{display:block}figcaption{font-size:12px;color:#444;padding:4px 6px}"
    ".grid{display:flex;flex-wrap:wrap;gap:10px}.grid figure{margin:0;width:min-content}"
    "table{border-collapse:collapse;font-size:12.5px;background:#fff;margin:6px 0}"
    "th,td{border:1px solid #dde0e4;padding:3px 7px;text-align:left;vertical-align:top}th{background:#eef0f3}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".badge{display:inline-block;padding:2px 9px;border-radius:10px;margin:0 6px 4px 0;font-size:12.5px;color:#fff}"
    ".v0{color:#7f0000;font-weight:700}.v1{color:#9467bd;font-weight:700}.v2{color:#d62728;font-weight:700}"
    ".v3{color:#2ca02c}.v4{color:#c46a00}.v6{color:#138a96}.s-fail{color:#b00020;font-weight:600}"
    ".s-skipped,.s-unavailable{color:#777}details{margin:8px 0}summary{cursor:pointer;color:#333}"
    "small{color:#666}code{font-size:12px;background:#eef0f3;padding:0 3px;border-radius:3px}"
    "tr.crosses td:nth-child(5){color:#1b7a2e}tr.never td:nth-child(5){color:#8a5a00}h4{font-size:13.5px;margin:14px 0 4px}";

static void run_meta(strbuf *o, const results_run *run)
{
    sb_puts(o, "<table class=\"meta\">");
    const char *rows[][2] = {{"created", run->created},        {"attnvk", run->attnvk_version}, {"commit", run->git_commit},
                             {"host", run->hostname},          {"os", run->host_os},            {"cpu", run->cpu},
                             {"command", run->command},        {"suite", run->suite},           {"dtype / layout", NULL}};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; ++i) {
        sb_puts(o, "<tr><th>");
        sb_html(o, rows[i][0]);
        sb_puts(o, "</th>");
        if (rows[i][1]) report_cell(o, rows[i][1][0] ? rows[i][1] : "-");
        else sb_puts(o, "<td>"), sb_htmlf(o, "%s / %s", run->dtype[0] ? run->dtype : "-", run->layout[0] ? run->layout : "-"),
             sb_puts(o, "</td>");
        sb_puts(o, "</tr>");
    }
    sb_puts(o, "</table>\n");
    if (run->device_count == 0) return;
    static const char *heads[] = {"API", "#", "device", "vendor", "driver", "API version", "memory", "uuid"};
    sb_puts(o, "<table class=\"devices\">");
    report_header_row(o, heads, 8);
    for (int i = 0; i < run->device_count; ++i) {
        const results_device *d = &run->devices[i];
        char idx[16];
        snprintf(idx, sizeof idx, "%d", d->index);
        sb_puts(o, "<tr>");
        report_cell(o, d->api), report_cell(o, idx), report_cell(o, d->name), report_cell(o, d->vendor), report_cell(o, d->driver_version), report_cell(o, d->api_version);
        report_num_cell(o, "%.1f GiB", d->memory_bytes / 1073741824.0);
        report_cell(o, d->uuid[0] ? d->uuid : "-");
        sb_puts(o, "</tr>\n");
    }
    sb_puts(o, "</table>\n");
}

static void run_section(strbuf *o, const results_run *run, int index, report_palette *pal)
{
    sb_printf(o, "<section class=\"run\"><h2>Run %d: ", index + 1);
    sb_html(o, run->label);
    sb_puts(o, "</h2>\n");
    run_meta(o, run);
    report_crossovers xo = {0};
    if (report_crossover_compute(run->records, run->record_count, &xo) != 0) o->failed = true;
    sb_puts(o, "<h3>Summary (geometric means)</h3>\n");
    report_summary_table(o, run);
    sb_puts(o, "<h3>CPU/GPU crossover</h3>\n");
    report_crossover_table(o, run, &xo);
    sparse_crossovers sparse = {0};
    if (report_sparse_compute(run->records, run->record_count, &sparse) != 0) o->failed = true;
    report_sparse_table(o, &sparse);
    report_sparse_free(&sparse);
    /* one block of charts per device group (a GPU seen through several APIs is one group) */
    for (int i = 0; i < run->record_count; ++i) {
        const char *group = run->records[i].group;
        bool seen = false;
        for (int j = 0; j < i && !seen; ++j) seen = strcmp(run->records[j].group, group) == 0;
        if (seen) continue;
        sb_puts(o, "<h3>");
        sb_html(o, run->records[i].device_name);
        sb_puts(o, "</h3>\n");
        report_rooflines(o, run, group, pal);
        if (report_group_charts(o, run, group, pal, &xo) == 0) sb_puts(o, "<p class=\"sub\">No successful measurement to chart.</p>\n");
    }
    report_records_table(o, run);
    report_crossover_free(&xo);
    sb_puts(o, "</section>\n");
}

/* Unchanged, or not run on either side: not a change worth a line. */
static bool is_quiet(const compare_row *row)
{
    return row->verdict == VERDICT_SAME ||
           (row->verdict == VERDICT_NOT_RUN && row->base->status != RESULT_OK && row->next->status != RESULT_OK);
}

static void compare_rows(strbuf *o, const compare_result *r, bool changes_only)
{
    static const char *heads[] = {"verdict", "impl", "API", "device", "case", "base ms", "new ms", "new/base", "base status",
                                  "new status", "note"};
    sb_puts(o, "<table>");
    report_header_row(o, heads, 11);
    for (int i = 0; i < r->row_count; ++i) {
        const compare_row *row = &r->rows[i];
        if (changes_only && is_quiet(row)) continue;
        const results_record *any = row->base ? row->base : row->next;
        char label[160];
        results_case_label(&any->kase, label, sizeof label);
        sb_printf(o, "<tr><td class=\"v%d\">", (int)row->verdict);
        sb_html(o, compare_verdict_name(row->verdict));
        sb_puts(o, "</td>");
        report_cell(o, any->implementation), report_cell(o, any->api), report_cell(o, any->device_name), report_cell(o, label);
        report_num_cell(o, "%.4g", row->base && row->base->status == RESULT_OK && row->base->stats.present ? row->base->stats.median_ms : NAN);
        report_num_cell(o, "%.4g", row->next && row->next->status == RESULT_OK && row->next->stats.present ? row->next->stats.median_ms : NAN);
        report_num_cell(o, "%.3f\xc3\x97", row->ratio);
        report_cell(o, row->base ? result_status_name(row->base->status) : "-");
        report_cell(o, row->next ? result_status_name(row->next->status) : "-");
        const char *reason = row->next && row->next->reason[0] ? row->next->reason : row->base && row->base->reason[0] ? row->base->reason : "";
        if (row->verdict == VERDICT_ACCURACY)
            sb_puts(o, "<td>"), sb_htmlf(o, "rel L2 %.2e \xe2\x86\x92 %.2e", results_checked_rel_l2(&row->base->check),
                                         results_checked_rel_l2(&row->next->check)),
                sb_puts(o, "</td>");
        else report_cell(o, reason);
        sb_puts(o, "</tr>\n");
    }
    sb_puts(o, "</table>\n");
}

static int compare_section(strbuf *o, const results_run *base, const results_run *next, double threshold)
{
    compare_result r;
    if (compare_runs(base, next, threshold, &r) != 0) return -1;
    sb_puts(o, "<section class=\"compare\"><h2>Comparison: ");
    sb_html(o, base->label);
    sb_puts(o, " \xe2\x86\x92 ");
    sb_html(o, next->label);
    sb_puts(o, "</h2>\n");
    if (r.matched == 0) { /* every row would be "missing" or "new": nothing is compared */
        sb_printf(o, "<p class=\"sub\">These runs share no case (%d and %d records; a case matches on implementation, "
                     "API, device and every case field): nothing to compare.</p></section>\n",
                  base->record_count, next->record_count);
        compare_free(&r);
        return 0;
    }
    if (r.matched_by_name)
        sb_puts(o, "<p class=\"sub\">Devices matched by name: a card only one run has, against the other run's card of "
                   "that model.</p>\n");
    sb_puts(o, "<p>");
    static const compare_verdict shown[] = {VERDICT_REGRESSION, VERDICT_NEW_FAILURE, VERDICT_ACCURACY, VERDICT_IMPROVEMENT,
                                            VERDICT_NOISE,      VERDICT_SAME,        VERDICT_MISSING,  VERDICT_NEW,
                                            VERDICT_NOT_RUN,    VERDICT_FIXED,       VERDICT_STILL_FAILING};
    for (size_t i = 0; i < sizeof shown / sizeof *shown; ++i) {
        compare_verdict v = shown[i];
        int count = v == VERDICT_REGRESSION ? r.regressions : r.counts[v];
        if (count == 0 && v != VERDICT_REGRESSION && v != VERDICT_NEW_FAILURE) continue;
        sb_printf(o, "<span class=\"badge\" style=\"background:%s\">%d ", count ? report_verdict_color(v) : "#9aa5b1", count);
        sb_html(o, compare_verdict_name(v));
        sb_puts(o, "</span>");
    }
    sb_printf(o, "</p>\n<p class=\"sub\">Threshold %.3g%%. A regression is slower than base \xc3\x97 (1 + threshold), above the base "
                 "p95, and its median \xc2\xb1 2 std band lies above the base's. Verdict: <b>%s</b>.</p>\n",
              100 * threshold, compare_failed(&r) ? "FAILED (compare exits 1)" : "passed");

    static const char *driver_heads[] = {"API", "device", "base driver", "new driver"};
    sb_puts(o, "<table>");
    report_header_row(o, driver_heads, 4);
    for (int i = 0; i < r.driver_count; ++i) {
        sb_puts(o, "<tr>");
        report_cell(o, r.drivers[i].api), report_cell(o, r.drivers[i].device);
        report_cell(o, r.drivers[i].base_driver[0] ? r.drivers[i].base_driver : "-");
        report_cell(o, r.drivers[i].next_driver[0] ? r.drivers[i].next_driver : "-");
        sb_puts(o, "</tr>\n");
    }
    sb_puts(o, "</table>\n");
    static const char *sum_heads[] = {"API", "impl", "device", "cases", "geomean speedup", "regressions", "improvements",
                                      "new failures"};
    sb_puts(o, "<table>");
    report_header_row(o, sum_heads, 8);
    for (int i = 0; i < r.summary_count; ++i) {
        const compare_summary *s = &r.summaries[i];
        sb_puts(o, "<tr>");
        report_cell(o, s->api), report_cell(o, s->implementation), report_cell(o, s->device);
        report_num_cell(o, "%.0f", s->cases);
        report_num_cell(o, "%.3f\xc3\x97", s->geomean_speedup);
        report_num_cell(o, "%.0f", s->regressions);
        report_num_cell(o, "%.0f", s->improvements);
        report_num_cell(o, "%.0f", s->new_failures);
        sb_puts(o, "</tr>\n");
    }
    sb_puts(o, "</table>\n");
    report_compare_chart(o, &r);
    int changes = 0;
    for (int i = 0; i < r.row_count; ++i) changes += !is_quiet(&r.rows[i]);
    sb_printf(o, "<h3>%d change%s</h3>\n", changes, changes == 1 ? "" : "s");
    if (changes) compare_rows(o, &r, true);
    sb_printf(o, "<details><summary>All %d cases</summary>", r.row_count);
    compare_rows(o, &r, false);
    sb_puts(o, "</details></section>\n");
    compare_free(&r);
    return 0;
}

int report_render(strbuf *o, const results_run *runs, int run_count, double threshold)
{
    char now[32];
    time_t t = time(NULL);
    struct tm tm;
    strftime(now, sizeof now, "%Y-%m-%d %H:%M UTC", gmtime_r(&t, &tm));
    sb_printf(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                 "<title>attnvk report</title>\n<style>%s</style></head><body>\n",
              css);
    sb_printf(o, "<header><h1>attnvk benchmark report</h1><p class=\"sub\">attnvk %s \xc2\xb7 generated %s \xc2\xb7 %d run%s: ",
              ATTNVK_VERSION_STRING, now, run_count, run_count == 1 ? "" : "s");
    for (int i = 0; i < run_count; ++i) {
        if (i) sb_puts(o, ", ");
        sb_html(o, runs[i].label);
    }
    sb_puts(o, "</p></header>\n");
    for (int i = 1; i < run_count; ++i)
        if (compare_section(o, &runs[i - 1], &runs[i], threshold) != 0) return -1;
    report_palette pal = {0};
    for (int i = run_count - 1; i >= 0; --i) run_section(o, &runs[i], i, &pal); /* newest first */
    sb_puts(o, "</body></html>\n");
    return o->failed ? -1 : 0;
}
