/* Runs one implementation of one device on one case: prepare, allocate,
 * upload the shared inputs, a checked run on a poisoned output, then (for the
 * bench) warm-up and calibrated timed runs. Never aborts: every outcome is a record. */
#ifndef ATTNVK_BENCH_RUNNER_H
#define ATTNVK_BENCH_RUNNER_H

#include "bench_record.h"
#include "bench_targets.h"
#include "bench_workload.h"

typedef struct bench_run_config {
    int timed;                   /* 0: the check only (`attnvk check`) */
    long iters;                  /* > 0: exactly this many samples */
    double min_time_s;           /* else: samples until this much device time */
    long warmup;
    const char *variant;         /* for the attnvk kernel only */
    int tile_br, tile_bc;
    long split_kv;
    unsigned test_flags;
    uint64_t max_memory;         /* 0: the device's memory */
    const char *fused_only_suite; /* non-NULL: unfused baselines are skipped (named suite) */
} bench_run_config;

/* Fills r (initialised by the caller with bench_record_init). */
void bench_run(bench_target *t, const attnvk_impl_info *impl, const bench_workload *w, const bench_run_config *cfg,
               bench_record *r);

#endif
