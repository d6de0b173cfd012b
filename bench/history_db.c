/* The results history in SQLite: schema, import, listing, lookup, checks. */
#include "history_db.h"

#include "core/atomic_file.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { OK = 0, FAILED = 1, BAD_INPUT = 2 };
/* How long one writer waits for another: SQLite's busy timeout, and the WAL switch's retries. */
enum { BUSY_TIMEOUT_MS = 60000, RETRY_SLEEP_MS = 10 };

struct history_db {
    sqlite3 *db;
    char path[1024];
};

static int fail(char *err, size_t n, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t n, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && n) vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return code;
}

static int db_fail(history_db *h, char *err, size_t n, const char *what)
{
    return fail(err, n, FAILED, "history %s: %s: %s", h->path, what, sqlite3_errmsg(h->db));
}

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " created TEXT, imported TEXT NOT NULL, attnvk_version TEXT, git_commit TEXT,"
    " hostname TEXT, host_os TEXT, cpu TEXT, command TEXT, suite TEXT,"
    " format_version INTEGER NOT NULL, record_count INTEGER NOT NULL, raw_json TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS records ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL,"
    " implementation TEXT NOT NULL, api TEXT NOT NULL, device_name TEXT, device_uuid TEXT, device_group TEXT,"
    " driver_version TEXT, case_name TEXT, batch INTEGER, heads INTEGER, kv_heads INTEGER, seq_q INTEGER,"
    " seq_kv INTEGER, head_dim INTEGER, causal INTEGER, dtype TEXT, layout TEXT, scale REAL,"
    " status TEXT NOT NULL, reason TEXT, variant TEXT, median_ms REAL, std_ms REAL, p95_ms REAL, tflops REAL,"
    " memory_bytes REAL, rel_l2 REAL, passed INTEGER, speedup_vs_vendor REAL, vendor_reference TEXT,"
    " PRIMARY KEY (run_id, seq));"
    "CREATE INDEX IF NOT EXISTS records_by_driver ON records(driver_version);"
    "PRAGMA user_version = 1;";

int history_default_path(char *out, size_t n)
{
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/') snprintf(out, n, "%s/attnvk/history.db", xdg); /* relative values are to be ignored */
    else if (home && home[0]) snprintf(out, n, "%s/.local/share/attnvk/history.db", home);
    else return -1;
    return 0;
}

/* mkdir -p of the folder that holds path. */
static int make_parent_dirs(const char *path)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; ++p)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(dir, 0755) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(dir, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* avk_device_match(spec, api, name, uuid) and avk_case_match(spec, name): the
 * --device/--case filters inside SQL; a NULL spec matches everything. */
static const char *text_arg(sqlite3_value *v)
{
    const unsigned char *t = sqlite3_value_text(v);
    return t ? (const char *)t : "";
}

static void sql_device_match(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
        sqlite3_result_int(ctx, 1);
        return;
    }
    sqlite3_result_int(ctx, results_device_matches(text_arg(argv[0]), text_arg(argv[1]), text_arg(argv[2]), text_arg(argv[3])));
}

static void sql_case_match(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
        sqlite3_result_int(ctx, 1);
        return;
    }
    sqlite3_result_int(ctx, results_case_matches(text_arg(argv[0]), text_arg(argv[1])));
}

/* The schema version, and whether the file holds any table at all, from one snapshot:
 * a first writer may commit its schema between two separate reads. */
static int read_schema_state(history_db *h, int *version, int *tables)
{
    sqlite3_stmt *st;
    static const char sql[] = "SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)";
    if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    int rc = sqlite3_step(st);
    *version = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    *tables = rc == SQLITE_ROW ? sqlite3_column_int(st, 1) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : -1;
}

static int no_database(char *err, size_t n, const char *path)
{
    return fail(err, n, BAD_INPUT, "no history database at %s (store a run with: attnvk history --import RESULTS.json)", path);
}

