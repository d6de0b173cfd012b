/* Times one OpenCL implementation with device timestamps (median of --reps
 * after warm-up) and checks sampled rows of the same run against the float64
 * reference. Not a test: tools/h100/opencl.sh runs it on the GPU.
 *
 *   perf_opencl [--impl attnvk|clblast] [--variant V] [--dtype f32|f16] [-b B] [--heads H] [--kv-heads G]
 *               [-n N] [--nk NK (default N)] [-d D] [--causal] [--tile BRxBC] [--split-kv S] [--reps R] [--tune T]...
 * Each --tune sets ATTNVK_OPENCL_TUNE (e.g. ds=8,tm=2,bc=16) for one more
 * configuration timed on the same inputs. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct perf_args {
    const char *impl, *variant, *tunes[32];
    int ntunes, b, h, hkv, n, nk, d, causal, tile_br, tile_bc, split, reps;
    attnvk_dtype dtype;
} perf_args;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int parse(int argc, char **argv, perf_args *a)
{
    *a = (perf_args){.impl = "attnvk", .b = 4, .h = 16, .n = 4096, .d = 128, .reps = 10};
    for (int i = 1; i < argc; ++i) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(k, "--causal")) { a->causal = 1; continue; }
        if (!v) return fprintf(stderr, "%s needs a value\n", k), 0;
        ++i;
        if (!strcmp(k, "--impl")) a->impl = v;
        else if (!strcmp(k, "--variant")) a->variant = v;
        else if (!strcmp(k, "--dtype")) { if (!attnvk_dtype_from_name(v, &a->dtype)) return 0; }
        else if (!strcmp(k, "-b")) a->b = atoi(v);
        else if (!strcmp(k, "--heads")) a->h = atoi(v);
        else if (!strcmp(k, "--kv-heads")) a->hkv = atoi(v);
        else if (!strcmp(k, "-n")) a->n = atoi(v);
        else if (!strcmp(k, "--nk")) a->nk = atoi(v);
        else if (!strcmp(k, "-d")) a->d = atoi(v);
        else if (!strcmp(k, "--tile")) { if (sscanf(v, "%dx%d", &a->tile_br, &a->tile_bc) != 2) return 0; }
        else if (!strcmp(k, "--split-kv")) a->split = atoi(v);
        else if (!strcmp(k, "--reps")) a->reps = atoi(v);
        else if (!strcmp(k, "--tune") && a->ntunes < 32) a->tunes[a->ntunes++] = v;
        else return fprintf(stderr, "unknown option %s\n", k), 0;
    }
    if (!a->hkv) a->hkv = a->h;
    if (!a->nk) a->nk = a->n;
    return a->reps > 0;
}

static attnvk_status upload(attnvk_device *dev, attnvk_dtype dt, const float *src, size_t n, attnvk_buffer **out)
{
    size_t bytes = n * attnvk_dtype_size(dt);
    void *packed = malloc(bytes);
    if (!packed) return ATTNVK_ERROR_OUT_OF_MEMORY;
    attnvk_pack(dt, src, packed, n);
    attnvk_status s = attnvk_buffer_create(dev, bytes, out);
    if (s == ATTNVK_OK) s = attnvk_buffer_write(*out, 0, packed, bytes);
    free(packed);
    return s;
}

/* One configuration: prepare, warm up, time, check sampled rows. */
static int time_one(attnvk_device *dev, const attnvk_problem *p, const perf_args *a, const char *tune,
                    const float *q, const float *k, const float *v, attnvk_buffer *bq, attnvk_buffer *bk,
                    attnvk_buffer *bv, attnvk_buffer *bo)
{
    if (tune) setenv("ATTNVK_OPENCL_TUNE", tune, 1);
    else unsetenv("ATTNVK_OPENCL_TUNE");
    attnvk_kernel_options opts = {.implementation = a->impl, .variant = a->variant, .tile_br = a->tile_br,
                                  .tile_bc = a->tile_bc, .split_kv = a->split};
    attnvk_kernel_info info;
    attnvk_kernel *kern = NULL;
    const char *label = tune && *tune ? tune : "table";
    attnvk_status s = attnvk_kernel_prepare(dev, p, &opts, &kern, &info);
    if (s != ATTNVK_OK) {
        printf("perf %-24s %s: %s\n", label, attnvk_status_name(s), attnvk_last_error());
        return 0;
    }
    double *ms = calloc((size_t)a->reps, sizeof(double)), t = 0;
    for (int w = 0; w < 2 && s == ATTNVK_OK; ++w) s = attnvk_kernel_run(kern, bq, bk, bv, bo, NULL, 0, 0, &t);
    for (int r = 0; r < a->reps && s == ATTNVK_OK; ++r) s = attnvk_kernel_run(kern, bq, bk, bv, bo, NULL, 0, 0, &ms[r]);
    if (s != ATTNVK_OK) {
        printf("perf %-24s run: %s: %s\n", label, attnvk_status_name(s), attnvk_last_error());
        attnvk_kernel_destroy(kern);
        free(ms);
        return 0;
    }
    qsort(ms, (size_t)a->reps, sizeof *ms, cmp_double);
    double med = ms[a->reps / 2], tflops = attnvk_problem_flops(p) / (med * 1e-3) / 1e12;
    /* sampled rows of the last run against the float64 reference */
    size_t nq = attnvk_q_elements(p), es = attnvk_dtype_size(p->dtype);
    void *packed = malloc(nq * es);
    float *o = malloc(nq * sizeof(float));
    size_t rows[96], nrows = 0, total = (size_t)p->batch * p->heads * p->seq_q;
    for (size_t i = 0; i < 96; ++i) rows[nrows++] = (i * 2654435761u + 17) % total;
    attnvk_check c = {0};
    if (attnvk_buffer_read(bo, 0, packed, nq * es) == ATTNVK_OK) {
        attnvk_unpack(p->dtype, packed, o, nq);
        c = attnvk_check_output(p, q, k, v, o, rows, nrows);
    }
    printf("perf %-24s %s/%s tile %dx%d wg %d split %d [%s] ws %.1f MiB: median %.3f ms (min %.3f max %.3f) "
           "%.2f TFLOP/s, check rel_l2 %.2e on %zu rows: %s\n",
           label, info.implementation, info.variant, info.tile_br, info.tile_bc, info.workgroup_size, info.split_kv,
           info.params, info.workspace_bytes / 1048576.0, med, ms[0], ms[a->reps - 1], tflops, c.rel_l2, nrows,
           c.passed ? "pass" : "FAIL");
    fflush(stdout);
    attnvk_kernel_destroy(kern);
    free(ms);
    free(packed);
    free(o);
    return c.passed;
}

