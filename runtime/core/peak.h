/* What a device measured it can do (`attnvk peak`), clpeak/vkpeak style: read
 * and copy bandwidth, f32 and f16 FMA throughput, and the throughput of the
 * matrix units through the path attnvk's own kernels use on that API. Measured
 * once per (API, device, driver) and cached on disk in one checksummed record
 * (core/cache.h); read bandwidth is the backend's read_bandwidth hook and its
 * own cache (core/bandwidth.h), so `attnvk devices`, the bench and the peak
 * table share one number. */
#ifndef ATTNVK_PEAK_H
#define ATTNVK_PEAK_H

#include "attnvk/attnvk.h"

#include <stdint.h>

/* What the backend hook (attnvk_backend.measure_peak) measures. */
typedef enum avk_peak_kind {
    AVK_PEAK_COPY = 0, /* copy bandwidth, GB/s: bytes read plus bytes written */
    AVK_PEAK_FMA_F32,  /* GFLOP/s, an FMA is 2 FLOPs */
    AVK_PEAK_FMA_F16,  /* GFLOP/s of f16 FMAs (packed where the API packs them) */
    AVK_PEAK_MATRIX,   /* GFLOP/s of f16 x f16 -> f32 matrix MACs on the path named in path */
    AVK_PEAK_KIND_COUNT
} avk_peak_kind;

/* One measurement as the hook fills it. The hook returns ATTNVK_OK with a
 * positive value; ATTNVK_ERROR_UNSUPPORTED when the device has no way to run
 * it (the reason through avk_fail; path "none" for the matrix kind); any other
 * status on a failure. path names what ran ("mma.sync m16n8k16 f16->f32"). */
typedef struct avk_peak_sample {
    double value;
    char path[64];
} avk_peak_sample;

/* How a backend times a compute peak (the policy, shared by every API): run(ctx,
 * iters, &ms) runs the kernel once with `iters` loop trips and gives its device
 * time. The count grows until one run takes about target_ms (never past
 * max_iters; max_iters 1 keeps it at 1, for copies), that run being the warm-up,
 * then the best of AVK_PEAK_RUNS runs: *best_ms at *iters. */
typedef attnvk_status (*avk_peak_run_fn)(void *ctx, uint32_t iters, double *ms);
enum { AVK_PEAK_RUNS = 3 };
attnvk_status avk_peak_time(avk_peak_run_fn run, void *ctx, double target_ms, uint32_t max_iters, uint32_t *iters,
                            double *best_ms);
/* target_ms for a device: 50 ms on a GPU (a kind's runs stay well under a
 * second), 15 ms on a CPU device (lavapipe, PoCL: the tests stay quick). */
double avk_peak_target_ms(int cpu_device);

/* The fields of a peak record, read bandwidth first. */
typedef enum avk_peak_field {
    AVK_PEAK_FIELD_READ = 0,
    AVK_PEAK_FIELD_COPY,
    AVK_PEAK_FIELD_FMA_F32,
    AVK_PEAK_FIELD_FMA_F16,
    AVK_PEAK_FIELD_MATRIX,
    AVK_PEAK_FIELD_COUNT
} avk_peak_field;

typedef struct avk_peak_entry {
    attnvk_status status; /* OK: value holds; UNSUPPORTED: "none", the device cannot; else failed or not measured */
    double value;         /* GB/s or GFLOP/s (avk_peak_field_unit) */
    int cached;           /* read back from the cache rather than measured now */
    char path[64];        /* what ran ("" where the field has one way only), "none" when unsupported */
    char note[192];       /* why not, when status is not OK */
} avk_peak_entry;

typedef struct avk_peak {
    avk_peak_entry e[AVK_PEAK_FIELD_COUNT];
} avk_peak;

/* "read", "copy", "fma_f32", "fma_f16", "matrix" (the JSON/cache names) and units ("GB/s", "GFLOP/s"). */
const char *avk_peak_field_name(avk_peak_field f);
const char *avk_peak_field_unit(avk_peak_field f);

enum {
    AVK_PEAK_MEASURE = 1,   /* measure what the cache lacks (else those fields say "not measured yet") */
    AVK_PEAK_REMEASURE = 2, /* ignore the cache, measure everything and store it again */
};

/* The peak record of listed device `device` of ctx: what the cache has, and
 * (flags) what it lacks measured through the backend, which is opened only
 * then. ATTNVK_OK when the lookup ran (each entry has its own status);
 * another status when the device could not be opened. Fields that failed
 * (anything but OK or UNSUPPORTED) are not cached, so the next run tries again. */
attnvk_status avk_peak_lookup(attnvk_context *ctx, int device, unsigned flags, avk_peak *out);

/* The cached record only (no device opened): ATTNVK_OK when a valid one exists. */
attnvk_status avk_peak_cached(const attnvk_device_info *info, avk_peak *out);

/* The cache key: the device key of core/bandwidth.h under the peak record's name and method version. */
uint64_t avk_peak_key(const attnvk_device_info *info);

/* Record <-> cache payload (text, one line per field); exposed for the tests. 1 on success. */
int avk_peak_format(const avk_peak *p, char *out, size_t n);
int avk_peak_parse(const char *data, size_t size, avk_peak *out);

#endif
