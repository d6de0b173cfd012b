/* vk_perf: times attnvk's Vulkan kernels on a real GPU (not run by ctest).
 * For each shape, causal flag, variant and tile: median device time over
 * --reps runs after warm-up, TFLOP/s by the FlashAttention convention, and a
 * check of sampled rows against the float64 reference.
 *   vk_perf [--device SPEC] [--dtype f16] [--shape BxHxNxD]... [--causal 0|1]...
 *           [--variant NAME|default]... [--tile BRxBC|default]... [--reps N] [--split N] */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_LIST = 16, CHECK_ROWS = 48 };

typedef struct perf_args {
    const char *device;
    attnvk_dtype dtype;
    int shapes[MAX_LIST][4], n_shapes;
    int causal[2], n_causal;
    const char *variants[MAX_LIST];
    int n_variants;
    int tiles[MAX_LIST][2], n_tiles;
    int reps, split;
} perf_args;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int parse(int argc, char **argv, perf_args *a)
{
    memset(a, 0, sizeof *a);
    a->device = "vulkan";
    a->dtype = ATTNVK_F16;
    a->reps = 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--device")) a->device = v;
        else if (!strcmp(k, "--dtype") && attnvk_dtype_from_name(v, &a->dtype)) {}
        else if (!strcmp(k, "--shape") && a->n_shapes < MAX_LIST &&
                 sscanf(v, "%dx%dx%dx%d", &a->shapes[a->n_shapes][0], &a->shapes[a->n_shapes][1],
                        &a->shapes[a->n_shapes][2], &a->shapes[a->n_shapes][3]) == 4) ++a->n_shapes;
        else if (!strcmp(k, "--causal") && a->n_causal < 2) a->causal[a->n_causal++] = atoi(v);
        else if (!strcmp(k, "--variant") && a->n_variants < MAX_LIST) a->variants[a->n_variants++] = v;
        else if (!strcmp(k, "--tile") && a->n_tiles < MAX_LIST) {
            if (sscanf(v, "%dx%d", &a->tiles[a->n_tiles][0], &a->tiles[a->n_tiles][1]) != 2)
                a->tiles[a->n_tiles][0] = a->tiles[a->n_tiles][1] = 0;
            ++a->n_tiles;
        } else if (!strcmp(k, "--reps")) a->reps = atoi(v);
        else if (!strcmp(k, "--split")) a->split = atoi(v);
        else {
            fprintf(stderr, "vk_perf: bad option %s %s\n", k, v);
            return 0;
        }
    }
    if (!a->n_shapes) {
        int def[4] = {4, 16, 4096, 128};
        memcpy(a->shapes[0], def, sizeof def);
        a->n_shapes = 1;
    }
    if (!a->n_causal) a->causal[a->n_causal++] = 0;
    if (!a->n_variants) a->variants[a->n_variants++] = "default";
    if (!a->n_tiles) a->n_tiles = 1;
    if (a->reps < 1) a->reps = 1;
    return 1;
}

static attnvk_buffer *upload(attnvk_device *dev, attnvk_dtype dt, const float *x, size_t n)
{
    size_t bytes = n * attnvk_dtype_size(dt);
    void *packed = malloc(bytes);
    attnvk_buffer *b = NULL;
    if (packed) {
        attnvk_pack(dt, x, packed, n);
        if (attnvk_buffer_create(dev, bytes, &b) != ATTNVK_OK || attnvk_buffer_write(b, 0, packed, bytes) != ATTNVK_OK) {
            attnvk_buffer_destroy(b);
            b = NULL;
        }
    }
    free(packed);
    return b;
}

