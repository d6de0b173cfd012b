/* libFuzzer: the results-JSON reader (bench/results_file.c) and what consumes a
 * parsed run: compare against itself, and the HTML report with its charts. */
#include "report_buf.h"
#include "report_html.h"
#include "results_compare.h"
#include "results_file.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    results_run run;
    char err[512];
    if (results_parse(text, "fuzz.json", &run, err, sizeof err) == 0) {
        compare_result cmp;
        if (compare_runs(&run, &run, 5.0, &cmp) == 0) compare_free(&cmp);
        strbuf html = {0};
        report_render(&html, &run, 1, 5.0);
        sb_free(&html);
        results_free(&run);
    }
    free(text);
    return 0;
}
