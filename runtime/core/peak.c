/* The peak record: cache format, lookup, and measurement through the backend
 * hooks (read_bandwidth, measure_peak). See core/peak.h. */
#include "core/peak.h"
#include "core/backend.h"
#include "core/bandwidth.h"
#include "core/cache.h"
#include "core/error.h"
#include "core/registry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bumped when a measuring kernel changes enough to make old numbers stale. */
enum { PEAK_METHOD_VERSION = 1 };

static const char *const field_names[AVK_PEAK_FIELD_COUNT] = {"read", "copy", "fma_f32", "fma_f16", "matrix"};

const char *avk_peak_field_name(avk_peak_field f)
{
    return f >= 0 && f < AVK_PEAK_FIELD_COUNT ? field_names[f] : "?";
}

const char *avk_peak_field_unit(avk_peak_field f)
{
    return f == AVK_PEAK_FIELD_READ || f == AVK_PEAK_FIELD_COPY ? "GB/s" : "GFLOP/s";
}

uint64_t avk_peak_key(const attnvk_device_info *info)
{
    return avk_device_cache_key("attnvk-peak", PEAK_METHOD_VERSION, info);
}

/* A kept answer: measured, or known to be impossible on this device and driver. */
static int settled(const avk_peak_entry *e) { return e->status == ATTNVK_OK || e->status == ATTNVK_ERROR_UNSUPPORTED; }

static void set_note(avk_peak_entry *e, attnvk_status s, const char *note)
{
    e->status = s;
    e->value = 0;
    snprintf(e->note, sizeof e->note, "%s", note ? note : "");
}

static void clear(avk_peak *p)
{
    memset(p, 0, sizeof *p);
    for (int f = 0; f < AVK_PEAK_FIELD_COUNT; ++f) set_note(&p->e[f], ATTNVK_ERROR_UNAVAILABLE, "not measured yet");
}

/* Tabs and newlines would break the line format; paths and notes are one-line text. */
static void clean(char *s)
{
    for (; *s; ++s)
        if (*s == '\t' || *s == '\n' || *s == '\r') *s = ' ';
}

/* "attnvk-peak 1\n" then one line per field but read (core/bandwidth.h keeps that):
 * name \t status \t value \t path \t note */
int avk_peak_format(const avk_peak *p, char *out, size_t n)
{
    size_t len = 0;
    int w = snprintf(out, n, "attnvk-peak %d\n", PEAK_METHOD_VERSION);
    if (w < 0 || (size_t)w >= n) return 0;
    len = (size_t)w;
    for (int f = AVK_PEAK_FIELD_COPY; f < AVK_PEAK_FIELD_COUNT; ++f) {
        avk_peak_entry e = p->e[f];
        if (!settled(&e)) continue;
        clean(e.path);
        clean(e.note);
        w = snprintf(out + len, n - len, "%s\t%d\t%.6g\t%s\t%s\n", field_names[f], (int)e.status,
                     e.status == ATTNVK_OK ? e.value : 0.0, e.path, e.note);
        if (w < 0 || (size_t)w >= n - len) return 0;
        len += (size_t)w;
    }
    return 1;
}

static int parse_line(char *line, avk_peak *out)
{
    char *cols[5];
    int c = 0;
    cols[c++] = line;
    for (char *q = line; *q && c < 5; ++q)
        if (*q == '\t') {
            *q = '\0';
            cols[c++] = q + 1;
        }
    if (c != 5) return 0;
    int f = -1;
    for (int i = AVK_PEAK_FIELD_COPY; i < AVK_PEAK_FIELD_COUNT; ++i)
        if (strcmp(cols[0], field_names[i]) == 0) f = i;
    char *end = NULL;
    long status = strtol(cols[1], &end, 10);
    if (f < 0 || *end || (status != ATTNVK_OK && status != ATTNVK_ERROR_UNSUPPORTED)) return 0;
    double v = strtod(cols[2], &end);
    if (*end || !isfinite(v) || (status == ATTNVK_OK && v <= 0)) return 0;
    avk_peak_entry *e = &out->e[f];
    e->status = (attnvk_status)status;
    e->value = status == ATTNVK_OK ? v : 0;
    e->cached = 1;
    snprintf(e->path, sizeof e->path, "%s", cols[3]);
    snprintf(e->note, sizeof e->note, "%s", cols[4]);
    return 1;
}

