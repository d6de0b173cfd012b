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
    const double *err_lo, *err_hi; /* optional error bars, same indexing; NAN: none */
    const char *const *notes;      /* optional text appended to each bar's tooltip, same indexing */
} bar_chart;

typedef struct line_series {
    chart_series style;
    int count;
    const double *x, *y;   /* points in x order; non-finite y: skipped */
    const double *lo, *hi; /* optional error bars per point; NAN: none */
    const char *const *notes; /* optional text appended to each point's tooltip */
} line_series;

/* A vertical marker at x (a crossover), labelled at the top of the plot. */
typedef struct chart_mark {
    double x;
    const char *label, *color;
} chart_mark;

typedef struct line_chart {
    const char *title, *x_label, *y_label, *unit;
    axis_format x_format, y_format;
    bool log_x, log_y;
    int series_count;
    const line_series *series;
    int mark_count;
    const chart_mark *marks;
} line_chart;

/* A point of a scatter (the roofline's records): legend entry `series` gives its colour
 * and marker (a square where the series is hatched, the vendor's). */
typedef struct chart_point {
    double x, y;
    int series;
    const char *tooltip;
} chart_point;

typedef struct chart_roof {
    double value; /* y of a horizontal compute roof */
    const char *label;
} chart_roof;

/* A log-log roofline: the bandwidth slope y = slope * x up to the highest roof, each
 * compute roof from its ridge point on, every line labelled, and the points. */
typedef struct roofline_chart {
    const char *title, *x_label, *y_label, *unit;
    double slope; /* y units per x unit */
    const char *slope_label;
    int roof_count;
    const chart_roof *roofs;
    int series_count;
    const chart_series *series;
    int point_count;
    const chart_point *points;
} roofline_chart;

void svg_bar_chart(strbuf *out, const bar_chart *c);
void svg_line_chart(strbuf *out, const line_chart *c);
void svg_roofline_chart(strbuf *out, const roofline_chart *c);

#endif
