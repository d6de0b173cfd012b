/* Grouped bar and line charts as inline SVG. Sizes are in CSS pixels; text widths
 * are estimated (0.6 em per character) since nothing is measured offline. */
#include "report_svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { TITLE_FONT = 15, FONT = 12, SMALL = 11, LEGEND_ROW = 18, MAX_TICKS = 24 };
static const double MAX_WIDTH = 1290; /* what a figure shows without scrolling in a 1400 px window */
static const double PI = 3.14159265358979323846;
static const double LABEL_ANGLE = 40.0; /* degrees, for long category labels */
static const char *TEXT = "#222", *GRID = "#e3e3e3", *AXIS_COLOR = "#555";

static int chart_serial; /* unique ids for <pattern> elements across the page */

static double text_width(const char *s, double font)
{
    int chars = 0;
    for (; s && *s; ++s) chars += ((unsigned char)*s & 0xC0) != 0x80;
    return chars * 0.6 * font;
}

/* ---- axes ---- */

typedef struct axis {
    double lo, hi; /* the domain, in data units */
    bool log;
    double px0, px1; /* where lo and hi land */
    int tick_count;
    double ticks[MAX_TICKS];
    double step; /* linear tick step, for the label precision */
} axis;

static double axis_pos(const axis *a, double v)
{
    double t = a->log ? (log(v) - log(a->lo)) / (log(a->hi) - log(a->lo)) : (v - a->lo) / (a->hi - a->lo);
    return a->px0 + t * (a->px1 - a->px0);
}

static double nice_step(double range, int target)
{
    double raw = range / target, mag = pow(10.0, floor(log10(raw))), norm = raw / mag;
    return (norm < 1.5 ? 1.0 : norm < 3.0 ? 2.0 : norm < 7.0 ? 5.0 : 10.0) * mag;
}

static void linear_axis(axis *a, double lo, double hi)
{
    if (!(hi > lo)) hi = lo + (lo != 0 ? fabs(lo) * 0.1 : 1.0);
    double step = nice_step(hi - lo, 5);
    a->log = false;
    a->step = step;
    a->lo = floor(lo / step + 1e-9) * step;
    a->hi = ceil(hi / step - 1e-9) * step;
    a->tick_count = 0;
    for (double v = a->lo; v <= a->hi + step * 1e-6 && a->tick_count < MAX_TICKS; v += step)
        a->ticks[a->tick_count++] = fabs(v) < step * 1e-9 ? 0.0 : v;
}

/* Ticks at powers of `base`, at most about 10 of them. */
static void log_axis(axis *a, double lo, double hi, double base)
{
    double lb = log(base);
    /* exponents of finite doubles lie within +-1100; clamped before the conversion to int,
     * which has no defined result for a NaN or an infinity */
    int e0 = (int)fmax(-1100.0, fmin(1100.0, floor(log(lo) / lb + 1e-9)));
    int e1 = (int)fmax(-1100.0, fmin(1100.0, ceil(log(hi) / lb - 1e-9)));
    if (e1 <= e0) e1 = e0 + 1;
    int step = (e1 - e0 + 9) / 10;
    if (step < 1) step = 1;
    if ((e1 - e0) % step) e1 += step - (e1 - e0) % step;
    a->log = true;
    a->lo = pow(base, e0);
    a->hi = pow(base, e1);
    a->tick_count = 0;
    for (int e = e0; e <= e1 && a->tick_count < MAX_TICKS; e += step) a->ticks[a->tick_count++] = pow(base, e);
}

