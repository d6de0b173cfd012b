/* The results history: every saved run (raw JSON and one row per record) in a
 * SQLite database, by default $XDG_DATA_HOME/attnvk/history.db
 * (~/.local/share/attnvk/history.db). WAL mode with a busy timeout, and one
 * BEGIN IMMEDIATE ... COMMIT per run: concurrent writers queue, and a writer
 * killed mid-run leaves no trace of that run. */
#ifndef ATTNVK_HISTORY_DB_H
#define ATTNVK_HISTORY_DB_H

#include "results_file.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define HISTORY_SCHEMA_VERSION 1

/* Test hook: ATTNVK_HISTORY_TEST_HOOK=exit-before-commit makes an import _exit(86)
 * after writing its rows but before COMMIT; =pause-before-commit makes it print
 * "history: paused before commit" on stderr and sleep 60 s (for a kill -9);
 * =fail-commit makes it roll back and fail as a COMMIT that went wrong would. */
#define HISTORY_TEST_HOOK_ENV "ATTNVK_HISTORY_TEST_HOOK"

typedef struct history_db history_db;

/* The default database path; 0, or -1 when neither XDG_DATA_HOME nor HOME is set. */
int history_default_path(char *out, size_t n);

/* Opens (create: also creates the file, its folder and the schema) the database
 * at path (NULL: the default). 0, or the exit code (1 failure, 2 bad input) with
 * a one-line reason in err. */
int history_open(const char *path, bool create, history_db **out, char *err, size_t err_size);
void history_close(history_db *db);
const char *history_path(const history_db *db);

/* Stores one run: raw_json is kept verbatim; run is its parsed form. */
int history_import(history_db *db, const char *raw_json, const results_run *run, long long *run_id, char *err, size_t err_size);

/* Parses results JSON and stores it as one run (the text kept verbatim).
 *   db_path : NULL for the default database;
 *   label   : names the results in messages (a path, or "the bench results");
 *   run_id  : receives the new run's id (may be NULL).
 * Returns 0 on success, 2 when the results are not valid format_version 1 JSON, 1 when
 * the database cannot be written; err gets one line. */
int history_save_results(const char *db_path, const char *json, const char *label, long long *run_id, char *err, size_t err_size);
/* The same for a results file: path is always a path, whatever its first character. */
int history_import_file(const char *db_path, const char *path, long long *run_id, char *err, size_t err_size);

/* For `attnvk bench --save` at the end: history_save_results, and when that fails the
 * JSON is kept in a file (results_keep_unsaved) whose path ends the message in err. */
int history_save_or_keep(const char *db_path, const char *json, long long *run_id, char *err, size_t err_size);

/* For `attnvk bench --save`, before any case runs: creates the database (NULL: the
 * default) with its schema if needed, and proves a run could be stored: the file and its
 * folder (for -wal and -shm) are writable and a write transaction starts (and is rolled
 * back). 0, or 2 with a one-line reason naming the path in err. */
int history_preflight(const char *db_path, char *err, size_t err_size);

/* 0 when device_spec is NULL or matches a stored record's device; else 2 with the stored
 * devices listed in err ("cuda:NVIDIA H100 80GB HBM3, ..."). */
int history_check_device(history_db *db, const char *device_spec, char *err, size_t err_size);

/* One line per stored run with at least one record matching both filters (NULL: all);
 * 2 when device_spec matches no stored device (history_check_device). */
int history_list(history_db *db, FILE *f, const char *device_spec, const char *case_spec, char *err, size_t err_size);

/* Loads a stored run (label "run #ID"). 0, or 2 when there is no such run. */
int history_load_run(history_db *db, long long id, results_run *out, char *err, size_t err_size);

/* The latest run (by created time, then id) holding a record whose driver_version
 * is exactly `driver` on a device matching device_spec (NULL: any). 0, or 2 if none,
 * with the stored devices or driver versions listed in err. */
int history_find_driver_run(history_db *db, const char *driver, const char *device_spec, long long *run_id, char *err,
                            size_t err_size);

/* PRAGMA integrity_check and foreign_key_check; 0 when both are clean. */
int history_check(history_db *db, char *err, size_t err_size);

#endif
