/* `attnvk compare` output: an aligned table, Markdown, or JSON. */
#include "results_compare.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_COLUMNS = 10, CELL = 320 };

/* Problems first, then changes, then the quiet rows. */
static int display_rank(compare_verdict v)
{
    static const int rank[VERDICT_COUNT] = {
        [VERDICT_NEW_FAILURE] = 0,    [VERDICT_ACCURACY] = 1,      [VERDICT_REGRESSION] = 2, [VERDICT_MISSING] = 3,
        [VERDICT_NO_LONGER_RUNS] = 4, [VERDICT_STILL_FAILING] = 5, [VERDICT_FIXED] = 6,      [VERDICT_IMPROVEMENT] = 7,
        [VERDICT_NOISE] = 8,          [VERDICT_NEW] = 9,           [VERDICT_NOT_RUN] = 10,   [VERDICT_SAME] = 11,
    };
    return rank[v];
}

static const compare_result *sort_subject;
static int by_rank(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    int d = display_rank(sort_subject->rows[i].verdict) - display_rank(sort_subject->rows[j].verdict);
    return d ? d : i - j;
}

static int *display_order(const compare_result *r)
{
    int *order = malloc(((size_t)r->row_count + 1) * sizeof *order);
    if (!order) return NULL;
    for (int i = 0; i < r->row_count; ++i) order[i] = i;
    sort_subject = r;
    qsort(order, (size_t)r->row_count, sizeof *order, by_rank);
    return order;
}

/* Nothing to see: unchanged, or skipped/unavailable on both sides. */
static bool is_quiet(const compare_row *row)
{
    return row->verdict == VERDICT_SAME ||
           (row->verdict == VERDICT_NOT_RUN && row->base->status != RESULT_OK && row->next->status != RESULT_OK);
}

static const results_record *rec_of(const compare_row *row) { return row->base ? row->base : row->next; }

static void fmt_ms(char *out, const results_record *r)
{
    if (r && r->status == RESULT_OK && r->stats.present) snprintf(out, CELL, "%.4g", r->stats.median_ms);
    else snprintf(out, CELL, "%s", r ? result_status_name(r->status) : "-");
}

static void fmt_spread(char *out, size_t n, const results_record *r)
{
    if (r && r->stats.present && isfinite(r->stats.std_ms)) snprintf(out, n, "±%.1f%%", 100.0 * r->stats.std_ms / r->stats.median_ms);
    else snprintf(out, n, "-");
}

static void fmt_note(char *out, const compare_row *row)
{
    const results_record *b = row->base, *n = row->next;
    char sb[32], sn[32];
    switch (row->verdict) {
    case VERDICT_NEW_FAILURE:
    case VERDICT_STILL_FAILING:
    case VERDICT_NO_LONGER_RUNS:
    case VERDICT_NOT_RUN:
        snprintf(out, CELL, "%s -> %s%s%.200s", result_status_name(b->status), result_status_name(n->status),
                 n->reason[0] ? ": " : (b->reason[0] ? ": was " : ""), n->reason[0] ? n->reason : b->reason);
        return;
    case VERDICT_ACCURACY:
        snprintf(out, CELL, "rel_l2 %.2e -> %.2e (%.0fx)%s", results_checked_rel_l2(&b->check),
                 results_checked_rel_l2(&n->check), row->rel_l2_growth,
                 row->slower ? "; also slower" : "");
        return;
    case VERDICT_MISSING: snprintf(out, CELL, "only in base (%s)", result_status_name(b->status)); return;
    case VERDICT_NEW: snprintf(out, CELL, "only in new (%s)", result_status_name(n->status)); return;
    case VERDICT_FIXED: snprintf(out, CELL, "fail -> ok"); return;
    default:
        fmt_spread(sb, sizeof sb, b);
        fmt_spread(sn, sizeof sn, n);
        if (b->launches != n->launches) /* the ratio includes a change of timing method */
            snprintf(out, CELL, "spread %s -> %s; launches %d -> %d", sb, sn, b->launches, n->launches);
        else
            snprintf(out, CELL, "spread %s -> %s", sb, sn);
    }
}

/* The cells of one comparison row, in the table's column order. */
static void row_cells(const compare_row *row, char cells[][CELL])
{
    const results_record *r = rec_of(row);
    snprintf(cells[0], CELL, "%s", compare_verdict_name(row->verdict));
    snprintf(cells[1], CELL, "%s", r->implementation);
    snprintf(cells[2], CELL, "%s", r->api);
    snprintf(cells[3], CELL, "%s", r->device_name);
    results_case_label(&r->kase, cells[4], CELL);
    fmt_ms(cells[5], row->base);
    fmt_ms(cells[6], row->next);
    if (isfinite(row->ratio)) snprintf(cells[7], CELL, "%.3fx", row->ratio);
    else snprintf(cells[7], CELL, "-");
    fmt_note(cells[8], row);
}