static void format_tick(char *out, size_t n, double v, axis_format f, const axis *a)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    switch (f) {
    case AXIS_BYTES:
        while (fabs(v) >= 1024.0 && u < 4) v /= 1024.0, ++u;
        snprintf(out, n, "%.3g %s", v, units[u]);
        return;
    case AXIS_LENGTH:
        if (v >= 1048576.0) snprintf(out, n, "%gM", v / 1048576.0);
        else if (v >= 1024.0) snprintf(out, n, "%gk", v / 1024.0);
        else snprintf(out, n, "%g", v);
        return;
    case AXIS_RATIO:
    case AXIS_NUMBER: {
        const char *suffix = f == AXIS_RATIO ? "\xc3\x97" : ""; /* U+00D7 multiplication sign */
        if (a->log) {
            snprintf(out, n, "%g%s", v, suffix);
            return;
        }
        /* a step in (0, 1) needs decimals (at most 324 for the smallest double); a NaN step
         * (an axis over an infinite range) must not reach the conversion to int */
        int decimals = !(a->step > 0 && a->step < 1.0) ? 0 : (int)fmin(340.0, ceil(-log10(a->step) - 1e-9));
        snprintf(out, n, "%.*f%s", decimals, v, suffix);
        return;
    }
    }
}

static void format_value(char *out, size_t n, double v, axis_format f, const char *unit)
{
    if (f == AXIS_BYTES) {
        axis none = {.step = 1};
        format_tick(out, n, v, f, &none);
        return;
    }
    snprintf(out, n, f == AXIS_RATIO ? "%.3f%s%s" : "%.4g%s%s", v, unit && *unit ? " " : "", unit ? unit : "");
}

/* ---- shared pieces ---- */

static void svg_open(strbuf *o, double w, double h, const char *title)
{
    sb_printf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                 "role=\"img\" aria-label=\"",
              w, h, w, h);
    sb_html(o, title);
    sb_puts(o, "\" font-family=\"system-ui, -apple-system, 'Segoe UI', sans-serif\">\n<title>");
    sb_html(o, title);
    sb_printf(o, "</title>\n<rect width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>\n", w, h);
    /* a long title shrinks to fit rather than being cut at the edge */
    double font = fmax(10.0, fmin(TITLE_FONT, (w - 24) / (text_width(title, 1) * 1.1)));
    sb_printf(o, "<text x=\"12\" y=\"22\" font-size=\"%.1f\" font-weight=\"600\" fill=\"%s\">", font, TEXT);
    sb_html(o, title);
    sb_puts(o, "</text>\n");
}

static void hatch_pattern(strbuf *o, const char *id, const char *color)
{
    sb_printf(o, "<pattern id=\"%s\" width=\"7\" height=\"7\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
                 "<rect width=\"7\" height=\"7\" fill=\"",
              id);
    sb_html(o, color);
    sb_puts(o, "\"/><rect width=\"2.5\" height=\"7\" fill=\"#fff\" fill-opacity=\"0.6\"/></pattern>\n");
}

static void fill_attr(strbuf *o, const chart_series *s, const char *pattern_id, const char *color)
{
    if (s->hatched) sb_printf(o, " fill=\"url(#%s)\" stroke=\"", pattern_id), sb_html(o, color), sb_puts(o, "\"");
    else sb_puts(o, " fill=\""), sb_html(o, color), sb_puts(o, "\"");
}

/* Legend rows under the title, wrapped to width; returns the y below it. */
static double legend(strbuf *o, const chart_series *items, int n, double width, int serial, const char *prefix, bool lines)
{
    double x = 12, y = 36;
    if (n > 0) sb_puts(o, "<g class=\"legend\">\n");
    for (int i = 0; i < n; ++i) {
        double w = 22 + text_width(items[i].label, FONT) + 16;
        if (x + w > width - 8 && x > 12) x = 12, y += LEGEND_ROW;
        char pid[48];
        snprintf(pid, sizeof pid, "%s%d-%d", prefix, serial, i);
        if (lines) {
            sb_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"", x, y - 4, x + 16, y - 4);
            sb_html(o, items[i].color);
            sb_printf(o, "\" stroke-width=\"2.5\"%s/>", items[i].dashed ? " stroke-dasharray=\"5 3\"" : "");
        } else {
            sb_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"12\"", x, y - 10);
            fill_attr(o, &items[i], pid, items[i].color);
            sb_puts(o, "/>");
        }
        sb_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" fill=\"%s\">", x + 20, y, FONT, TEXT);
        sb_html(o, items[i].label);
        sb_puts(o, "</text>\n");
        x += w;
    }
    if (n > 0) sb_puts(o, "</g>\n");
    return n > 0 ? y + 14 : 34;
}

