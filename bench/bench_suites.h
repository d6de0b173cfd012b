/* Named suites of cases (bench) and the correctness sweep's case list (check). */
#ifndef ATTNVK_BENCH_SUITES_H
#define ATTNVK_BENCH_SUITES_H

#include "bench_options.h"
#include "bench_record.h"

#include <stdio.h>

/* What a model preset adds to a plain shape (bench_suites.c): its score
 * modifications (window: 1 with window_left/right, -1 unbounded, as in
 * attnvk_problem) and V's head dim where it differs (MLA). */
typedef struct bench_case_model {
    float softcap;
    int window, window_left, window_right;
    int alibi, sinks;
    int head_dim_v;
} bench_case_model;

typedef struct bench_suite_case {
    const char *name;
    int batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal;
    const char *note;
    const bench_case_model *model; /* NULL: plain attention */
} bench_suite_case;

typedef struct bench_suite {
    const char *name;
    const char *summary;
    attnvk_dtype dtype;          /* default; --dtype overrides */
    double min_time_s;           /* default timing budget per implementation and case */
    int warmup;                  /* default warm-up runs */
    int fused_only;              /* unfused baselines are skipped (their Nq x Nk scores don't fit) */
    const bench_suite_case *cases;
    int ncases;
    /* a suite built by code (cases NULL): its cases in dtype, BHSD, into *out (malloc'd);
     * the count, or -1 when out of memory */
    int (*generate)(const char *suite, attnvk_dtype dtype, bench_case **out);
} bench_suite;

const bench_suite *bench_suite_find(const char *name);
void bench_suite_print_list(FILE *f);

/* The cases the options ask for (a suite, or the product of --seq and
 * --head-dim). Returns the count, or -1 after printing a one-line error. */
int bench_build_cases(const bench_options *o, bench_case **out);

/* The case of any suite called name, built as --suite builds it (o's dtype and layout):
 * 1 found, 0 none of that name, -1 after a one-line error. */
int bench_find_case(const bench_options *o, const char *name, bench_case *out);

/* The `attnvk check` sweep for one dtype (f16/bf16: the FP8 forward's cases too, O in that
 * dtype); returns the count written (<= max). */
int bench_check_cases(attnvk_dtype dtype, bench_case *out, int max);

#endif
