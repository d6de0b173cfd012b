/* Turns records into chart data: which cases, which series, which values. */
#include "report_charts.h"
#include "report_svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FAMILY_CHARTS = 4, MAX_POINTS = 64 };

/* Tableau 10: distinct, and readable on white. */
static const char *palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

const char *report_series_color(report_palette *p, const char *implementation, const char *api)
{
    char key[64];
    snprintf(key, sizeof key, "%s/%s", implementation, api);
    int i = 0;
    while (i < p->count && strcmp(p->keys[i], key) != 0) ++i;
    if (i == p->count && p->count < REPORT_MAX_SERIES) snprintf(p->keys[p->count++], sizeof p->keys[0], "%s", key);
    return palette[i % (int)(sizeof palette / sizeof *palette)];
}

const char *report_verdict_color(compare_verdict v)
{
    switch (v) {
    case VERDICT_NEW_FAILURE: return "#7f0000";
    case VERDICT_ACCURACY: return "#9467bd";
    case VERDICT_REGRESSION: return "#d62728";
    case VERDICT_IMPROVEMENT: return "#2ca02c";
    case VERDICT_NOISE: return "#ff9f40";
    case VERDICT_FIXED: return "#17becf";
    default: return "#9aa5b1";
    }
}

/* ---- what a device group holds ---- */

typedef struct series_key {
    const char *implementation, *api;
} series_key;

typedef struct group_view {
    const results_run *run;
    const char *group;
    const results_record **recs;
    int rec_count;
    series_key series[REPORT_MAX_SERIES];
    int series_count;
    const results_case **cases; /* distinct, in file order */
    int case_count;
} group_view;

static bool in_group(const results_record *r, const char *group) { return strcmp(r->group, group) == 0; }

/* TFLOP/s of an ok record; from flops and the median when the writer left it out. */
static double tflops_of(const results_record *r)
{
    if (r->status != RESULT_OK) return NAN;
    if (isfinite(r->tflops)) return r->tflops;
    if (r->stats.present && isfinite(r->flops) && r->stats.median_ms > 0) return r->flops / (r->stats.median_ms * 1e-3) / 1e12;
    return NAN;
}

static int series_index(const group_view *g, const results_record *r)
{
    for (int s = 0; s < g->series_count; ++s)
        if (strcmp(g->series[s].implementation, r->implementation) == 0 && strcmp(g->series[s].api, r->api) == 0) return s;
    return -1;
}

static int case_index(const group_view *g, const results_case *k)
{
    for (int i = 0; i < g->case_count; ++i)
        if (results_same_case(g->cases[i], k)) return i;
    return -1;
}

static int view_init(group_view *g, const results_run *run, const char *group)
{
    memset(g, 0, sizeof *g);
    g->run = run;
    g->group = group;
    g->recs = calloc((size_t)run->record_count + 1, sizeof *g->recs);
    g->cases = calloc((size_t)run->record_count + 1, sizeof *g->cases);
    if (!g->recs || !g->cases) return -1;
    /* attnvk's series first, then the vendors': the eye reads ours against theirs */
    for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < run->record_count; ++i) {
            const results_record *r = &run->records[i];
            if (!in_group(r, group) || r->status != RESULT_OK || results_is_vendor_native(r->implementation) != (pass == 1))
                continue;
            if (series_index(g, r) < 0 && g->series_count < REPORT_MAX_SERIES)
                g->series[g->series_count++] = (series_key){r->implementation, r->api};
        }
    for (int i = 0; i < run->record_count; ++i) {
        const results_record *r = &run->records[i];
        if (!in_group(r, group)) continue;
        g->recs[g->rec_count++] = r;
        if (r->status == RESULT_OK && case_index(g, &r->kase) < 0) g->cases[g->case_count++] = &r->kase;
    }
    return 0;
}

static void view_free(group_view *g)
{
    free(g->recs);
    free(g->cases);
}

/* "attnvk · vulkan", "cudnn · cuda (vendor)", "cublas · cuda (vendor, unfused)" */
static void series_label(const series_key *k, char *out, size_t n, const char *tag)
{
    bool vendor = results_is_vendor_native(k->implementation);
    snprintf(out, n, "%s \xc2\xb7 %s%s%s%s%s", k->implementation, k->api, vendor || tag[0] ? " (" : "", vendor ? "vendor" : "",
             vendor && tag[0] ? ", " : "", tag);
    if (vendor || tag[0]) snprintf(out + strlen(out), n - strlen(out), ")");
}