static double legend_height(const chart_series *items, int n, double width)
{
    double x = 12, y = 36;
    for (int i = 0; i < n; ++i) {
        double w = 22 + text_width(items[i].label, FONT) + 16;
        if (x + w > width - 8 && x > 12) x = 12, y += LEGEND_ROW;
        x += w;
    }
    return n > 0 ? y + 14 : 34;
}

static void y_axis(strbuf *o, const axis *a, axis_format f, double left, double right, const char *label, double top, double bottom)
{
    for (int i = 0; i < a->tick_count; ++i) {
        double y = axis_pos(a, a->ticks[i]);
        char t[48];
        format_tick(t, sizeof t, a->ticks[i], f, a);
        sb_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>", left, y, right, y, GRID);
        sb_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"end\" fill=\"%s\">%s</text>\n", left - 6, y + 4,
                  SMALL, TEXT, t);
    }
    sb_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", left, top, left, bottom, AXIS_COLOR);
    sb_printf(o, "<text transform=\"translate(16 %.1f) rotate(-90)\" font-size=\"%d\" text-anchor=\"middle\" fill=\"%s\">",
              (top + bottom) / 2, FONT, TEXT);
    sb_html(o, label);
    sb_puts(o, "</text>\n");
}

/* ---- grouped bars ---- */

static void copy_label(char *out, size_t n, const char *s)
{
    enum { MAX_CHARS = 44 };
    if (text_width(s, 1) <= MAX_CHARS * 0.6) {
        snprintf(out, n, "%s", s);
        return;
    }
    snprintf(out, n, "%.*s\xe2\x80\xa6", MAX_CHARS - 1, s); /* ellipsis */
}

