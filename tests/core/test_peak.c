/* The peak record (core/peak.h): its cache payload round-trips and refuses
 * garbage; the timing policy grows the iteration count to the target and takes
 * the best run; the CPU device is measured once, then read from the cache, and
 * a corrupt cache file is measured again and rewritten. */
#include "test_util.h"
#include "core/cache.h"
#include "core/peak.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_payload(void)
{
    avk_peak p;
    memset(&p, 0, sizeof p);
    p.e[AVK_PEAK_FIELD_COPY] = (avk_peak_entry){.status = ATTNVK_OK, .value = 1234.5};
    p.e[AVK_PEAK_FIELD_FMA_F32] = (avk_peak_entry){.status = ATTNVK_OK, .value = 51.25, .path = "vec4 fma"};
    p.e[AVK_PEAK_FIELD_FMA_F16] = (avk_peak_entry){.status = ATTNVK_ERROR_BACKEND, .note = "failed: not kept"};
    p.e[AVK_PEAK_FIELD_MATRIX] = (avk_peak_entry){.status = ATTNVK_ERROR_UNSUPPORTED, .path = "none",
                                                  .note = "no\tmatrix\nunits"};
    char text[2048];
    EXPECT(avk_peak_format(&p, text, sizeof text), "format");
    avk_peak q;
    EXPECT(avk_peak_parse(text, strlen(text), &q), "parse: %s", text);
    EXPECT(q.e[AVK_PEAK_FIELD_COPY].status == ATTNVK_OK && fabs(q.e[AVK_PEAK_FIELD_COPY].value - 1234.5) < 1e-9 &&
               q.e[AVK_PEAK_FIELD_COPY].cached,
           "copy round-trips");
    EXPECT(strcmp(q.e[AVK_PEAK_FIELD_FMA_F32].path, "vec4 fma") == 0, "path round-trips");
    EXPECT(q.e[AVK_PEAK_FIELD_FMA_F16].status == ATTNVK_ERROR_UNAVAILABLE && !q.e[AVK_PEAK_FIELD_FMA_F16].cached,
           "a failure is not kept");
    EXPECT(q.e[AVK_PEAK_FIELD_MATRIX].status == ATTNVK_ERROR_UNSUPPORTED &&
               strcmp(q.e[AVK_PEAK_FIELD_MATRIX].note, "no matrix units") == 0,
           "'none' and its reason round-trip: '%s'", q.e[AVK_PEAK_FIELD_MATRIX].note);
    const char *bad[] = {"", "attnvk-peak 1\ncopy\t0\t-5\t\t\n", "attnvk-peak 1\ncopy\t0\tnan\t\t\n",
                         "attnvk-peak 1\nbogus\t0\t1\t\t\n", "attnvk-peak 1\ncopy\t7\t1\t\t\n",
                         "attnvk-peak 1\ncopy\t0\t1\t\n", "attnvk-peak 2\n", "attnvk-peak 1\ncopy\t0\t1\t\t"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i)
        EXPECT(!avk_peak_parse(bad[i], strlen(bad[i]), &q), "refuses payload %zu", i);
}

typedef struct fake_kernel {
    double ms_per_iter, overhead_ms;
    int calls;
} fake_kernel;

static attnvk_status fake_run(void *ctx, uint32_t iters, double *ms)
{
    fake_kernel *k = ctx;
    ++k->calls;
    *ms = k->overhead_ms + k->ms_per_iter * iters + (k->calls % 2 ? 0.5 : 0); /* every other run is slower */
    return ATTNVK_OK;
}

static void test_timing(void)
{
    fake_kernel k = {.ms_per_iter = 0.01, .overhead_ms = 0.05};
    uint32_t iters = 1;
    double best = 0;
    EXPECT(avk_peak_time(fake_run, &k, 50, 1u << 24, &iters, &best) == ATTNVK_OK, "%s", attnvk_last_error());
    EXPECT(best >= 40 && best <= 80 && iters >= 3000, "grows to about the target: %u iterations, %g ms", iters, best);
    EXPECT(fabs(best - (0.05 + 0.01 * iters)) < 1e-9, "takes the best run: %g", best);
    EXPECT(k.calls < 16, "a few runs: %d", k.calls);
    fake_kernel copy = {.ms_per_iter = 3};
    iters = 1;
    EXPECT(avk_peak_time(fake_run, &copy, 50, 1, &iters, &best) == ATTNVK_OK && iters == 1 &&
               copy.calls == 1 + AVK_PEAK_RUNS,
           "max_iters 1: warm-up and %d runs, got %d calls", AVK_PEAK_RUNS, copy.calls);
}