static int ensure_schema(history_db *h, bool create, char *err, size_t n)
{
    int version, tables;
    if (read_schema_state(h, &version, &tables) != 0)
        return fail(err, n, BAD_INPUT, "history %s: not a readable SQLite database: %s", h->path, sqlite3_errmsg(h->db));
    if (version > HISTORY_SCHEMA_VERSION)
        return fail(err, n, FAILED, "history %s: schema version %d is newer than this attnvk's (%d)", h->path, version,
                    HISTORY_SCHEMA_VERSION);
    if (version == HISTORY_SCHEMA_VERSION) return OK;
    if (!create) {
        if (tables == 0) return no_database(err, n, h->path); /* nothing stored yet, or its first writer not done */
        return fail(err, n, BAD_INPUT, "history %s: not an attnvk history database (no schema)", h->path);
    }
    /* Two first writers may race here: the transaction serializes them. */
    if (sqlite3_exec(h->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) return db_fail(h, err, n, "cannot lock");
    if (sqlite3_exec(h->db, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        int rc = db_fail(h, err, n, "cannot create the schema");
        sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    return OK;
}

static bool is_busy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Runs a journal_mode pragma; mode gets its answer ("wal", "delete", ...). */
static int journal_mode(sqlite3 *db, const char *sql, char *mode, size_t n)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        snprintf(mode, n, "%s", (const char *)sqlite3_column_text(st, 0));
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/* WAL (persistent, set by the writers): readers never wait for a writer, and a writer
 * killed mid-transaction leaves only uncommitted frames, ignored on open. The switch
 * upgrades a read lock to a write lock inside one statement, and SQLite answers BUSY at
 * once there instead of calling the busy handler: so it is retried here, within the same
 * timeout. A database already in WAL mode (every one but a legacy or hand-edited file) is
 * only read. A file system without shared memory keeps its rollback journal, which is
 * slower for readers but just as safe. */
static int ensure_wal(history_db *h, char *err, size_t n)
{
    double deadline = now_ms() + BUSY_TIMEOUT_MS;
    for (;;) {
        char mode[32] = "";
        int rc = journal_mode(h->db, "PRAGMA journal_mode", mode, sizeof mode);
        if (rc == SQLITE_OK && strcmp(mode, "wal") == 0) return OK;
        if (rc == SQLITE_OK) rc = journal_mode(h->db, "PRAGMA journal_mode=WAL", mode, sizeof mode);
        if (rc == SQLITE_OK) return OK;
        if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT)
            return fail(err, n, BAD_INPUT, "history %s: not a readable SQLite database: %s", h->path, sqlite3_errmsg(h->db));
        if (!is_busy(rc) || now_ms() > deadline) return db_fail(h, err, n, "cannot switch to WAL mode");
        sqlite3_sleep(RETRY_SLEEP_MS);
    }
}

/* A new database: WAL mode and the schema set up under a temporary name beside path, then
 * hard-linked into place. Whoever opens path sees a complete database, never an empty or
 * half-made one, and of several first writers exactly one link wins (the others get
 * EEXIST and use the winner's). 0 when path exists now; -1 where the file system cannot
 * link (the caller then creates the database in place); else the exit code, err set. */
static int create_by_link(const char *path, char *err, size_t n)
{
    avk_atomic_file tmp;
    if (avk_atomic_open(&tmp, path) != ATTNVK_OK)
        return fail(err, n, FAILED, "history: cannot create the database: %s", attnvk_last_error());
    fclose(tmp.f); /* SQLite opens the file itself; closing a second descriptor later would drop its locks */
    tmp.f = NULL;
    sqlite3 *db = NULL;
    char mode[32];
    int rc = sqlite3_open_v2(tmp.tmp_path, &db, SQLITE_OPEN_READWRITE, NULL);
    if (rc == SQLITE_OK) rc = journal_mode(db, "PRAGMA journal_mode=WAL", mode, sizeof mode);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, schema_sql, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    int result = OK;
    if (rc != SQLITE_OK)
        result = fail(err, n, FAILED, "history: cannot create the database %s: %s", tmp.tmp_path, db ? sqlite3_errmsg(db) : "out of memory");
    if (sqlite3_close(db) != SQLITE_OK && result == OK) /* the last close checkpoints and removes -wal and -shm */
        result = fail(err, n, FAILED, "history: cannot create the database %s: %s", tmp.tmp_path, sqlite3_errmsg(db));
    if (result == OK && link(tmp.tmp_path, path) != 0 && errno != EEXIST) {
        if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP || errno == ENOSYS || errno == EMLINK) result = -1;
        else result = fail(err, n, FAILED, "history: cannot create %s: %s", path, strerror(errno));
    }
    char side[1100];
    for (int i = 0; i < 2; ++i) { /* normally gone already */
        snprintf(side, sizeof side, "%s%s", tmp.tmp_path, i ? "-shm" : "-wal");
        unlink(side);
    }
    avk_atomic_abort(&tmp); /* drops the temporary name; the linked name keeps the file */
    return result;
}

int history_open(const char *path, bool create, history_db **out, char *err, size_t err_size)
{
    *out = NULL;
    history_db *h = calloc(1, sizeof *h);
    if (!h) return fail(err, err_size, FAILED, "history: out of memory");
    if (path) snprintf(h->path, sizeof h->path, "%s", path);
    else if (history_default_path(h->path, sizeof h->path) != 0) {
        free(h);
        return fail(err, err_size, BAD_INPUT, "history: neither XDG_DATA_HOME nor HOME is set; give --db PATH");
    }
    struct stat sb;
    int rc = OK;
    if (!create && stat(h->path, &sb) != 0) rc = no_database(err, err_size, h->path);
    else if (create && make_parent_dirs(h->path) != 0)
        rc = fail(err, err_size, FAILED, "history: cannot create the folder of %s: %s", h->path, strerror(errno));
    else if (create && stat(h->path, &sb) != 0 && errno == ENOENT && (rc = create_by_link(h->path, err, err_size)) < 0)
        rc = OK; /* no hard links here: created in place below */
    if (rc != OK) {
        free(h);
        return rc;
    }
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(h->path, &h->db, flags, NULL) != SQLITE_OK) {
        rc = db_fail(h, err, err_size, "cannot open");
        history_close(h);
        return rc;
    }
    sqlite3_busy_timeout(h->db, BUSY_TIMEOUT_MS); /* concurrent writers wait their turn */
    sqlite3_create_function(h->db, "avk_device_match", 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_device_match, NULL, NULL);
    sqlite3_create_function(h->db, "avk_case_match", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_case_match, NULL, NULL);
    /* writers switch to WAL before any schema work: the schema's own transaction then never
     * meets a mode switch (readers leave the mode alone: they may lack write access) */
    if (create) rc = ensure_wal(h, err, err_size);
    if (rc == OK) rc = ensure_schema(h, create, err, err_size);
    if (rc == OK && sqlite3_exec(h->db, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON", NULL, NULL, NULL) != SQLITE_OK)
        rc = db_fail(h, err, err_size, "cannot configure");
    if (rc != OK) {
        history_close(h);
        return rc;
    }
    *out = h;
    return OK;
}

void history_close(history_db *db)
{
    if (!db) return;
    sqlite3_close(db->db);
    free(db);
}

const char *history_path(const history_db *db) { return db->path; }

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s && *s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, i);
}

