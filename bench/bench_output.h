/* The results of a run and every way of writing them: JSON (format_version 1,
 * bench/SCHEMA.md), JSON lines, an aligned table, CSV and Markdown. Every format
 * but JSON (one document) is written row by row as records finish. */
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
    const bench_case *cases;     /* every case of the run (the table sizes its case column from them) */
    int ncases;
    int width;                   /* table: TEXT_WIDE or TEXT_COMPACT columns */
    int planned;                 /* records the run will write when it is not stopped */
    int stopped_by;              /* the signal that stopped the run, or 0 */
    bench_record *records;
    int nrecords, capacity;
} bench_results;

/* Appends a copy (takes ownership of r->samples_ms); 0 on success. */
int bench_results_add(bench_results *res, bench_record *r);
void bench_results_free(bench_results *res);
/* Speedup of every ok record against the fastest vendor-native ok record of
 * the same device group and case: fused kernels first, else unfused. */
void bench_results_link(bench_results *res);

/* A format in three parts: the head (table and md: title, devices, column header; csv:
 * its header line), the row of records[i], and the tail (table and md: the summary; md
 * also the footnotes with the reasons; json: the whole document). malloc'd text, "" when
 * the part is empty; NULL when out of memory. */
char *bench_render_head(const bench_results *res, bench_format f);
char *bench_render_row(const bench_results *res, int i, bench_format f);
char *bench_render_tail(const bench_results *res, bench_format f);
/* The whole text: head, every row and, when final, the tail (json: always the document). */
char *bench_render(const bench_results *res, bench_format f, int final);

#endif
