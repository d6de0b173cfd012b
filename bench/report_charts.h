/* The report's charts, built from results runs and comparisons. */
#ifndef ATTNVK_REPORT_CHARTS_H
#define ATTNVK_REPORT_CHARTS_H

#include "report_buf.h"
#include "report_crossover.h"
#include "results_compare.h"

enum { REPORT_MAX_SERIES = 48 };

/* One colour per implementation/API pair, the same in every chart of the page. */
typedef struct report_palette {
    char keys[REPORT_MAX_SERIES][64];
    int count;
} report_palette;

const char *report_series_color(report_palette *p, const char *implementation, const char *api);
const char *report_verdict_color(compare_verdict v);

/* For one device group of a run: throughput bars with p5-p95 error bars, scaling over N
 * (the crossovers in xo marked), speedup over the vendor kernel, device memory flash vs
 * unfused for every head dim. Each chart is a <figure> with a caption naming the device
 * and its drivers. Returns the number of charts. */
int report_group_charts(strbuf *o, const results_run *run, const char *group, report_palette *pal, const report_crossovers *xo);

/* TFLOP/s of an ok record; from flops and the median when the writer left it out; else NAN. */
double report_tflops(const results_record *r);
/* The record's spread in ms: p5 and p95 where known (20 samples or more), else the smallest
 * and largest sample; returns what it is ("p5–p95", "min–max") or NULL when unknown. */
const char *report_spread_ms(const results_record *r, double *lo_ms, double *hi_ms);
/* The throughput unit of a device group: "GFLOP/s" where its best ok record stays below
 * 1 TFLOP/s (returns 1000, the factor from TFLOP/s), else "TFLOP/s" (returns 1). */
double report_group_scale(const results_run *run, const char *group, const char **unit);
/* The comparison's ratio chart (new / base median per case, coloured by verdict). */
int report_compare_chart(strbuf *o, const compare_result *r);

#endif
