/* Loads results JSON (format_version 1) into structs; strict about what the
 * readers need, lenient about what they don't (missing numbers become NAN). */
#include "results_file.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { LOAD_OK = 0, LOAD_NO_MEMORY = 1, LOAD_BAD_INPUT = 2 };

static int fail(char *err, size_t n, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t n, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && n) vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return code;
}

char *results_read_file(const char *path, char *err, size_t err_size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail(err, err_size, LOAD_BAD_INPUT, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len - 1, f);
        if (len < cap - 1) break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int read_error = ferror(f);
    fclose(f);
    if (!buf) {
        fail(err, err_size, LOAD_NO_MEMORY, "%s: out of memory", path);
        return NULL;
    }
    if (read_error) {
        free(buf);
        fail(err, err_size, LOAD_BAD_INPUT, "cannot read %s: I/O error", path);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

static void copy_str(const cJSON *obj, const char *key, char *out, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    snprintf(out, n, "%s", cJSON_IsString(v) && v->valuestring ? v->valuestring : "");
}

static double get_num(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static long get_long(const cJSON *obj, const char *key)
{
    double d = get_num(obj, key);
    return isfinite(d) ? (long)d : 0;
}

static bool get_bool(const cJSON *obj, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

/* "line L column C" of the parse error, for a message a person can act on. */
static void error_position(const char *text, const char *at, char *out, size_t n)
{
    if (!at || at < text) {
        snprintf(out, n, "near the start");
        return;
    }
    long line = 1, col = 1;
    for (const char *p = text; p < at && *p; ++p) {
        if (*p == '\n') ++line, col = 1;
        else ++col;
    }
    snprintf(out, n, "near line %ld column %ld", line, col);
}

static int parse_status(const char *s, result_status *out)
{
    static const char *names[] = {"ok", "fail", "skipped", "unavailable"};
    for (int i = 0; i < 4; ++i)
        if (strcmp(s, names[i]) == 0) {
            *out = (result_status)i;
            return 1;
        }
    return 0;
}

static void parse_case(const cJSON *c, results_case *k)
{
    copy_str(c, "name", k->name, sizeof k->name);
    k->batch = get_long(c, "batch");
    k->heads = get_long(c, "heads");
    k->kv_heads = get_long(c, "kv_heads");
    k->seq_q = get_long(c, "seq_q");
    k->seq_kv = get_long(c, "seq_kv");
    k->head_dim = get_long(c, "head_dim");
    k->causal = get_bool(c, "causal");
    copy_str(c, "dtype", k->dtype, sizeof k->dtype);
    copy_str(c, "layout", k->layout, sizeof k->layout);
    k->scale = get_num(c, "scale");
}

static void parse_stats(const cJSON *s, results_stats *st)
{
    st->present = cJSON_IsObject(s);
    st->min_ms = get_num(s, "min_ms");
    st->median_ms = get_num(s, "median_ms");
    st->mean_ms = get_num(s, "mean_ms");
    st->std_ms = get_num(s, "std_ms");
    st->p95_ms = get_num(s, "p95_ms");
    st->p99_ms = get_num(s, "p99_ms");
    st->cv = get_num(s, "cv");
    if (st->present && !isfinite(st->median_ms)) st->present = false; /* no median, no timing */
}

static int parse_record(const cJSON *r, int i, const char *label, results_record *rec, char *err, size_t n)
{
    if (!cJSON_IsObject(r)) return fail(err, n, LOAD_BAD_INPUT, "%s: records[%d] is not an object", label, i);
    static const char *required[] = {"implementation", "api", "status"};
    for (int k = 0; k < 3; ++k)
        if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, required[k])))
            return fail(err, n, LOAD_BAD_INPUT, "%s: records[%d] has no \"%s\" string", label, i, required[k]);
    const cJSON *kase = cJSON_GetObjectItemCaseSensitive(r, "case");
    if (!cJSON_IsObject(kase)) return fail(err, n, LOAD_BAD_INPUT, "%s: records[%d] has no \"case\" object", label, i);

    memset(rec, 0, sizeof *rec);
    copy_str(r, "implementation", rec->implementation, sizeof rec->implementation);
    copy_str(r, "api", rec->api, sizeof rec->api);
    copy_str(r, "device_name", rec->device_name, sizeof rec->device_name);
    copy_str(r, "device_uuid", rec->device_uuid, sizeof rec->device_uuid);
    copy_str(r, "group", rec->group, sizeof rec->group);
    if (!rec->group[0]) snprintf(rec->group, sizeof rec->group, "%s", rec->device_uuid[0] ? rec->device_uuid : rec->device_name);
    copy_str(r, "driver_version", rec->driver_version, sizeof rec->driver_version);
    rec->device_index = (int)get_long(r, "device_index");
    parse_case(kase, &rec->kase);
    const char *status = cJSON_GetObjectItemCaseSensitive(r, "status")->valuestring;
    if (!parse_status(status, &rec->status))
        return fail(err, n, LOAD_BAD_INPUT, "%s: records[%d] has unknown status \"%.40s\"", label, i, status);
    copy_str(r, "reason", rec->reason, sizeof rec->reason);
    copy_str(r, "variant", rec->variant, sizeof rec->variant);
    parse_stats(cJSON_GetObjectItemCaseSensitive(r, "stats"), &rec->stats);
    rec->flops = get_num(r, "flops");
    rec->tflops = get_num(r, "tflops");
    rec->memory_bytes = get_num(r, "memory_bytes");
    rec->speedup_vs_vendor = get_num(r, "speedup_vs_vendor");
    copy_str(r, "vendor_reference", rec->vendor_reference, sizeof rec->vendor_reference);
    const cJSON *fused = cJSON_GetObjectItemCaseSensitive(r, "fused");
    rec->fused = cJSON_IsBool(fused) ? cJSON_IsTrue(fused) : -1;
    const cJSON *check = cJSON_GetObjectItemCaseSensitive(r, "check");
    rec->check.present = cJSON_IsObject(check);
    rec->check.rel_l2 = get_num(check, "rel_l2");
    rec->check.max_abs = get_num(check, "max_abs");
    rec->check.tolerance = get_num(check, "tolerance");
    rec->check.passed = get_bool(check, "passed");
    /* A failed record's time is not a result, whatever the writer put there. */
    if (rec->status == RESULT_FAIL) rec->tflops = NAN;
    return LOAD_OK;
}

static void parse_device(const cJSON *d, results_device *dev)
{
    memset(dev, 0, sizeof *dev);
    copy_str(d, "api", dev->api, sizeof dev->api);
    copy_str(d, "name", dev->name, sizeof dev->name);
    copy_str(d, "vendor", dev->vendor, sizeof dev->vendor);
    copy_str(d, "driver_version", dev->driver_version, sizeof dev->driver_version);
    copy_str(d, "api_version", dev->api_version, sizeof dev->api_version);
    copy_str(d, "uuid", dev->uuid, sizeof dev->uuid);
    copy_str(d, "group", dev->group, sizeof dev->group);
    dev->index = (int)get_long(d, "index");
    dev->memory_bytes = get_num(d, "memory_bytes");
}

static int parse_root(const cJSON *root, const char *label, results_run *out, char *err, size_t n)
{
    if (!cJSON_IsObject(root)) return fail(err, n, LOAD_BAD_INPUT, "%s: not a results file (top level is not an object)", label);
    const cJSON *fv = cJSON_GetObjectItemCaseSensitive(root, "format_version");
    if (!cJSON_IsNumber(fv)) return fail(err, n, LOAD_BAD_INPUT, "%s: not a results file (no format_version)", label);
    if (fv->valuedouble != RESULTS_FORMAT_VERSION)
        return fail(err, n, LOAD_BAD_INPUT, "%s: unknown format_version %g (this attnvk reads %d)", label, fv->valuedouble,
                    RESULTS_FORMAT_VERSION);
    out->format_version = RESULTS_FORMAT_VERSION;
    const cJSON *records = cJSON_GetObjectItemCaseSensitive(root, "records");
    if (!cJSON_IsArray(records)) return fail(err, n, LOAD_BAD_INPUT, "%s: no \"records\" array", label);

    copy_str(root, "attnvk_version", out->attnvk_version, sizeof out->attnvk_version);
    copy_str(root, "git_commit", out->git_commit, sizeof out->git_commit);
    copy_str(root, "created", out->created, sizeof out->created);
    copy_str(root, "command", out->command, sizeof out->command);
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(root, "host");
    copy_str(host, "os", out->host_os, sizeof out->host_os);
    copy_str(host, "hostname", out->hostname, sizeof out->hostname);
    copy_str(host, "cpu", out->cpu, sizeof out->cpu);
    const cJSON *settings = cJSON_GetObjectItemCaseSensitive(root, "settings");
    copy_str(settings, "suite", out->suite, sizeof out->suite);
    copy_str(settings, "dtype", out->dtype, sizeof out->dtype);
    copy_str(settings, "layout", out->layout, sizeof out->layout);

    const cJSON *devices = cJSON_GetObjectItemCaseSensitive(root, "devices");
    int nd = cJSON_IsArray(devices) ? cJSON_GetArraySize(devices) : 0;
    if (nd > 0 && !(out->devices = calloc((size_t)nd, sizeof *out->devices)))
        return fail(err, n, LOAD_NO_MEMORY, "%s: out of memory", label);
    for (int i = 0; i < nd; ++i) parse_device(cJSON_GetArrayItem(devices, i), &out->devices[out->device_count++]);

    int nr = cJSON_GetArraySize(records);
    if (nr > 0 && !(out->records = calloc((size_t)nr, sizeof *out->records)))
        return fail(err, n, LOAD_NO_MEMORY, "%s: out of memory", label);
    const cJSON *r;
    cJSON_ArrayForEach(r, records)
    {
        int rc = parse_record(r, out->record_count, label, &out->records[out->record_count], err, n);
        if (rc != LOAD_OK) return rc;
        ++out->record_count;
    }
    return LOAD_OK;
}

int results_parse(const char *text, const char *label, results_run *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    snprintf(out->label, sizeof out->label, "%s", label);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        char where[64];
        error_position(text, cJSON_GetErrorPtr(), where, sizeof where);
        return fail(err, err_size, LOAD_BAD_INPUT, "%s: invalid JSON %s", label, where);
    }
    int rc = parse_root(root, label, out, err, err_size);
    cJSON_Delete(root);
    if (rc != LOAD_OK) results_free(out);
    return rc;
}