/* "Device: NAME · drivers: vulkan 550.54, cuda 550.54" */
static void caption(strbuf *o, const group_view *g, const char *extra)
{
    const results_record *first = g->rec_count ? g->recs[0] : NULL;
    sb_puts(o, "<figcaption>Device: <b>");
    sb_html(o, first ? first->device_name : g->group);
    sb_puts(o, "</b> \xc2\xb7 driver");
    const char *seen_api[16];
    int n = 0;
    for (int i = 0; i < g->rec_count && n < 16; ++i) {
        bool dup = false;
        for (int j = 0; j < n; ++j) dup |= strcmp(seen_api[j], g->recs[i]->api) == 0;
        if (dup) continue;
        seen_api[n++] = g->recs[i]->api;
        sb_puts(o, n == 1 ? " " : ", ");
        sb_htmlf(o, "%s %s", g->recs[i]->api, g->recs[i]->driver_version[0] ? g->recs[i]->driver_version : "?");
    }
    if (extra) sb_puts(o, " \xc2\xb7 "), sb_html(o, extra);
    sb_puts(o, "</figcaption>\n");
}

static bool has_vendor(const group_view *g)
{
    for (int s = 0; s < g->series_count; ++s)
        if (results_is_vendor_native(g->series[s].implementation)) return true;
    return false;
}

static void style_for(report_palette *pal, const series_key *k, chart_series *s, char *label, size_t n, const char *suffix)
{
    series_label(k, label, n, suffix);
    s->label = label;
    s->color = report_series_color(pal, k->implementation, k->api);
    s->hatched = results_is_vendor_native(k->implementation);
    s->dashed = s->hatched;
}

/* ---- TFLOP/s per case, grouped by implementation/API ---- */

static int tflops_chart(strbuf *o, const group_view *g, report_palette *pal)
{
    int nc = g->case_count, ns = g->series_count;
    if (nc == 0 || ns == 0) return 0;
    double *values = malloc(sizeof *values * (size_t)nc * (size_t)ns);
    char(*names)[128] = calloc((size_t)nc, sizeof *names);
    const char **cats = calloc((size_t)nc, sizeof *cats);
    chart_series series[REPORT_MAX_SERIES];
    char labels[REPORT_MAX_SERIES][96];
    if (!values || !names || !cats) goto done;
    for (int i = 0; i < nc * ns; ++i) values[i] = NAN;
    for (int i = 0; i < nc; ++i) {
        results_case_label(g->cases[i], names[i], sizeof names[i]);
        cats[i] = names[i];
    }
    for (int s = 0; s < ns; ++s) style_for(pal, &g->series[s], &series[s], labels[s], sizeof labels[s], "");
    for (int i = 0; i < g->rec_count; ++i) {
        int s = series_index(g, g->recs[i]), k = case_index(g, &g->recs[i]->kase);
        if (s >= 0 && k >= 0 && !isfinite(values[k * ns + s])) values[k * ns + s] = tflops_of(g->recs[i]);
    }
    bar_chart c = {.title = "Throughput per case (TFLOP/s, median)", .y_label = "TFLOP/s", .unit = "TFLOP/s",
                   .y_format = AXIS_NUMBER, .category_count = nc, .categories = cats, .series_count = ns,
                   .series = series, .values = values, .baseline = 0, .refs = {NAN, NAN}};
    sb_puts(o, "<figure class=\"wide\">\n");
    svg_bar_chart(o, &c);
    caption(o, g, has_vendor(g) ? "hatched bars: the vendor-native kernel" : NULL);
    sb_puts(o, "</figure>\n");
done:
    free(values);
    free(names);
    free(cats);
    return values && names && cats;
}

/* ---- families of cases that differ only in sequence length ---- */

/* B*Nq: both at most RESULTS_MAX_SIZE (results_parse checks), so the product fits. */
static long long tokens_of(const results_case *k) { return (long long)k->batch * (long long)k->seq_q; }

/* The batch may change along a family when the token count B*Nq stays: the
 * FlashAttention papers' grid (and the fa-grid suite) holds B*N constant. */
static bool same_batch_or_tokens(const results_case *a, const results_case *b)
{
    return a->batch == b->batch || tokens_of(a) == tokens_of(b);
}

