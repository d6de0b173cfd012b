#include "core/parallel.h"
#include "core/reference.h"

#include <pthread.h>

typedef struct slice {
    void (*fn)(void *ctx, size_t begin, size_t end);
    void *ctx;
    size_t begin, end;
} slice;

static void *run_slice(void *arg)
{
    slice *s = arg;
    s->fn(s->ctx, s->begin, s->end);
    return NULL;
}

void avk_parallel_for(size_t n, size_t min_items, size_t align, void (*fn)(void *ctx, size_t begin, size_t end),
                      void *ctx)
{
    if (n == 0) return;
    if (align < 1) align = 1;
    if (min_items < 1) min_items = 1;
    size_t threads = (size_t)avk_cpu_threads(); /* 1..256 */
    if (threads > n / min_items) threads = n / min_items ? n / min_items : 1;
    slice slices[256];
    pthread_t tids[256];
    int started[256] = {0};
    for (size_t t = 0; t < threads; ++t) {
        size_t begin = n * t / threads / align * align, end = t + 1 == threads ? n : n * (t + 1) / threads / align * align;
        slices[t] = (slice){fn, ctx, begin, end};
        if (t > 0 && begin < end) started[t] = pthread_create(&tids[t], NULL, run_slice, &slices[t]) == 0;
        if (t > 0 && begin < end && !started[t]) run_slice(&slices[t]);
    }
    run_slice(&slices[0]);
    for (size_t t = 1; t < threads; ++t)
        if (started[t]) pthread_join(tids[t], NULL);
}
