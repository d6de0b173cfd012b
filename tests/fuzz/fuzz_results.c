/* libFuzzer: the results-JSON reader (bench/results_file.c) and what consumes a
 * parsed run: compare against itself (printed), and the HTML report with its charts. */
#include "report_buf.h"
#include "report_html.h"
#include "results_compare.h"
#include "results_file.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink) sink = fopen("/dev/null", "w");
    results_run run;
    char err[512];
    /* the bytes as they are: no terminator, so reading past them is caught */
    if (results_parse_buffer((const char *)data, size, "fuzz.json", &run, err, sizeof err) == 0) {
        compare_result cmp;
        if (compare_runs(&run, &run, 5.0, &cmp) == 0) {
            if (sink) compare_print(sink, &cmp, COMPARE_TABLE, true);
            compare_free(&cmp);
        }
        strbuf html = {0};
        report_render(&html, &run, 1, 5.0);
        sb_free(&html);
        results_free(&run);
    }
    return 0;
}