static int cpu_device(attnvk_context *ctx)
{
    int i = -1;
    return attnvk_device_select(ctx, "cpu", &i, 1) == 1 ? i : -1;
}

static void test_cpu_device(void)
{
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) {
        EXPECT(0, "context: %s", attnvk_last_error());
        return;
    }
    int d = cpu_device(ctx);
    EXPECT(d >= 0, "the CPU device is listed");
    if (d < 0) return;
    const attnvk_device_info *info = attnvk_device_info_at(ctx, d);
    char path[1024];
    EXPECT(avk_cache_path("peak", avk_peak_key(info), "txt", path, sizeof path), "caching on");
    remove(path);
    avk_peak p;
    EXPECT(avk_peak_cached(info, &p) == ATTNVK_ERROR_UNAVAILABLE, "nothing cached yet");
    EXPECT(avk_peak_lookup(ctx, d, 0, &p) == ATTNVK_OK && p.e[AVK_PEAK_FIELD_COPY].status == ATTNVK_ERROR_UNAVAILABLE,
           "without measuring, a miss is 'not measured yet'");
    EXPECT(avk_peak_lookup(ctx, d, AVK_PEAK_MEASURE, &p) == ATTNVK_OK, "%s", attnvk_last_error());
    const avk_peak_entry *copy = &p.e[AVK_PEAK_FIELD_COPY], *matrix = &p.e[AVK_PEAK_FIELD_MATRIX];
    EXPECT(copy->status == ATTNVK_OK && isfinite(copy->value) && copy->value > 0 && !copy->cached,
           "host copy measured: %g GB/s (%s)", copy->value, copy->note);
    EXPECT(matrix->status == ATTNVK_ERROR_UNSUPPORTED && strcmp(matrix->path, "none") == 0 && matrix->note[0],
           "the CPU device has no matrix path, with a reason");
    printf("cpu: copy %.1f GB/s, f32 FMA %s %.1f GFLOP/s, matrix none (%s)\n", copy->value,
           p.e[AVK_PEAK_FIELD_FMA_F32].status == ATTNVK_OK ? "" : "unavailable", p.e[AVK_PEAK_FIELD_FMA_F32].value,
           matrix->note);
    double first = copy->value;

    avk_peak again;
    EXPECT(avk_peak_lookup(ctx, d, AVK_PEAK_MEASURE, &again) == ATTNVK_OK && again.e[AVK_PEAK_FIELD_COPY].cached &&
               fabs(again.e[AVK_PEAK_FIELD_COPY].value - first) < 1e-5 * first && again.e[AVK_PEAK_FIELD_MATRIX].cached,
           "the second lookup hits the cache");
    EXPECT(avk_peak_cached(info, &again) == ATTNVK_OK && fabs(again.e[AVK_PEAK_FIELD_COPY].value - first) < 1e-5 * first, "cached only");

    FILE *f = fopen(path, "r+b"); /* inside the payload: the checksum no longer matches */
    if (f) {
        fseek(f, -4, SEEK_END);
        fputc('#', f);
        fclose(f);
    }
    EXPECT(avk_peak_cached(info, &again) == ATTNVK_ERROR_UNAVAILABLE, "a corrupt record is not read");
    EXPECT(avk_peak_lookup(ctx, d, AVK_PEAK_MEASURE, &again) == ATTNVK_OK && !again.e[AVK_PEAK_FIELD_COPY].cached &&
               again.e[AVK_PEAK_FIELD_COPY].value > 0,
           "a corrupt record is measured again");
    EXPECT(avk_peak_cached(info, &again) == ATTNVK_OK, "and stored again");
    EXPECT(avk_peak_lookup(ctx, d, AVK_PEAK_REMEASURE, &again) == ATTNVK_OK && !again.e[AVK_PEAK_FIELD_COPY].cached &&
               !again.e[AVK_PEAK_FIELD_READ].cached,
           "--remeasure ignores the cache");
    EXPECT(avk_peak_lookup(ctx, 1 << 20, AVK_PEAK_MEASURE, &again) == ATTNVK_ERROR_INVALID_ARGUMENT, "no such device");
    attnvk_context_destroy(ctx);
}

int main(void)
{
    setenv("ATTNVK_CACHE_DIR", "peak_unit", 1);
    setenv("ATTNVK_VISIBLE_DEVICES", "cpu", 1);
    test_payload();
    test_timing();
    test_cpu_device();
    return avk_test_finish(avk_test_failures == 0, avk_test_failures);
}