int results_load_file(const char *path, results_run *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    char *text = results_read_file(path, err, err_size);
    if (!text) return LOAD_BAD_INPUT;
    int rc = results_parse(text, path, out, err, err_size);
    free(text);
    return rc;
}

void results_free(results_run *run)
{
    free(run->devices);
    free(run->records);
    run->devices = NULL;
    run->records = NULL;
    run->device_count = run->record_count = 0;
}

const char *result_status_name(result_status s)
{
    switch (s) {
    case RESULT_OK: return "ok";
    case RESULT_FAIL: return "fail";
    case RESULT_SKIPPED: return "skipped";
    case RESULT_UNAVAILABLE: return "unavailable";
    }
    return "?";
}

static bool same_scale(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-6 * fmax(fabs(a), fabs(b)); /* survives a print/parse round trip */
}

bool results_same_case(const results_case *a, const results_case *b)
{
    return strcmp(a->name, b->name) == 0 && a->batch == b->batch && a->heads == b->heads && a->kv_heads == b->kv_heads &&
           a->seq_q == b->seq_q && a->seq_kv == b->seq_kv && a->head_dim == b->head_dim && a->causal == b->causal &&
           strcmp(a->dtype, b->dtype) == 0 && strcmp(a->layout, b->layout) == 0 && same_scale(a->scale, b->scale);
}