void svg_bar_chart(strbuf *o, const bar_chart *c)
{
    int serial = ++chart_serial, nc = c->category_count, ns = c->series_count;
    if (nc < 1 || ns < 1) return;
    double max_label = 0;
    char label[256];
    for (int i = 0; i < nc; ++i) {
        if (c->unlabelled && c->unlabelled[i]) continue;
        copy_label(label, sizeof label, c->categories[i]);
        max_label = fmax(max_label, text_width(label, SMALL));
    }
    bool has_refs = isfinite(c->refs[0]) || isfinite(c->refs[1]);
    double right = has_refs ? 96 : 24, left = 72, bw, gap, group_w;
    double sin_a = sin(LABEL_ANGLE * PI / 180), cos_a = cos(LABEL_ANGLE * PI / 180);
    /* Fit the page width when the bars allow it; long labels turn, which widens the left margin. */
    bool rotate = false;
    for (int pass = 0; pass < 2; ++pass) {
        group_w = (MAX_WIDTH - left - right) / nc;
        gap = fmin(14.0, fmax(2.0, group_w * 0.25));
        bw = fmin(28.0, (group_w - gap) / ns);
        if (bw < 2) bw = 2; /* too many bars for the page: the figure scrolls */
        group_w = ns * bw + gap;
        if (pass == 1 || max_label <= group_w - 4) break;
        rotate = true;
        left = fmin(260.0, fmax(72.0, max_label * cos_a - group_w / 2 + 12));
    }
    double plot_w = fmax(420.0, nc * group_w);
    double labels_h = rotate ? max_label * sin_a + 22 : 24;
    double width = left + plot_w + right;
    const chart_series *legend_items = c->legend ? c->legend : c->series;
    int legend_n = c->legend ? c->legend_count : ns;
    double top = legend_height(legend_items, legend_n, width) + 6, plot_h = 250, bottom = top + plot_h;
    double height = bottom + labels_h + 6;

    double lo = c->baseline, hi = c->baseline;
    for (int i = 0; i < nc * ns; ++i) {
        if (!isfinite(c->values[i])) continue;
        lo = fmin(lo, c->values[i]), hi = fmax(hi, c->values[i]);
        if (c->err_lo && isfinite(c->err_lo[i])) lo = fmin(lo, c->err_lo[i]);
        if (c->err_hi && isfinite(c->err_hi[i])) hi = fmax(hi, c->err_hi[i]);
    }
    for (int r = 0; r < 2; ++r)
        if (isfinite(c->refs[r])) lo = fmin(lo, c->refs[r]), hi = fmax(hi, c->refs[r]);
    if (c->baseline != 0) { /* ratios: a margin around the data, not from zero */
        double pad = (hi - lo) * 0.08 + 0.01;
        lo -= pad, hi += pad;
    }
    axis y = {.px0 = bottom, .px1 = top};
    linear_axis(&y, lo, hi);

    svg_open(o, width, height, c->title);
    sb_puts(o, "<defs>\n");
    for (int s = 0; s < ns; ++s)
        if (c->series[s].hatched) {
            char pid[48];
            snprintf(pid, sizeof pid, "hb%d-%d", serial, s);
            hatch_pattern(o, pid, c->series[s].color);
        }
    for (int s = 0; c->legend && s < c->legend_count; ++s)
        if (c->legend[s].hatched) {
            char pid[48];
            snprintf(pid, sizeof pid, "hl%d-%d", serial, s);
            hatch_pattern(o, pid, c->legend[s].color);
        }
    sb_puts(o, "</defs>\n");
    legend(o, legend_items, legend_n, width, serial, c->legend ? "hl" : "hb", false);
    y_axis(o, &y, c->y_format, left, left + plot_w, c->y_label, top, bottom);

    double base_y = axis_pos(&y, c->baseline);
    double x0 = left + (plot_w - nc * group_w) / 2;
    sb_puts(o, "<g class=\"bars\">\n");
    for (int i = 0; i < nc; ++i)
        for (int s = 0; s < ns; ++s) {
            double v = c->values[i * ns + s];
            if (!isfinite(v)) continue;
            double x = x0 + i * group_w + gap / 2 + s * bw, yv = axis_pos(&y, v);
            const char *color = c->colors && c->colors[i * ns + s] ? c->colors[i * ns + s] : c->series[s].color;
            char pid[48], value[64];
            snprintf(pid, sizeof pid, "hb%d-%d", serial, s);
            sb_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"", x, fmin(yv, base_y) - 0.5, fmax(bw - (bw > 4), 1.0),
                      fmax(fabs(base_y - yv), 1.0));
            chart_series style = c->series[s];
            fill_attr(o, &style, pid, color);
            format_value(value, sizeof value, v, c->y_format, c->unit);
            sb_puts(o, "><title>");
            sb_htmlf(o, "%s \xe2\x80\x94 %s: %s", c->categories[i], c->series[s].label, value);
            if (c->notes && c->notes[i * ns + s] && c->notes[i * ns + s][0]) sb_puts(o, "\n"), sb_html(o, c->notes[i * ns + s]);
            sb_puts(o, "</title></rect>\n");
        }
    sb_puts(o, "</g>\n");
    if (c->err_lo && c->err_hi) {
        sb_puts(o, "<g class=\"errorbars\" stroke=\"#222\" stroke-width=\"1.2\">\n");
        for (int i = 0; i < nc; ++i)
            for (int s = 0; s < ns; ++s) {
                double v = c->values[i * ns + s], a = c->err_lo[i * ns + s], b = c->err_hi[i * ns + s];
                if (!isfinite(v) || !isfinite(a) || !isfinite(b)) continue;
                double cx = x0 + i * group_w + gap / 2 + s * bw + fmax(bw - (bw > 4), 1.0) / 2;
                double ya = axis_pos(&y, a), yb = axis_pos(&y, b), cap = fmin(3.0, bw / 3);
                sb_printf(o, "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh%.1fM%.1f %.1fh%.1f\"/>\n", cx, ya, yb, cx - cap, ya, 2 * cap,
                          cx - cap, yb, 2 * cap);
            }
        sb_puts(o, "</g>\n");
    }
    sb_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", left, base_y, left + plot_w, base_y,
              AXIS_COLOR);
    for (int r = 0; r < 2; ++r) {
        if (!isfinite(c->refs[r])) continue;
        double yr = axis_pos(&y, c->refs[r]);
        sb_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" stroke-dasharray=\"6 4\"/>", left, yr,
                  left + plot_w, yr);
        sb_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" fill=\"%s\">", left + plot_w + 6, yr + 4, SMALL, TEXT);
        sb_html(o, c->ref_labels[r] ? c->ref_labels[r] : "");
        sb_puts(o, "</text>\n");
    }
    for (int i = 0; i < nc; ++i) {
        if (c->unlabelled && c->unlabelled[i]) continue;
        double cx = x0 + i * group_w + group_w / 2;
        copy_label(label, sizeof label, c->categories[i]);
        if (rotate)
            sb_printf(o, "<text transform=\"translate(%.1f %.1f) rotate(-%.0f)\" font-size=\"%d\" text-anchor=\"end\" fill=\"%s\">",
                      cx + 4, bottom + 12, LABEL_ANGLE, SMALL, TEXT);
        else
            sb_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"middle\" fill=\"%s\">", cx, bottom + 16, SMALL,
                      TEXT);
        sb_html(o, label);
        sb_puts(o, "</text>\n");
    }
    sb_puts(o, "</svg>\n");
}