static void bind_real(sqlite3_stmt *st, int i, double v)
{
    if (isfinite(v)) sqlite3_bind_double(st, i, v);
    else sqlite3_bind_null(st, i);
}

static int insert_run(history_db *h, const char *raw_json, const results_run *run, long long *run_id)
{
    static const char sql[] = "INSERT INTO runs (created, imported, attnvk_version, git_commit, hostname, host_os, cpu,"
                              " command, suite, format_version, record_count, raw_json)"
                              " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    char now[32];
    time_t t = time(NULL);
    struct tm tm;
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
    bind_text(st, 1, run->created[0] ? run->created : now);
    bind_text(st, 2, now);
    bind_text(st, 3, run->attnvk_version);
    bind_text(st, 4, run->git_commit);
    bind_text(st, 5, run->hostname);
    bind_text(st, 6, run->host_os);
    bind_text(st, 7, run->cpu);
    bind_text(st, 8, run->command);
    bind_text(st, 9, run->suite);
    sqlite3_bind_int(st, 10, run->format_version);
    sqlite3_bind_int(st, 11, run->record_count);
    sqlite3_bind_text(st, 12, raw_json, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    *run_id = sqlite3_last_insert_rowid(h->db);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int insert_records(history_db *h, const results_run *run, long long run_id)
{
    static const char sql[] =
        "INSERT INTO records (run_id, seq, implementation, api, device_name, device_uuid, device_group, driver_version,"
        " case_name, batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal, dtype, layout, scale, status, reason,"
        " variant, median_ms, std_ms, p95_ms, tflops, memory_bytes, rel_l2, passed, speedup_vs_vendor, vendor_reference)"
        " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25,?26,?27,?28,"
        "?29,?30,?31)";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    int rc = SQLITE_DONE;
    for (int i = 0; i < run->record_count && rc == SQLITE_DONE; ++i) {
        const results_record *r = &run->records[i];
        const results_case *k = &r->kase;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_int(st, 2, i);
        bind_text(st, 3, r->implementation);
        bind_text(st, 4, r->api);
        bind_text(st, 5, r->device_name);
        bind_text(st, 6, r->device_uuid);
        bind_text(st, 7, r->group);
        bind_text(st, 8, r->driver_version);
        bind_text(st, 9, k->name);
        long ints[] = {k->batch, k->heads, k->kv_heads, k->seq_q, k->seq_kv, k->head_dim, k->causal};
        for (int j = 0; j < 7; ++j) sqlite3_bind_int64(st, 10 + j, ints[j]);
        bind_text(st, 17, k->dtype);
        bind_text(st, 18, k->layout);
        bind_real(st, 19, k->scale);
        bind_text(st, 20, result_status_name(r->status));
        bind_text(st, 21, r->reason);
        bind_text(st, 22, r->variant);
        bool timed = r->stats.present;
        bind_real(st, 23, timed ? r->stats.median_ms : NAN);
        bind_real(st, 24, timed ? r->stats.std_ms : NAN);
        bind_real(st, 25, timed ? r->stats.p95_ms : NAN);
        bind_real(st, 26, r->tflops);
        bind_real(st, 27, r->memory_bytes);
        bind_real(st, 28, r->check.present ? r->check.rel_l2 : NAN);
        if (r->check.present) sqlite3_bind_int(st, 29, r->check.passed);
        else sqlite3_bind_null(st, 29);
        bind_real(st, 30, r->speedup_vs_vendor);
        bind_text(st, 31, r->vendor_reference);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Lets the tests stop a writer between its rows and its COMMIT, or make the COMMIT fail. */
static bool test_hook_before_commit(void)
{
    const char *hook = getenv(HISTORY_TEST_HOOK_ENV);
    if (!hook) return true;
    if (strcmp(hook, "exit-before-commit") == 0) _exit(86);
    if (strcmp(hook, "pause-before-commit") == 0) {
        fprintf(stderr, "history: paused before commit\n");
        fflush(stderr);
        sleep(60);
    }
    return strcmp(hook, "fail-commit") != 0;
}

int history_import(history_db *h, const char *raw_json, const results_run *run, long long *run_id, char *err, size_t err_size)
{
    long long id = 0;
    if (sqlite3_exec(h->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) return db_fail(h, err, err_size, "cannot lock");
    if (insert_run(h, raw_json, run, &id) != 0 || insert_records(h, run, id) != 0) {
        int rc = db_fail(h, err, err_size, "cannot store the run");
        sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    if (!test_hook_before_commit()) {
        sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
        return fail(err, err_size, FAILED, "history %s: cannot commit: failed by %s", h->path, HISTORY_TEST_HOOK_ENV);
    }
    if (sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        int rc = db_fail(h, err, err_size, "cannot commit");
        sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    if (run_id) *run_id = id;
    return OK;
}

int history_save_results(const char *db_path, const char *json, const char *label, long long *run_id, char *err, size_t err_size)
{
    if (!json) return fail(err, err_size, BAD_INPUT, "history: no results to save");
    results_run run;
    int rc = results_parse(json, label, &run, err, err_size);
    if (rc != OK) return rc;
    history_db *h;
    rc = history_open(db_path, true, &h, err, err_size);
    if (rc == OK) rc = history_import(h, json, &run, run_id, err, err_size);
    history_close(h);
    results_free(&run);
    return rc;
}

int history_import_file(const char *db_path, const char *path, long long *run_id, char *err, size_t err_size)
{
    char *text = results_read_file(path, err, err_size);
    if (!text) return BAD_INPUT;
    int rc = history_save_results(db_path, text, path, run_id, err, err_size);
    free(text);
    return rc;
}

int history_save_or_keep(const char *db_path, const char *json, long long *run_id, char *err, size_t err_size)
{
    int rc = history_save_results(db_path, json, "the bench results", run_id, err, err_size);
    if (rc == OK || !json) return rc;
    char kept[1100];
    size_t len = strlen(err);
    if (results_keep_unsaved(json, kept, sizeof kept) == 0)
        snprintf(err + len, err_size - len, "; the results are kept in %s (attnvk history --import %s stores them)", kept, kept);
    else snprintf(err + len, err_size - len, "; and they could not be kept in a file either: %s", kept);
    return rc;
}

int history_preflight(const char *db_path, char *err, size_t err_size)
{
    char path[1024];
    if (db_path) snprintf(path, sizeof path, "%s", db_path);
    else if (history_default_path(path, sizeof path) != 0)
        return fail(err, err_size, BAD_INPUT, "history: neither XDG_DATA_HOME nor HOME is set; give --db PATH");
    if (make_parent_dirs(path) != 0)
        return fail(err, err_size, BAD_INPUT, "history: cannot create the folder of %s: %s", path, strerror(errno));
    /* the folder too: SQLite creates PATH-wal and PATH-shm beside the database */
    if (avk_check_writable(path) != ATTNVK_OK) {
        if (access(path, F_OK) == 0 && access(path, W_OK) != 0)
            return fail(err, err_size, BAD_INPUT, "history %s: the database file is read-only", path);
        return fail(err, err_size, BAD_INPUT, "history %s: its folder is not writable (SQLite creates %s-wal and -shm there): %s", path,
                    path, attnvk_last_error());
    }
    history_db *h;
    int rc = history_open(path, true, &h, err, err_size);
    if (rc != OK) return BAD_INPUT;
    if (sqlite3_db_readonly(h->db, "main") == 1) rc = fail(err, err_size, BAD_INPUT, "history %s: the database is read-only", path);
    else if (sqlite3_exec(h->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) rc = db_fail(h, err, err_size, "cannot write");
    else if (sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK) rc = db_fail(h, err, err_size, "cannot write");
    history_close(h);
    return rc == OK ? OK : BAD_INPUT;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

/* One listing row: a run's records on one device with one driver. */
typedef struct list_row {
    char id[24], created[40], device[160], apis[64], driver[64], commit[24], records[16];
} list_row;

static void print_rows(FILE *f, const list_row *rows, int n)
{
    static const list_row head = {"ID", "DATE", "DEVICE", "APIS", "DRIVER", "COMMIT", "RECORDS"};
    int w[6] = {0};
    for (int i = -1; i < n; ++i) {
        const list_row *r = i < 0 ? &head : &rows[i];
        const char *cols[6] = {r->id, r->created, r->device, r->apis, r->driver, r->commit};
        for (int c = 0; c < 6; ++c)
            if ((int)strlen(cols[c]) > w[c]) w[c] = (int)strlen(cols[c]);
    }
    for (int i = -1; i < n; ++i) {
        const list_row *r = i < 0 ? &head : &rows[i];
        fprintf(f, "%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], r->id, w[1], r->created, w[2], r->device, w[3], r->apis,
                w[4], r->driver, w[5], r->commit, r->records);
    }
}

int history_list(history_db *h, FILE *f, const char *device_spec, const char *case_spec, char *err, size_t err_size)
{
    static const char sql[] =
        "SELECT r.id, r.created, r.git_commit, x.device_name, group_concat(DISTINCT x.api), x.driver_version,"
        " count(x.run_id) FROM runs r LEFT JOIN records x ON x.run_id = r.id"
        " AND avk_device_match(?1, x.api, x.device_name, x.device_uuid) AND avk_case_match(?2, x.case_name)"
        " WHERE x.run_id IS NOT NULL OR (?1 IS NULL AND ?2 IS NULL)"
        " GROUP BY r.id, x.device_name, x.driver_version ORDER BY r.created, r.id, min(x.seq)";
    int checked = history_check_device(h, device_spec, err, err_size);
    if (checked != OK) return checked;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(h, err, err_size, "cannot query");
    bind_text(st, 1, device_spec);
    bind_text(st, 2, case_spec);
    list_row *rows = NULL;
    size_t cap = 0;
    int n = 0, runs = 0, rc;
    long long last_id = -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((size_t)n == cap) {
            size_t bigger_cap = cap ? cap * 2 : 64;
            list_row *bigger = n < INT_MAX ? realloc(rows, sizeof *rows * bigger_cap) : NULL;
            if (!bigger) break;
            rows = bigger;
            cap = bigger_cap;
        }
        list_row *r = &rows[n++];
        long long id = sqlite3_column_int64(st, 0);
        bool first = id != last_id; /* a run on several devices: id and date on its first line */
        runs += first;
        last_id = id;
        if (first) snprintf(r->id, sizeof r->id, "%lld", id);
        else r->id[0] = '\0';
        snprintf(r->created, sizeof r->created, "%s", first ? col_text(st, 1) : "");
        snprintf(r->commit, sizeof r->commit, "%s", first ? col_text(st, 2) : "");
        snprintf(r->device, sizeof r->device, "%s", sqlite3_column_type(st, 3) == SQLITE_NULL ? "(no records)" : col_text(st, 3));
        snprintf(r->apis, sizeof r->apis, "%s", col_text(st, 4));
        snprintf(r->driver, sizeof r->driver, "%s", col_text(st, 5));
        snprintf(r->records, sizeof r->records, "%d", sqlite3_column_int(st, 6));
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(rows);
        return rc == SQLITE_ROW ? fail(err, err_size, FAILED, "history: out of memory") : db_fail(h, err, err_size, "cannot list runs");
    }
    print_rows(f, rows, n);
    free(rows);
    fprintf(f, "%d run%s in %s\n", runs, runs == 1 ? "" : "s", h->path);
    return OK;
}

int history_load_run(history_db *h, long long id, results_run *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h->db, "SELECT raw_json FROM runs WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
        return db_fail(h, err, err_size, "cannot query");
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) return db_fail(h, err, err_size, "cannot read a run");
        return fail(err, err_size, BAD_INPUT, "history %s: no run #%lld (see attnvk history)", h->path, id);
    }
    char label[64];
    snprintf(label, sizeof label, "run #%lld", id);
    rc = results_parse(col_text(st, 0), label, out, err, err_size);
    sqlite3_finalize(st);
    return rc;
}

/* The distinct values of a one-column query (?1 bound to spec) as a ", "-separated list. */
static void list_values(history_db *h, const char *sql, const char *spec, char *out, size_t n)
{
    out[0] = '\0';
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) return;
    bind_text(st, 1, spec);
    while (sqlite3_step(st) == SQLITE_ROW) results_list_add(out, n, col_text(st, 0));
    sqlite3_finalize(st);
    if (!out[0]) snprintf(out, n, "none");
}

int history_check_device(history_db *h, const char *device_spec, char *err, size_t err_size)
{
    if (!device_spec) return OK;
    sqlite3_stmt *st;
    static const char sql[] = "SELECT 1 FROM records WHERE avk_device_match(?1, api, device_name, device_uuid) LIMIT 1";
    if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(h, err, err_size, "cannot query");
    bind_text(st, 1, device_spec);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) return OK;
    if (rc != SQLITE_DONE) return db_fail(h, err, err_size, "cannot query");
    char devices[600];
    list_values(h, "SELECT DISTINCT api || ':' || ifnull(device_name, '') FROM records ORDER BY 1", NULL, devices, sizeof devices);
    return fail(err, err_size, BAD_INPUT, "history %s: no stored device matches '%s' (devices: %s)", h->path, device_spec, devices);
}

int history_find_driver_run(history_db *h, const char *driver, const char *device_spec, long long *run_id, char *err,
                            size_t err_size)
{
    int checked = history_check_device(h, device_spec, err, err_size);
    if (checked != OK) return checked;
    static const char sql[] = "SELECT r.id FROM runs r WHERE EXISTS (SELECT 1 FROM records x WHERE x.run_id = r.id"
                              " AND x.driver_version = ?1 AND avk_device_match(?2, x.api, x.device_name, x.device_uuid))"
                              " ORDER BY r.created DESC, r.id DESC LIMIT 1";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(h, err, err_size, "cannot query");
    sqlite3_bind_text(st, 1, driver, -1, SQLITE_TRANSIENT);
    bind_text(st, 2, device_spec);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *run_id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) return OK;
    if (rc != SQLITE_DONE) return db_fail(h, err, err_size, "cannot query");
    char drivers[600];
    list_values(h, "SELECT DISTINCT driver_version FROM records WHERE driver_version IS NOT NULL"
                   " AND avk_device_match(?1, api, device_name, device_uuid) ORDER BY 1", device_spec, drivers, sizeof drivers);
    return fail(err, err_size, BAD_INPUT, "history %s: no run with driver version '%s'%s%s (stored driver versions%s: %s)", h->path,
                driver, device_spec ? " on a device matching " : "", device_spec ? device_spec : "",
                device_spec ? " on those devices" : "", drivers);
}

/* Runs a checking query: clean is one "ok" row (expect_ok) or no row at all. */
static int check_query(history_db *h, const char *sql, bool expect_ok, char *err, size_t n)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(h, err, n, "cannot check");
    int rc = sqlite3_step(st), result = OK;
    if (rc == SQLITE_ROW && !(expect_ok && strcmp(col_text(st, 0), "ok") == 0))
        result = fail(err, n, FAILED, "history %s: %s: %s", h->path, sql, col_text(st, 0));
    else if (rc != SQLITE_ROW && rc != SQLITE_DONE) result = db_fail(h, err, n, "cannot check");
    else if (rc == SQLITE_DONE && expect_ok) result = fail(err, n, FAILED, "history %s: %s gave no answer", h->path, sql);
    sqlite3_finalize(st);
    return result;
}

int history_check(history_db *h, char *err, size_t err_size)
{
    int rc = check_query(h, "PRAGMA integrity_check", true, err, err_size);
    if (rc == OK) rc = check_query(h, "PRAGMA foreign_key_check", false, err, err_size);
    /* every stored run holds exactly the records its file had: no half-written run */
    if (rc == OK)
        rc = check_query(h,
                         "SELECT 'run #' || r.id || ' has ' || (SELECT count(*) FROM records x WHERE x.run_id = r.id)"
                         " || ' records, expected ' || r.record_count FROM runs r"
                         " WHERE r.record_count != (SELECT count(*) FROM records x WHERE x.run_id = r.id)",
                         false, err, err_size);
    return rc;
}
