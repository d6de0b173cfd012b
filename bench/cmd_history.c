/* `attnvk history`: the stored runs — list them, import a results file, check the database. */
#include "cli.h"
#include "commands.h"
#include "history_db.h"

#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: attnvk history [--db PATH] [--device SPEC] [--case SPEC]\n"
          "       attnvk history [--db PATH] --import RESULTS.json [--import ...]\n"
          "       attnvk history [--db PATH] --check\n"
          "Lists the benchmark runs stored in the history database (id, date, devices, driver\n"
          "versions, attnvk commit, record count), stores results files in it, or checks it.\n"
          "  --db PATH        database (default $XDG_DATA_HOME/attnvk/history.db,\n"
          "                   i.e. ~/.local/share/attnvk/history.db)\n"
          "  --device SPEC    only runs with a device matching [API:]NAME-SUBSTRING|UUID-PREFIX\n"
          "                   (exit 2 with the stored devices when none matches)\n"
          "  --case SPEC      only runs with a case whose name matches (glob or substring)\n"
          "  --import FILE    store a results file written by attnvk bench (one transaction per run)\n"
          "  --check          SQLite integrity check plus: every run holds all its records\n"
          "Then: attnvk compare --run ID --run ID, or --driver OLD --driver NEW.\n",
          f);
}

enum { MAX_IMPORTS = 64 };

static int import_files(const char *db_path, const char **files, int n)
{
    char err[1200];
    for (int i = 0; i < n; ++i) {
        long long id = 0;
        int rc = history_import_file(db_path, files[i], &id, err, sizeof err);
        if (rc != 0) return cli_error(rc, "%s", err);
        char path[1024];
        if (db_path) snprintf(path, sizeof path, "%s", db_path);
        else history_default_path(path, sizeof path);
        printf("stored %s as run %lld in %s\n", files[i], id, path);
    }
    return EXIT_OK;
}

int cmd_history(int argc, char **argv)
{
    const char *db_path = NULL, *device = NULL, *kase = NULL;
    const char *imports[MAX_IMPORTS];
    int nimports = 0;
    bool check = false;
    for (int i = 1; i < argc; ++i) {
        const char *v = NULL;
        int m;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return EXIT_OK;
        } else if ((m = cli_option(argc, argv, &i, "--db", &v))) {
            if (m < 0) return cli_error(EXIT_USAGE, "--db wants a path");
            db_path = v;
        } else if ((m = cli_option(argc, argv, &i, "--device", &v))) {
            if (m < 0) return cli_error(EXIT_USAGE, "--device wants a SPEC");
            device = v;
        } else if ((m = cli_option(argc, argv, &i, "--case", &v))) {
            if (m < 0) return cli_error(EXIT_USAGE, "--case wants a SPEC");
            kase = v;
        } else if ((m = cli_option(argc, argv, &i, "--import", &v))) {
            if (m < 0) return cli_error(EXIT_USAGE, "--import wants a results file");
            if (nimports == MAX_IMPORTS) return cli_error(EXIT_USAGE, "at most %d --import files at once", MAX_IMPORTS);
            imports[nimports++] = v;
        } else if (strcmp(argv[i], "--check") == 0) {
            check = true;
        } else {
            return cli_error(EXIT_USAGE, "history: unknown argument '%s' (see attnvk history --help)", argv[i]);
        }
    }
    if (nimports) return import_files(db_path, imports, nimports);

    char err[1200];
    history_db *db;
    int rc = history_open(db_path, false, &db, err, sizeof err);
    if (rc != 0) return cli_error(rc, "%s", err);
    if (check) {
        rc = history_check(db, err, sizeof err);
        if (rc == 0) printf("ok: %s\n", history_path(db));
    } else {
        rc = history_list(db, stdout, device, kase, err, sizeof err);
    }
    history_close(db);
    return rc ? cli_error(rc, "%s", err) : EXIT_OK;
}