/* ---- lines ---- */

static void x_axis(strbuf *o, const axis *a, axis_format f, double top, double bottom, const char *label, double mid)
{
    for (int i = 0; i < a->tick_count; ++i) {
        double x = axis_pos(a, a->ticks[i]);
        char t[48];
        format_tick(t, sizeof t, a->ticks[i], f, a);
        sb_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>", x, top, x, bottom, GRID);
        sb_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"middle\" fill=\"%s\">%s</text>\n", x, bottom + 16,
                  SMALL, TEXT, t);
    }
    sb_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"middle\" fill=\"%s\">", mid, bottom + 36, FONT, TEXT);
    sb_html(o, label);
    sb_puts(o, "</text>\n");
}

static bool usable(double v, bool log_scale) { return isfinite(v) && (!log_scale || v > 0); }

void svg_line_chart(strbuf *o, const line_chart *c)
{
    ++chart_serial;
    double width = 620, left = 78, right = 20;
    chart_series styles[64] = {0}; /* zeroed: keeps -O2 -Wmaybe-uninitialized quiet */
    int ns = c->series_count < 64 ? c->series_count : 64;
    for (int s = 0; s < ns; ++s) styles[s] = c->series[s].style;
    double top = legend_height(styles, ns, width) + 6, plot_h = 270, bottom = top + plot_h;
    double height = bottom + 46;

    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (int s = 0; s < ns; ++s)
        for (int i = 0; i < c->series[s].count; ++i) {
            const line_series *ls = &c->series[s];
            double xv = ls->x[i], yv = ls->y[i];
            if (!usable(xv, c->log_x) || !usable(yv, c->log_y)) continue;
            xlo = fmin(xlo, xv), xhi = fmax(xhi, xv), ylo = fmin(ylo, yv), yhi = fmax(yhi, yv);
            if (ls->lo && usable(ls->lo[i], c->log_y)) ylo = fmin(ylo, ls->lo[i]);
            if (ls->hi && usable(ls->hi[i], c->log_y)) yhi = fmax(yhi, ls->hi[i]);
        }
    for (int m = 0; m < c->mark_count; ++m)
        if (usable(c->marks[m].x, c->log_x)) xlo = fmin(xlo, c->marks[m].x), xhi = fmax(xhi, c->marks[m].x);
    if (!isfinite(xlo)) return; /* nothing to draw: the caller shows no empty frame */
    /* Points sit inside the frame: a small inset keeps markers whole at the ends. */
    axis x = {.px0 = left + 14, .px1 = width - right - 14}, y = {.px0 = bottom - 8, .px1 = top + 8};
    if (c->log_x) log_axis(&x, xlo, xhi, c->x_format == AXIS_NUMBER ? 10.0 : 2.0);
    else linear_axis(&x, xlo, xhi);
    if (c->log_y) log_axis(&y, ylo, yhi, c->y_format == AXIS_BYTES ? 2.0 : 10.0);
    else linear_axis(&y, fmin(0.0, ylo), yhi);

    svg_open(o, width, height, c->title);
    legend(o, styles, ns, width, chart_serial, "hl", true);
    sb_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"%s\"/>\n", left, top,
              width - right - left, plot_h, GRID);
    x_axis(o, &x, c->x_format, top, bottom, c->x_label, (left + width - right) / 2);
    y_axis(o, &y, c->y_format, left, width - right, c->y_label, top, bottom);
    sb_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", left, bottom, width - right, bottom,
              AXIS_COLOR);

    for (int m = 0; m < c->mark_count; ++m) { /* under the lines: a marker never hides a point */
        const chart_mark *mk = &c->marks[m];
        if (!usable(mk->x, c->log_x)) continue;
        double px = axis_pos(&x, mk->x), ty = top + 13 + 13 * m;
        bool right_side = px > (left + width - right) / 2;
        sb_printf(o, "<g class=\"mark\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"", px, top, px, bottom);
        sb_html(o, mk->color);
        sb_printf(o, "\" stroke-width=\"1.5\" stroke-dasharray=\"2 3\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" "
                     "text-anchor=\"%s\" fill=\"",
                  px + (right_side ? -4 : 4), ty, SMALL, right_side ? "end" : "start");
        sb_html(o, mk->color);
        sb_puts(o, "\">");
        sb_html(o, mk->label);
        sb_puts(o, "</text></g>\n");
    }
    for (int s = 0; s < ns; ++s) {
        const line_series *ls = &c->series[s];
        if (ls->lo && ls->hi) {
            sb_puts(o, "<g class=\"errorbars\" stroke=\"");
            sb_html(o, ls->style.color);
            sb_puts(o, "\" stroke-width=\"1.3\">");
            for (int i = 0; i < ls->count; ++i) {
                if (!usable(ls->x[i], c->log_x) || !usable(ls->y[i], c->log_y) || !usable(ls->lo[i], c->log_y) ||
                    !usable(ls->hi[i], c->log_y))
                    continue;
                double px = axis_pos(&x, ls->x[i]), ya = axis_pos(&y, ls->lo[i]), yb = axis_pos(&y, ls->hi[i]);
                sb_printf(o, "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh7M%.1f %.1fh7\"/>", px, ya, yb, px - 3.5, ya, px - 3.5, yb);
            }
            sb_puts(o, "</g>\n");
        }
        sb_puts(o, "<g class=\"series\"><polyline fill=\"none\" stroke=\"");
        sb_html(o, ls->style.color);
        sb_printf(o, "\" stroke-width=\"2.2\"%s points=\"", ls->style.dashed ? " stroke-dasharray=\"6 4\"" : "");
        for (int i = 0; i < ls->count; ++i)
            if (usable(ls->x[i], c->log_x) && usable(ls->y[i], c->log_y))
                sb_printf(o, "%.1f,%.1f ", axis_pos(&x, ls->x[i]), axis_pos(&y, ls->y[i]));
        sb_puts(o, "\"/>\n");
        for (int i = 0; i < ls->count; ++i) {
            if (!usable(ls->x[i], c->log_x) || !usable(ls->y[i], c->log_y)) continue;
            double px = axis_pos(&x, ls->x[i]), py = axis_pos(&y, ls->y[i]);
            if (ls->style.hatched) /* vendor-native: square markers */
                sb_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" stroke=\"#fff\" fill=\"", px - 4, py - 4);
            else
                sb_printf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" stroke=\"#fff\" fill=\"", px, py);
            sb_html(o, ls->style.color);
            char xs[48], ys[64];
            axis none = {.step = 1};
            format_tick(xs, sizeof xs, ls->x[i], c->x_format, &none);
            format_value(ys, sizeof ys, ls->y[i], c->y_format, c->unit);
            sb_puts(o, "\"><title>");
            sb_htmlf(o, "%s: %s \xe2\x86\x92 %s", ls->style.label, xs, ys);
            if (ls->notes && ls->notes[i] && ls->notes[i][0]) sb_puts(o, "\n"), sb_html(o, ls->notes[i]);
            sb_puts(o, ls->style.hatched ? "</title></rect>\n" : "</title></circle>\n");
        }
        sb_puts(o, "</g>\n");
    }
    sb_puts(o, "</svg>\n");
}

