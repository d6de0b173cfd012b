/* Loads results JSON (format_version 1) into structs; strict about what the
 * readers need, lenient about what they don't (missing numbers become NAN). */
#include "results_file.h"
#include "bench_stats.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
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

/* The first problem met while reading, named by the path of the value
 * ("x.json: records[3].case.batch must be an integer from 1 to 2147483647"). */
typedef struct reader {
    const char *label;
    char *err;
    size_t n;
    int rc;
} reader;

static void bad(reader *rd, const char *where, const char *key, const char *problem, ...) __attribute__((format(printf, 4, 5)));
static void bad(reader *rd, const char *where, const char *key, const char *problem, ...)
{
    if (rd->rc != LOAD_OK) return;
    char what[160];
    va_list ap;
    va_start(ap, problem);
    vsnprintf(what, sizeof what, problem, ap);
    va_end(ap);
    rd->rc = fail(rd->err, rd->n, LOAD_BAD_INPUT, "%s: %s%s%s %s", rd->label, where, where[0] && key[0] ? "." : "", key, what);
    /* one line, whatever the quoted value held ("\n" is a valid JSON string) */
    for (char *p = rd->err; p && *p; ++p)
        if ((unsigned char)*p < 0x20) *p = '?';
}

/* The value at key; NULL when absent or JSON null (the writer's "no value"). */
static const cJSON *field(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    return cJSON_IsNull(v) ? NULL : v;
}

static void text(reader *rd, const cJSON *obj, const char *where, const char *key, char *out, size_t n, bool required)
{
    const cJSON *v = field(obj, key);
    out[0] = '\0';
    if (!v && required) bad(rd, where, key, "is missing");
    else if (v && !cJSON_IsString(v)) bad(rd, where, key, "must be a string");
    else if (v) snprintf(out, n, "%s", v->valuestring);
}

/* A number >= 0 (> 0 when positive); NAN when absent or null. cJSON reads 1e999 as
 * infinity: refused like any value a measurement cannot have. */
static double number(reader *rd, const cJSON *obj, const char *where, const char *key, bool positive)
{
    const cJSON *v = field(obj, key);
    if (!v) return NAN;
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!isfinite(d) || d < 0 || (positive && d == 0)) {
        bad(rd, where, key, "must be a finite number %s 0", positive ? ">" : ">=");
        return NAN;
    }
    return d;
}

/* A whole number in [lo, hi]; fallback when absent and not required. Checked before
 * any conversion: a double out of long's range has no defined conversion. */
static long integer(reader *rd, const cJSON *obj, const char *where, const char *key, long lo, long hi, bool required, long fallback)
{
    const cJSON *v = field(obj, key);
    if (!v) {
        if (required) bad(rd, where, key, "is missing");
        return fallback;
    }
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!(d >= (double)lo && d <= (double)hi) || d != floor(d)) {
        bad(rd, where, key, "must be an integer from %ld to %ld", lo, hi);
        return fallback;
    }
    return (long)d;
}

static bool flag(reader *rd, const cJSON *obj, const char *where, const char *key, bool required)
{
    const cJSON *v = field(obj, key);
    if (!v && required) bad(rd, where, key, "is missing");
    else if (v && !cJSON_IsBool(v)) bad(rd, where, key, "must be true or false");
    return cJSON_IsTrue(v);
}

/* An object member: NULL when absent or null (allowed unless required), else it must be an object. */
static const cJSON *object(reader *rd, const cJSON *obj, const char *where, const char *key, bool required)
{
    const cJSON *v = field(obj, key);
    if (!v && required) bad(rd, where, key, "is missing");
    else if (v && !cJSON_IsObject(v)) bad(rd, where, key, "must be an object");
    return cJSON_IsObject(v) ? v : NULL;
}