static const char *row_headers[] = {"VERDICT", "IMPL", "API", "DEVICE", "CASE", "BASE ms", "NEW ms", "NEW/BASE", "NOTE"};
enum { ROW_COLUMNS = 9 };

/* A small table: rows of cells, printed aligned or as Markdown. */
typedef struct text_table {
    int columns, rows;
    char (*cells)[CELL]; /* rows * columns */
} text_table;

static int table_init(text_table *t, int columns, int rows, const char **headers)
{
    t->columns = columns;
    t->rows = 1;
    t->cells = calloc(((size_t)rows + 1) * (size_t)columns, CELL);
    if (!t->cells) return -1;
    for (int c = 0; c < columns; ++c) snprintf(t->cells[c], CELL, "%s", headers[c]);
    return 0;
}

static char (*table_row(text_table *t))[CELL] { return &t->cells[(size_t)t->rows++ * (size_t)t->columns]; }

/* Display width: UTF-8 continuation bytes take no column. */
static int text_width(const char *s)
{
    int w = 0;
    for (; *s; ++s) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void table_print(FILE *f, const text_table *t, bool markdown, const char *indent)
{
    int width[MAX_COLUMNS] = {0};
    for (int r = 0; r < t->rows; ++r)
        for (int c = 0; c < t->columns; ++c) {
            int w = text_width(t->cells[(size_t)r * (size_t)t->columns + (size_t)c]);
            if (w > width[c]) width[c] = w;
        }
    for (int r = 0; r < t->rows; ++r) {
        fputs(indent, f);
        for (int c = 0; c < t->columns; ++c) {
            const char *cell = t->cells[(size_t)r * (size_t)t->columns + (size_t)c];
            if (markdown) {
                fputs("| ", f);
                for (const char *p = cell; *p; ++p) fputs(*p == '|' ? "\\|" : (char[]){*p, 0}, f);
                fputc(' ', f);
            } else if (c + 1 < t->columns) {
                fprintf(f, "%s%*s  ", cell, width[c] - text_width(cell), "");
            } else {
                fputs(cell, f);
            }
        }
        fputs(markdown ? "|\n" : "\n", f);
        if (markdown && r == 0) {
            for (int c = 0; c < t->columns; ++c) fputs("|---", f);
            fputs("|\n", f);
        }
    }
}

/* ---- cold start: records with cold_start in both runs (results_compare.h) ---- */

static const char *cold_verdict(const compare_cold *c)
{
    return c->regressed ? "REGRESSION" : c->improved ? "improvement" : "same";
}

static void cold_pair(char *out, bool have_base, double base, bool have_next, double next)
{
    char b[32] = "no result", n[32] = "no result";
    if (have_base && isfinite(base)) snprintf(b, sizeof b, "%.4g", base);
    if (have_next && isfinite(next)) snprintf(n, sizeof n, "%.4g", next);
    snprintf(out, CELL, "%s -> %s", b, n);
}

static void cold_ratio(char *out, double ratio)
{
    if (isfinite(ratio)) snprintf(out, CELL, "%.3fx", ratio);
    else snprintf(out, CELL, "-");
}

static void cold_bytes(char *out, size_t n, double bytes)
{
    if (!isfinite(bytes)) snprintf(out, n, "-");
    else if (bytes < 1024) snprintf(out, n, "%.0f B", bytes);
    else if (bytes < 1048576) snprintf(out, n, "%.1f KiB", bytes / 1024);
    else snprintf(out, n, "%.1f MiB", bytes / 1048576);
}

static void cold_cells(const compare_row *row, const compare_cold *c, char cells[][CELL])
{
    const results_record *r = rec_of(row);
    const bench_cold_result *b = c->base, *n = c->next;
    char cb[32], cn[32];
    snprintf(cells[0], CELL, "%s", cold_verdict(c));
    snprintf(cells[1], CELL, "%s", r->implementation);
    snprintf(cells[2], CELL, "%s", r->api);
    snprintf(cells[3], CELL, "%s", r->device_name);
    results_case_label(&r->kase, cells[4], CELL);
    cold_pair(cells[5], b->have_cold, b->cold.first_result_ms, n->have_cold, n->cold.first_result_ms);
    cold_ratio(cells[6], c->cold_ratio);
    cold_pair(cells[7], b->have_warm, b->warm.first_result_ms, n->have_warm, n->warm.first_result_ms);
    cold_ratio(cells[8], c->warm_ratio);
    cold_bytes(cb, sizeof cb, b->cache_bytes);
    cold_bytes(cn, sizeof cn, n->cache_bytes);
    snprintf(cells[9], CELL, "%s -> %s", cb, cn);
}

static const char *cold_headers[] = {"VERDICT", "IMPL",     "API",     "DEVICE",   "CASE",
                                     "COLD ms", "NEW/BASE", "WARM ms", "NEW/BASE", "CACHE"};

static int print_cold(FILE *f, const compare_result *r, bool md, bool all_rows)
{
    const int rows = compare_cold_rows(r);
    if (rows == 0) return 0;
    text_table t;
    if (table_init(&t, 10, rows, cold_headers)) return -1;
    int hidden = 0;
    for (int pass = 0; pass < 3; ++pass) /* regressions, improvements, the rest */
        for (int i = 0; i < r->row_count; ++i) {
            compare_cold c;
            if (!compare_cold_row(r, &r->rows[i], &c) || pass != (c.regressed ? 0 : c.improved ? 1 : 2)) continue;
            if (pass == 2 && !all_rows) ++hidden;
            else cold_cells(&r->rows[i], &c, table_row(&t));
        }
    fprintf(f, "\n%scold start (first_result_ms of a fresh process on empty / warm kernel caches; a regression grew by "
               "more than %.3g%% and %.0f ms, or gave no result)\n%s",
            md ? "## " : "", 100.0 * compare_cold_threshold(r), COMPARE_COLD_FLOOR_MS, md ? "\n" : "");
    table_print(f, &t, md, md ? "" : "  ");
    free(t.cells);
    if (hidden)
        fprintf(f, "%s(%d unchanged: --all lists them)\n", md ? "\n" : "  ", hidden);
    return 0;
}

static void run_line(FILE *f, const char *role, const results_run *run)
{
    fprintf(f, "%s%s (created %s, attnvk %s, commit %s)\n", role, run->label, run->created[0] ? run->created : "?",
            run->attnvk_version[0] ? run->attnvk_version : "?", run->git_commit[0] ? run->git_commit : "?");
}

static int print_text(FILE *f, const compare_result *r, bool md, bool all_rows)
{
    const char *h = md ? "## " : "", *indent = md ? "" : "  ";
    if (md) fprintf(f, "# attnvk compare\n\n");
    run_line(f, md ? "- base: " : "base: ", r->base);
    run_line(f, md ? "- new:  " : "new:  ", r->next);
    fprintf(f, "%sthreshold %.3g%%: a regression is slower by more than the threshold and outside both runs' spread "
               "(new median > base p95, and median ± 2 std bands apart)\n\n",
            md ? "- " : "", 100.0 * r->threshold);
    if (r->matched_by_name)
        fprintf(f, "%sdevices matched by name: a card only one run has, against the other run's card of that model\n\n",
                md ? "- " : "");

    text_table t;
    static const char *driver_headers[] = {"API", "DEVICE", "BASE DRIVER", "NEW DRIVER"};
    if (table_init(&t, 4, r->driver_count, driver_headers)) return -1;
    for (int i = 0; i < r->driver_count; ++i) {
        char(*c)[CELL] = table_row(&t);
        const compare_driver *d = &r->drivers[i];
        snprintf(c[0], CELL, "%s", d->api);
        snprintf(c[1], CELL, "%s", d->device);
        snprintf(c[2], CELL, "%s", d->base_driver[0] ? d->base_driver : "-");
        snprintf(c[3], CELL, "%s", d->next_driver[0] ? d->next_driver : "-");
    }
    fprintf(f, "%sdrivers\n%s", h, md ? "\n" : "");
    table_print(f, &t, md, indent);
    free(t.cells);

    int *order = display_order(r);
    if (!order || table_init(&t, ROW_COLUMNS, r->row_count, row_headers)) {
        free(order);
        return -1;
    }
    int hidden = 0;
    for (int i = 0; i < r->row_count; ++i) {
        if (!all_rows && is_quiet(&r->rows[order[i]])) ++hidden;
        else row_cells(&r->rows[order[i]], table_row(&t));
    }
    free(order);
    fprintf(f, "\n%scases\n%s", h, md ? "\n" : "");
    table_print(f, &t, md, indent);
    free(t.cells);
    if (hidden)
        fprintf(f, "%s(%d case%s unchanged or run in neither: --all lists them)\n", md ? "\n" : indent, hidden,
                hidden == 1 ? "" : "s");
    if (print_cold(f, r, md, all_rows) != 0) return -1;

    static const char *summary_headers[] = {"API", "IMPL", "DEVICE", "CASES", "GEOMEAN SPEEDUP", "REGRESSIONS", "IMPROVEMENTS", "NEW FAILURES"};
    if (table_init(&t, 8, r->summary_count, summary_headers)) return -1;
    for (int i = 0; i < r->summary_count; ++i) {
        const compare_summary *s = &r->summaries[i];
        char(*c)[CELL] = table_row(&t);
        snprintf(c[0], CELL, "%s", s->api);
        snprintf(c[1], CELL, "%s", s->implementation);
        snprintf(c[2], CELL, "%s", s->device);
        snprintf(c[3], CELL, "%d", s->cases);
        if (isfinite(s->geomean_speedup)) snprintf(c[4], CELL, "%.3fx", s->geomean_speedup);
        else snprintf(c[4], CELL, "-");
        snprintf(c[5], CELL, "%d", s->regressions);
        snprintf(c[6], CELL, "%d", s->improvements);
        snprintf(c[7], CELL, "%d", s->new_failures);
    }
    fprintf(f, "\n%ssummary (geometric-mean speedup = base median / new median; above 1 is faster)\n%s", h, md ? "\n" : "");
    table_print(f, &t, md, indent);
    free(t.cells);

    fprintf(f, "\n%sresult: %d regression%s, %d new failure%s, %d accuracy regression%s, %d improvement%s, %d within noise, "
               "%d same, %d missing, %d new, %d no longer running, %d not run, %d still failing, %d fixed\n",
            md ? "**" : "", r->regressions, r->regressions == 1 ? "" : "s", r->counts[VERDICT_NEW_FAILURE],
            r->counts[VERDICT_NEW_FAILURE] == 1 ? "" : "s", r->counts[VERDICT_ACCURACY], r->counts[VERDICT_ACCURACY] == 1 ? "" : "s",
            r->counts[VERDICT_IMPROVEMENT], r->counts[VERDICT_IMPROVEMENT] == 1 ? "" : "s", r->counts[VERDICT_NOISE],
            r->counts[VERDICT_SAME], r->counts[VERDICT_MISSING], r->counts[VERDICT_NEW], r->counts[VERDICT_NO_LONGER_RUNS],
            r->counts[VERDICT_NOT_RUN],
            r->counts[VERDICT_STILL_FAILING], r->counts[VERDICT_FIXED]);
    const int cold_rows = compare_cold_rows(r), cold_regressions = compare_cold_regressions(r);
    if (cold_rows > 0)
        fprintf(f, "%scold start: %d regression%s in %d record%s with cold_start in both runs\n", md ? "\n" : "",
                cold_regressions, cold_regressions == 1 ? "" : "s", cold_rows, cold_rows == 1 ? "" : "s");
    if (md) fputs("**\n", f);
    return 0;
}

static void add_num(cJSON *o, const char *key, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

static cJSON *run_json(const results_run *run)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "label", run->label);
    cJSON_AddStringToObject(o, "created", run->created);
    cJSON_AddStringToObject(o, "attnvk_version", run->attnvk_version);
    cJSON_AddStringToObject(o, "git_commit", run->git_commit);
    return o;
}

