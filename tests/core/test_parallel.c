/* The persistent pool behind avk_parallel_for: every item once, slices on
 * align, many small jobs, nested calls inline, two calling threads at once,
 * the pool growing when ATTNVK_CPU_THREADS rises. */
#include "test_util.h"
#include "core/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

typedef struct cover {
    atomic_int *hits;
    size_t align, n;
    atomic_int bad_align, slices;
} cover;

static void mark(void *ctx, size_t begin, size_t end)
{
    cover *c = ctx;
    atomic_fetch_add(&c->slices, 1);
    if (begin % c->align || (end != c->n && end % c->align)) atomic_fetch_add(&c->bad_align, 1);
    for (size_t i = begin; i < end; ++i) atomic_fetch_add(&c->hits[i], 1);
}

/* fn over [0, n): 1 when every item ran once and the slices kept to align. */
static int covers(size_t n, size_t min_items, size_t align)
{
    cover c = {.hits = calloc(n + 1, sizeof(atomic_int)), .align = align, .n = n};
    if (!c.hits) return 0;
    avk_parallel_for(n, min_items, align, mark, &c);
    int ok = c.bad_align == 0 && (n == 0 || c.slices >= 1);
    for (size_t i = 0; i < n; ++i) ok &= c.hits[i] == 1;
    free(c.hits);
    return ok;
}

typedef struct sum_job {
    const unsigned *x;
    atomic_ullong total;
} sum_job;

static void add_slice(void *ctx, size_t begin, size_t end)
{
    sum_job *j = ctx;
    unsigned long long s = 0;
    for (size_t i = begin; i < end; ++i) s += j->x[i];
    atomic_fetch_add(&j->total, s);
}

/* an outer loop whose every slice runs an inner loop of its own */
typedef struct nest_job {
    const unsigned *x;
    size_t inner_n;
    atomic_ullong total;
} nest_job;

static void nested_slice(void *ctx, size_t begin, size_t end)
{
    nest_job *j = ctx;
    for (size_t o = begin; o < end; ++o) {
        sum_job inner = {.x = j->x};
        atomic_init(&inner.total, 0);
        avk_parallel_for(j->inner_n, 1, 1, add_slice, &inner);
        atomic_fetch_add(&j->total, (unsigned long long)inner.total);
    }
}

typedef struct caller_arg {
    const unsigned *x;
    size_t n;
    unsigned long long expect;
    int rounds, ok;
} caller_arg;

static void *caller(void *arg)
{
    caller_arg *a = arg;
    a->ok = 1;
    for (int r = 0; r < a->rounds; ++r) {
        sum_job j = {.x = a->x};
        atomic_init(&j.total, 0);
        avk_parallel_for(a->n, 1, 1, add_slice, &j);
        a->ok &= j.total == a->expect;
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    int passed = 0;
    setenv("ATTNVK_CPU_THREADS", "4", 1); /* more threads than this machine may have: slices still run */

    int ok = 1;
    static const size_t ns[] = {0, 1, 2, 3, 7, 64, 1000, 4097, 100003};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; ++i)
        for (size_t align = 1; align <= 8; align *= 2)
            for (size_t min_items = 1; min_items <= 4096; min_items *= 64) ok &= covers(ns[i], min_items, align);
    EXPECT(ok, "every item once, slices on align");
    passed += ok;

    enum { N = 1 << 16 };
    unsigned *x = malloc(N * sizeof *x);
    unsigned long long expect = 0;
    for (size_t i = 0; i < N; ++i) expect += x[i] = (unsigned)(i * 2654435761u >> 7);

    /* many small jobs back to back: results right, and cheap (no thread start per call) */
    ok = 1;
    enum { JOBS = 20000 };
    double t0 = now_s();
    for (int r = 0; r < JOBS; ++r) {
        sum_job j = {.x = x};
        atomic_init(&j.total, 0);
        avk_parallel_for(64, 1, 1, add_slice, &j);
        unsigned long long e = 0;
        for (int i = 0; i < 64; ++i) e += x[i];
        ok &= j.total == e;
    }
    double per_call_us = (now_s() - t0) / JOBS * 1e6;
    printf("%d small jobs: %.1f us a call\n", JOBS, per_call_us);
    EXPECT(ok, "small jobs sum right");
    passed += ok;

    /* nested: each outer slice runs a whole inner loop (inline, no deadlock) */
    nest_job nj = {.x = x, .inner_n = N};
    atomic_init(&nj.total, 0);
    avk_parallel_for(16, 1, 1, nested_slice, &nj);
    EXPECT(nj.total == 16 * expect, "nested calls: %llu vs %llu", (unsigned long long)nj.total, 16 * expect);
    passed += nj.total == 16 * expect;

    /* two threads calling at once: both right (one may run inline) */
    caller_arg a[2] = {{x, N, expect, 2000, 0}, {x, N, expect, 2000, 0}};
    pthread_t t[2];
    int started[2];
    for (int i = 0; i < 2; ++i) started[i] = pthread_create(&t[i], NULL, caller, &a[i]) == 0;
    caller_arg self = {x, N, expect, 2000, 0};
    caller(&self);
    for (int i = 0; i < 2; ++i)
        if (started[i]) pthread_join(t[i], NULL);
        else a[i].ok = 1, caller(&a[i]);
    EXPECT(a[0].ok && a[1].ok && self.ok, "concurrent callers: %d %d %d", a[0].ok, a[1].ok, self.ok);
    passed += a[0].ok && a[1].ok && self.ok;

    /* more threads later: the pool grows, every item still once */
    setenv("ATTNVK_CPU_THREADS", "9", 1);
    ok = covers(100003, 1, 2) && covers(9, 1, 1);
    setenv("ATTNVK_CPU_THREADS", "1", 1);
    ok &= covers(1000, 1, 1);
    EXPECT(ok, "pool grown to 9 threads, then 1");
    passed += ok;

    free(x);
    return avk_test_finish(passed, 0);
}
