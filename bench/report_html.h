/* `attnvk report`: one self-contained HTML page (inline CSS and SVG, no scripts,
 * fonts or images from anywhere) describing results runs and, for consecutive
 * runs, their comparison. */
#ifndef ATTNVK_REPORT_HTML_H
#define ATTNVK_REPORT_HTML_H

#include "report_buf.h"
#include "results_file.h"

/* Consecutive runs are compared (runs[i-1] as base, runs[i] as new) with the
 * compare threshold (a fraction). 0, or -1 when out of memory. */
int report_render(strbuf *out, const results_run *runs, int run_count, double threshold);

#endif
