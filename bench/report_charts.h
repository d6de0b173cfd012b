/* The report's charts, built from results runs and comparisons. */
#ifndef ATTNVK_REPORT_CHARTS_H
#define ATTNVK_REPORT_CHARTS_H

#include "report_buf.h"
#include "results_compare.h"

enum { REPORT_MAX_SERIES = 48 };

/* One colour per implementation/API pair, the same in every chart of the page. */
typedef struct report_palette {
    char keys[REPORT_MAX_SERIES][64];
    int count;
} report_palette;

const char *report_series_color(report_palette *p, const char *implementation, const char *api);
const char *report_verdict_color(compare_verdict v);

/* For one device group of a run: TFLOP/s bars, scaling over N, speedup over the
 * vendor kernel, device memory flash vs unfused. Each chart is a <figure> with a
 * caption naming the device and its drivers. Returns the number of charts. */
int report_group_charts(strbuf *o, const results_run *run, const char *group, report_palette *pal);
/* The comparison's ratio chart (new / base median per case, coloured by verdict). */
int report_compare_chart(strbuf *o, const compare_result *r);

#endif