/* ---- the roofline ---- */

/* a white outline under a label, so it stays readable over the points it crosses */
static const char HALO[] = " stroke=\"#fff\" stroke-width=\"3\" stroke-opacity=\"0.85\" paint-order=\"stroke\"";

/* The marker of legend entry s: a square for the vendor's (hatched), else circle, diamond, triangle in turn. */
static int marker_shape(const chart_series *st, int s)
{
    static const int shapes[3] = {0, 2, 3};
    return st->hatched ? 1 : shapes[s % 3];
}

static void marker(strbuf *o, const chart_series *st, int s, double px, double py)
{
    int shape = marker_shape(st, s);
    if (shape == 0) sb_printf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\"", px, py);
    else if (shape == 1) sb_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\"", px - 4.5, py - 4.5);
    else if (shape == 2) sb_printf(o, "<path d=\"M%.1f %.1fl5.5 5.5l-5.5 5.5l-5.5 -5.5z\"", px, py - 5.5);
    else sb_printf(o, "<path d=\"M%.1f %.1fl5.5 9.5h-11z\"", px, py - 5.5);
    sb_puts(o, " stroke=\"#fff\" stroke-width=\"0.8\" fill=\"");
    sb_html(o, st->color);
    sb_puts(o, "\" fill-opacity=\"0.85\">");
}

