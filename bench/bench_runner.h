/* Runs one implementation of one device on one case. Everything that can rule a
 * record out is decided before any host input is built: the precheck (availability,
 * dtype, the memory the implementation needs against --max-memory and the device),
 * then bench_job_begin (kernel prepare, which checks allocation limits, the memory
 * with the kernel's workspace, device buffers). Only then bench_job_finish uploads
 * the shared inputs, runs the check on a poisoned output and, for the bench, the
 * warm-up and calibrated timed runs. Never aborts: every outcome is a record. */
#ifndef ATTNVK_BENCH_RUNNER_H
#define ATTNVK_BENCH_RUNNER_H

#include "bench_record.h"
#include "bench_targets.h"
#include "bench_workload.h"

#include <signal.h>

typedef struct bench_run_config {
    int timed;                   /* 0: the check only (`attnvk check`) */
    long iters;                  /* > 0: exactly this many samples */
    double min_time_s;           /* else: samples until this much device time */
    long warmup;
    double warmup_s;             /* on GPUs, a warm-up (warmup > 0) lasts at least this long */
    int warmup_always;           /* ... even right after other work on the GPU (`attnvk tune`) */
    long launches;               /* back-to-back launches per sample; 0: auto (short kernels, one input set) */
    const char *variant;         /* for the attnvk kernel only */
    int tile_br, tile_bc;
    long split_kv;
    unsigned test_flags;
    /* non-NULL: attnvk's kernel runs exactly this configuration (`attnvk tune`'s candidates),
     * not the tuning file's or the table's; variant and tiles must be unset */
    const struct avk_tuning *explicit_entry;
    uint64_t max_memory;         /* 0: the device's memory */
    const char *fused_only_suite; /* non-NULL: unfused baselines are skipped (named suite) */
    const volatile sig_atomic_t *stop; /* non-NULL and set: no further dispatch (the record is cut short) */
    /* non-NULL: called as the record advances (phase, dispatches done, dispatches expected) */
    void (*on_progress)(void *ctx, const char *phase, long done, long expected);
    void *progress_ctx;
    bench_pass pass;             /* bwd, fwd+bwd: bench_backward_run times the backward pass */
} bench_run_config;

/* Maps a library status to r's status and reason (UNSUPPORTED: skipped, UNAVAILABLE:
 * unavailable, OUT_OF_MEMORY: skipped, else fail); DEVICE_LOST marks the device lost. */
void bench_record_status(bench_record *r, bench_target *t, attnvk_status s, const char *stage);
/* tflops, tokens/s, GB/s, the roofline and peak fraction of an ok record from r->flops and its median. */
void bench_derive_metrics(bench_target *t, bench_record *r);

/* The checks that need neither host inputs nor a kernel. 1: r is final (skipped or
 * unavailable, with the reason); 0: the record may run. */
int bench_precheck(const bench_target *t, const attnvk_impl_info *impl, const bench_run_config *cfg, bench_record *r);

typedef struct bench_job bench_job;
/* Precheck, kernel prepare, the memory check with the kernel's workspace and the device
 * buffers. NULL: r is final. */
bench_job *bench_job_begin(bench_target *t, const attnvk_impl_info *impl, const bench_run_config *cfg,
                           bench_record *r);
/* Uploads w (built for r's case), runs the check and the timed runs, fills r; frees the job.
 * r->interrupted is set when cfg->stop cut it short. */
void bench_job_finish(bench_job *job, const bench_workload *w, const bench_run_config *cfg, bench_record *r);
/* Frees a job that will not run. */
void bench_job_abort(bench_job *job);

/* begin + finish with an existing workload (`attnvk check`). Fills r (initialised by
 * the caller with bench_record_init). */
void bench_run(bench_target *t, const attnvk_impl_info *impl, const bench_workload *w, const bench_run_config *cfg,
               bench_record *r);

#endif
