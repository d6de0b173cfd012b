/* Compares two results runs case by case: the verdicts behind `attnvk compare`
 * and the report's comparison section.
 *
 * Records match on implementation, API, device (uuid when both have one, else
 * name; never the driver version) and every case field. For a case that is "ok"
 * in both runs, with T the threshold, r = new median / base median and
 * band(run) = [median - 2 std, median + 2 std]:
 *   regression  : r > 1 + T  and new median > base p95
 *                 and band(new) lies entirely above band(base);
 *   improvement : r < 1 / (1 + T) and base median > new p95
 *                 and band(new) lies entirely below band(base);
 *   within noise: past the threshold but the runs' spreads overlap;
 *   same        : otherwise.
 * Correctness: ok -> fail is a new failure; relative L2 error grown more than
 * 10x (against max(base rel_l2, tolerance / 1000)) is an accuracy regression.
 * Regressions, new failures, accuracy regressions and cold-start regressions (below)
 * make compare exit 1. */
#ifndef ATTNVK_RESULTS_COMPARE_H
#define ATTNVK_RESULTS_COMPARE_H

#include "results_file.h"

#include <stdio.h>

typedef enum compare_verdict {
    VERDICT_NEW_FAILURE, /* ok -> fail */
    VERDICT_ACCURACY,    /* still ok, rel_l2 grew more than 10x */
    VERDICT_REGRESSION,
    VERDICT_IMPROVEMENT,
    VERDICT_NOISE,
    VERDICT_SAME,
    VERDICT_FIXED,         /* fail -> ok */
    VERDICT_STILL_FAILING, /* fail -> fail */
    VERDICT_NO_LONGER_RUNS, /* ok -> skipped/unavailable */
    VERDICT_NOT_RUN,        /* skipped/unavailable in base (or both) */
    VERDICT_MISSING,       /* in base only */
    VERDICT_NEW,           /* in new only */
    VERDICT_COUNT
} compare_verdict;

#define COMPARE_ACCURACY_GROWTH 10.0

typedef struct compare_row {
    const results_record *base, *next; /* either may be NULL (missing / new) */
    compare_verdict verdict;
    double ratio;         /* new median / base median; NAN unless both are ok */
    double rel_l2_growth; /* NAN unless both have a check */
    bool slower;          /* counted as a time regression (also when shown as ACCURACY) */
} compare_row;

/* Geometric-mean speedup (base median / new median) per device, API and implementation. */
typedef struct compare_summary {
    char api[16], implementation[32], device[256];
    int cases;
    double geomean_speedup;
    int regressions, improvements, new_failures;
} compare_summary;

typedef struct compare_driver {
    char api[16], device[256], base_driver[128], next_driver[128]; /* "" when absent on that side */
} compare_driver;

typedef struct compare_result {
    double threshold; /* fraction: 0.05 is 5% */
    const results_run *base, *next;
    compare_row *rows;
    int row_count;
    compare_summary *summaries;
    int summary_count;
    compare_driver *drivers;
    int driver_count;
    int counts[VERDICT_COUNT];
    int matched;     /* rows found in both runs: 0 means the runs share no case */
    bool matched_by_name; /* some rows matched on the device's name: a card only one run has, the same model */
    int regressions; /* time regressions, whatever the row shows */
} compare_result;

/* 0, or -1 when out of memory. The result points into both runs: keep them alive. */
int compare_runs(const results_run *base, const results_run *next, double threshold, compare_result *out);
void compare_free(compare_result *r);
/* Regression, new failure or accuracy regression: compare exits 1. */
bool compare_failed(const compare_result *r);
const char *compare_verdict_name(compare_verdict v);
/* Exactly the regression rule above, for one pair of stats. */
bool compare_is_slower(const results_stats *base, const results_stats *next, double threshold);

/* Output formats of `attnvk compare`. Table and Markdown list the "same" rows only
 * with all_rows; JSON always has every row. */
typedef enum compare_format { COMPARE_TABLE, COMPARE_MARKDOWN, COMPARE_JSON } compare_format;
int compare_print(FILE *f, const compare_result *r, compare_format format, bool all_rows);

/* ---- cold start (`attnvk bench --cold`, results_record.cold_start) ----
 * A cold-start regression: for a record with cold_start in both runs, the cold or the
 * warm first_result_ms grew by more than max(--threshold, COMPARE_COLD_THRESHOLD) and by
 * more than COMPARE_COLD_FLOOR_MS (one sample per side: a start's wall time varies more
 * than a median of many dispatches), or a start that reached a result in base no longer
 * does. An improvement is the mirror image. */
#define COMPARE_COLD_THRESHOLD 0.25
#define COMPARE_COLD_FLOOR_MS 20.0

typedef struct compare_cold {
    const bench_cold_result *base, *next;
    double cold_ratio, warm_ratio; /* new / base first_result_ms; NAN unless both have it */
    bool regressed, improved, lost; /* lost: a start that reached a result in base no longer does */
} compare_cold;

double compare_cold_threshold(const compare_result *r);
/* true when both sides of row have a cold_start (out filled); false otherwise. */
bool compare_cold_row(const compare_result *r, const compare_row *row, compare_cold *out);
/* Rows with cold_start on both sides, and how many of them regressed. */
int compare_cold_rows(const compare_result *r);
int compare_cold_regressions(const compare_result *r);

#endif