/* "line L column C" of the parse error, for a message a person can act on. */
static void error_position(const char *text, size_t len, const char *at, char *out, size_t n)
{
    if (!at || at < text || at > text + len) {
        snprintf(out, n, "near the start");
        return;
    }
    long line = 1, col = 1;
    for (const char *p = text; p < at; ++p) {
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

/* Sizes are what attnvk_problem holds (int): products of two of them fit a long long. */
/* "2048,4096" from an array of positive integers (at most 8, as the writer's groups). */
static void int_list(reader *rd, const cJSON *obj, const char *where, const char *key, char *out, size_t n)
{
    const cJSON *v = field(obj, key), *item;
    size_t len = 0;
    out[0] = '\0';
    if (!v) return;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > 8) {
        bad(rd, where, key, "must be an array of at most 8 integers");
        return;
    }
    cJSON_ArrayForEach(item, v) {
        double d = cJSON_IsNumber(item) ? item->valuedouble : NAN;
        if (!(d >= 1 && d <= RESULTS_MAX_SIZE) || d != floor(d)) {
            bad(rd, where, key, "must hold integers from 1 to %ld", RESULTS_MAX_SIZE);
            return;
        }
        if (len < n) len += (size_t)snprintf(out + len, n - len, "%s%ld", len ? "," : "", (long)d);
    }
}

/* The case's sparse pattern (results_case.pattern): a dilation or a generated block layout. */
static void parse_pattern(reader *rd, const cJSON *c, const char *where, results_case *k)
{
    char segments[48], rates[48], layout[40];
    int_list(rd, c, where, "dilated_segments", segments, sizeof segments);
    int_list(rd, c, where, "dilated_rates", rates, sizeof rates);
    text(rd, c, where, "block_layout", layout, sizeof layout, false);
    k->pattern[0] = '\0';
    if (segments[0]) snprintf(k->pattern, sizeof k->pattern, "dilated %s:%s", segments, rates);
    else if (layout[0])
        snprintf(k->pattern, sizeof k->pattern, "block %s %ldx%ld", layout,
                 integer(rd, c, where, "block_q", 1, RESULTS_MAX_SIZE, false, 0),
                 integer(rd, c, where, "block_k", 1, RESULTS_MAX_SIZE, false, 0));
}

static void parse_vs_dense(reader *rd, const cJSON *r, const char *where, struct results_vs_dense *x)
{
    const cJSON *v = object(rd, r, where, "vs_dense", false);
    char sub[160];
    snprintf(sub, sizeof sub, "%s.vs_dense", where);
    x->present = v != NULL;
    text(rd, v, sub, "dense_case", x->dense_case, sizeof x->dense_case, x->present);
    x->dense_ms = number(rd, v, sub, "dense_ms", true);
    x->speedup = number(rd, v, sub, "speedup", true);
    x->memory_ratio = number(rd, v, sub, "memory_ratio", true);
    if (x->present && !(isfinite(x->dense_ms) && isfinite(x->speedup))) bad(rd, sub, "", "needs dense_ms and speedup");
}

static void parse_case(reader *rd, const cJSON *c, const char *where, results_case *k)
{
    text(rd, c, where, "name", k->name, sizeof k->name, false);
    long *sizes[] = {&k->batch, &k->heads, &k->kv_heads, &k->seq_q, &k->seq_kv, &k->head_dim};
    static const char *keys[] = {"batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim"};
    for (int i = 0; i < 6; ++i) *sizes[i] = integer(rd, c, where, keys[i], 1, RESULTS_MAX_SIZE, true, 0);
    k->causal = flag(rd, c, where, "causal", true);
    text(rd, c, where, "dtype", k->dtype, sizeof k->dtype, true);
    text(rd, c, where, "layout", k->layout, sizeof k->layout, true);
    k->scale = number(rd, c, where, "scale", true);
    parse_pattern(rd, c, where, k);
}

static void parse_stats(reader *rd, const cJSON *s, const char *where, results_stats *st)
{
    st->present = s != NULL;
    static const char *keys[] = {"min_ms", "median_ms", "mean_ms", "std_ms", "p95_ms", "p99_ms", "cv"};
    double *values[] = {&st->min_ms, &st->median_ms, &st->mean_ms, &st->std_ms, &st->p95_ms, &st->p99_ms, &st->cv};
    for (int i = 0; i < 7; ++i) *values[i] = number(rd, s, where, keys[i], false);
    if (st->present && !isfinite(st->median_ms)) st->present = false; /* no median, no timing */
}


/* samples_ms: the count, the largest, and p5 (p95 too where the file left it null) from 20 on. */
static void parse_samples(reader *rd, const cJSON *r, const char *where, results_stats *st)
{
    st->p5_ms = st->max_ms = NAN;
    st->sample_count = 0;
    const cJSON *v = field(r, "samples_ms");
    if (!v) return;
    if (!cJSON_IsArray(v)) {
        bad(rd, where, "samples_ms", "must be an array");
        return;
    }
    int n = cJSON_GetArraySize(v), k = 0;
    if (n == 0) return;
    double *sorted = malloc(sizeof *sorted * (size_t)n);
    if (!sorted) {
        if (rd->rc == LOAD_OK) rd->rc = fail(rd->err, rd->n, LOAD_NO_MEMORY, "%s: out of memory", rd->label);
        return;
    }
    const cJSON *item;
    cJSON_ArrayForEach(item, v)
    {
        double d = cJSON_IsNumber(item) ? item->valuedouble : NAN;
        if (!isfinite(d) || d < 0) {
            bad(rd, where, "samples_ms", "must hold finite numbers >= 0");
            break;
        }
        sorted[k++] = d;
    }
    if (k == n) {
        bench_sort_samples(sorted, n);
        st->sample_count = n;
        st->max_ms = sorted[n - 1];
        if (n >= BENCH_MIN_SAMPLES_FOR_TAIL) { /* as the writer: fewer cannot tell a p5 or p95 from the extremes */
            st->p5_ms = bench_percentile(sorted, n, 0.05);
            if (!isfinite(st->p95_ms)) st->p95_ms = bench_percentile(sorted, n, 0.95);
        }
    }
    free(sorted);
}

static void parse_roofline(reader *rd, const cJSON *o, const char *where, results_roofline *rl)
{
    rl->present = o != NULL;
    rl->arithmetic_intensity = number(rd, o, where, "arithmetic_intensity", true);
    rl->compute_peak_tflops = number(rd, o, where, "compute_peak_tflops", true);
    rl->attainable_tflops = number(rd, o, where, "attainable_tflops", true);
    rl->fraction = number(rd, o, where, "fraction", false);
    text(rd, o, where, "bound", rl->bound, sizeof rl->bound, false);
    text(rd, o, where, "compute_path", rl->compute_path, sizeof rl->compute_path, false);
    if (!isfinite(rl->arithmetic_intensity)) rl->present = false; /* no intensity, no place on the roofline */
}

/* One start's times; have is false for null (the start gave no result). */
static void parse_cold_times(reader *rd, const cJSON *o, const char *where, bool *have, bench_cold_times *t)
{
    *have = o != NULL;
    t->context_ms = number(rd, o, where, "context_ms", false);
    t->open_ms = number(rd, o, where, "open_ms", false);
    t->prepare_ms = number(rd, o, where, "prepare_ms", false);
    t->first_dispatch_ms = number(rd, o, where, "first_dispatch_ms", false);
    t->first_result_ms = number(rd, o, where, "first_result_ms", false);
    if (o && !isfinite(t->first_result_ms)) bad(rd, where, "first_result_ms", "is missing");
}

/* The record's cold_start (`attnvk bench --cold`, cold_start.h); c->present false without one. */
static void parse_cold(reader *rd, const cJSON *r, const char *where, bench_cold_result *c)
{
    char sub[64], part[96];
    memset(c, 0, sizeof *c);
    const cJSON *o = object(rd, r, where, "cold_start", false);
    if (!o) return;
    snprintf(sub, sizeof sub, "%s.cold_start", where);
    c->present = true;
    snprintf(part, sizeof part, "%s.cold", sub);
    parse_cold_times(rd, object(rd, o, sub, "cold", false), part, &c->have_cold, &c->cold);
    snprintf(part, sizeof part, "%s.warm", sub);
    parse_cold_times(rd, object(rd, o, sub, "warm", false), part, &c->have_warm, &c->warm);
    c->cache_bytes = number(rd, o, sub, "cache_bytes", false);
    c->runs = (int)integer(rd, o, sub, "runs", 1, BENCH_COLD_MAX_RUNS, false, 1);
    text(rd, o, sub, "error", c->error, sizeof c->error, false);
    const cJSON *parts = object(rd, o, sub, "cache_parts", false), *p;
    snprintf(part, sizeof part, "%s.cache_parts", sub);
    cJSON_ArrayForEach(p, parts)
    {
        double bytes = number(rd, parts, part, p->string, false);
        if (c->nparts < BENCH_COLD_PARTS && isfinite(bytes)) {
            snprintf(c->parts[c->nparts].name, sizeof c->parts[c->nparts].name, "%s", p->string);
            c->parts[c->nparts++].bytes = bytes;
        }
    }
}

static void parse_record(reader *rd, const cJSON *r, int i, results_record *rec)
{
    char where[48], sub[64];
    snprintf(where, sizeof where, "records[%d]", i);
    memset(rec, 0, sizeof *rec);
    if (!cJSON_IsObject(r)) {
        bad(rd, where, "", "is not an object");
        return;
    }
    text(rd, r, where, "implementation", rec->implementation, sizeof rec->implementation, true);
    text(rd, r, where, "api", rec->api, sizeof rec->api, true);
    char status[16];
    text(rd, r, where, "status", status, sizeof status, true);
    if (rd->rc == LOAD_OK && !parse_status(status, &rec->status)) bad(rd, where, "status", "is unknown: \"%.40s\"", status);
    text(rd, r, where, "device_name", rec->device_name, sizeof rec->device_name, false);
    text(rd, r, where, "device_uuid", rec->device_uuid, sizeof rec->device_uuid, false);
    text(rd, r, where, "group", rec->group, sizeof rec->group, false);
    if (!rec->group[0]) snprintf(rec->group, sizeof rec->group, "%s", rec->device_uuid[0] ? rec->device_uuid : rec->device_name);
    text(rd, r, where, "driver_version", rec->driver_version, sizeof rec->driver_version, false);
    rec->device_index = (int)integer(rd, r, where, "device_index", 0, INT_MAX, false, 0);
    snprintf(sub, sizeof sub, "%s.case", where);
    parse_case(rd, object(rd, r, where, "case", true), sub, &rec->kase);
    text(rd, r, where, "reason", rec->reason, sizeof rec->reason, false);
    text(rd, r, where, "variant", rec->variant, sizeof rec->variant, false);
    snprintf(sub, sizeof sub, "%s.stats", where);
    parse_stats(rd, object(rd, r, where, "stats", false), sub, &rec->stats);
    parse_samples(rd, r, where, &rec->stats);
    rec->tile_br = (int)integer(rd, r, where, "tile_br", 0, INT_MAX, false, 0);
    rec->tile_bc = (int)integer(rd, r, where, "tile_bc", 0, INT_MAX, false, 0);
    rec->gbytes_per_s = number(rd, r, where, "gbytes_per_s", false);
    snprintf(sub, sizeof sub, "%s.roofline", where);
    parse_roofline(rd, object(rd, r, where, "roofline", false), sub, &rec->roofline);
    rec->flops = number(rd, r, where, "flops", false);
    rec->tflops = number(rd, r, where, "tflops", false);
    rec->memory_bytes = number(rd, r, where, "memory_bytes", false);
    rec->speedup_vs_vendor = number(rd, r, where, "speedup_vs_vendor", true);
    text(rd, r, where, "vendor_reference", rec->vendor_reference, sizeof rec->vendor_reference, false);
    text(rd, r, where, "pass", rec->pass, sizeof rec->pass, false);
    if (!rec->pass[0]) snprintf(rec->pass, sizeof rec->pass, "fwd");
    rec->fused = field(r, "fused") ? flag(rd, r, where, "fused", false) : -1;
    const cJSON *launches = field(r, "launches");
    rec->launches = launches && !cJSON_IsNull(launches) ? (int)integer(rd, r, where, "launches", 1, 1000, false, 1) : 1;
    const cJSON *check = object(rd, r, where, "check", false);
    snprintf(sub, sizeof sub, "%s.check", where);
    rec->check.present = check != NULL;
    rec->check.rel_l2 = number(rd, check, sub, "rel_l2", false);
    rec->check.max_abs = number(rd, check, sub, "max_abs", false);
    rec->check.tolerance = number(rd, check, sub, "tolerance", true);
    rec->check.rel_l2_dequantized = number(rd, check, sub, "rel_l2_dequantized", false); /* the FP8 forward's */
    rec->check.passed = flag(rd, check, sub, "passed", false);
    parse_cold(rd, r, where, &rec->cold_start);
    parse_vs_dense(rd, r, where, &rec->vs_dense);
    /* A failed record's time is not a result, whatever the writer put there. */
    if (rec->status == RESULT_FAIL) rec->tflops = NAN;
    if (rec->status == RESULT_FAIL) rec->roofline.fraction = NAN;
}

const char *results_peak_field_name(results_peak_field f)
{
    static const char *names[PEAK_FIELD_COUNT] = {"read", "copy", "fma_f32", "fma_f16", "matrix"};
    return f >= 0 && f < PEAK_FIELD_COUNT ? names[f] : "?";
}

static void parse_peak(reader *rd, const cJSON *p, const char *where, results_device *dev)
{
    dev->has_peak = p != NULL;
    for (int f = 0; f < PEAK_FIELD_COUNT; ++f) {
        char sub[160];
        const char *key = results_peak_field_name((results_peak_field)f);
        snprintf(sub, sizeof sub, "%s.%s", where, key);
        const cJSON *e = object(rd, p, where, key, false);
        results_peak_entry *x = &dev->peak[f];
        x->value = number(rd, e, sub, "value", true);
        text(rd, e, sub, "unit", x->unit, sizeof x->unit, false);
        text(rd, e, sub, "state", x->state, sizeof x->state, false);
        text(rd, e, sub, "path", x->path, sizeof x->path, false);
        text(rd, e, sub, "reason", x->reason, sizeof x->reason, false);
    }
}

static void parse_device(reader *rd, const cJSON *d, int i, results_device *dev)
{
    char where[48];
    snprintf(where, sizeof where, "devices[%d]", i);
    memset(dev, 0, sizeof *dev);
    if (!cJSON_IsObject(d)) {
        bad(rd, where, "", "is not an object");
        return;
    }
    text(rd, d, where, "api", dev->api, sizeof dev->api, false);
    text(rd, d, where, "name", dev->name, sizeof dev->name, false);
    text(rd, d, where, "vendor", dev->vendor, sizeof dev->vendor, false);
    text(rd, d, where, "driver_version", dev->driver_version, sizeof dev->driver_version, false);
    text(rd, d, where, "api_version", dev->api_version, sizeof dev->api_version, false);
    text(rd, d, where, "uuid", dev->uuid, sizeof dev->uuid, false);
    text(rd, d, where, "group", dev->group, sizeof dev->group, false);
    dev->index = (int)integer(rd, d, where, "index", 0, INT_MAX, false, 0);
    dev->memory_bytes = number(rd, d, where, "memory_bytes", false);
    text(rd, d, where, "type", dev->type, sizeof dev->type, false);
    char sub[96];
    snprintf(sub, sizeof sub, "%s.peak", where);
    parse_peak(rd, object(rd, d, where, "peak", false), sub, dev);
}

/* An array member that may be absent (required: must be there); its length, within max. */
static int array(reader *rd, const cJSON *root, const char *key, bool required, int max, const cJSON **out)
{
    const cJSON *v = field(root, key);
    *out = NULL;
    if (!v) {
        if (required) rd->rc = fail(rd->err, rd->n, LOAD_BAD_INPUT, "%s: no \"%s\" array", rd->label, key);
        return 0;
    }
    if (!cJSON_IsArray(v)) {
        bad(rd, "", key, "must be an array");
        return 0;
    }
    int count = cJSON_GetArraySize(v);
    if (count > max) {
        bad(rd, "", key, "has %d entries; at most %d are read", count, max);
        return 0;
    }
    *out = v;
    return count;
}

static int parse_root(const cJSON *root, reader *rd, results_run *out)
{
    const char *label = rd->label;
    if (!cJSON_IsObject(root)) return fail(rd->err, rd->n, LOAD_BAD_INPUT, "%s: not a results file (top level is not an object)", label);
    const cJSON *fv = cJSON_GetObjectItemCaseSensitive(root, "format_version");
    if (!cJSON_IsNumber(fv)) return fail(rd->err, rd->n, LOAD_BAD_INPUT, "%s: not a results file (no format_version)", label);
    if (fv->valuedouble != RESULTS_FORMAT_VERSION)
        return fail(rd->err, rd->n, LOAD_BAD_INPUT, "%s: unknown format_version %g (this attnvk reads %d)", label, fv->valuedouble,
                    RESULTS_FORMAT_VERSION);
    out->format_version = RESULTS_FORMAT_VERSION;
    const cJSON *records, *devices;
    int nr = array(rd, root, "records", true, RESULTS_MAX_RECORDS, &records);
    int nd = array(rd, root, "devices", false, RESULTS_MAX_RECORDS, &devices);

    text(rd, root, "", "attnvk_version", out->attnvk_version, sizeof out->attnvk_version, false);
    text(rd, root, "", "git_commit", out->git_commit, sizeof out->git_commit, false);
    text(rd, root, "", "created", out->created, sizeof out->created, false);
    text(rd, root, "", "command", out->command, sizeof out->command, false);
    const cJSON *host = object(rd, root, "", "host", false);
    text(rd, host, "host", "os", out->host_os, sizeof out->host_os, false);
    text(rd, host, "host", "hostname", out->hostname, sizeof out->hostname, false);
    text(rd, host, "host", "cpu", out->cpu, sizeof out->cpu, false);
    const cJSON *settings = object(rd, root, "", "settings", false);
    text(rd, settings, "settings", "suite", out->suite, sizeof out->suite, false);
    text(rd, settings, "settings", "dtype", out->dtype, sizeof out->dtype, false);
    text(rd, settings, "settings", "layout", out->layout, sizeof out->layout, false);
    if (rd->rc != LOAD_OK) return rd->rc;

    if (nd > 0 && !(out->devices = calloc((size_t)nd, sizeof *out->devices)))
        return fail(rd->err, rd->n, LOAD_NO_MEMORY, "%s: out of memory", label);
    const cJSON *item;
    cJSON_ArrayForEach(item, devices)
    {
        parse_device(rd, item, out->device_count, &out->devices[out->device_count]);
        if (rd->rc != LOAD_OK) return rd->rc;
        ++out->device_count;
    }
    if (nr > 0 && !(out->records = calloc((size_t)nr, sizeof *out->records)))
        return fail(rd->err, rd->n, LOAD_NO_MEMORY, "%s: out of memory", label);
    cJSON_ArrayForEach(item, records)
    {
        results_record *rec = &out->records[out->record_count];
        parse_record(rd, item, out->record_count, rec);
        if (rd->rc != LOAD_OK) return rd->rc;
        ++out->record_count;
    }
    return LOAD_OK;
}

int results_parse_buffer(const char *text, size_t len, const char *label, results_run *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    snprintf(out->label, sizeof out->label, "%s", label);
    const char *end = NULL;
    cJSON *root = text ? cJSON_ParseWithLengthOpts(text, len, &end, 0) : NULL;
    if (root && end) { /* only white space may follow the value (a NUL byte may not) */
        while (end < text + len && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')) ++end;
        if (end < text + len) {
            cJSON_Delete(root);
            root = NULL;
        }
    } else {
        end = text && len ? cJSON_GetErrorPtr() : NULL; /* cJSON leaves it stale for no input */
    }
    if (!root) {
        char where[64];
        error_position(text, len, end, where, sizeof where);
        return fail(err, err_size, LOAD_BAD_INPUT, "%s: invalid JSON %s", label, where);
    }
    reader rd = {label, err, err_size, LOAD_OK};
    int rc = parse_root(root, &rd, out);
    cJSON_Delete(root);
    if (rc != LOAD_OK) results_free(out);
    return rc;
}

int results_parse(const char *text, const char *label, results_run *out, char *err, size_t err_size)
{
    return results_parse_buffer(text, text ? strlen(text) : 0, label, out, err, err_size);
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
           strcmp(a->pass, b->pass) == 0 && results_same_device(a, b) && results_same_case(&a->kase, &b->kase);
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