int main(int argc, char **argv)
{
    perf_args a;
    if (!parse(argc, argv, &a)) {
        fprintf(stderr, "usage: see the comment at the top of tests/opencl/perf_opencl.c\n");
        return 2;
    }
    attnvk_problem p = {.batch = a.b, .heads = a.h, .kv_heads = a.hkv, .seq_q = a.n, .seq_kv = a.nk, .head_dim = a.d,
                        .causal = a.causal, .dtype = a.dtype, .layout = ATTNVK_LAYOUT_BHSD};
    if (attnvk_problem_validate(&p) != ATTNVK_OK) {
        fprintf(stderr, "%s\n", attnvk_last_error());
        return 2;
    }
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_OPENCL);
    if (!dev) return 1;
    const attnvk_device_info *di = attnvk_device_info_of(dev);
    printf("device %s | %s | driver %s | %s | arch %s | %d CUs | local %llu | mma %d | default %s\n", di->name,
           di->vendor, di->driver_version, di->api_version, di->architecture, di->compute_units,
           (unsigned long long)di->shared_memory_per_group, di->cooperative_matrix, di->default_variant);
    printf("problem B=%d H=%d/%d Nq=%d Nk=%d D=%d %s causal=%d, %.3g GFLOP\n", p.batch, p.heads, p.kv_heads,
           p.seq_q, p.seq_kv, p.head_dim, attnvk_dtype_name(p.dtype), p.causal, attnvk_problem_flops(&p) / 1e9);
    fflush(stdout);
    float *q, *k, *v;
    avk_test_inputs(&p, 12345, &q, &k, &v);
    attnvk_buffer *bq = NULL, *bk = NULL, *bv = NULL, *bo = NULL;
    size_t nq = attnvk_q_elements(&p), nkv = attnvk_kv_elements(&p);
    attnvk_status s = upload(dev, p.dtype, q, nq, &bq);
    if (s == ATTNVK_OK) s = upload(dev, p.dtype, k, nkv, &bk);
    if (s == ATTNVK_OK) s = upload(dev, p.dtype, v, nkv, &bv);
    if (s == ATTNVK_OK) s = attnvk_buffer_create(dev, nq * attnvk_dtype_size(p.dtype), &bo);
    int failures = 0;
    if (s != ATTNVK_OK) {
        printf("buffers: %s: %s\n", attnvk_status_name(s), attnvk_last_error());
        failures = 1;
    } else if (a.ntunes == 0) {
        failures += !time_one(dev, &p, &a, NULL, q, k, v, bq, bk, bv, bo);
    } else {
        for (int t = 0; t < a.ntunes; ++t) failures += !time_one(dev, &p, &a, a.tunes[t], q, k, v, bq, bk, bv, bo);
    }
    attnvk_buffer_destroy(bq), attnvk_buffer_destroy(bk), attnvk_buffer_destroy(bv), attnvk_buffer_destroy(bo);
    free(q), free(k), free(v);
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return failures ? 1 : 0;
}