bool results_same_device(const results_record *a, const results_record *b)
{
    if (a->device_uuid[0] && b->device_uuid[0]) return strcasecmp(a->device_uuid, b->device_uuid) == 0;
    return strcmp(a->device_name, b->device_name) == 0;
}

bool results_same_key(const results_record *a, const results_record *b)
{
    return strcmp(a->implementation, b->implementation) == 0 && strcmp(a->api, b->api) == 0 &&
           results_same_device(a, b) && results_same_case(&a->kase, &b->kase);
}

void results_case_label(const results_case *c, char *out, size_t n)
{
    if (c->name[0]) {
        snprintf(out, n, "%s", c->name);
        return;
    }
    snprintf(out, n, "b%ld h%ld/%ld q%ld kv%ld d%ld%s %s %s", c->batch, c->heads, c->kv_heads, c->seq_q, c->seq_kv,
             c->head_dim, c->causal ? " causal" : "", c->dtype, c->layout);
}

bool results_is_vendor_native(const char *implementation)
{
    static const char *vendor[] = {"cudnn", "cublas", "clblast", "rocblas"};
    for (size_t i = 0; i < sizeof vendor / sizeof *vendor; ++i)
        if (strcmp(implementation, vendor[i]) == 0) return true;
    return false;
}

bool results_is_unfused(const results_record *r)
{
    if (r->fused >= 0) return r->fused == 0;
    return strcmp(r->implementation, "cublas") == 0 || strcmp(r->implementation, "clblast") == 0 ||
           strcmp(r->implementation, "rocblas") == 0;
}
