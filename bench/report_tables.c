/* Tables of one run: summary, crossovers, records. */
#include "report_tables.h"
#include "report_charts.h"
#include "report_roofline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void report_cell(strbuf *o, const char *text) { sb_puts(o, "<td>"), sb_html(o, text), sb_puts(o, "</td>"); }

void report_num_cell(strbuf *o, const char *fmt, double v)
{
    if (!isfinite(v)) {
        sb_puts(o, "<td class=\"num\">-</td>");
        return;
    }
    sb_puts(o, "<td class=\"num\">");
    sb_printf(o, fmt, v);
    sb_puts(o, "</td>");
}

void report_header_row(strbuf *o, const char *const *names, int n)
{
    sb_puts(o, "<tr>");
    for (int i = 0; i < n; ++i) sb_puts(o, "<th>"), sb_html(o, names[i]), sb_puts(o, "</th>");
    sb_puts(o, "</tr>\n");
}

/* ---- geometric means per device, API and implementation ---- */

typedef struct geo {
    double log_sum, count;
} geo;

static void geo_add(geo *g, double v)
{
    if (isfinite(v) && v > 0) g->log_sum += log(v), g->count += 1;
}

static double geo_mean(const geo *g) { return g->count > 0 ? exp(g->log_sum / g->count) : NAN; }

void report_summary_table(strbuf *o, const results_run *run)
{
    static const char *heads[] = {"device", "API", "impl", "ok / records", "geomean throughput", "geomean speedup vs vendor",
                                  "geomean roofline fraction", "variants"};
    const results_record **keys = calloc((size_t)run->record_count + 1, sizeof *keys);
    if (!keys) return;
    int nk = 0;
    for (int i = 0; i < run->record_count; ++i) {
        const results_record *r = &run->records[i];
        bool seen = false;
        for (int k = 0; k < nk && !seen; ++k)
            seen = strcmp(keys[k]->group, r->group) == 0 && strcmp(keys[k]->api, r->api) == 0 &&
                   strcmp(keys[k]->implementation, r->implementation) == 0 && strcmp(keys[k]->device_name, r->device_name) == 0;
        if (!seen) keys[nk++] = r;
    }
    sb_puts(o, "<table class=\"summary\">");
    report_header_row(o, heads, 8);
    for (int k = 0; k < nk; ++k) {
        const results_record *key = keys[k];
        geo tp = {0}, speedup = {0}, fraction = {0};
        int ok = 0, total = 0;
        char variants[160] = "";
        const char *unit;
        double scale = report_group_scale(run, key->group, &unit);
        for (int i = 0; i < run->record_count; ++i) {
            const results_record *r = &run->records[i];
            if (strcmp(r->group, key->group) != 0 || strcmp(r->api, key->api) != 0 ||
                strcmp(r->implementation, key->implementation) != 0 || strcmp(r->device_name, key->device_name) != 0)
                continue;
            ++total;
            if (r->status != RESULT_OK) continue;
            ++ok;
            geo_add(&tp, report_tflops(r) * scale);
            geo_add(&speedup, r->speedup_vs_vendor);
            if (r->roofline.present) geo_add(&fraction, r->roofline.fraction);
            if (r->variant[0]) results_list_add(variants, sizeof variants, r->variant);
        }
        char count[32], through[64];
        snprintf(count, sizeof count, "%d / %d", ok, total);
        if (isfinite(geo_mean(&tp))) snprintf(through, sizeof through, "%.4g %s", geo_mean(&tp), unit);
        else snprintf(through, sizeof through, "-");
        sb_puts(o, "<tr>");
        report_cell(o, key->device_name), report_cell(o, key->api), report_cell(o, key->implementation);
        sb_puts(o, "<td class=\"num\">"), sb_html(o, count), sb_puts(o, "</td><td class=\"num\">"), sb_html(o, through);
        sb_printf(o, " <small>(%.0f)</small></td>", tp.count);
        report_num_cell(o, "%.3f\xc3\x97", geo_mean(&speedup));
        if (fraction.count > 0) sb_printf(o, "<td class=\"num\">%.1f%% <small>(%.0f)</small></td>", 100 * geo_mean(&fraction), fraction.count);
        else sb_puts(o, "<td class=\"num\">-</td>");
        report_cell(o, variants[0] ? variants : "-");
        sb_puts(o, "</tr>\n");
    }
    sb_puts(o, "</table>\n<p class=\"sub\">Geometric means over the records that finished ok (the count in parentheses); "
               "the roofline fraction is achieved / attainable on the device's measured roofline.</p>\n");
    free(keys);
}

/* ---- the CPU/GPU crossover ---- */

