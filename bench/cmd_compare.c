/* `attnvk compare`: did a new driver (or attnvk commit) make any case slower or wrong?
 * Two sides, each a results file, a stored run (--run ID) or the latest stored run
 * with a driver version (--driver VERSION). See results_compare.h for the verdicts. */
#include "cli.h"
#include "commands.h"
#include "history_db.h"
#include "results_compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: attnvk compare BASE.json NEW.json [--threshold PCT] [-o table|md|json]\n"
          "       attnvk compare [--db PATH] --run ID --run ID [options]\n"
          "       attnvk compare [--db PATH] --driver OLD --driver NEW [--device SPEC] [options]\n"
          "Compares two benchmark runs case by case (sides may mix files, --run and --driver).\n"
          "  --threshold PCT   slowdown that counts as a regression (default 5)\n"
          "  -o FORMAT         table (default), md (Markdown) or json\n"
          "  --db PATH         history database (default $XDG_DATA_HOME/attnvk/history.db)\n"
          "  --run ID          a stored run (see attnvk history)\n"
          "  --driver VERSION  the latest stored run with this exact driver version; only its\n"
          "                    records with that driver are compared\n"
          "  --device SPEC     only devices matching [API:]NAME-SUBSTRING|UUID-PREFIX\n"
          "  --case SPEC       only cases whose name matches (glob or substring)\n"
          "  --all             also list the unchanged cases (table and md)\n"
          "A case regresses when its new median is more than PCT% above the base median, above the\n"
          "base p95, and the runs' median ± 2 std bands do not overlap. Exit 1 on any regression,\n"
          "new failure (ok -> fail), accuracy regression (rel_l2 grown more than 10x) or cold-start\n"
          "regression (records benched with --cold: the cold or warm time to the first checked result grew\n"
          "by more than max(PCT, 25)% and 20 ms, or no longer reaches one), else 0;\n"
          "2 on bad input, two runs that share no case, or a --device or --driver that matches\n"
          "nothing (the message lists what there is).\n",
          f);
}

typedef enum side_kind { SIDE_FILE, SIDE_RUN, SIDE_DRIVER } side_kind;
typedef struct side {
    side_kind kind;
    const char *value;
} side;

typedef struct filters {
    const char *device, *kase, *driver;
} filters;

static bool keep_record(const results_record *r, void *ctx)
{
    const filters *f = ctx;
    return results_device_matches(f->device, r->api, r->device_name, r->device_uuid) &&
           results_case_matches(f->kase, r->kase.name) && (!f->driver || strcmp(r->driver_version, f->driver) == 0);
}

static int open_db(history_db **db, const char *path)
{
    if (*db) return EXIT_OK;
    char err[1200];
    int rc = history_open(path, false, db, err, sizeof err);
    return rc ? cli_error(rc, "%s", err) : EXIT_OK;
}

/* Loads one side, unfiltered; f gets the side's filters (a --driver side keeps only that driver's records). */
static int load_side(const side *s, history_db **db, const char *db_path, filters *f, results_run *out)
{
    char err[1200];
    int rc;
    if (s->kind == SIDE_FILE) {
        rc = results_load_file(s->value, out, err, sizeof err);
    } else {
        if ((rc = open_db(db, db_path)) != EXIT_OK) return rc;
        long long id = 0;
        if (s->kind == SIDE_RUN) {
            long v;
            if (!cli_parse_int(s->value, 1, 1L << 62, &v)) return cli_error(EXIT_USAGE, "--run wants a run id, not '%s'", s->value);
            id = v;
        } else {
            f->driver = s->value;
            if ((rc = history_find_driver_run(*db, s->value, f->device, &id, err, sizeof err)) != 0) return cli_error(rc, "%s", err);
        }
        rc = history_load_run(*db, id, out, err, sizeof err);
        if (rc == 0 && s->kind == SIDE_DRIVER) {
            size_t len = strlen(out->label);
            snprintf(out->label + len, sizeof out->label - len, " (driver %s)", s->value);
        }
    }
    return rc != 0 ? cli_error(rc, "%s", err) : EXIT_OK;
}

/* A --device that names no device of either run is a mistake, not "nothing changed". */
static int check_device(const results_run *runs, const char *spec)
{
    if (!spec || results_run_has_device(&runs[0], spec) || results_run_has_device(&runs[1], spec)) return EXIT_OK;
    char devices[600] = "";
    results_list_devices(&runs[0], devices, sizeof devices);
    results_list_devices(&runs[1], devices, sizeof devices);
    return cli_error(EXIT_USAGE, "compare: no device matches --device '%s' (devices in these runs: %s)", spec,
                     devices[0] ? devices : "none");
}

/* Two runs with no case in common have nothing to compare: every case would be
 * "missing" and "new", which reads like a success. */
