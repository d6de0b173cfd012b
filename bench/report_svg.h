/* Inline SVG charts for the report: grouped bars and lines, with axes, ticks,
 * units and legends. Every label is escaped; nothing is fetched from anywhere. */
#ifndef ATTNVK_REPORT_SVG_H
#define ATTNVK_REPORT_SVG_H

#include "report_buf.h"

#include <stdbool.h>

typedef enum axis_format {
    AXIS_NUMBER, /* 0.5, 120, 1500 */
    AXIS_BYTES,  /* 64 MiB (log axes step in powers of two) */
    AXIS_LENGTH, /* sequence lengths: 512, 4k, 1M (log axes step in powers of two) */
    AXIS_RATIO,  /* 1.05x */
} axis_format;

typedef struct chart_series {
    const char *label, *color;
    bool hatched; /* the vendor-native kernel */
    bool dashed;
} chart_series;

typedef struct bar_chart {
    const char *title, *y_label, *unit; /* unit: for the tooltips */
    axis_format y_format;
    int category_count;
    const char *const *categories;
    const bool *unlabelled; /* optional [category]: no axis label (still in the tooltip) */
    int series_count;
    const chart_series *series;
    const double *values;      /* [category * series_count + series]; NAN: no bar */
    const char *const *colors; /* optional per-value fill, same indexing; NULL: the series colour */
    double baseline;           /* bars grow from here: 0, or 1 for ratios */
    double refs[2];            /* horizontal reference lines; NAN: none */
    const char *ref_labels[2];
    int legend_count; /* optional legend other than the series (e.g. verdict colours) */
    const chart_series *legend;
} bar_chart;

typedef struct line_series {
    chart_series style;
    int count;
    const double *x, *y; /* points in x order; non-finite y: skipped */
} line_series;

typedef struct line_chart {
    const char *title, *x_label, *y_label, *unit;
    axis_format x_format, y_format;
    bool log_x, log_y;
    int series_count;
    const line_series *series;
} line_chart;

void svg_bar_chart(strbuf *out, const bar_chart *c);
void svg_line_chart(strbuf *out, const line_chart *c);

#endif
