/* One search of `attnvk tune`: a device's configurations of attnvk's kernel for
 * one shape class, each run through the bench runner (the normal kernel path
 * with an explicit configuration), checked against the float64 reference and
 * timed; wrong or failing ones are rejected with the reason. */
#ifndef ATTNVK_TUNE_SEARCH_H
#define ATTNVK_TUNE_SEARCH_H

#include "bench_targets.h"
#include "bench_record.h"
#include "bench_workload.h"
#include "core/user_tuning.h"

#include <signal.h>
#include <stdint.h>

typedef struct tune_settings {
    double min_time_s;                 /* timed device time per candidate */
    double deadline_ms;                /* CLOCK_MONOTONIC ms: no candidate starts after it */
    int inject_wrong;                  /* hidden --test-wrong-candidate: one deliberately wrong run */
    int max_candidates;                /* > 0: time at most this many (the table's entry first) */
    uint64_t seed;                     /* the candidates' order */
    const volatile sig_atomic_t *stop; /* set: stop after the current candidate */
} tune_settings;

typedef struct tune_result {
    int found;              /* best holds the fastest checked configuration */
    avk_tuned_entry best;
    int candidates, timed, rejected;
    double baseline_ms;     /* the table's pick, NAN when it failed */
    int wrong_injected, wrong_rejected;
    int out_of_time;        /* the deadline cut the search short */
} tune_result;

/* Searches c's class on t (w: c's inputs and reference), printing a line per candidate. */
void tune_search(bench_target *t, const bench_case *c, const bench_workload *w, const tune_settings *s, tune_result *out);

/* CLOCK_MONOTONIC in ms. */
double tune_now_ms(void);

#endif