int avk_peak_parse(const char *data, size_t size, avk_peak *out)
{
    clear(out);
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char head[32];
    snprintf(head, sizeof head, "attnvk-peak %d\n", PEAK_METHOD_VERSION);
    int ok = strncmp(text, head, strlen(head)) == 0 && strlen(text) == size;
    for (char *line = text + strlen(head), *nl; ok && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) ok = 0;
        else {
            *nl = '\0';
            ok = parse_line(line, out);
        }
    }
    free(text);
    if (!ok) clear(out);
    return ok;
}

static void load(const attnvk_device_info *info, avk_peak *out)
{
    uint64_t key = avk_peak_key(info);
    char path[1024];
    if (!avk_cache_path("peak", key, "txt", path, sizeof path)) return;
    size_t size = 0;
    char *data = avk_cache_load(path, key, &size);
    if (data && !avk_peak_parse(data, size, out)) clear(out);
    free(data);
}

static void store(const attnvk_device_info *info, const avk_peak *p)
{
    uint64_t key = avk_peak_key(info);
    char path[1024], text[2048];
    if (avk_cache_path("peak", key, "txt", path, sizeof path) && avk_peak_format(p, text, sizeof text))
        avk_cache_store(path, key, text, strlen(text));
}

static void load_read(const attnvk_device_info *info, avk_peak_entry *e)
{
    double gbps = 0;
    if (avk_bandwidth_lookup(info, 0, NULL, NULL, &gbps, NULL) == ATTNVK_OK) {
        e->status = ATTNVK_OK;
        e->value = gbps;
        e->cached = 1;
        e->note[0] = '\0';
    }
}

attnvk_status avk_peak_cached(const attnvk_device_info *info, avk_peak *out)
{
    clear(out);
    if (!info) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "peak: NULL device info");
    load(info, out);
    int any = 0;
    for (int f = AVK_PEAK_FIELD_COPY; f < AVK_PEAK_FIELD_COUNT; ++f) any |= out->e[f].cached;
    load_read(info, &out->e[AVK_PEAK_FIELD_READ]);
    return any ? ATTNVK_OK : avk_fail(ATTNVK_ERROR_UNAVAILABLE, "peaks of %s not measured yet", info->name);
}

static void measured(avk_peak_entry *e, attnvk_status s, double value, const char *path)
{
    e->cached = 0;
    snprintf(e->path, sizeof e->path, "%s", path ? path : "");
    if (s == ATTNVK_OK && !(isfinite(value) && value > 0)) {
        s = ATTNVK_ERROR_BACKEND;
        avk_fail(s, "the measurement gave %g", value);
    }
    if (s != ATTNVK_OK) {
        set_note(e, s, attnvk_last_error());
        if (s == ATTNVK_ERROR_UNSUPPORTED && !e->path[0]) snprintf(e->path, sizeof e->path, "none");
        return;
    }
    e->status = ATTNVK_OK;
    e->value = value;
    e->note[0] = '\0';
}

static const avk_peak_field kind_field[AVK_PEAK_KIND_COUNT] = {
    [AVK_PEAK_COPY] = AVK_PEAK_FIELD_COPY,
    [AVK_PEAK_FMA_F32] = AVK_PEAK_FIELD_FMA_F32,
    [AVK_PEAK_FMA_F16] = AVK_PEAK_FIELD_FMA_F16,
    [AVK_PEAK_MATRIX] = AVK_PEAK_FIELD_MATRIX,
};