static cJSON *side_json(const results_record *r)
{
    if (!r) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "status", result_status_name(r->status));
    cJSON_AddStringToObject(o, "driver_version", r->driver_version);
    add_num(o, "median_ms", r->status == RESULT_OK && r->stats.present ? r->stats.median_ms : NAN);
    add_num(o, "std_ms", r->stats.present ? r->stats.std_ms : NAN);
    add_num(o, "p95_ms", r->stats.present ? r->stats.p95_ms : NAN);
    add_num(o, "tflops", r->tflops);
    cJSON_AddNumberToObject(o, "launches", r->launches);
    add_num(o, "rel_l2", r->check.present ? r->check.rel_l2 : NAN);
    if (r->reason[0]) cJSON_AddStringToObject(o, "reason", r->reason);
    return o;
}

static cJSON *cold_side_json(const bench_cold_result *c)
{
    cJSON *o = cJSON_CreateObject();
    add_num(o, "cold_first_result_ms", c->have_cold ? c->cold.first_result_ms : NAN);
    add_num(o, "warm_first_result_ms", c->have_warm ? c->warm.first_result_ms : NAN);
    add_num(o, "cold_prepare_ms", c->have_cold ? c->cold.prepare_ms : NAN);
    add_num(o, "warm_prepare_ms", c->have_warm ? c->warm.prepare_ms : NAN);
    add_num(o, "cache_bytes", c->cache_bytes);
    if (c->error[0]) cJSON_AddStringToObject(o, "error", c->error);
    return o;
}