/* One configuration: prepare, warm up, time, check sampled rows. */
static int time_one(attnvk_device *dev, const attnvk_problem *p, const perf_args *a, const char *variant, const int tile[2],
                    attnvk_buffer *bufs[4], const float *q, const float *k, const float *v, uint64_t seed)
{
    attnvk_kernel_options o = {.variant = strcmp(variant, "default") ? variant : NULL, .tile_br = tile[0],
                               .tile_bc = tile[1], .split_kv = a->split};
    attnvk_kernel *kern = NULL;
    attnvk_kernel_info info;
    attnvk_status s = attnvk_kernel_prepare(dev, p, &o, &kern, &info);
    char shape[96];
    snprintf(shape, sizeof shape, "B%d H%d N%d D%d %s%s", p->batch, p->heads, p->seq_q, p->head_dim,
             attnvk_dtype_name(p->dtype), p->causal ? " causal" : "");
    if (s != ATTNVK_OK) {
        printf("%-32s %-12s %-8s unavailable: %s\n", shape, variant, "-", attnvk_last_error());
        return 1;
    }
    double *ms = malloc(sizeof(double) * (size_t)a->reps), t = 0;
    /* warm up for at least 3 runs and 1 s of GPU time: an idle GPU starts at a low clock */
    double warm = 0;
    for (int i = 0; s == ATTNVK_OK && (i < 3 || warm < 1000.0) && i < 2000; ++i) {
        s = attnvk_kernel_run(kern, bufs[0], bufs[1], bufs[2], bufs[3], NULL, 0, 0, &t);
        warm += t;
    }
    for (int i = 0; s == ATTNVK_OK && i < a->reps; ++i)
        s = attnvk_kernel_run(kern, bufs[0], bufs[1], bufs[2], bufs[3], NULL, 0, 0, &ms[i]);
    int ok = 0;
    if (s == ATTNVK_OK) {
        qsort(ms, (size_t)a->reps, sizeof *ms, cmp_double);
        double med = ms[a->reps / 2];
        size_t nq = attnvk_q_elements(p), es = attnvk_dtype_size(p->dtype);
        void *packed = malloc(nq * es);
        float *out = malloc(nq * sizeof(float));
        size_t rows[CHECK_ROWS], all = (size_t)p->batch * p->heads * p->seq_q;
        for (int r = 0; r < CHECK_ROWS; ++r) rows[r] = (size_t)((seed * 2654435761u + (uint64_t)r * 40503u * 977u) % all);
        rows[CHECK_ROWS - 1] = all - 1;
        attnvk_check c = {0};
        if (packed && out && attnvk_buffer_read(bufs[3], 0, packed, nq * es) == ATTNVK_OK) {
            attnvk_unpack(p->dtype, packed, out, nq);
            c = attnvk_check_output(p, q, k, v, out, rows, CHECK_ROWS);
            ok = c.passed;
        }
        printf("%-32s %-12s %4dx%-4d wg %-4d split %-3d %9.3f ms %8.1f TFLOP/s  (min %.3f max %.3f) rel_l2 %.2e %s  [%s]\n",
               shape, info.variant, info.tile_br, info.tile_bc, info.workgroup_size, info.split_kv, med,
               attnvk_problem_flops(p) / (med * 1e-3) / 1e12, ms[0], ms[a->reps - 1], c.rel_l2, ok ? "ok" : "CHECK FAILED",
               info.params);
        free(packed);
        free(out);
    } else {
        printf("%-32s %-12s run failed: %s: %s\n", shape, info.variant, attnvk_status_name(s), attnvk_last_error());
    }
    fflush(stdout);
    free(ms);
    attnvk_kernel_destroy(kern);
    return ok;
}

int main(int argc, char **argv)
{
    perf_args a;
    if (!parse(argc, argv, &a)) return 2;
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    int idx[1];
    attnvk_device *dev = NULL;
    if (attnvk_device_select(ctx, a.device, idx, 1) < 1 || attnvk_device_open(ctx, idx[0], &dev) != ATTNVK_OK) {
        printf("no device '%s': %s\n", a.device, attnvk_last_error());
        attnvk_context_destroy(ctx);
        return 1;
    }
    const attnvk_device_info *di = attnvk_device_info_of(dev);
    printf("device %s, driver %s, %s, default %s\n", di->name, di->driver_version, di->api_version, di->default_variant);
    int failures = 0;
    uint64_t seed = 12345;
    for (int s = 0; s < a.n_shapes; ++s) {
        attnvk_problem p = {.batch = a.shapes[s][0], .heads = a.shapes[s][1], .kv_heads = a.shapes[s][1],
                            .seq_q = a.shapes[s][2], .seq_kv = a.shapes[s][2], .head_dim = a.shapes[s][3],
                            .dtype = a.dtype};
        float *q, *k, *v;
        avk_test_inputs(&p, ++seed, &q, &k, &v);
        attnvk_buffer *bufs[4] = {upload(dev, p.dtype, q, attnvk_q_elements(&p)),
                                  upload(dev, p.dtype, k, attnvk_kv_elements(&p)),
                                  upload(dev, p.dtype, v, attnvk_kv_elements(&p)), NULL};
        attnvk_buffer_create(dev, attnvk_q_elements(&p) * attnvk_dtype_size(p.dtype), &bufs[3]);
        for (int c = 0; bufs[0] && bufs[1] && bufs[2] && bufs[3] && c < a.n_causal; ++c)
            for (int vi = 0; vi < a.n_variants; ++vi)
                for (int t = 0; t < a.n_tiles; ++t) {
                    p.causal = a.causal[c];
                    failures += !time_one(dev, &p, &a, a.variants[vi], a.tiles[t], bufs, q, k, v, seed);
                }
        for (int i = 0; i < 4; ++i) attnvk_buffer_destroy(bufs[i]);
        free(q);
        free(k);
        free(v);
    }
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return failures ? 1 : 0;
}
