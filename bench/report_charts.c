/* Turns records into chart data: which cases, which series, which values. */
#include "report_charts.h"
#include "report_crossover.h"
#include "report_svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FAMILY_CHARTS = 6, MAX_FAMILIES = 64, MAX_POINTS = 64, NOTE = 256 };

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
    double scale;     /* from TFLOP/s to the group's unit */
    const char *unit; /* "TFLOP/s", or "GFLOP/s" where the device stays below 1 TFLOP/s */
    const report_crossovers *crossovers;
} group_view;

static bool in_group(const results_record *r, const char *group) { return strcmp(r->group, group) == 0; }

double report_tflops(const results_record *r)
{
    if (r->status != RESULT_OK) return NAN;
    if (isfinite(r->tflops)) return r->tflops;
    if (r->stats.present && isfinite(r->flops) && r->stats.median_ms > 0) return r->flops / (r->stats.median_ms * 1e-3) / 1e12;
    return NAN;
}

const char *report_spread_ms(const results_record *r, double *lo_ms, double *hi_ms)
{
    const results_stats *s = &r->stats;
    *lo_ms = *hi_ms = NAN;
    if (r->status != RESULT_OK || !s->present) return NULL;
    if (isfinite(s->p5_ms) && isfinite(s->p95_ms)) {
        *lo_ms = s->p5_ms, *hi_ms = s->p95_ms;
        return "p5\xe2\x80\x93p95";
    }
    if (s->sample_count >= 2 && isfinite(s->min_ms) && isfinite(s->max_ms)) { /* too few samples for percentiles */
        *lo_ms = s->min_ms, *hi_ms = s->max_ms;
        return "min\xe2\x80\x93max";
    }
    return NULL;
}

double report_group_scale(const results_run *run, const char *group, const char **unit)
{
    double best = 0;
    for (int i = 0; i < run->record_count; ++i)
        if (strcmp(run->records[i].group, group) == 0 && isfinite(report_tflops(&run->records[i])))
            best = fmax(best, report_tflops(&run->records[i]));
    bool giga = best > 0 && best < 1.0;
    *unit = giga ? "GFLOP/s" : "TFLOP/s";
    return giga ? 1e3 : 1.0;
}

/* Throughput in the group's unit. */
static double throughput_of(const group_view *g, const results_record *r) { return report_tflops(r) * g->scale; }

/* The throughput at the ends of the record's spread (slowest sample time: lowest throughput). */
static bool throughput_spread(const group_view *g, const results_record *r, double *lo, double *hi)
{
    double a, b, v = report_tflops(r) * g->scale;
    *lo = *hi = NAN;
    if (!report_spread_ms(r, &a, &b) || !isfinite(v) || !(a > 0) || !(b > 0)) return false;
    *lo = v * r->stats.median_ms / b, *hi = v * r->stats.median_ms / a;
    return true;
}

