#include "core/bandwidth.h"
#include "core/cache.h"
#include "core/error.h"
#include "core/reference.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Bumped when the measuring kernels change enough to make old numbers stale. */
enum { BANDWIDTH_METHOD_VERSION = 1 };

uint64_t avk_device_cache_key(const char *what, uint64_t method_version, const attnvk_device_info *info)
{
    uint64_t h = avk_hash_str(what, method_version);
    h = avk_hash_str(attnvk_api_name(info->api), h);
    h = avk_hash_str(info->name, h);
    if (info->has_uuid) h = avk_hash(info->uuid, sizeof info->uuid, h);
    h = avk_hash_str(info->driver_version, h);
    return avk_hash_str(info->api_version, h);
}

uint64_t avk_bandwidth_key(const attnvk_device_info *info)
{
    return avk_device_cache_key("attnvk-read-bandwidth", BANDWIDTH_METHOD_VERSION, info);
}

/* The payload is one text line, "read_bandwidth_gbps <value>". */
static int parse_payload(const char *data, size_t size, double *gbps)
{
    char text[64];
    if (size == 0 || size >= sizeof text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const char *prefix = "read_bandwidth_gbps ";
    if (strncmp(text, prefix, strlen(prefix)) != 0) return 0;
    char *end = NULL;
    double v = strtod(text + strlen(prefix), &end);
    if (!end || (*end != '\n' && *end != '\0') || !isfinite(v) || v <= 0) return 0;
    *gbps = v;
    return 1;
}

static void store(const char *path, uint64_t key, double gbps)
{
    char text[64];
    int n = snprintf(text, sizeof text, "read_bandwidth_gbps %.3f\n", gbps);
    avk_cache_store(path, key, text, (size_t)n);
}

attnvk_status avk_bandwidth_lookup(const attnvk_device_info *info, int allow_measure,
                                   avk_bandwidth_measure_fn measure, void *ctx, double *gbps, int *cached)
{
    *gbps = 0;
    if (cached) *cached = 0;
    uint64_t key = avk_bandwidth_key(info);
    char path[1024];
    int cacheable = avk_cache_path("bandwidth", key, "txt", path, sizeof path);
    if (cacheable) {
        size_t size = 0;
        char *data = avk_cache_load(path, key, &size);
        int hit = data && parse_payload(data, size, gbps);
        free(data);
        if (hit) {
            if (cached) *cached = 1;
            return ATTNVK_OK;
        }
    }
    if (!allow_measure)
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "read bandwidth of %s not measured yet", info->name);
    if (!measure) return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s cannot measure read bandwidth",
                                  attnvk_api_name(info->api));
    double v = 0;
    attnvk_status s = measure(ctx, &v);
    if (s != ATTNVK_OK) return s;
    if (!isfinite(v) || v <= 0)
        return avk_fail(ATTNVK_ERROR_BACKEND, "read bandwidth measurement gave %g GB/s", v);
    *gbps = v;
    if (cacheable) store(path, key, v);
    return ATTNVK_OK;
}

void avk_bandwidth_store(const attnvk_device_info *info, double gbps)
{
    uint64_t key = avk_bandwidth_key(info);
    char path[1024];
    if (isfinite(gbps) && gbps > 0 && avk_cache_path("bandwidth", key, "txt", path, sizeof path)) store(path, key, gbps);
}

/* ---- the host's own measurement ---- */

typedef struct host_slice {
    const uint64_t *data;
    uint64_t *dst; /* NULL: a read; else a copy of data into dst */
    size_t words;
    uint64_t sum; /* written out so the loads are not optimized away */
} host_slice;

static void *stream_slice(void *arg)
{
    host_slice *s = arg;
    if (s->dst) {
        memcpy(s->dst, s->data, s->words * sizeof *s->data);
        s->sum = s->words ? s->dst[s->words - 1] : 0;
        return NULL;
    }
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t i = 0;
    for (; i + 4 <= s->words; i += 4) {
        a += s->data[i];
        b ^= s->data[i + 1];
        c += s->data[i + 2];
        d ^= s->data[i + 3];
    }
    for (; i < s->words; ++i) a += s->data[i];
    s->sum = a + b + c + d;
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

enum { HOST_MAX_THREADS = 64, HOST_RUNS = 4 };
static volatile uint64_t host_read_sink; /* the sums land here so the reads stay */

/* All threads stream `bytes` (read, or copy into a second buffer); the best
 * of HOST_RUNS after a warm-up, in GB/s of bytes moved (a copy counts both ways). */
static attnvk_status host_stream(size_t bytes, int copy, double *gbps)
{
    size_t words = bytes / sizeof(uint64_t);
    uint64_t *data = malloc(words * sizeof *data);
    uint64_t *dst = copy ? malloc(words * sizeof *data) : NULL;
    if (!data || (copy && !dst)) {
        free(data);
        free(dst);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for %zu bytes", bytes);
    }
    for (size_t i = 0; i < words; ++i) data[i] = i * 0x9e3779b97f4a7c15ull; /* touches every page */
    if (dst) memset(dst, 0, words * sizeof *dst);
    int threads = avk_cpu_threads();
    if (threads < 1) threads = 1;
    if (threads > HOST_MAX_THREADS) threads = HOST_MAX_THREADS;
    host_slice slices[HOST_MAX_THREADS];
    pthread_t ids[HOST_MAX_THREADS];
    int created[HOST_MAX_THREADS];
    double best = 0;
    size_t per = words / (size_t)threads;
    for (int run = 0; run <= HOST_RUNS; ++run) { /* run 0 warms up */
        double t0 = now_s();
        for (int t = 0; t < threads; ++t) {
            size_t at = (size_t)t * per;
            slices[t] = (host_slice){data + at, dst ? dst + at : NULL, t == threads - 1 ? words - at : per, 0};
            created[t] = t > 0 && pthread_create(&ids[t], NULL, stream_slice, &slices[t]) == 0;
        }
        for (int t = 0; t < threads; ++t) /* the calling thread reads slice 0 and any a thread failed to take */
            if (!created[t]) stream_slice(&slices[t]);
        for (int t = 1; t < threads; ++t)
            if (created[t]) pthread_join(ids[t], NULL);
        double seconds = now_s() - t0;
        for (int t = 0; t < threads; ++t) host_read_sink += slices[t].sum;
        double v = seconds > 0 ? (double)(words * sizeof *data) * (copy ? 2 : 1) / seconds / 1e9 : 0;
        if (run > 0 && v > best) best = v;
    }
    free(data);
    free(dst);
    *gbps = best;
    return best > 0 ? ATTNVK_OK : avk_fail(ATTNVK_ERROR_BACKEND, "host bandwidth: no time measured");
}

attnvk_status avk_host_read_bandwidth(size_t bytes, double *gbps) { return host_stream(bytes, 0, gbps); }

attnvk_status avk_host_copy_bandwidth(size_t bytes, double *gbps) { return host_stream(bytes, 1, gbps); }
