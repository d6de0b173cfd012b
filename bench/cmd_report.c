/* `attnvk report RESULTS.json... --out report.html`: one self-contained HTML page. */
#include "cli.h"
#include "commands.h"
#include "history_db.h"
#include "report_html.h"
#include "report_sparse.h"

#include "core/atomic_file.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void usage(FILE *f)
{
    fputs("usage: attnvk report RESULTS.json... [--out report.html] [--threshold PCT]\n"
          "       attnvk report [--db PATH] --run ID [--run ID ...] [--out report.html]\n"
          "Writes one self-contained HTML page (inline CSS and SVG; works offline): per run, the\n"
          "geometric means per device, API and implementation and the CPU/GPU crossover (per case\n"
          "family, the smallest N at which each GPU API beats the CPU device's best); per device, its\n"
          "roofline from the peaks `attnvk peak` cached (every record placed on it), throughput per\n"
          "case with p5-p95 error bars (GFLOP/s below 1 TFLOP/s) and the vendor-native kernel marked,\n"
          "scaling over sequence length with the crossovers marked, speedup over the vendor kernel and\n"
          "device memory flash vs unfused for every head dim; for each pair of consecutive runs, the\n"
          "compare verdicts (table and chart of time ratios). Sparse records (block layouts, dilation) with\n"
          "their dense partner (vs_dense) also get the sparse/dense crossover per family, the smallest N\n"
          "from which the sparse case stays faster, in the page and one line each on stdout.\n"
          "  --out FILE       output (default attnvk-report.html), replaced whole or not at all\n"
          "  -o FORMAT        html, the one format (-o FILE.html is still taken as --out FILE.html)\n"
          "  --threshold PCT  regression threshold of the comparisons (default 5)\n"
          "  --db PATH, --run ID   runs from the history database, in the order given\n",
          f);
}

/* -o is the format everywhere; a value ending in .html is the file, as before --out existed. */
static bool is_html_path(const char *v)
{
    size_t n = strlen(v);
    return n > 5 && strcasecmp(v + n - 5, ".html") == 0;
}

enum { MAX_RUNS = 32 };

typedef struct source {
    bool stored;
    const char *value;
} source;

/* The sparse/dense crossovers of every run, one line each, beside the page's table. */
static int print_sparse_crossovers(const results_run *runs, int n)
{
    for (int i = 0; i < n; ++i) {
        sparse_crossovers xo;
        if (report_sparse_compute(runs[i].records, runs[i].record_count, &xo) != 0)
            return cli_error(EXIT_FAILED, "report: out of memory");
        for (int j = 0; j < xo.count; ++j) {
            char line[1024];
            report_sparse_line(&xo.items[j], line, sizeof line);
            printf("sparse/dense crossover, %s: %s\n", runs[i].label, line);
        }
        report_sparse_free(&xo);
    }
    return EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
    source sources[MAX_RUNS];
    int n = 0;
    const char *out_path = "attnvk-report.html", *db_path = NULL;
    double threshold = 0.05;
    for (int i = 1; i < argc; ++i) {
        const char *v = NULL;
        int m;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return EXIT_OK;
        } else if ((m = cli_option(argc, argv, &i, "--out", &v)) || (m = cli_option(argc, argv, &i, "--output", &v))) {
            if (m < 0) return cli_error(EXIT_USAGE, "--out wants a file name");
            out_path = v;
        } else if ((m = cli_option(argc, argv, &i, "-o", &v)) || (m = cli_option(argc, argv, &i, "--format", &v))) {
            if (m < 0) return cli_error(EXIT_USAGE, "-o wants a format: html");
            if (is_html_path(v)) out_path = v;
            else if (strcmp(v, "html") != 0)
                return cli_error(EXIT_USAGE, "report: unknown format '%s' (-o html is the one format; the file is --out FILE)", v);
        } else if ((m = cli_option(argc, argv, &i, "--threshold", &v))) {
            double pct;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", m > 0 ? v : "");
            if (buf[0] && buf[strlen(buf) - 1] == '%') buf[strlen(buf) - 1] = '\0';
            if (m < 0 || !cli_parse_double(buf, 0, 1000, &pct)) return cli_error(EXIT_USAGE, "--threshold wants a percentage");
            threshold = pct / 100;
        } else if ((m = cli_option(argc, argv, &i, "--db", &v))) {
            if (m < 0) return cli_error(EXIT_USAGE, "--db wants a path");
            db_path = v;
        } else if ((m = cli_option(argc, argv, &i, "--run", &v)) || (argv[i][0] != '-' && (v = argv[i]))) {
            if (m < 0) return cli_error(EXIT_USAGE, "--run wants a run id");
            if (n == MAX_RUNS) return cli_error(EXIT_USAGE, "at most %d runs in one report", MAX_RUNS);
            sources[n++] = (source){m > 0, v};
        } else {
            return cli_error(EXIT_USAGE, "report: unknown option '%s' (see attnvk report --help)", argv[i]);
        }
    }
    if (n == 0) {
        return cli_error(EXIT_USAGE, "report wants at least one results file or --run ID");
    }
    if (avk_check_writable(out_path) != ATTNVK_OK) /* before reading anything */
        return cli_error(EXIT_USAGE, "report: cannot write the report: %s", attnvk_last_error());

    results_run *runs = calloc((size_t)n, sizeof *runs);
    if (!runs) return cli_error(EXIT_FAILED, "report: out of memory");
    history_db *db = NULL;
    char err[1200];
    int rc = EXIT_OK, loaded = 0;
    for (; loaded < n && rc == EXIT_OK; ++loaded) {
        if (!sources[loaded].stored) {
            rc = results_load_file(sources[loaded].value, &runs[loaded], err, sizeof err);
            continue;
        }
        long id;
        if (!cli_parse_int(sources[loaded].value, 1, 1L << 62, &id)) {
            snprintf(err, sizeof err, "--run wants a run id, not '%s'", sources[loaded].value);
            rc = EXIT_USAGE;
        } else if (db || (rc = history_open(db_path, false, &db, err, sizeof err)) == EXIT_OK) {
            rc = history_load_run(db, id, &runs[loaded], err, sizeof err);
        }
    }
    history_close(db);
    if (rc != EXIT_OK) cli_error(rc, "%s", err);

    if (rc == EXIT_OK) {
        strbuf page = {0};
        if (report_render(&page, runs, n, threshold) != 0) {
            rc = cli_error(EXIT_FAILED, "report: out of memory");
        } else if (avk_atomic_write(out_path, page.data, page.len) != ATTNVK_OK) { /* never a partial page */
            rc = cli_error(EXIT_FAILED, "report: %s", attnvk_last_error());
        } else {
            printf("wrote %s (%d run%s)\n", out_path, n, n == 1 ? "" : "s");
            rc = print_sparse_crossovers(runs, n);
        }
        sb_free(&page);
    }
    for (int i = 0; i < loaded; ++i) results_free(&runs[i]);
    free(runs);
    return rc;
}