static int check_shared(const compare_result *r, const filters *f)
{
    if (r->matched > 0) return EXIT_OK;
    return cli_error(EXIT_USAGE, "compare: %s and %s share no case (%d and %d records%s%s%s%s%s; a case matches on implementation, API, "
                                 "device and every case field)",
                     r->base->label, r->next->label, r->base->record_count, r->next->record_count,
                     f->device || f->kase ? " after" : "", f->device ? " --device " : "", f->device ? f->device : "",
                     f->kase ? " --case " : "", f->kase ? f->kase : "");
}

static int parse_format(const char *s, compare_format *out)
{
    if (strcmp(s, "table") == 0 || strcmp(s, "text") == 0) *out = COMPARE_TABLE;
    else if (strcmp(s, "md") == 0 || strcmp(s, "markdown") == 0) *out = COMPARE_MARKDOWN;
    else if (strcmp(s, "json") == 0) *out = COMPARE_JSON;
    else return 0;
    return 1;
}

static int parse_threshold(const char *s, double *out)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    size_t n = strlen(buf);
    if (n && buf[n - 1] == '%') buf[n - 1] = '\0';
    double pct;
    if (!cli_parse_double(buf, 0.0, 1000.0, &pct)) return 0;
    *out = pct / 100.0;
    return 1;
}

int cmd_compare(int argc, char **argv)
{
    side sides[2];
    int nsides = 0;
    double threshold = 0.05;
    compare_format format = COMPARE_TABLE;
    const char *db_path = NULL;
    filters f = {0};
    bool all_rows = false;
    for (int i = 1; i < argc; ++i) {
        const char *v = NULL;
        int m;
        side_kind kind = SIDE_FILE;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return EXIT_OK;
        } else if (strcmp(argv[i], "--all") == 0) {
            all_rows = true;
            continue;
        } else if ((m = cli_option(argc, argv, &i, "--threshold", &v))) {
            if (m < 0 || !parse_threshold(v, &threshold))
                return cli_error(EXIT_USAGE, "--threshold wants a percentage in [0, 1000], e.g. 5");
            continue;
        } else if ((m = cli_option(argc, argv, &i, "-o", &v)) || (m = cli_option(argc, argv, &i, "--format", &v))) {
            if (m < 0 || !parse_format(v, &format)) return cli_error(EXIT_USAGE, "-o wants table, md or json");
            continue;
        } else if ((m = cli_option(argc, argv, &i, "--db", &v))) {
            if (m < 0) return cli_error(EXIT_USAGE, "--db wants a path");
            db_path = v;
            continue;
        } else if ((m = cli_option(argc, argv, &i, "--device", &v))) {
            if (m < 0) return cli_error(EXIT_USAGE, "--device wants a SPEC");
            f.device = v;
            continue;
        } else if ((m = cli_option(argc, argv, &i, "--case", &v))) {
            if (m < 0) return cli_error(EXIT_USAGE, "--case wants a SPEC");
            f.kase = v;
            continue;
        } else if ((m = cli_option(argc, argv, &i, "--run", &v))) {
            if (m < 0) return cli_error(EXIT_USAGE, "--run wants a run id");
            kind = SIDE_RUN;
        } else if ((m = cli_option(argc, argv, &i, "--driver", &v))) {
            if (m < 0) return cli_error(EXIT_USAGE, "--driver wants a driver version");
            kind = SIDE_DRIVER;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_error(EXIT_USAGE, "compare: unknown option '%s' (see attnvk compare --help)", argv[i]);
        } else {
            v = argv[i];
        }
        if (nsides == 2) return cli_error(EXIT_USAGE, "compare wants exactly two runs (a third: '%s')", v);
        sides[nsides++] = (side){kind, v};
    }
    if (nsides != 2) {
        return cli_error(EXIT_USAGE, "compare wants two runs: BASE.json NEW.json, --run ID or --driver VERSION");
    }

    history_db *db = NULL;
    results_run runs[2];
    memset(runs, 0, sizeof runs);
    filters side_filters[2] = {f, f};
    int rc = load_side(&sides[0], &db, db_path, &side_filters[0], &runs[0]);
    if (rc == EXIT_OK) rc = load_side(&sides[1], &db, db_path, &side_filters[1], &runs[1]);
    history_close(db);
    if (rc == EXIT_OK) rc = check_device(runs, f.device);
    if (rc == EXIT_OK) {
        results_filter(&runs[0], keep_record, &side_filters[0]);
        results_filter(&runs[1], keep_record, &side_filters[1]);
        compare_result result;
        if (compare_runs(&runs[0], &runs[1], threshold, &result) != 0) {
            rc = cli_error(EXIT_FAILED, "compare: out of memory");
        } else {
            rc = check_shared(&result, &f);
            if (rc == EXIT_OK && compare_print(stdout, &result, format, all_rows) != 0)
                rc = cli_error(EXIT_FAILED, "compare: cannot print (out of memory)");
            else if (rc == EXIT_OK) rc = compare_failed(&result) ? EXIT_FAILED : EXIT_OK;
            compare_free(&result);
        }
    }
    results_free(&runs[0]);
    results_free(&runs[1]);
    return rc;
}
