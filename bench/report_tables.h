/* The report's tables for one run: the geometric-mean summary, the CPU/GPU crossovers and
 * every record. */
#ifndef ATTNVK_REPORT_TABLES_H
#define ATTNVK_REPORT_TABLES_H

#include "report_buf.h"
#include "report_crossover.h"
#include "results_file.h"

/* One row per (device, API, implementation): ok cases, the geometric means of throughput
 * (in the device's unit), of the speedup over the vendor and of the roofline fraction. */
void report_summary_table(strbuf *o, const results_run *run);
/* The crossovers (report_crossover.h), or a line saying why there are none. */
void report_crossover_table(strbuf *o, const results_run *run, const report_crossovers *xo);
/* Every record, folded (<details>). */
void report_records_table(strbuf *o, const results_run *run);

/* Shared cells. */
void report_cell(strbuf *o, const char *text);
void report_num_cell(strbuf *o, const char *fmt, double v);
void report_header_row(strbuf *o, const char *const *names, int n);

#endif
