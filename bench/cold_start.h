/* A record's cold start (`attnvk bench --cold`, bench_cold.h says how it is measured):
 * the time to the first checked result of a fresh process on empty kernel caches (cold)
 * and on the caches that start left (warm). Part of both records: the bench's
 * (bench_record.h), whose JSON carries it as the record's `cold_start`, and the
 * reader's (results_file.h), which compare judges (results_compare.c). */
#ifndef ATTNVK_COLD_START_H
#define ATTNVK_COLD_START_H

#include <stdbool.h>

/* One start, ms of wall time; NAN where it did not get that far. */
typedef struct bench_cold_times {
    double context_ms;        /* attnvk_context_create: every compiled-in API loaded (not in first_result_ms) */
    double open_ms;           /* the device opened (Vulkan: attnvk's pipeline cache read and created) */
    double prepare_ms;        /* attnvk_kernel_prepare: compile or cache load, pipeline creation */
    double first_dispatch_ms; /* the checked run: O poisoned, the first dispatch (of a split: its first chunk) */
    double first_result_ms;   /* open_ms + prepare to the checked result: prepare, buffers, upload, dispatch,
                                 read back, check */
} bench_cold_times;

enum { BENCH_COLD_PARTS = 8, BENCH_COLD_MAX_RUNS = 20 };

typedef struct bench_cold_part {
    char name[16]; /* attnvk, mesa, pocl, cuda, nvidia, comgr, xdg */
    double bytes;
} bench_cold_part;

typedef struct bench_cold_result {
    bool present;              /* the record has a cold_start: measured (bench --cold) or read back */
    bool have_cold, have_warm; /* the start reached a checked result */
    bench_cold_times cold, warm; /* medians over `runs` pairs of starts */
    double cache_bytes;        /* files the cold start left in the empty cache folders; NAN unknown */
    bench_cold_part parts[BENCH_COLD_PARTS]; /* non-empty folders of cache_bytes */
    int nparts;
    int runs;                  /* pairs of starts (--cold-runs) */
    char error[320];           /* "" or why a start gave no result (the first one) */
} bench_cold_result;

#endif