void report_crossover_table(strbuf *o, const results_run *run, const report_crossovers *xo)
{
    bool cpu = false, gpu = false;
    for (int i = 0; i < run->record_count; ++i) {
        const results_record *r = &run->records[i];
        if (r->status != RESULT_OK) continue;
        cpu |= strcmp(r->api, "cpu") == 0 && strcmp(r->implementation, "reference") != 0;
        gpu |= strcmp(r->api, "cpu") != 0 && strcmp(r->implementation, "attnvk") == 0;
    }
    if (xo->count == 0) {
        sb_printf(o, "<p class=\"sub crossover\">No CPU/GPU crossover: %s.</p>\n",
                  !cpu ? "the run has no ok record of the CPU device (API cpu: attnvk flash-f32, openblas)"
                  : !gpu ? "the run has no ok attnvk record on a GPU API"
                         : "no case ran on both the CPU device and a GPU API");
        return;
    }
    static const char *heads[] = {"family", "API", "device", "N compared", "crossover N", "CPU best there",
                                  "speedup there", "speedup at largest N", "stays ahead"};
    sb_puts(o, "<table class=\"crossover\">");
    report_header_row(o, heads, 9);
    for (int i = 0; i < xo->count; ++i) {
        const report_crossover *x = &xo->items[i];
        const results_case *k = &x->gpu->kase;
        char family[200], q[32] = "", first[32], last[32], at[64], range[96];
        if (k->seq_q != k->seq_kv) snprintf(q, sizeof q, ", Nq=%ld", k->seq_q);
        snprintf(family, sizeof family, "D=%ld B=%ld H=%ld/%ld %s%s %s%s", k->head_dim, k->batch, k->heads, k->kv_heads,
                 k->causal ? "causal " : "", k->dtype, k->layout, q);
        report_length_text(x->points[0].n, first, sizeof first);
        report_length_text(x->points[x->point_count - 1].n, last, sizeof last);
        snprintf(range, sizeof range, "%s \xe2\x80\x93 %s (%d)", first, last, x->point_count);
        const crossover_point *there = NULL;
        if (x->crossover_n > 0) {
            report_length_text(x->crossover_n, at, sizeof at);
            if (x->from_first) snprintf(at + strlen(at), sizeof at - strlen(at), " or below");
            for (int p = 0; p < x->point_count; ++p)
                if (x->points[p].n == x->crossover_n) there = &x->points[p];
        } else {
            snprintf(at, sizeof at, "none up to %s", last);
        }
        sb_printf(o, "<tr class=\"%s\">", x->crossover_n > 0 ? "crosses" : "never");
        report_cell(o, family), report_cell(o, x->gpu->api), report_cell(o, x->gpu->device_name), report_cell(o, range);
        sb_puts(o, "<td><b>"), sb_html(o, at), sb_puts(o, "</b></td>");
        report_cell(o, there ? there->cpu_impl : x->points[x->point_count - 1].cpu_impl);
        report_num_cell(o, "%.2f\xc3\x97", x->speedup_at);
        report_num_cell(o, "%.2f\xc3\x97", x->speedup_last);
        report_cell(o, x->crossover_n == 0 ? "-" : x->stays_ahead ? "yes" : "no");
        sb_puts(o, "</tr>\n");
    }
    sb_puts(o, "</table>\n<p class=\"sub\">For each family (cases equal but for the sequence length N = Nk) and GPU API: the "
               "smallest N at which attnvk's record on that API has a shorter median than the CPU device's best record of "
               "the same case (API cpu: attnvk's flash-f32 kernel or the openblas baseline; never the float64 reference). "
               "Speedup: CPU median / GPU median. The scaling charts mark it.</p>\n");
}

/* ---- every record ---- */

void report_records_table(strbuf *o, const results_run *run)
{
    static const char *heads[] = {"impl", "API", "device", "driver", "case", "status", "median ms", "spread ms", "throughput",
                                  "FLOP/B", "bound", "roofline", "memory MiB", "rel L2", "vs vendor", "variant", "tile", "reason"};
    sb_printf(o, "<details><summary>All %d records</summary><table class=\"records\">", run->record_count);
    report_header_row(o, heads, 18);
    for (int i = 0; i < run->record_count; ++i) {
        const results_record *r = &run->records[i];
        char label[160], spread[96] = "-", through[64] = "-", tile[32] = "-";
        results_case_label(&r->kase, label, sizeof label);
        sb_puts(o, "<tr>");
        report_cell(o, r->implementation), report_cell(o, r->api), report_cell(o, r->device_name), report_cell(o, r->driver_version);
        report_cell(o, label);
        sb_printf(o, "<td class=\"s-%s\">%s</td>", result_status_name(r->status), result_status_name(r->status));
        bool timed = r->status == RESULT_OK && r->stats.present;
        report_num_cell(o, "%.4g", timed ? r->stats.median_ms : NAN);
        double lo, hi;
        const char *kind = report_spread_ms(r, &lo, &hi);
        if (kind) snprintf(spread, sizeof spread, "%.4g\xe2\x80\x93%.4g %s", lo, hi, kind);
        sb_puts(o, "<td class=\"num\">"), sb_html(o, spread), sb_puts(o, "</td>");
        const char *unit;
        double scale = report_group_scale(run, r->group, &unit);
        if (isfinite(report_tflops(r))) snprintf(through, sizeof through, "%.4g %s", report_tflops(r) * scale, unit);
        sb_puts(o, "<td class=\"num\">"), sb_html(o, through), sb_puts(o, "</td>");
        report_num_cell(o, "%.3g", r->status == RESULT_OK ? report_intensity(r) : NAN);
        report_cell(o, r->roofline.present && r->roofline.bound[0] ? r->roofline.bound : "-");
        report_num_cell(o, "%.1f%%", r->roofline.present ? 100 * r->roofline.fraction : NAN);
        report_num_cell(o, "%.1f", r->memory_bytes / 1048576.0);
        report_num_cell(o, "%.2e", r->check.present ? r->check.rel_l2 : NAN);
        report_num_cell(o, "%.3f\xc3\x97", r->speedup_vs_vendor);
        report_cell(o, r->variant);
        if (r->tile_br > 0 || r->tile_bc > 0) snprintf(tile, sizeof tile, "%dx%d", r->tile_br, r->tile_bc);
        report_cell(o, tile);
        report_cell(o, r->reason);
        sb_puts(o, "</tr>\n");
    }
    sb_puts(o, "</table></details>\n");
}
