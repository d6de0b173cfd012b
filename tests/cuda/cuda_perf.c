/* Timing tool for the GPU machine (tools/h100/cuda.sh): one attention shape
 * through the public API, device-event time (median of --iters runs after
 * warm-up), TFLOP/s by the FlashAttention convention, and a reference check
 * of sampled rows of the same output.
 *   cuda_perf [--api cuda] [--impl NAME] [--dtype f16|bf16|f32] [--b B] [--h H] [--hkv HKV]
 *             [--n N] [--nq NQ] [--d D] [--causal] [--bshd] [--variant V] [--tile BRxBC]
 *             [--split N] [--iters N] [--try "VARIANT BRxBC [-DNAME=V ...]"]...
 * Each --try times one configuration on the same inputs (the -D options go to
 * NVRTC through ATTNVK_CUDA_DEFINES); without --try, --variant/--tile are used. */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static attnvk_status upload(attnvk_device *dev, attnvk_dtype dt, const float *x, size_t n, attnvk_buffer **b)
{
    size_t es = attnvk_dtype_size(dt);
    void *packed = malloc(n * es);
    if (!packed) return ATTNVK_ERROR_OUT_OF_MEMORY;
    attnvk_pack(dt, x, packed, n);
    attnvk_status s = attnvk_buffer_create(dev, n * es, b);
    if (s == ATTNVK_OK) s = attnvk_buffer_write(*b, 0, packed, n * es);
    free(packed);
    return s;
}

