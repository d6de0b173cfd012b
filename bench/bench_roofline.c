/* Where a record sits on its device's roofline: the measured peaks (`attnvk
 * peak`, read from the cache; the bench never measures them itself) give a
 * compute roof for the record's dtype and a bandwidth slope, and the record's
 * arithmetic intensity (FLOPs per byte of Q, K, V and O) picks the one that
 * bounds it. */
#include "bench_roofline.h"

#include <math.h>
#include <stdio.h>

static int entry_ok(const avk_peak *p, avk_peak_field f) { return p->e[f].status == ATTNVK_OK && p->e[f].value > 0; }

/* The compute roof in GFLOP/s for dtype: the matrix units where the device
 * has them (measured f16 -> f32; bf16 runs at the same rate on every matrix
 * path attnvk uses), else f16 FMAs for f16, else f32 FMAs; 0 when none. */
static double compute_roof(const avk_peak *p, attnvk_dtype dtype, const char **path)
{
    avk_peak_field f = AVK_PEAK_FIELD_COUNT;
    if (dtype != ATTNVK_F32 && entry_ok(p, AVK_PEAK_FIELD_MATRIX)) f = AVK_PEAK_FIELD_MATRIX;
    else if (dtype == ATTNVK_F16 && entry_ok(p, AVK_PEAK_FIELD_FMA_F16)) f = AVK_PEAK_FIELD_FMA_F16;
    else if (entry_ok(p, AVK_PEAK_FIELD_FMA_F32)) f = AVK_PEAK_FIELD_FMA_F32;
    if (f == AVK_PEAK_FIELD_COUNT) return 0;
    *path = p->e[f].path[0] ? p->e[f].path : avk_peak_field_name(f);
    return p->e[f].value;
}

void bench_roofline(const bench_target *t, bench_record *r)
{
    const double bytes = bench_io_bytes(&r->c.p);
    if (!(bytes > 0) || !(r->flops > 0)) return;
    r->arithmetic_intensity = r->flops / bytes;
    if (!t->has_peak) return;
    const char *path = "";
    const double compute_gflops = compute_roof(&t->peak, r->c.p.dtype, &path);
    const double read_gbps = entry_ok(&t->peak, AVK_PEAK_FIELD_READ) ? t->peak.e[AVK_PEAK_FIELD_READ].value
                                                                      : t->read_bandwidth_gbps;
    if (!(compute_gflops > 0) || !(read_gbps > 0)) return;
    const double memory_gflops = r->arithmetic_intensity * read_gbps; /* FLOP/B x GB/s */
    r->compute_peak_tflops = compute_gflops / 1e3;
    snprintf(r->compute_path, sizeof r->compute_path, "%s", path);
    r->bound = memory_gflops < compute_gflops ? "memory" : "compute";
    r->attainable_tflops = fmin(compute_gflops, memory_gflops) / 1e3;
    if (isfinite(r->tflops)) r->roofline_fraction = r->tflops / r->attainable_tflops;
}
