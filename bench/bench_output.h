/* The results of a run and every way of writing them: JSON (format_version 1,
 * bench/SCHEMA.md), an aligned table, CSV and Markdown. */
#ifndef ATTNVK_BENCH_OUTPUT_H
#define ATTNVK_BENCH_OUTPUT_H

#include "bench_options.h"
#include "bench_record.h"
#include "bench_targets.h"

enum { BENCH_FORMAT_VERSION = 1 };

typedef struct bench_results {
    const bench_options *opts;
    const attnvk_context *ctx;   /* API availability */
    const char *suite;           /* NULL: shape options */
    attnvk_dtype dtype;          /* the suite's or --dtype */
    char created[32];            /* UTC, ISO 8601 */
    const bench_target *devices;
    int ndevices;
    bench_record *records;
    int nrecords, capacity;
} bench_results;

/* Appends a copy (takes ownership of r->samples_ms); 0 on success. */
int bench_results_add(bench_results *res, bench_record *r);
void bench_results_free(bench_results *res);
/* Speedup of every ok record against the fastest vendor-native ok record of
 * the same device group and case: fused kernels first, else unfused. */
void bench_results_link(bench_results *res);

/* Text of the whole results in a format; malloc'd, NULL when out of memory. */
char *bench_render(const bench_results *res, bench_format f);
char *bench_render_json(const bench_results *res);
char *bench_render_table(const bench_results *res);
char *bench_render_csv(const bench_results *res);
char *bench_render_md(const bench_results *res);

/* Writes path.tmp and renames it over path, so readers only see whole files. 0 on success. */
int bench_write_atomic(const char *path, const char *text);

#endif