int main(int argc, char **argv)
{
    attnvk_problem p = {.batch = 4, .heads = 16, .kv_heads = 0, .seq_q = 0, .seq_kv = 4096, .head_dim = 128,
                        .dtype = ATTNVK_F16};
    attnvk_kernel_options o = {0};
    attnvk_api api = ATTNVK_API_CUDA;
    int iters = 20;
    const char *tries[64];
    int ntries = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--causal")) p.causal = 1;
        else if (!strcmp(a, "--bshd")) p.layout = ATTNVK_LAYOUT_BSHD;
        else if (v && !strcmp(a, "--api") && ++i) attnvk_api_from_name(v, &api);
        else if (v && !strcmp(a, "--impl") && ++i) o.implementation = v;
        else if (v && !strcmp(a, "--dtype") && ++i) attnvk_dtype_from_name(v, &p.dtype);
        else if (v && !strcmp(a, "--b") && ++i) p.batch = atoi(v);
        else if (v && !strcmp(a, "--h") && ++i) p.heads = atoi(v);
        else if (v && !strcmp(a, "--hkv") && ++i) p.kv_heads = atoi(v);
        else if (v && !strcmp(a, "--n") && ++i) p.seq_kv = atoi(v);
        else if (v && !strcmp(a, "--nq") && ++i) p.seq_q = atoi(v);
        else if (v && !strcmp(a, "--d") && ++i) p.head_dim = atoi(v);
        else if (v && !strcmp(a, "--variant") && ++i) o.variant = v;
        else if (v && !strcmp(a, "--tile") && ++i) sscanf(v, "%dx%d", &o.tile_br, &o.tile_bc);
        else if (v && !strcmp(a, "--split") && ++i) o.split_kv = atoi(v);
        else if (v && !strcmp(a, "--iters") && ++i) iters = atoi(v);
        else if (v && !strcmp(a, "--try") && ++i && ntries < 64) tries[ntries++] = v;
        else {
            fprintf(stderr, "cuda_perf: unknown option %s\n", a);
            return 2;
        }
    }
    if (!p.kv_heads) p.kv_heads = p.heads;
    if (!p.seq_q) p.seq_q = p.seq_kv;
    if (iters < 1) iters = 1;

    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    attnvk_device *dev = avk_test_open_api(ctx, api);
    if (!dev) return 1;

    size_t nq = attnvk_q_elements(&p), nkv = attnvk_kv_elements(&p);
    float *q = malloc(nq * 4), *k = malloc(nkv * 4), *v = malloc(nkv * 4), *out = malloc(nq * 4);
    void *raw = malloc(nq * attnvk_dtype_size(p.dtype));
    attnvk_fill_random(q, nq, 11);
    attnvk_fill_random(k, nkv, 12);
    attnvk_fill_random(v, nkv, 13);
    attnvk_round_to_dtype(p.dtype, q, nq);
    attnvk_round_to_dtype(p.dtype, k, nkv);
    attnvk_round_to_dtype(p.dtype, v, nkv);

    attnvk_buffer *bq = NULL, *bk = NULL, *bv = NULL, *bo = NULL;
    attnvk_status s = upload(dev, p.dtype, q, nq, &bq);
    if (s == ATTNVK_OK) s = upload(dev, p.dtype, k, nkv, &bk);
    if (s == ATTNVK_OK) s = upload(dev, p.dtype, v, nkv, &bv);
    if (s == ATTNVK_OK) s = attnvk_buffer_create(dev, nq * attnvk_dtype_size(p.dtype), &bo);
    if (s != ATTNVK_OK) {
        printf("FAIL setup: %s\n", attnvk_last_error());
        return 1;
    }
    char shape[128];
    snprintf(shape, sizeof shape, "%s B%d H%d/%d Nq%d Nk%d D%d%s%s", attnvk_dtype_name(p.dtype), p.batch, p.heads,
             p.kv_heads, p.seq_q, p.seq_kv, p.head_dim, p.causal ? " causal" : "",
             p.layout == ATTNVK_LAYOUT_BSHD ? " bshd" : "");
    double *ms = calloc((size_t)iters, sizeof *ms);
    int rc = 0;
    for (int t = 0; t < (ntries ? ntries : 1); ++t) {
        char variant[32] = "", defines[256] = "";
        attnvk_kernel_options to = o;
        if (ntries) {
            int br = 0, bc = 0, used = 0;
            if (sscanf(tries[t], "%31s %dx%d %n", variant, &br, &bc, &used) < 3) {
                printf("FAIL --try '%s': want 'VARIANT BRxBC [-D...]'\n", tries[t]);
                rc = 1;
                continue;
            }
            snprintf(defines, sizeof defines, "%s", tries[t] + used);
            to.variant = variant;
            to.tile_br = br;
            to.tile_bc = bc;
        }
        setenv("ATTNVK_CUDA_DEFINES", defines, 1);
        attnvk_kernel *kern = NULL;
        attnvk_kernel_info info;
        memset(&info, 0, sizeof info);
        s = attnvk_kernel_prepare(dev, &p, &to, &kern, &info);
        for (int w = 0; s == ATTNVK_OK && w < 3; ++w) s = attnvk_kernel_run(kern, bq, bk, bv, bo, NULL, 0, 0, NULL);
        for (int it = 0; s == ATTNVK_OK && it < iters; ++it)
            s = attnvk_kernel_run(kern, bq, bk, bv, bo, NULL, 0, 0, &ms[it]);
        if (s == ATTNVK_OK) s = attnvk_buffer_read(bo, 0, raw, nq * attnvk_dtype_size(p.dtype));
        if (s != ATTNVK_OK) {
            printf("FAIL %s %s %s: %s: %s\n", shape, variant, defines, attnvk_status_name(s), attnvk_last_error());
            rc = 1;
        } else {
            attnvk_unpack(p.dtype, raw, out, nq);
            enum { SAMPLES = 48 };
            size_t rows[SAMPLES], total = (size_t)p.batch * p.heads * p.seq_q;
            for (int r = 0; r < SAMPLES; ++r) rows[r] = (size_t)((r * 2654435761u + 17u) % total);
            rows[0] = 0;
            rows[1] = total - 1;
            attnvk_check c = attnvk_check_output(&p, q, k, v, out, rows, SAMPLES);
            qsort(ms, (size_t)iters, sizeof *ms, cmp_double);
            double med = ms[iters / 2], tflops = attnvk_problem_flops(&p) / (med * 1e-3) / 1e12;
            printf("%s %-38s %-6s %-8s %3dx%-3d split=%-3d %8.3f ms (min %.3f) %6.1f TFLOP/s rel_l2 %.1e %s [%s]\n",
                   c.passed ? "ok  " : "FAIL", shape, info.implementation, info.variant, info.tile_br, info.tile_bc,
                   info.split_kv, med, ms[0], tflops, c.rel_l2, defines, info.params);
            if (!c.passed) rc = 1;
        }
        fflush(stdout);
        attnvk_kernel_destroy(kern);
        /* poison between configurations so a kernel that writes nothing fails */
        if (s == ATTNVK_OK) {
            memset(raw, 0xff, nq * attnvk_dtype_size(p.dtype));
            attnvk_buffer_write(bo, 0, raw, nq * attnvk_dtype_size(p.dtype));
        }
    }
    attnvk_buffer_destroy(bq), attnvk_buffer_destroy(bk), attnvk_buffer_destroy(bv), attnvk_buffer_destroy(bo);
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    free(q), free(k), free(v), free(out), free(raw), free(ms);
    return rc;
}