/* "variant fa2-coopmat · tile 64x64 · p5–p95 81.2–84.0 TFLOP/s (24 samples)" */
static void record_note(const group_view *g, const results_record *r, char *out, size_t n)
{
    char tile[48] = "", spread[128] = "";
    if (r->tile_br > 0 || r->tile_bc > 0) snprintf(tile, sizeof tile, " \xc2\xb7 tile %dx%d", r->tile_br, r->tile_bc);
    double lo, hi, a, b;
    const char *kind = report_spread_ms(r, &a, &b);
    if (kind && throughput_spread(g, r, &lo, &hi))
        snprintf(spread, sizeof spread, " \xc2\xb7 %s %.4g\xe2\x80\x93%.4g %s (%d samples)", kind, lo, hi, g->unit, r->stats.sample_count);
    snprintf(out, n, "variant %s%s%s", r->variant[0] ? r->variant : "?", tile, spread);
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

static int view_init(group_view *g, const results_run *run, const char *group, const report_crossovers *xo)
{
    memset(g, 0, sizeof *g);
    g->run = run;
    g->group = group;
    g->crossovers = xo;
    g->scale = report_group_scale(run, group, &g->unit);
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

/* ---- throughput (or memory) per case, grouped by implementation/API ---- */

static double memory_of(const results_record *r) { return r->memory_bytes > 0 ? r->memory_bytes : NAN; }

/* Bars per case of the group (head_dim > 0: only that head dim's cases); throughput bars
 * carry their spread as error bars. Returns 1 when a chart was drawn. */
static int case_bars(strbuf *o, const group_view *g, report_palette *pal, bool memory, long head_dim)
{
    int ns = g->series_count, nc = 0;
    if (g->case_count == 0 || ns == 0) return 0;
    size_t cells = (size_t)g->case_count * (size_t)ns;
    double *values = malloc(sizeof *values * cells), *lo = malloc(sizeof *lo * cells), *hi = malloc(sizeof *hi * cells);
    char(*names)[128] = calloc((size_t)g->case_count, sizeof *names), (*notes)[NOTE] = calloc(cells, sizeof *notes);
    const char **cats = calloc((size_t)g->case_count, sizeof *cats), **note_ptrs = calloc(cells, sizeof *note_ptrs);
    int *row_of = calloc((size_t)g->case_count, sizeof *row_of);
    chart_series series[REPORT_MAX_SERIES];
    char labels[REPORT_MAX_SERIES][96];
    int drawn = 0;
    if (!values || !lo || !hi || !names || !notes || !cats || !note_ptrs || !row_of) goto done;
    for (int i = 0; i < g->case_count; ++i) {
        row_of[i] = -1;
        if (head_dim > 0 && g->cases[i]->head_dim != head_dim) continue;
        row_of[i] = nc;
        results_case_label(g->cases[i], names[nc], sizeof names[nc]);
        cats[nc] = names[nc];
        ++nc;
    }
    for (size_t i = 0; i < cells; ++i) values[i] = lo[i] = hi[i] = NAN, note_ptrs[i] = notes[i];
    for (int s = 0; s < ns; ++s) style_for(pal, &g->series[s], &series[s], labels[s], sizeof labels[s], "");
    for (int i = 0; i < g->rec_count; ++i) {
        const results_record *r = g->recs[i];
        int s = series_index(g, r), k = case_index(g, &r->kase);
        if (s < 0 || k < 0 || row_of[k] < 0) continue;
        size_t at = (size_t)row_of[k] * (size_t)ns + (size_t)s;
        if (isfinite(values[at])) continue;
        values[at] = memory ? (r->status == RESULT_OK ? memory_of(r) : NAN) : throughput_of(g, r);
        if (!memory) throughput_spread(g, r, &lo[at], &hi[at]), record_note(g, r, notes[at], NOTE);
        else snprintf(notes[at], NOTE, "variant %s", r->variant[0] ? r->variant : "?");
        drawn += isfinite(values[at]);
    }
    if (nc == 0 || drawn == 0) goto done;
    char title[160], y_label[64];
    if (memory) snprintf(title, sizeof title, "Device memory per case, D=%ld (flash vs unfused)", head_dim);
    else snprintf(title, sizeof title, "Throughput per case (%s, median; error bars: p5\xe2\x80\x93p95 of the samples)", g->unit);
    snprintf(y_label, sizeof y_label, "%s", memory ? "peak device memory" : g->unit);
    bar_chart c = {.title = title, .y_label = y_label, .unit = memory ? "" : g->unit, .y_format = memory ? AXIS_BYTES : AXIS_NUMBER,
                   .category_count = nc, .categories = cats, .series_count = ns, .series = series, .values = values,
                   .baseline = 0, .refs = {NAN, NAN}, .err_lo = memory ? NULL : lo, .err_hi = memory ? NULL : hi,
                   .notes = note_ptrs};
    sb_puts(o, "<figure class=\"wide\">\n");
    svg_bar_chart(o, &c);
    caption(o, g, memory ? "one input set: Q, K, V, O and the kernel's workspace"
                  : has_vendor(g) ? "hatched bars: the vendor-native kernel; fewer than 20 samples: min\xe2\x80\x93max" : "fewer than 20 samples: error bars span min\xe2\x80\x93max");
    sb_puts(o, "</figure>\n");
done:
    free(values), free(lo), free(hi), free(names), free(notes), free(cats), free(note_ptrs), free(row_of);
    return drawn > 0 && nc > 0;
}

/* ---- families of cases that differ only in sequence length ---- */

/* B*Nq: both at most RESULTS_MAX_SIZE (results_parse checks), so the product fits. */
static long long tokens_of(const results_case *k) { return (long long)k->batch * (long long)k->seq_q; }

static void family_label(const group_view *g, const results_case *k, char *out, size_t n)
{
    char q[32] = "", b[48];
    if (k->seq_q != k->seq_kv) snprintf(q, sizeof q, ", Nq=%ld", k->seq_q); /* else Nq = Nk, as the axis says */
    bool batch_varies = false;
    for (int i = 0; i < g->case_count; ++i)
        batch_varies |= report_same_family(g->cases[i], k) && g->cases[i]->batch != k->batch;
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
        if (!report_same_family(g->cases[i], rep)) continue;
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

/* The crossovers of this family on this group's APIs, as vertical marks. */
static int crossover_marks(const group_view *g, const results_case *rep, report_palette *pal, chart_mark *marks, char (*labels)[96],
                           int max)
{
    int n = 0;
    for (int i = 0; g->crossovers && i < g->crossovers->count && n < max; ++i) {
        const report_crossover *x = &g->crossovers->items[i];
        if (x->crossover_n <= 0 || strcmp(x->gpu->group, g->group) != 0 || !report_same_family(&x->gpu->kase, rep)) continue;
        char len[32];
        report_length_text(x->crossover_n, len, sizeof len);
        snprintf(labels[n], sizeof labels[n], "%s > CPU %s N=%s", x->gpu->api, x->from_first ? "already at" : "from", len);
        marks[n] = (chart_mark){.x = (double)x->crossover_n, .label = labels[n], .color = report_series_color(pal, "attnvk", x->gpu->api)};
        ++n;
    }
    return n;
}

typedef struct family_data {
    double ys[REPORT_MAX_SERIES][MAX_POINTS], lo[REPORT_MAX_SERIES][MAX_POINTS], hi[REPORT_MAX_SERIES][MAX_POINTS];
    char notes[REPORT_MAX_SERIES][MAX_POINTS][NOTE];
    const char *note_ptrs[REPORT_MAX_SERIES][MAX_POINTS];
} family_data;

/* One line chart over N for a family: a series per implementation/API with any point;
 * throughput with its spread and the family's crossovers marked, or memory (log scale). */
static int family_chart(strbuf *o, const group_view *g, const results_case *rep, report_palette *pal, bool memory)
{
    double lengths[MAX_POINTS];
    int n = family_lengths(g, rep, lengths);
    if (n < 2) return 0;
    family_data *d = calloc(1, sizeof *d);
    if (!d) return 0;
    line_series series[REPORT_MAX_SERIES];
    char labels[REPORT_MAX_SERIES][96];
    int ns = 0;
    for (int s = 0; s < g->series_count; ++s) {
        int points = 0;
        const results_record *example = NULL;
        for (int p = 0; p < n; ++p) d->ys[ns][p] = d->lo[ns][p] = d->hi[ns][p] = NAN, d->note_ptrs[ns][p] = d->notes[ns][p];
        for (int i = 0; i < g->rec_count; ++i) {
            const results_record *r = g->recs[i];
            if (series_index(g, r) != s || !report_same_family(&r->kase, rep)) continue;
            example = r;
            double v = memory ? (r->status == RESULT_OK ? memory_of(r) : NAN) : throughput_of(g, r);
            for (int p = 0; p < n; ++p) {
                if (lengths[p] != (double)r->kase.seq_kv || isfinite(d->ys[ns][p]) || !isfinite(v)) continue;
                d->ys[ns][p] = v, ++points;
                if (!memory) throughput_spread(g, r, &d->lo[ns][p], &d->hi[ns][p]), record_note(g, r, d->notes[ns][p], NOTE);
            }
        }
        if (points == 0) continue;
        const char *suffix = !memory ? "" : results_is_unfused(example) ? "unfused" : "flash";
        style_for(pal, &g->series[s], &series[ns].style, labels[ns], sizeof labels[ns], suffix);
        series[ns] = (line_series){.style = series[ns].style, .count = n, .x = lengths, .y = d->ys[ns],
                                   .lo = memory ? NULL : d->lo[ns], .hi = memory ? NULL : d->hi[ns], .notes = d->note_ptrs[ns]};
        ++ns;
    }
    chart_mark marks[8];
    char mark_labels[8][96];
    int nm = memory ? 0 : crossover_marks(g, rep, pal, marks, mark_labels, 8);
    if (ns > 0) {
        char family[160], title[256], y_label[64];
        family_label(g, rep, family, sizeof family);
        if (memory) snprintf(title, sizeof title, "Memory, flash vs unfused \xe2\x80\x94 %s", family);
        else snprintf(title, sizeof title, "Scaling over N \xe2\x80\x94 %s", family);
        snprintf(y_label, sizeof y_label, memory ? "peak device memory (log scale)" : "%s (median, p5\xe2\x80\x93p95)", g->unit);
        line_chart c = {.title = title, .y_label = y_label, .unit = memory ? "" : g->unit,
                        .x_label = rep->seq_q == rep->seq_kv ? "sequence length Nk = Nq (log scale)" : "sequence length Nk (log scale)",
                        .x_format = AXIS_LENGTH, .y_format = memory ? AXIS_BYTES : AXIS_NUMBER, .log_x = true, .log_y = memory,
                        .series_count = ns, .series = series, .mark_count = nm, .marks = marks};
        sb_puts(o, "<figure>\n");
        svg_line_chart(o, &c);
        caption(o, g, memory ? "peak device allocation (Q, K, V, O, workspace); equal allocations draw one line"
                      : nm ? "dotted verticals: from there attnvk on that API beats the CPU device's best (crossover table)"
                      : has_vendor(g) ? "dashed, square markers: vendor-native" : NULL);
        sb_puts(o, "</figure>\n");
    }
    free(d);
    return ns > 0;
}

/* The first case of each family, in file order. */
static int family_representatives(const group_view *g, const results_case **reps, int max)
{
    int n = 0;
    for (int i = 0; i < g->case_count && n < max; ++i) {
        bool seen = false;
        for (int j = 0; j < n; ++j) seen |= report_same_family(reps[j], g->cases[i]);
        if (!seen) reps[n++] = g->cases[i];
    }
    return n;
}

/* Memory for every head dim: over N for its family with the most lengths (what says the
 * most about N^2 against N), else bars per case. */
static int memory_charts(strbuf *o, const group_view *g, const results_case **reps, int nf, report_palette *pal)
{
    int charts = 0;
    for (int f = 0; f < nf; ++f) {
        long d = reps[f]->head_dim;
        bool seen = false;
        for (int e = 0; e < f; ++e) seen |= reps[e]->head_dim == d;
        if (seen) continue;
        int best = -1, best_n = 1;
        double scratch[MAX_POINTS];
        for (int e = f; e < nf; ++e) {
            int n = reps[e]->head_dim == d ? family_lengths(g, reps[e], scratch) : 0;
            if (n > best_n) best = e, best_n = n;
        }
        int drawn = best >= 0 ? family_chart(o, g, reps[best], pal, true) : 0;
        charts += drawn ? drawn : case_bars(o, g, pal, true, d);
    }
    return charts;
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

int report_group_charts(strbuf *o, const results_run *run, const char *group, report_palette *pal, const report_crossovers *xo)
{
    group_view g;
    int charts = 0;
    if (view_init(&g, run, group, xo) == 0) {
        charts += case_bars(o, &g, pal, false, 0);
        const results_case *reps[MAX_FAMILIES];
        int nf = family_representatives(&g, reps, MAX_FAMILIES);
        sb_puts(o, "<div class=\"grid\">\n");
        int shown = 0;
        for (int f = 0; f < nf && shown < MAX_FAMILY_CHARTS; ++f) shown += family_chart(o, &g, reps[f], pal, false);
        charts += shown;
        charts += memory_charts(o, &g, reps, nf, pal);
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