static bool same_family(const results_case *a, const results_case *b)
{
    bool square_a = a->seq_q == a->seq_kv, square_b = b->seq_q == b->seq_kv;
    return same_batch_or_tokens(a, b) && a->heads == b->heads && a->kv_heads == b->kv_heads && a->head_dim == b->head_dim &&
           a->causal == b->causal && strcmp(a->dtype, b->dtype) == 0 && strcmp(a->layout, b->layout) == 0 &&
           square_a == square_b && (square_a || a->seq_q == b->seq_q);
}

static void family_label(const group_view *g, const results_case *k, char *out, size_t n)
{
    char q[32] = "", b[48];
    if (k->seq_q != k->seq_kv) snprintf(q, sizeof q, ", Nq=%ld", k->seq_q); /* else Nq = Nk, as the axis says */
    bool batch_varies = false;
    for (int i = 0; i < g->case_count; ++i)
        batch_varies |= same_family(g->cases[i], k) && g->cases[i]->batch != k->batch;
    if (batch_varies) snprintf(b, sizeof b, "B\xc2\xb7N=%lld", tokens_of(k));
    else snprintf(b, sizeof b, "B=%ld", k->batch);
    snprintf(out, n, "D=%ld %s H=%ld/%ld %s%s %s%s", k->head_dim, b, k->heads, k->kv_heads, k->causal ? "causal " : "",
             k->dtype, k->layout, q);
}

/* Distinct sequence lengths of the family of `rep`, ascending; returns the count. */
static int family_lengths(const group_view *g, const results_case *rep, double *n_out)
{
    int n = 0;
    for (int i = 0; i < g->case_count && n < MAX_POINTS; ++i) {
        if (!same_family(g->cases[i], rep)) continue;
        double v = (double)g->cases[i]->seq_kv;
        int j = n;
        bool dup = false;
        for (int k = 0; k < n; ++k) dup |= n_out[k] == v;
        if (dup) continue;
        while (j > 0 && n_out[j - 1] > v) n_out[j] = n_out[j - 1], --j;
        n_out[j] = v;
        ++n;
    }
    return n;
}

typedef double (*record_metric)(const results_record *r);
static double memory_of(const results_record *r) { return r->memory_bytes > 0 ? r->memory_bytes : NAN; }

/* One line chart over N for a family: a series per implementation/API with any point. */
static int family_chart(strbuf *o, const group_view *g, const results_case *rep, report_palette *pal, record_metric metric,
                        const char *title_fmt, const char *y_label, const char *unit, axis_format y_format, bool log_y,
                        bool memory_suffix)
{
    double lengths[MAX_POINTS];
    int n = family_lengths(g, rep, lengths);
    if (n < 2) return 0;
    double ys[REPORT_MAX_SERIES][MAX_POINTS];
    line_series series[REPORT_MAX_SERIES];
    char labels[REPORT_MAX_SERIES][96];
    int ns = 0;
    for (int s = 0; s < g->series_count; ++s) {
        int points = 0;
        const results_record *example = NULL;
        for (int p = 0; p < n; ++p) ys[ns][p] = NAN;
        for (int i = 0; i < g->rec_count; ++i) {
            const results_record *r = g->recs[i];
            if (series_index(g, r) != s || !same_family(&r->kase, rep)) continue;
            example = r;
            for (int p = 0; p < n; ++p)
                if (lengths[p] == (double)r->kase.seq_kv && !isfinite(ys[ns][p]) && isfinite(metric(r))) ys[ns][p] = metric(r), ++points;
        }
        if (points == 0) continue;
        const char *suffix = !memory_suffix ? "" : results_is_unfused(example) ? "unfused" : "flash";
        style_for(pal, &g->series[s], &series[ns].style, labels[ns], sizeof labels[ns], suffix);
        series[ns].count = n;
        series[ns].x = lengths;
        series[ns].y = ys[ns];
        ++ns;
    }
    if (ns == 0) return 0;
    char family[160], title[256];
    family_label(g, rep, family, sizeof family);
    snprintf(title, sizeof title, title_fmt, family);
    line_chart c = {.title = title, .x_label = "sequence length Nk = Nq (log scale)", .y_label = y_label, .unit = unit,
                    .x_format = AXIS_LENGTH, .y_format = y_format, .log_x = true, .log_y = log_y,
                    .series_count = ns, .series = series};
    sb_puts(o, "<figure>\n");
    svg_line_chart(o, &c);
    caption(o, g, memory_suffix ? "peak device allocation (Q, K, V, O, workspace); equal allocations draw one line"
                  : has_vendor(g) ? "dashed, square markers: vendor-native" : NULL);
    sb_puts(o, "</figure>\n");
    return 1;
}

