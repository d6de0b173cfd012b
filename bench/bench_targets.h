/* The devices a run covers, opened once, with their implementations and the
 * group that ties one physical GPU seen through several APIs together. */
#ifndef ATTNVK_BENCH_TARGETS_H
#define ATTNVK_BENCH_TARGETS_H

#include "attnvk/attnvk.h"
#include "core/peak.h"

enum { BENCH_MAX_IMPLS = 16, BENCH_MAX_DEVICES = 64 };

typedef struct bench_target {
    attnvk_device *dev;          /* NULL when it could not be opened (open_error says why) */
    attnvk_device_info info;
    char open_error[256];
    char group[96];
    char uuid[40];               /* "" when the API reports none */
    attnvk_impl_info impls[BENCH_MAX_IMPLS];
    int nimpls;
    int lost;                    /* the device reported DEVICE_LOST: later cases are skipped */
    double read_bandwidth_gbps;  /* measured read bandwidth (bench_target_read_bandwidth); 0 unknown */
    int read_bandwidth_asked;
    avk_peak peak;               /* what `attnvk peak` cached for the device (has_peak); the bench never measures it */
    int has_peak;
} bench_target;

/* The last time (CLOCK_MONOTONIC ms) a record finished its timed runs on the
 * physical device `group` (any API), or a negative number when none has:
 * a warm-up needs its wall-time floor only on a device that has been idle. */
double bench_group_last_busy_ms(const char *group);
void bench_group_mark_busy(const char *group, double now_ms);

/* Group id: every CPU-type device is the host processor ("host-cpu"); else the
 * UUID; else "name:" + the lower-cased name with runs of other characters as '-'. */
void bench_group_id(const attnvk_device_info *d, char *out, size_t n);

/* Selects the devices of api_mask matching device_spec (NULL: all), opens them
 * and lists their implementations (the cpu API's is named "reference": it is the
 * float64 oracle, not attnvk's kernel), filtered by impl_list (NULL: all; a name
 * no selected device offers becomes an unavailable entry on each). Returns the count. */
int bench_targets_open(attnvk_context *ctx, unsigned api_mask, const char *device_spec, const char *impl_list,
                       bench_target *out, int max);
void bench_targets_close(bench_target *t, int n);

/* The device's measured read bandwidth in GB/s, 0 when unknown: asked of the
 * library on first use (a cached number, else measured once unless
 * ATTNVK_MEASURE_BANDWIDTH=0), then kept in t. */
double bench_target_read_bandwidth(bench_target *t);

#endif
