/* The text formats behind bench_render_*: one function per part and format,
 * appending to a strbuf (bench_table.c: table and Markdown; bench_text.c: CSV). */
#ifndef ATTNVK_BENCH_FORMATS_H
#define ATTNVK_BENCH_FORMATS_H

#include "bench_output.h"
#include "report_buf.h"

void bench_table_head(strbuf *b, const bench_results *res);
void bench_table_row(strbuf *b, const bench_results *res, int i);
void bench_table_tail(strbuf *b, const bench_results *res);

void bench_md_head(strbuf *b, const bench_results *res);
void bench_md_row(strbuf *b, const bench_results *res, int i);
void bench_md_tail(strbuf *b, const bench_results *res);

void bench_csv_head(strbuf *b);
void bench_csv_row(strbuf *b, const bench_results *res, int i);

#endif