static cJSON *cold_json(const compare_cold *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "verdict", cold_verdict(c));
    add_num(o, "cold_ratio", c->cold_ratio);
    add_num(o, "warm_ratio", c->warm_ratio);
    cJSON_AddBoolToObject(o, "lost", c->lost);
    cJSON_AddItemToObject(o, "base", cold_side_json(c->base));
    cJSON_AddItemToObject(o, "new", cold_side_json(c->next));
    return o;
}

static int print_json(FILE *f, const compare_result *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "format_version", 1);
    cJSON_AddNumberToObject(root, "threshold", r->threshold);
    cJSON_AddBoolToObject(root, "devices_matched_by_name", r->matched_by_name);
    cJSON_AddItemToObject(root, "base", run_json(r->base));
    cJSON_AddItemToObject(root, "new", run_json(r->next));
    cJSON *drivers = cJSON_AddArrayToObject(root, "drivers");
    for (int i = 0; i < r->driver_count; ++i) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "api", r->drivers[i].api);
        cJSON_AddStringToObject(d, "device", r->drivers[i].device);
        cJSON_AddStringToObject(d, "base_driver", r->drivers[i].base_driver);
        cJSON_AddStringToObject(d, "new_driver", r->drivers[i].next_driver);
        cJSON_AddItemToArray(drivers, d);
    }
    cJSON *rows = cJSON_AddArrayToObject(root, "cases");
    for (int i = 0; i < r->row_count; ++i) {
        const compare_row *row = &r->rows[i];
        const results_record *rec = rec_of(row);
        char label[CELL];
        results_case_label(&rec->kase, label, sizeof label);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "verdict", compare_verdict_name(row->verdict));
        cJSON_AddStringToObject(o, "implementation", rec->implementation);
        cJSON_AddStringToObject(o, "api", rec->api);
        cJSON_AddStringToObject(o, "device", rec->device_name);
        cJSON_AddStringToObject(o, "case", label);
        add_num(o, "ratio", row->ratio);
        cJSON_AddBoolToObject(o, "slower", row->slower);
        add_num(o, "rel_l2_growth", row->rel_l2_growth);
        cJSON_AddItemToObject(o, "base", side_json(row->base));
        cJSON_AddItemToObject(o, "new", side_json(row->next));
        compare_cold c;
        if (compare_cold_row(r, row, &c)) cJSON_AddItemToObject(o, "cold_start", cold_json(&c));
        cJSON_AddItemToArray(rows, o);
    }
    cJSON *summary = cJSON_AddArrayToObject(root, "summary");
    for (int i = 0; i < r->summary_count; ++i) {
        const compare_summary *s = &r->summaries[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "api", s->api);
        cJSON_AddStringToObject(o, "implementation", s->implementation);
        cJSON_AddStringToObject(o, "device", s->device);
        cJSON_AddNumberToObject(o, "cases", s->cases);
        add_num(o, "geomean_speedup", s->geomean_speedup);
        cJSON_AddNumberToObject(o, "regressions", s->regressions);
        cJSON_AddNumberToObject(o, "improvements", s->improvements);
        cJSON_AddNumberToObject(o, "new_failures", s->new_failures);
        cJSON_AddItemToArray(summary, o);
    }
    cJSON *counts = cJSON_AddObjectToObject(root, "counts");
    for (int v = 0; v < VERDICT_COUNT; ++v) cJSON_AddNumberToObject(counts, compare_verdict_name((compare_verdict)v), r->counts[v]);
    cJSON_AddNumberToObject(root, "regressions", r->regressions);
    cJSON_AddNumberToObject(root, "cold_start_regressions", compare_cold_regressions(r));
    cJSON_AddNumberToObject(root, "cold_start_threshold", compare_cold_threshold(r));
    cJSON_AddBoolToObject(root, "failed", compare_failed(r));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return -1;
    fprintf(f, "%s\n", text);
    free(text);
    return 0;
}

int compare_print(FILE *f, const compare_result *r, compare_format format, bool all_rows)
{
    switch (format) {
    case COMPARE_JSON: return print_json(f, r);
    case COMPARE_MARKDOWN: return print_text(f, r, true, all_rows);
    case COMPARE_TABLE: break;
    }
    return print_text(f, r, false, all_rows);
}
