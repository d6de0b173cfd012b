#include "bench_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_sort_samples(double *samples, int n) { qsort(samples, (size_t)n, sizeof *samples, compare_double); }

double bench_percentile(const double *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

void bench_stats_compute(const double *samples, int n, bench_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1) return;
    double *sorted = malloc(sizeof(double) * (size_t)n);
    if (!sorted) return;
    memcpy(sorted, samples, sizeof(double) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(double), compare_double);
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += sorted[i];
    double mean = sum / n, var = 0;
    for (int i = 0; i < n; ++i) var += (sorted[i] - mean) * (sorted[i] - mean);
    out->min_ms = sorted[0];
    out->median_ms = bench_percentile(sorted, n, 0.5);
    out->mean_ms = mean;
    out->std_ms = n > 1 ? sqrt(var / (n - 1)) : 0;
    out->p95_ms = n >= BENCH_MIN_SAMPLES_FOR_TAIL ? bench_percentile(sorted, n, 0.95) : NAN;
    out->p99_ms = n >= BENCH_MIN_SAMPLES_FOR_TAIL ? bench_percentile(sorted, n, 0.99) : NAN;
    out->cv = mean > 0 ? out->std_ms / mean : 0;
    free(sorted);
}

/* Vendor-published dense peaks (no sparsity). f16/bf16: tensor cores / matrix
 * cores with f32 accumulation; f32: plain FP32 (not TF32). The first entry whose
 * pattern the device name contains wins, so more specific names come first. */
static const struct peak_entry {
    const char *pattern;
    double f32, f16, bf16;
} peaks[] = {
    {"H100 PCIe", 51.2, 756.0, 756.0},
    {"H100 NVL", 60.0, 835.0, 835.0},
    {"H100", 66.9, 989.4, 989.4}, /* SXM5, reported as "H100 80GB HBM3" */
    {"H200", 66.9, 989.4, 989.4},
    {"A100", 19.5, 312.0, 312.0},
    {"L40S", 91.6, 362.1, 362.1},
    {"RTX 4090", 82.6, 165.2, 165.2},
    {"MI300X", 163.4, 1307.4, 1307.4},
    {"MI250X", 47.9, 383.0, 383.0},
};

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; ++hay)
        if (strncasecmp(hay, needle, n) == 0) return 1;
    return 0;
}

double bench_peak_tflops(const char *device_name, attnvk_dtype dtype)
{
    for (size_t i = 0; i < sizeof peaks / sizeof *peaks; ++i) {
        if (!contains_nocase(device_name, peaks[i].pattern)) continue;
        return dtype == ATTNVK_F32 ? peaks[i].f32 : dtype == ATTNVK_F16 ? peaks[i].f16 : peaks[i].bf16;
    }
    return 0;
}
