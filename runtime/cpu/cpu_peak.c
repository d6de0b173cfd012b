/* avk_host_fma_peak: x = x * a + b chains, as many as the vector registers
 * hold (cpu_simd_body.h's fma_chains), on every host thread together. */
#include "cpu/cpu_peak.h"
#include "cpu/cpu_simd.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/reference.h"

#include <stdlib.h>
#include <time.h>

typedef struct peak_run {
    const avk_cpu_simd *simd;
    long long iterations;
    volatile float sink[256]; /* keeps the chains' results alive */
} peak_run;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void chains(void *ctx, size_t begin, size_t end)
{
    peak_run *r = ctx;
    for (size_t t = begin; t < end; ++t) r->sink[t & 255] = r->simd->fma_chains(r->iterations, 0.999999f, 1e-7f);
}

/* seconds for one run of every thread's chains */
static double timed(peak_run *r, size_t threads)
{
    double t0 = now_s();
    avk_parallel_for(threads, 1, 1, chains, r);
    return now_s() - t0;
}

attnvk_status avk_host_fma_peak(double *f32_gflops)
{
    peak_run r = {.simd = avk_cpu_simd_get(), .iterations = 1 << 14};
    const size_t threads = (size_t)avk_cpu_threads();
    /* one thread grows the count to ~10 ms (the warm-up), then all threads run ~40 ms */
    double t = timed(&r, 1);
    while (t < 0.01 && r.iterations < (1ll << 40)) {
        r.iterations *= 2;
        t = timed(&r, 1);
    }
    r.iterations = (long long)(r.iterations * (0.04 / (t > 0 ? t : 0.01))) + 1;
    double best = 0;
    for (int run = 0; run < 3; ++run) {
        t = timed(&r, threads);
        if (t > 0 && (best == 0 || t < best)) best = t;
    }
    if (best <= 0) return avk_fail(ATTNVK_ERROR_BACKEND, "the host FMA loop took no measurable time");
    *f32_gflops = (double)threads * (double)r.iterations * r.simd->fma_flops / best * 1e-9;
    return ATTNVK_OK;
}