/* The first case of each family, in file order. */
static int family_representatives(const group_view *g, const results_case **reps, int max)
{
    int n = 0;
    for (int i = 0; i < g->case_count && n < max; ++i) {
        bool seen = false;
        for (int j = 0; j < n; ++j) seen |= same_family(reps[j], g->cases[i]);
        if (!seen) reps[n++] = g->cases[i];
    }
    return n;
}

/* ---- attnvk against the vendor kernel ---- */

static int speedup_chart(strbuf *o, const group_view *g, report_palette *pal)
{
    int nc = g->case_count;
    series_key keys[REPORT_MAX_SERIES];
    int ns = 0;
    for (int s = 0; s < g->series_count; ++s)
        if (strcmp(g->series[s].implementation, "attnvk") == 0) keys[ns++] = g->series[s];
    if (nc == 0 || ns == 0) return 0;
    double *values = malloc(sizeof *values * (size_t)nc * (size_t)ns);
    const char **cats = calloc((size_t)nc, sizeof *cats);
    char(*names)[128] = calloc((size_t)nc, sizeof *names);
    int shown = 0, bars = 0;
    char vendors[128] = "";
    if (!values || !cats || !names) goto done;
    for (int i = 0; i < g->rec_count; ++i) {
        const results_record *r = g->recs[i];
        if (strcmp(r->implementation, "attnvk") != 0 || r->status != RESULT_OK || !isfinite(r->speedup_vs_vendor)) continue;
        int k = case_index(g, &r->kase);
        if (k < 0) continue;
        int row = 0;
        while (row < shown && cats[row] != names[k]) ++row;
        if (row == shown) { /* a category per case that has any speedup */
            results_case_label(&r->kase, names[k], sizeof names[k]);
            cats[shown] = names[k];
            for (int s = 0; s < ns; ++s) values[shown * ns + s] = NAN;
            ++shown;
        }
        for (int s = 0; s < ns; ++s)
            if (strcmp(keys[s].api, r->api) == 0) values[row * ns + s] = r->speedup_vs_vendor, ++bars;
        if (r->vendor_reference[0] && !strstr(vendors, r->vendor_reference) && strlen(vendors) + strlen(r->vendor_reference) + 3 < sizeof vendors)
            strcat(strcat(vendors, vendors[0] ? ", " : ""), r->vendor_reference);
    }
    if (bars) {
        chart_series series[REPORT_MAX_SERIES];
        char labels[REPORT_MAX_SERIES][96];
        for (int s = 0; s < ns; ++s) style_for(pal, &keys[s], &series[s], labels[s], sizeof labels[s], "");
        bar_chart c = {.title = "attnvk speedup over the fastest vendor-native kernel",
                       .y_label = "speedup over vendor (\xc3\x97)", .unit = "\xc3\x97", .y_format = AXIS_RATIO,
                       .category_count = shown, .categories = cats, .series_count = ns, .series = series, .values = values,
                       .baseline = 0, .refs = {1.0, NAN}, .ref_labels = {"vendor = 1\xc3\x97", NULL}};
        char extra[200];
        snprintf(extra, sizeof extra, "vendor reference: %s; above 1: attnvk is faster", vendors[0] ? vendors : "?");
        sb_puts(o, "<figure class=\"wide\">\n");
        svg_bar_chart(o, &c);
        caption(o, g, extra);
        sb_puts(o, "</figure>\n");
    }
done:
    free(values);
    free(cats);
    free(names);
    return bars > 0;
}