static void measure_all(const attnvk_backend *be, avk_bdev *bdev, const attnvk_device_info *info, avk_peak *out)
{
    avk_peak_entry *read = &out->e[AVK_PEAK_FIELD_READ];
    if (!settled(read) || !read->cached) {
        double gbps = 0;
        attnvk_status s = be->read_bandwidth ? be->read_bandwidth(bdev, &gbps)
                                             : avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s cannot measure read bandwidth",
                                                        attnvk_api_name(info->api));
        measured(read, s, gbps, "");
        if (read->status == ATTNVK_OK) avk_bandwidth_store(info, read->value);
    }
    for (int k = 0; k < AVK_PEAK_KIND_COUNT; ++k) {
        avk_peak_entry *e = &out->e[kind_field[k]];
        if (settled(e) && e->cached) continue;
        avk_peak_sample sample = {0};
        attnvk_status s = be->measure_peak ? be->measure_peak(bdev, k, &sample)
                                           : avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s has no peak measurement yet",
                                                      attnvk_api_name(info->api));
        measured(e, s, sample.value, sample.path);
    }
}

attnvk_status avk_peak_lookup(attnvk_context *ctx, int device, unsigned flags, avk_peak *out)
{
    clear(out);
    const attnvk_device_info *info = ctx ? attnvk_device_info_at(ctx, device) : NULL;
    if (!info) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "peak: no device %d", device);
    if (!(flags & AVK_PEAK_REMEASURE)) {
        load(info, out);
        load_read(info, &out->e[AVK_PEAK_FIELD_READ]);
    }
    int need = 0;
    for (int f = 0; f < AVK_PEAK_FIELD_COUNT; ++f) need |= !(settled(&out->e[f]) && out->e[f].cached);
    if (!need || !(flags & (AVK_PEAK_MEASURE | AVK_PEAK_REMEASURE))) return ATTNVK_OK;

    const char *why = NULL;
    const attnvk_backend *be = avk_backend_for(info->api, &why);
    if (!be) return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s: %s", attnvk_api_name(info->api), why ? why : "not built");
    avk_bdev *bdev = NULL;
    attnvk_status s = be->open(info->index, &bdev);
    if (s != ATTNVK_OK) return s;
    measure_all(be, bdev, info, out);
    be->close(bdev);
    int fresh = 0;
    for (int f = AVK_PEAK_FIELD_COPY; f < AVK_PEAK_FIELD_COUNT; ++f) fresh |= settled(&out->e[f]) && !out->e[f].cached;
    if (fresh) store(info, out);
    return ATTNVK_OK;
}

double avk_peak_target_ms(int cpu_device) { return cpu_device ? 15.0 : 50.0; }

attnvk_status avk_peak_time(avk_peak_run_fn run, void *ctx, double target_ms, uint32_t max_iters, uint32_t *iters,
                            double *best_ms)
{
    uint32_t n = *iters > 0 ? *iters : 1;
    if (n > max_iters) n = max_iters;
    double ms = 0;
    attnvk_status s = run(ctx, n, &ms); /* the first run warms up */
    for (int grow = 0; s == ATTNVK_OK && n < max_iters && ms < 0.8 * target_ms && grow < 16; ++grow) {
        double scale = ms > 0 ? target_ms / ms : 16.0;
        if (scale > 16) scale = 16; /* a first run dominated by overhead would overshoot */
        double next = (double)n * scale;
        n = next >= (double)max_iters ? max_iters : (uint32_t)next + 1;
        s = run(ctx, n, &ms);
    }
    double best = 0;
    for (int r = 0; s == ATTNVK_OK && r < AVK_PEAK_RUNS; ++r) {
        s = run(ctx, n, &ms);
        if (s == ATTNVK_OK && ms > 0 && (best == 0 || ms < best)) best = ms;
    }
    if (s != ATTNVK_OK) return s;
    if (best <= 0) return avk_fail(ATTNVK_ERROR_BACKEND, "peak: nothing was timed");
    *iters = n;
    *best_ms = best;
    return ATTNVK_OK;
}
