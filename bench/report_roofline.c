/* Rooflines per device from the peaks `attnvk peak` cached (results devices[i].peak). */
#include "report_roofline.h"
#include "report_svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_IMPLS = 16, TIP = 512 };

static const char *const field_labels[PEAK_FIELD_COUNT] = {"read", "copy", "f32 FMA", "f16 FMA", "matrix"};

double report_intensity(const results_record *r)
{
    if (r->roofline.present && r->roofline.arithmetic_intensity > 0) return r->roofline.arithmetic_intensity;
    double t = report_tflops(r);
    if (isfinite(t) && isfinite(r->gbytes_per_s) && r->gbytes_per_s > 0) return t * 1e3 / r->gbytes_per_s; /* GFLOP/s / GB/s */
    return NAN;
}

static bool peak_ok(const results_device *d, results_peak_field f) { return d->has_peak && isfinite(d->peak[f].value) && d->peak[f].value > 0; }

/* 3.35 TB/s, 52.1 GB/s, 989 TFLOP/s, 412 GFLOP/s */
static void peak_text(results_peak_field f, double v, char *out, size_t n)
{
    bool bytes = f == PEAK_READ || f == PEAK_COPY;
    if (v >= 1000) snprintf(out, n, "%.3g %s", v / 1000, bytes ? "TB/s" : "TFLOP/s");
    else snprintf(out, n, "%.3g %s", v, bytes ? "GB/s" : "GFLOP/s");
}

/* The device a record ran on: devices[device_index] where that is its API and name. */
static bool record_on(const results_record *r, const results_device *d, int index, const results_run *run)
{
    if (r->device_index == index && index < run->device_count && strcmp(r->api, d->api) == 0) return true;
    bool index_fits = r->device_index >= 0 && r->device_index < run->device_count &&
                      strcmp(run->devices[r->device_index].api, r->api) == 0;
    return !index_fits && strcmp(r->api, d->api) == 0 && strcmp(r->device_name, d->name) == 0;
}

static void peaks_table(strbuf *o, const results_run *run, const int *devs, int nd)
{
    sb_puts(o, "<table class=\"peaks\"><tr><th>API</th><th>device</th>");
    for (int f = 0; f < PEAK_FIELD_COUNT; ++f) sb_puts(o, "<th>"), sb_html(o, field_labels[f]), sb_puts(o, "</th>");
    sb_puts(o, "</tr>\n");
    for (int k = 0; k < nd; ++k) {
        const results_device *d = &run->devices[devs[k]];
        sb_puts(o, "<tr><td>"), sb_html(o, d->api), sb_puts(o, "</td><td>"), sb_html(o, d->name), sb_puts(o, "</td>");
        if (!d->has_peak) {
            sb_printf(o, "<td colspan=\"%d\" class=\"s-skipped\">no cached peaks (run <code>attnvk peak</code> before the bench)</td></tr>\n",
                      PEAK_FIELD_COUNT);
            continue;
        }
        for (int f = 0; f < PEAK_FIELD_COUNT; ++f) {
            const results_peak_entry *e = &d->peak[f];
            char v[48];
            if (peak_ok(d, (results_peak_field)f)) peak_text((results_peak_field)f, e->value, v, sizeof v);
            else snprintf(v, sizeof v, "%s", e->state[0] ? e->state : "-");
            sb_puts(o, "<td>"), sb_html(o, v);
            const char *why = peak_ok(d, (results_peak_field)f) ? e->path : e->reason;
            if (why[0]) sb_puts(o, "<br><small>"), sb_html(o, why), sb_puts(o, "</small>");
            sb_puts(o, "</td>");
        }
        sb_puts(o, "</tr>\n");
    }
    sb_puts(o, "</table>\n");
}

/* "matrix 989 TFLOP/s (wgmma m64n256k16 f16->f32)": the path cut to 48 characters to fit the chart. */
static void roof_label(const results_device *d, results_peak_field f, double scale, const char *unit, char *out, size_t n)
{
    const char *path = d->peak[f].path;
    snprintf(out, n, "%s %.3g %s%s%.*s%s%s", field_labels[f], d->peak[f].value / scale, unit, path[0] ? " (" : "", 48, path,
             strlen(path) > 48 ? "\xe2\x80\xa6" : "", path[0] ? ")" : "");
}