void svg_roofline_chart(strbuf *o, const roofline_chart *c)
{
    ++chart_serial;
    double top_roof = 0;
    for (int r = 0; r < c->roof_count; ++r) top_roof = fmax(top_roof, c->roofs[r].value);
    if (!(c->slope > 0) || !(top_roof > 0)) return;
    double width = 640, left = 78, right = 20;
    double top = legend_height(c->series, c->series_count, width) + 6, plot_h = 300, bottom = top + plot_h, height = bottom + 46;
    /* the domain: every point and every ridge, a factor of 4 around them */
    double ridge_lo = INFINITY, ridge_hi = 0, xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = top_roof;
    for (int r = 0; r < c->roof_count; ++r)
        if (c->roofs[r].value > 0) ridge_lo = fmin(ridge_lo, c->roofs[r].value / c->slope), ridge_hi = fmax(ridge_hi, c->roofs[r].value / c->slope);
    for (int i = 0; i < c->point_count; ++i) {
        const chart_point *p = &c->points[i];
        if (!(p->x > 0 && isfinite(p->x)) || !(p->y > 0 && isfinite(p->y))) continue;
        xlo = fmin(xlo, p->x), xhi = fmax(xhi, p->x), ylo = fmin(ylo, p->y), yhi = fmax(yhi, p->y);
    }
    xlo = fmin(xlo, ridge_lo) / 4, xhi = fmax(xhi, ridge_hi) * 4;
    ylo = fmin(ylo, c->slope * xlo * 4) / 2, yhi *= 2;
    axis x = {.px0 = left, .px1 = width - right}, y = {.px0 = bottom, .px1 = top};
    log_axis(&x, xlo, xhi, 10.0);
    log_axis(&y, ylo, yhi, 10.0);

    svg_open(o, width, height, c->title);
    sb_puts(o, "<defs>\n");
    for (int s = 0; s < c->series_count; ++s)
        if (c->series[s].hatched) {
            char pid[48];
            snprintf(pid, sizeof pid, "hr%d-%d", chart_serial, s);
            hatch_pattern(o, pid, c->series[s].color);
        }
    sb_puts(o, "</defs>\n");
    legend(o, c->series, c->series_count, width, chart_serial, "hr", false);
    sb_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"%s\"/>\n", left, top,
              width - right - left, plot_h, GRID);
    x_axis(o, &x, AXIS_NUMBER, top, bottom, c->x_label, (left + width - right) / 2);
    y_axis(o, &y, AXIS_NUMBER, left, width - right, c->y_label, top, bottom);

    /* the slope, from where it enters the frame to the highest ridge */
    double sx0 = fmax(x.lo, y.lo / c->slope), sx1 = top_roof / c->slope;
    double px0 = axis_pos(&x, sx0), py0 = axis_pos(&y, c->slope * sx0), px1 = axis_pos(&x, sx1), py1 = axis_pos(&y, top_roof);
    sb_printf(o, "<g class=\"roofline\"><path class=\"bandwidth\" d=\"M%.1f %.1fL%.1f %.1f\" stroke=\"#333\" stroke-width=\"2\" "
                 "fill=\"none\"/>\n",
              px0, py0, px1, py1);
    double angle = atan2(py1 - py0, px1 - px0) * 180 / PI, mx = px0 + (px1 - px0) * 0.35, my = py0 + (py1 - py0) * 0.35;
    sb_printf(o, "<text transform=\"translate(%.1f %.1f) rotate(%.1f)\" font-size=\"%d\" fill=\"#333\"%s>", mx, my - 6, angle,
              SMALL, HALO);
    sb_html(o, c->slope_label);
    sb_puts(o, "</text>\n");
    for (int r = 0; r < c->roof_count; ++r) {
        const chart_roof *roof = &c->roofs[r];
        if (!(roof->value > 0)) continue;
        double rx = axis_pos(&x, fmax(x.lo, roof->value / c->slope)), ry = axis_pos(&y, roof->value);
        bool top_one = roof->value == top_roof;
        sb_printf(o, "<path class=\"roof\" d=\"M%.1f %.1fH%.1f\" stroke=\"#333\" stroke-width=\"%s\"%s fill=\"none\"/>", rx, ry,
                  width - right, top_one ? "2" : "1.3", top_one ? "" : " stroke-dasharray=\"7 4\"");
        sb_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"end\" fill=\"#333\"%s>", width - right - 4, ry - 4,
                  SMALL, HALO);
        sb_html(o, roof->label);
        sb_puts(o, "</text>\n");
    }
    sb_puts(o, "</g>\n<g class=\"points\">\n");
    for (int i = 0; i < c->point_count; ++i) {
        const chart_point *p = &c->points[i];
        if (!(p->x > 0 && isfinite(p->x)) || !(p->y > 0 && isfinite(p->y)) || p->series < 0 || p->series >= c->series_count) continue;
        const chart_series *st = &c->series[p->series];
        int shape = marker_shape(st, p->series);
        marker(o, st, p->series, axis_pos(&x, p->x), axis_pos(&y, p->y));
        sb_puts(o, "<title>");
        sb_html(o, p->tooltip ? p->tooltip : st->label);
        sb_puts(o, shape == 0 ? "</title></circle>\n" : shape == 1 ? "</title></rect>\n" : "</title></path>\n");
    }
    sb_puts(o, "</g>\n</svg>\n");
}