int report_group_charts(strbuf *o, const results_run *run, const char *group, report_palette *pal)
{
    group_view g;
    int charts = 0;
    if (view_init(&g, run, group) == 0) {
        charts += tflops_chart(o, &g, pal);
        const results_case *reps[MAX_FAMILY_CHARTS];
        int nf = family_representatives(&g, reps, MAX_FAMILY_CHARTS);
        sb_puts(o, "<div class=\"grid\">\n");
        for (int f = 0; f < nf; ++f)
            charts += family_chart(o, &g, reps[f], pal, tflops_of, "Scaling over N \xe2\x80\x94 %s", "TFLOP/s (median)",
                                   "TFLOP/s", AXIS_NUMBER, false, false);
        /* memory: the family with the most lengths says the most about N^2 against N */
        int best = -1, best_n = 1;
        double scratch[MAX_POINTS];
        for (int f = 0; f < nf; ++f) {
            int n = family_lengths(&g, reps[f], scratch);
            if (n > best_n) best = f, best_n = n;
        }
        if (best >= 0)
            charts += family_chart(o, &g, reps[best], pal, memory_of, "Memory, flash vs unfused \xe2\x80\x94 %s",
                                   "peak device memory (log scale)", "", AXIS_BYTES, true, true);
        sb_puts(o, "</div>\n");
        charts += speedup_chart(o, &g, pal);
    }
    view_free(&g);
    return charts;
}

static const compare_result *ratio_subject;
static int by_ratio_desc(const void *a, const void *b)
{
    double x = ratio_subject->rows[*(const int *)a].ratio, y = ratio_subject->rows[*(const int *)b].ratio;
    return x < y ? 1 : x > y ? -1 : *(const int *)a - *(const int *)b;
}

/* Bars sorted from the worst slowdown to the best speedup; only the cases with a
 * verdict other than "same" are labelled, so a hundred cases stay readable. */
int report_compare_chart(strbuf *o, const compare_result *r)
{
    int n = 0;
    int *order = malloc(sizeof *order * ((size_t)r->row_count + 1));
    if (!order) return 0;
    for (int i = 0; i < r->row_count; ++i)
        if (isfinite(r->rows[i].ratio)) order[n++] = i;
    if (n == 0) {
        free(order);
        return 0;
    }
    ratio_subject = r;
    qsort(order, (size_t)n, sizeof *order, by_ratio_desc);
    double *values = malloc(sizeof *values * (size_t)n);
    const char **colors = calloc((size_t)n, sizeof *colors), **cats = calloc((size_t)n, sizeof *cats);
    char(*names)[200] = calloc((size_t)n, sizeof *names);
    bool *unlabelled = calloc((size_t)n, sizeof *unlabelled);
    bool used[VERDICT_COUNT] = {false};
    if (values && colors && cats && names && unlabelled) {
        for (int k = 0; k < n; ++k) {
            const compare_row *row = &r->rows[order[k]];
            char label[128];
            results_case_label(&row->base->kase, label, sizeof label);
            snprintf(names[k], sizeof names[k], "%s %s/%s", label, row->base->implementation, row->base->api);
            unlabelled[k] = row->verdict == VERDICT_SAME;
            cats[k] = names[k];
            values[k] = row->ratio;
            colors[k] = report_verdict_color(row->verdict);
            used[row->verdict] = true;
        }
        chart_series legend[VERDICT_COUNT], one = {.label = "new / base", .color = "#9aa5b1"};
        int nl = 0;
        for (int v = 0; v < VERDICT_COUNT; ++v)
            if (used[v]) legend[nl++] = (chart_series){.label = compare_verdict_name((compare_verdict)v), .color = report_verdict_color((compare_verdict)v)};
        char up[64], down[64];
        snprintf(up, sizeof up, "+%.3g%% threshold", 100 * r->threshold);
        snprintf(down, sizeof down, "\xe2\x88\x92%.3g%%", 100 * r->threshold / (1 + r->threshold));
        bar_chart c = {.title = "New / base median time per case, sorted (above 1: slower)", .y_label = "time ratio new / base",
                       .unit = "\xc3\x97", .y_format = AXIS_RATIO, .category_count = n, .categories = cats, .unlabelled = unlabelled, .series_count = 1,
                       .series = &one, .values = values, .colors = colors, .baseline = 1.0,
                       .refs = {1.0 + r->threshold, 1.0 / (1.0 + r->threshold)}, .ref_labels = {up, down},
                       .legend_count = nl, .legend = legend};
        sb_puts(o, "<figure class=\"wide\">\n");
        svg_bar_chart(o, &c);
        sb_printf(o, "<figcaption>%d cases measured in both runs; bars grow from 1 (unchanged); colour is the verdict, which also "
                     "weighs both runs' spread; unlabelled bars are \"same\".</figcaption>\n", n);
        sb_puts(o, "</figure>\n");
    }
    free(order);
    free(values);
    free(colors);
    free(cats);
    free(names);
    free(unlabelled);
    return 1;
}
