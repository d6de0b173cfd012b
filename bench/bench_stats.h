/* Sample statistics and the peak-throughput table behind % of peak. */
#ifndef ATTNVK_BENCH_STATS_H
#define ATTNVK_BENCH_STATS_H

#include "bench_record.h"

enum { BENCH_MIN_SAMPLES_FOR_TAIL = 20 }; /* fewer samples cannot tell a p95 or p99 from the maximum */

/* min, median, mean ± std (sample), p95, p99 (linear interpolation; NAN below
 * BENCH_MIN_SAMPLES_FOR_TAIL samples), cv = std/mean. */
void bench_stats_compute(const double *samples, int n, bench_stats *out);

/* Sorts samples ascending (qsort, in place). */
void bench_sort_samples(double *samples, int n);
/* Linear interpolation between the closest ranks of sorted samples (q in [0, 1]). */
double bench_percentile(const double *sorted, int n, double q);

/* Dense peak TFLOP/s of a known device for dtype, or 0 when unknown. */
double bench_peak_tflops(const char *device_name, attnvk_dtype dtype);

#endif