static int device_roofline(strbuf *o, const results_run *run, int index, report_palette *pal)
{
    const results_device *d = &run->devices[index];
    int records = 0;
    for (int i = 0; i < run->record_count; ++i) records += record_on(&run->records[i], d, index, run);
    if (records == 0) return 0;
    static const results_peak_field roofs_of[] = {PEAK_MATRIX, PEAK_FMA_F16, PEAK_FMA_F32};
    double top = 0;
    for (int k = 0; k < 3; ++k)
        if (peak_ok(d, roofs_of[k])) top = fmax(top, d->peak[roofs_of[k]].value);
    if (!peak_ok(d, PEAK_READ) || top <= 0) {
        sb_puts(o, "<p class=\"sub noroof\">No roofline for ");
        sb_htmlf(o, "%s (%s)", d->name, d->api);
        if (!d->has_peak) sb_puts(o, ": the run carries no cached peaks for this device (<code>attnvk peak</code> was not run on it "
                                     "before the bench).</p>\n");
        else sb_puts(o, !peak_ok(d, PEAK_READ) ? ": its cached peaks lack the read bandwidth.</p>\n"
                                               : ": its cached peaks hold no compute roof.</p>\n");
        return 0;
    }
    const bool tera = top >= 1000;
    const double scale = tera ? 1000 : 1; /* GFLOP/s per unit */
    const char *unit = tera ? "TFLOP/s" : "GFLOP/s";
    chart_roof roofs[3];
    char roof_labels[3][160];
    int nr = 0;
    for (int k = 0; k < 3; ++k) {
        if (!peak_ok(d, roofs_of[k])) continue;
        roof_label(d, roofs_of[k], scale, unit, roof_labels[nr], sizeof roof_labels[nr]);
        roofs[nr] = (chart_roof){d->peak[roofs_of[k]].value / scale, roof_labels[nr]};
        ++nr;
    }
    chart_point *points = calloc((size_t)records, sizeof *points);
    char(*tips)[TIP] = calloc((size_t)records, sizeof *tips);
    chart_series series[MAX_IMPLS];
    char impls[MAX_IMPLS][32];
    int ns = 0, np = 0, unplaced = 0;
    if (!points || !tips) {
        free(points), free(tips);
        return 0;
    }
    for (int i = 0; i < run->record_count; ++i) {
        const results_record *r = &run->records[i];
        if (!record_on(r, d, index, run) || !isfinite(report_tflops(r))) continue;
        double ai = report_intensity(r);
        if (!isfinite(ai)) {
            ++unplaced;
            continue;
        }
        int s = 0;
        while (s < ns && strcmp(impls[s], r->implementation) != 0) ++s;
        if (s == ns && ns < MAX_IMPLS) {
            snprintf(impls[ns], sizeof impls[ns], "%s", r->implementation);
            series[ns] = (chart_series){.label = impls[ns], .color = report_series_color(pal, r->implementation, r->api),
                                        .hatched = results_is_vendor_native(r->implementation)};
            ++ns;
        }
        if (s == ns) continue;
        char label[160], fraction[96] = "";
        results_case_label(&r->kase, label, sizeof label);
        if (r->roofline.present && isfinite(r->roofline.attainable_tflops))
            snprintf(fraction, sizeof fraction, "\n%s-bound: attainable %.4g %s, achieved %.1f%%", r->roofline.bound[0] ? r->roofline.bound : "?",
                     r->roofline.attainable_tflops * 1e3 / scale, unit, 100 * r->tflops / r->roofline.attainable_tflops);
        snprintf(tips[np], TIP, "%s \xe2\x80\x94 %s \xc2\xb7 %s: variant %s, tile %dx%d\n%.3g FLOP/B, %.4g %s%s", label,
                 r->implementation, r->api, r->variant[0] ? r->variant : "?", r->tile_br, r->tile_bc, ai,
                 report_tflops(r) * 1e3 / scale, unit, fraction);
        points[np] = (chart_point){ai, report_tflops(r) * 1e3 / scale, s, tips[np]};
        ++np;
    }
    char title[400], slope[96], bw[48], y_label[64];
    snprintf(title, sizeof title, "Roofline \xe2\x80\x94 %s (%s)", d->name, d->api);
    peak_text(PEAK_READ, d->peak[PEAK_READ].value, bw, sizeof bw);
    snprintf(slope, sizeof slope, "read %s", bw);
    snprintf(y_label, sizeof y_label, "achieved %s (log scale)", unit);
    roofline_chart c = {.title = title, .x_label = "arithmetic intensity, FLOP per byte of Q, K, V, O (log scale)",
                        .y_label = y_label, .unit = unit, .slope = d->peak[PEAK_READ].value / scale, .slope_label = slope,
                        .roof_count = nr, .roofs = roofs, .series_count = ns, .series = series, .point_count = np,
                        .points = points};
    sb_puts(o, "<figure class=\"roofline\">\n");
    svg_roofline_chart(o, &c);
    sb_puts(o, "<figcaption>");
    sb_htmlf(o, "%d record%s placed", np, np == 1 ? "" : "s");
    if (unplaced) sb_htmlf(o, ", %d without an arithmetic intensity left off", unplaced);
    sb_puts(o, "; roofs from the device's cached <code>attnvk peak</code> record; a record's roof is the one of its dtype "
               "(matrix units for f16/bf16 where the device has them, else f16 or f32 FMAs)</figcaption>\n</figure>\n");
    free(points), free(tips);
    return 1;
}

int report_rooflines(strbuf *o, const results_run *run, const char *group, report_palette *pal)
{
    int *devs = calloc((size_t)run->device_count + 1, sizeof *devs), nd = 0, charts = 0;
    if (!devs) return 0;
    for (int i = 0; i < run->device_count; ++i) {
        const results_device *d = &run->devices[i];
        bool used = false;
        for (int k = 0; k < run->record_count && !used; ++k)
            used = record_on(&run->records[k], d, i, run) && strcmp(run->records[k].group, group) == 0;
        if (used) devs[nd++] = i;
    }
    bool any_peak = false;
    for (int k = 0; k < nd; ++k) any_peak |= run->devices[devs[k]].has_peak;
    if (nd > 0 && !any_peak) { /* one line for the group, not one per API */
        sb_puts(o, "<p class=\"sub noroof\">No roofline: the run carries no cached peaks for ");
        for (int k = 0; k < nd; ++k) {
            const results_device *d = &run->devices[devs[k]];
            if (k) sb_puts(o, ", ");
            sb_htmlf(o, "%s (%s)", d->name, d->api);
        }
        sb_puts(o, " (<code>attnvk peak</code> was not run on the machine before the bench).</p>\n");
    } else if (nd > 0) {
        sb_puts(o, "<details class=\"peaks\" open><summary>Measured peaks (<code>attnvk peak</code>) and rooflines</summary>\n");
        peaks_table(o, run, devs, nd);
        sb_puts(o, "<div class=\"grid\">\n");
        for (int k = 0; k < nd; ++k) charts += device_roofline(o, run, devs[k], pal);
        sb_puts(o, "</div></details>\n");
    }
    free(devs);
    return charts;
}
